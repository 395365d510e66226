// A stand-in for rclcpp, for rostrace's hook tests: the classes and member functions that
// rostrace (like CARET) hooks, declared with rclcpp's exact signatures (so the compiler gives
// them rclcpp's mangled names), with a small body each. FAKE_JAZZY selects rclcpp 28/29
// (Jazzy, Kilted, Rolling); otherwise rclcpp 16 (Humble). Signatures from ros2/rclcpp:
// include/rclcpp/{executor,callback_group,timer,subscription_base,service,client}.hpp and
// executors/{single,multi,static_single}_threaded_executor.hpp,
// executors/static_executor_entities_collector.hpp (Humble),
// executors/executor_entities_collector.hpp (Jazzy+).
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <vector>

extern "C" {
typedef struct rcl_timer_s { int id; } rcl_timer_t;
typedef struct rcl_subscription_s { int id; } rcl_subscription_t;
typedef struct rcl_service_s { int id; } rcl_service_t;
typedef struct rcl_client_s { int id; } rcl_client_t;
}

namespace rclcpp
{
class ExecutorOptions { public: int context = 0; };
enum class CallbackGroupType { MutuallyExclusive, Reentrant };
namespace node_interfaces { class NodeBaseInterface { public: virtual ~NodeBaseInterface(); }; }

class TimerBase {
public:
  TimerBase();
  std::shared_ptr<const rcl_timer_t> get_timer_handle();
  std::shared_ptr<rcl_timer_t> timer_handle_;
};
class SubscriptionBase {
public:
  SubscriptionBase();
  std::shared_ptr<rcl_subscription_t> get_subscription_handle();
  std::shared_ptr<rcl_subscription_t> subscription_handle_;
};
class ServiceBase {
public:
  ServiceBase();
  std::shared_ptr<rcl_service_t> get_service_handle();
  std::shared_ptr<rcl_service_t> service_handle_;
};
class ClientBase {
public:
  ClientBase();
  std::shared_ptr<rcl_client_t> get_client_handle();
  std::shared_ptr<rcl_client_t> client_handle_;
};

class CallbackGroup {
public:
  explicit CallbackGroup(CallbackGroupType group_type);
  const CallbackGroupType & type() const;  // a reference, as rclcpp's
  void add_timer(const std::shared_ptr<rclcpp::TimerBase> timer_ptr);
  void add_subscription(const std::shared_ptr<rclcpp::SubscriptionBase> subscription_ptr);
  void add_service(const std::shared_ptr<rclcpp::ServiceBase> service_ptr);
  void add_client(const std::shared_ptr<rclcpp::ClientBase> client_ptr);
  CallbackGroupType type_;
  std::vector<std::weak_ptr<void>> entities_;
};

using WeakCallbackGroupsToNodesMap = std::map<
  std::weak_ptr<rclcpp::CallbackGroup>, std::weak_ptr<rclcpp::node_interfaces::NodeBaseInterface>,
  std::owner_less<std::weak_ptr<rclcpp::CallbackGroup>>>;

#ifdef FAKE_JAZZY
namespace executors {
class ExecutorNotifyWaitable { public: int guard = 0; };
class ExecutorEntitiesCollector {
public:
  using CallbackGroupCollection =
    std::set<std::weak_ptr<rclcpp::CallbackGroup>, std::owner_less<std::weak_ptr<rclcpp::CallbackGroup>>>;
  explicit ExecutorEntitiesCollector(std::shared_ptr<ExecutorNotifyWaitable> notify_waitable);
  ~ExecutorEntitiesCollector();
  void add_callback_group_to_collection(
    std::shared_ptr<rclcpp::CallbackGroup> group_ptr, CallbackGroupCollection & collection);
  std::shared_ptr<ExecutorNotifyWaitable> notify_waitable_;
  CallbackGroupCollection groups_;
};
}  // namespace executors
#else
namespace executors {
class StaticExecutorEntitiesCollector {
public:
  StaticExecutorEntitiesCollector() = default;
  virtual ~StaticExecutorEntitiesCollector();
  bool add_callback_group(
    std::shared_ptr<rclcpp::CallbackGroup> group_ptr,
    std::shared_ptr<rclcpp::node_interfaces::NodeBaseInterface> node_ptr,
    WeakCallbackGroupsToNodesMap & weak_groups_to_nodes);
  WeakCallbackGroupsToNodesMap groups_;
};
}  // namespace executors
#endif

class Executor {
public:
  explicit Executor(const rclcpp::ExecutorOptions & options = rclcpp::ExecutorOptions());
  virtual ~Executor();
#ifndef FAKE_JAZZY
  virtual void add_callback_group_to_map(
    std::shared_ptr<rclcpp::CallbackGroup> group_ptr,
    std::shared_ptr<rclcpp::node_interfaces::NodeBaseInterface> node_ptr,
    WeakCallbackGroupsToNodesMap & weak_groups_to_nodes, bool notify = true);
  WeakCallbackGroupsToNodesMap groups_;
#else
  std::shared_ptr<executors::ExecutorNotifyWaitable> notify_waitable_;
  int spinning_ = 0;
  executors::ExecutorEntitiesCollector collector_;
#endif
};

namespace executors {
class SingleThreadedExecutor : public rclcpp::Executor {
public:
  explicit SingleThreadedExecutor(const rclcpp::ExecutorOptions & options = rclcpp::ExecutorOptions());
};
class MultiThreadedExecutor : public rclcpp::Executor {
public:
  explicit MultiThreadedExecutor(
    const rclcpp::ExecutorOptions & options = rclcpp::ExecutorOptions(),
    size_t number_of_threads = 0, bool yield_before_execute = false,
    std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1));
  size_t threads_;
};
class StaticSingleThreadedExecutor : public rclcpp::Executor {
public:
  explicit StaticSingleThreadedExecutor(const rclcpp::ExecutorOptions & options = rclcpp::ExecutorOptions());
#ifndef FAKE_JAZZY
  std::shared_ptr<StaticExecutorEntitiesCollector> entities_collector_;
#endif
};
}  // namespace executors
}  // namespace rclcpp
