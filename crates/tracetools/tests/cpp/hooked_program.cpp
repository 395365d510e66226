// Uses the stand-in rclcpp like a node's main() would and prints every address and result:
// the output must be the same with and without rostrace's hooks, and the addresses are what
// the hooks' events must carry.
#include <cstdio>
#include "fake_rclcpp.hpp"

using namespace rclcpp;

int main()
{
  ExecutorOptions options;
  executors::SingleThreadedExecutor single(options);
  executors::MultiThreadedExecutor multi(options, 3, true, std::chrono::nanoseconds(5));
  auto stat = std::make_shared<executors::StaticSingleThreadedExecutor>(options);
  std::printf("single %p\nmulti %p %zu\nstatic %p\n", (void *)&single, (void *)&multi, multi.threads_, (void *)stat.get());
  auto exclusive = std::make_shared<CallbackGroup>(CallbackGroupType::MutuallyExclusive);
  auto reentrant = std::make_shared<CallbackGroup>(CallbackGroupType::Reentrant);
  std::printf("group mutually_exclusive %p\ngroup reentrant %p\n", (void *)exclusive.get(), (void *)reentrant.get());
  auto timer = std::make_shared<TimerBase>();
  auto sub = std::make_shared<SubscriptionBase>();
  auto srv = std::make_shared<ServiceBase>();
  auto cli = std::make_shared<ClientBase>();
  exclusive->add_timer(timer);
  exclusive->add_subscription(sub);
  reentrant->add_service(srv);
  reentrant->add_client(cli);
  std::printf("timer %p %p\n", (void *)exclusive.get(), (void *)timer->timer_handle_.get());
  std::printf("subscription %p %p\n", (void *)exclusive.get(), (void *)sub->subscription_handle_.get());
  std::printf("service %p %p\n", (void *)reentrant.get(), (void *)srv->service_handle_.get());
  std::printf("client %p %p\n", (void *)reentrant.get(), (void *)cli->client_handle_.get());
  std::printf("entities %zu %zu\n", exclusive->entities_.size(), reentrant->entities_.size());
  std::printf("use_count %ld %ld %ld %ld\n", timer.use_count(), timer->timer_handle_.use_count(),
    sub->subscription_handle_.use_count(), exclusive.use_count());
#ifdef FAKE_JAZZY
  std::printf("collector %p %p\n", (void *)&single, (void *)&single.collector_);
  std::printf("collector %p %p\n", (void *)&multi, (void *)&multi.collector_);
  std::printf("collector %p %p\n", (void *)stat.get(), (void *)&stat->collector_);
  executors::ExecutorEntitiesCollector::CallbackGroupCollection collection;
  single.collector_.add_callback_group_to_collection(exclusive, collection);
  stat->collector_.add_callback_group_to_collection(reentrant, collection);
  std::printf("to_collection %p %p\nto_collection %p %p\ncollection %zu\n", (void *)&single.collector_,
    (void *)exclusive.get(), (void *)&stat->collector_, (void *)reentrant.get(), collection.size());
#else
  std::printf("collector %p %p\n", (void *)stat.get(), (void *)stat->entities_collector_.get());
  auto node = std::make_shared<node_interfaces::NodeBaseInterface>();
  WeakCallbackGroupsToNodesMap map;
  single.add_callback_group_to_map(exclusive, node, map, true);
  bool added = stat->entities_collector_->add_callback_group(reentrant, node, map);
  std::printf("to_map %p %p\nstatic_add %p %p %d\nmap %zu\n", (void *)&single, (void *)exclusive.get(),
    (void *)stat->entities_collector_.get(), (void *)reentrant.get(), (int)added, map.size());
#endif
  std::printf("use_count %ld %ld\n", exclusive.use_count(), reentrant.use_count());
  return 0;
}
