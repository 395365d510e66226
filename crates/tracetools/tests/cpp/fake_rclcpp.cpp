// The stand-in rclcpp's bodies (see fake_rclcpp.hpp).
#include "fake_rclcpp.hpp"

namespace rclcpp
{
node_interfaces::NodeBaseInterface::~NodeBaseInterface() {}
TimerBase::TimerBase() : timer_handle_(std::make_shared<rcl_timer_t>()) {}
std::shared_ptr<const rcl_timer_t> TimerBase::get_timer_handle() { return timer_handle_; }
SubscriptionBase::SubscriptionBase() : subscription_handle_(std::make_shared<rcl_subscription_t>()) {}
std::shared_ptr<rcl_subscription_t> SubscriptionBase::get_subscription_handle() { return subscription_handle_; }
ServiceBase::ServiceBase() : service_handle_(std::make_shared<rcl_service_t>()) {}
std::shared_ptr<rcl_service_t> ServiceBase::get_service_handle() { return service_handle_; }
ClientBase::ClientBase() : client_handle_(std::make_shared<rcl_client_t>()) {}
std::shared_ptr<rcl_client_t> ClientBase::get_client_handle() { return client_handle_; }

CallbackGroup::CallbackGroup(CallbackGroupType group_type) : type_(group_type) {}
const CallbackGroupType & CallbackGroup::type() const { return type_; }
void CallbackGroup::add_timer(const std::shared_ptr<rclcpp::TimerBase> p) { entities_.push_back(p); }
void CallbackGroup::add_subscription(const std::shared_ptr<rclcpp::SubscriptionBase> p) { entities_.push_back(p); }
void CallbackGroup::add_service(const std::shared_ptr<rclcpp::ServiceBase> p) { entities_.push_back(p); }
void CallbackGroup::add_client(const std::shared_ptr<rclcpp::ClientBase> p) { entities_.push_back(p); }

#ifdef FAKE_JAZZY
namespace executors {
ExecutorEntitiesCollector::ExecutorEntitiesCollector(std::shared_ptr<ExecutorNotifyWaitable> w)
: notify_waitable_(w) {}
ExecutorEntitiesCollector::~ExecutorEntitiesCollector() {}
void ExecutorEntitiesCollector::add_callback_group_to_collection(
  std::shared_ptr<rclcpp::CallbackGroup> group_ptr, CallbackGroupCollection & collection)
{
  collection.insert(group_ptr);
}
}  // namespace executors
Executor::Executor(const rclcpp::ExecutorOptions &)
: notify_waitable_(std::make_shared<executors::ExecutorNotifyWaitable>()), collector_(notify_waitable_) {}
#else
namespace executors {
StaticExecutorEntitiesCollector::~StaticExecutorEntitiesCollector() {}
bool StaticExecutorEntitiesCollector::add_callback_group(
  std::shared_ptr<rclcpp::CallbackGroup> group_ptr,
  std::shared_ptr<rclcpp::node_interfaces::NodeBaseInterface> node_ptr,
  WeakCallbackGroupsToNodesMap & weak_groups_to_nodes)
{
  return weak_groups_to_nodes.insert({group_ptr, node_ptr}).second;
}
}  // namespace executors
Executor::Executor(const rclcpp::ExecutorOptions &) {}
void Executor::add_callback_group_to_map(
  std::shared_ptr<rclcpp::CallbackGroup> group_ptr,
  std::shared_ptr<rclcpp::node_interfaces::NodeBaseInterface> node_ptr,
  WeakCallbackGroupsToNodesMap & weak_groups_to_nodes, bool)
{
  weak_groups_to_nodes.insert({group_ptr, node_ptr});
}
#endif
Executor::~Executor() {}

namespace executors {
SingleThreadedExecutor::SingleThreadedExecutor(const rclcpp::ExecutorOptions & o) : Executor(o) {}
MultiThreadedExecutor::MultiThreadedExecutor(
  const rclcpp::ExecutorOptions & o, size_t n, bool, std::chrono::nanoseconds)
: Executor(o), threads_(n) {}
StaticSingleThreadedExecutor::StaticSingleThreadedExecutor(const rclcpp::ExecutorOptions & o)
: Executor(o)
{
#ifndef FAKE_JAZZY
  entities_collector_ = std::make_shared<StaticExecutorEntitiesCollector>();
#endif
}
}  // namespace executors
}  // namespace rclcpp
