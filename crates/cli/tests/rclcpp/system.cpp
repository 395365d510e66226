// The real-stack test system in C++ (rclcpp): an Autoware-like pipeline of three processes.
//
//   rostrace_cpp_system --ns NS [--points N] [--calls M] [--intra K] [--timeout S]
//
// starts the three roles below as processes of their own (this program again, with the same
// environment: a tracer preloaded here is preloaded there), waits for them, and prints one JSON
// line {"ok": bool, "seconds": s, "processes": [each process's JSON line]}. This process itself
// initializes no ROS 2 context: it emits no trace event.
//
// - sensing (a StaticSingleThreadedExecutor): node `lidar`, a 40 ms timer publishing exactly N
//   std_msgs/String on `points` (reliable, depth 10) once the control process is ready; node
//   `imu`, a 20 ms timer publishing on `imu` (reliable, depth 3) while the lidar publishes; node
//   `map`, the std_srvs/Trigger service `speed_limit`.
// - control (a MultiThreadedExecutor of 2 threads): node `fusion` joins its 2 inputs (`points`,
//   and the latest `imu`) in a mutually exclusive callback group and publishes `pose` from each
//   points message (callback chain); node `planner` keeps the latest pose and, on its 100 ms
//   timer in a reentrant callback group, publishes `cmd` for a new one (latest message) and
//   calls `speed_limit` until M calls are answered; node `actuator`, the sink of `cmd`.
// - intra (a SingleThreadedExecutor, intra-process communication): node `intra_pub` publishes K
//   messages as unique_ptr on `intra` from a 30 ms timer, taken by `intra_shared` (a callback
//   taking a shared_ptr) and `intra_unique` (taking a unique_ptr); the lifecycle node
//   `lc_talker` is walked through configure, activate (3 messages on `lc_chatter`), deactivate,
//   cleanup and shutdown; and an rclcpp ring buffer of 2 places is filled with 3 messages, one
//   taken, and cleared.
//
// `rostrace_cpp_system vehicle [--duration S]` is a process of its own, run beside the demo's Rust
// nodes and its rclpy vehicle interface (one system, three languages): node `/vehicle/cpp_bridge`
// takes the Rust planner's `/control/cmd_vel` (geometry_msgs/TwistStamped) and every other
// node's `/sensing/imu` (sensor_msgs/Imu), and publishes its own IMU on `/sensing/imu` and a
// std_msgs/String on `/vehicle/status` at 10 Hz (once read) for S seconds (default 3) and until it
// exchanged 5 messages each way with the rclpy node; it prints its counts as
// the demo's tally line {"process": "cpp_vehicle", "published": {...}, "received": {...}}.
//
// The processes meet in a directory of files (`--sync`): nobody publishes before the other side
// has matched, and nobody leaves before the other side has everything (a reliable writer that
// leaves may take unacknowledged samples with it). Each process prints what it counted as one
// JSON line: every callback's runs, by name, as the trace must show them.

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lifecycle_msgs/msg/transition.hpp"
#include "rclcpp/experimental/buffers/ring_buffer_implementation.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_lifecycle/lifecycle_node.hpp"
#include "geometry_msgs/msg/twist_stamped.hpp"
#include "sensor_msgs/msg/imu.hpp"
#include "std_msgs/msg/string.hpp"
#include "std_srvs/srv/trigger.hpp"

using namespace std::chrono_literals;
using String = std_msgs::msg::String;
using Trigger = std_srvs::srv::Trigger;
using Clock = std::chrono::steady_clock;

namespace
{

struct Options
{
  std::string role;
  std::string ns;
  std::string sync;
  int points = 30;
  int calls = 5;
  int intra = 20;
  double timeout = 60.0;
  double duration = 3.0;
};

Options parse(int argc, char ** argv)
{
  Options o;
  int i = 1;
  if (argc > 1 && argv[1][0] != '-') {
    o.role = argv[1];
    i = 2;
  }
  for (; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--ns") {
      o.ns = v;
    } else if (k == "--sync") {
      o.sync = v;
    } else if (k == "--points") {
      o.points = std::atoi(v.c_str());
    } else if (k == "--calls") {
      o.calls = std::atoi(v.c_str());
    } else if (k == "--intra") {
      o.intra = std::atoi(v.c_str());
    } else if (k == "--duration") {
      o.duration = std::atof(v.c_str());
    } else if (k == "--timeout") {
      o.timeout = std::atof(v.c_str());
    } else {
      std::fprintf(stderr, "unknown argument %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (o.ns.empty() && o.role != "vehicle") {
    std::fprintf(stderr, "--ns is required\n");
    std::exit(2);
  }
  return o;
}

// Files in the sync directory: written whole (a rename), so a reader sees all or nothing.
void flag(const Options & o, const std::string & name)
{
  std::string tmp = o.sync + "/" + name + ".tmp";
  std::ofstream(tmp) << "1\n";
  std::rename(tmp.c_str(), (o.sync + "/" + name).c_str());
}

bool flagged(const Options & o, const std::string & name)
{
  return access((o.sync + "/" + name).c_str(), F_OK) == 0;
}

// Callback runs, by name, counted by the callbacks themselves.
class Counts
{
public:
  void add(const std::string & name, int n = 1)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    counts_[name] += n;
  }
  int get(const std::string & name)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    return counts_[name];
  }
  std::string json()
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::ostringstream s;
    s << "{";
    bool first = true;
    for (const auto & kv : counts_) {
      s << (first ? "" : ", ") << "\"" << kv.first << "\": " << kv.second;
      first = false;
    }
    s << "}";
    return s.str();
  }

private:
  std::mutex mutex_;
  std::map<std::string, int> counts_;
};

rclcpp::QoS reliable(size_t depth)
{
  return rclcpp::QoS(rclcpp::KeepLast(depth)).reliable().durability_volatile();
}

// Waits, checking every 10 ms, until `done` or the deadline.
bool wait_until(const Options & o, Clock::time_point start, const std::function<bool()> & done)
{
  while (!done()) {
    if (Clock::now() - start > std::chrono::duration<double>(o.timeout)) {
      return false;
    }
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

void report(const Options & o, bool ok, Counts & runs, const std::string & extra)
{
  std::printf(
    "{\"role\": \"%s\", \"ns\": \"%s\", \"pid\": %d, \"ok\": %s, \"runs\": %s%s}\n", o.role.c_str(),
    o.ns.c_str(), static_cast<int>(getpid()), ok ? "true" : "false", runs.json().c_str(),
    extra.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------

int sensing(const Options & o)
{
  auto start = Clock::now();
  Counts runs;
  auto lidar = std::make_shared<rclcpp::Node>("lidar", o.ns);
  auto imu = std::make_shared<rclcpp::Node>("imu", o.ns);
  auto map = std::make_shared<rclcpp::Node>("map", o.ns);
  auto points = lidar->create_publisher<String>("points", reliable(10));
  auto imu_pub = imu->create_publisher<String>("imu", reliable(3));
  std::atomic<int> sent{0}, imu_sent{0};
  auto lidar_timer = lidar->create_wall_timer(
    40ms, [&]() {
      runs.add("lidar timer");
      if (!flagged(o, "control.ready") || points->get_subscription_count() < 1 || sent >= o.points) {
        return;
      }
      String m;
      m.data = "points " + std::to_string(sent.load());
      points->publish(m);
      ++sent;
    });
  auto imu_timer = imu->create_wall_timer(
    20ms, [&]() {
      runs.add("imu timer");
      if (!flagged(o, "control.ready") || imu_pub->get_subscription_count() < 1 || sent >= o.points) {
        return;
      }
      String m;
      m.data = "imu " + std::to_string(imu_sent.load());
      imu_pub->publish(m);
      ++imu_sent;
    });
  auto service = map->create_service<Trigger>(
    "speed_limit", [&](
      const std::shared_ptr<Trigger::Request>, std::shared_ptr<Trigger::Response> response) {
      runs.add("speed_limit service");
      response->success = true;
      response->message = "30";
    });
  rclcpp::executors::StaticSingleThreadedExecutor exec;
  exec.add_node(lidar);
  exec.add_node(imu);
  exec.add_node(map);
  std::thread spinner([&]() {exec.spin();});
  bool done = wait_until(o, start, [&]() {return flagged(o, "control.done");});
  exec.cancel();
  spinner.join();
  std::ostringstream extra;
  extra << ", \"published\": {\"points\": " << sent << ", \"imu\": " << imu_sent << "}";
  report(o, done && sent == o.points, runs, extra.str());
  return done ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------

int control(const Options & o)
{
  auto start = Clock::now();
  Counts runs;
  auto fusion = std::make_shared<rclcpp::Node>("fusion", o.ns);
  auto planner = std::make_shared<rclcpp::Node>("planner", o.ns);
  auto actuator = std::make_shared<rclcpp::Node>("actuator", o.ns);

  // fusion: a 2-input join in a mutually exclusive group.
  auto join = fusion->create_callback_group(rclcpp::CallbackGroupType::MutuallyExclusive);
  rclcpp::SubscriptionOptions join_opts;
  join_opts.callback_group = join;
  auto pose = fusion->create_publisher<String>("pose", reliable(5));
  std::mutex imu_mutex;
  std::string latest_imu = "none";
  std::atomic<int> got_points{0}, poses{0};
  auto imu_sub = fusion->create_subscription<String>(
    "imu", reliable(3), [&](const String & m) {
      runs.add("fusion imu");
      std::lock_guard<std::mutex> lock(imu_mutex);
      latest_imu = m.data;
    }, join_opts);
  auto points_sub = fusion->create_subscription<String>(
    "points", reliable(10), [&](const String & m) {
      runs.add("fusion points");
      String p;
      {
        std::lock_guard<std::mutex> lock(imu_mutex);
        p.data = m.data + " + " + latest_imu;
      }
      pose->publish(p);
      ++poses;
      ++got_points;
    }, join_opts);

  // planner: the latest pose, a 100 ms timer and a client, in a reentrant group.
  auto plan = planner->create_callback_group(rclcpp::CallbackGroupType::Reentrant);
  rclcpp::SubscriptionOptions plan_opts;
  plan_opts.callback_group = plan;
  auto cmd = planner->create_publisher<String>("cmd", reliable(5));
  std::mutex pose_mutex;
  std::string latest_pose;
  bool fresh = false;
  std::atomic<int> got_poses{0}, cmds{0}, answered{0};
  std::atomic<bool> pending{false};
  // When the planner may call (0: not yet): a while after the client sees the service, because
  // the response path (the server's writer, this client's reader) may match later than the
  // request path, and a response sent before is lost (seen on a loaded machine).
  std::atomic<Clock::rep> calls_from{0};
  auto pose_sub = planner->create_subscription<String>(
    "pose", reliable(5), [&](const String & m) {
      runs.add("planner pose");
      std::lock_guard<std::mutex> lock(pose_mutex);
      latest_pose = m.data;
      fresh = true;
      ++got_poses;
    }, plan_opts);
  auto client = planner->create_client<Trigger>("speed_limit", rclcpp::ServicesQoS(), plan);
  auto planner_timer = planner->create_wall_timer(
    100ms, [&]() {
      runs.add("planner timer");
      {
        std::lock_guard<std::mutex> lock(pose_mutex);
        if (fresh) {
          String c;
          c.data = "cmd for " + latest_pose;
          cmd->publish(c);
          ++cmds;
          fresh = false;
        }
      }
      auto from = calls_from.load();
      if (from != 0 && Clock::now().time_since_epoch().count() >= from && answered < o.calls &&
        !pending.exchange(true))
      {
        client->async_send_request(
          std::make_shared<Trigger::Request>(),
          [&](rclcpp::Client<Trigger>::SharedFuture f) {
            if (f.get()->message == "30") {
              ++answered;
            }
            pending = false;
          });
      }
    }, plan);

  std::atomic<int> got_cmds{0};
  auto cmd_sub = actuator->create_subscription<String>(
    "cmd", reliable(5), [&](const String &) {
      runs.add("actuator cmd");
      ++got_cmds;
    });

  rclcpp::executors::MultiThreadedExecutor exec(rclcpp::ExecutorOptions(), 2);
  exec.add_node(fusion);
  exec.add_node(planner);
  exec.add_node(actuator);
  std::thread spinner([&]() {exec.spin();});
  bool ready = wait_until(
    o, start, [&]() {
      return points_sub->get_publisher_count() >= 1 && imu_sub->get_publisher_count() >= 1 &&
      pose->get_subscription_count() >= 1 && cmd->get_subscription_count() >= 1 &&
      client->service_is_ready();
    });
  if (ready) {
    calls_from = (Clock::now() + 1s).time_since_epoch().count();
    flag(o, "control.ready");
  }
  bool done = ready && wait_until(
    o, start, [&]() {
      std::lock_guard<std::mutex> lock(pose_mutex);
      return got_points >= o.points && got_poses >= o.points && !fresh && got_cmds == cmds &&
      answered >= o.calls;
    });
  flag(o, "control.done");
  exec.cancel();
  spinner.join();
  std::ostringstream extra;
  extra << ", \"taken\": {\"points\": " << got_points << ", \"pose\": " << got_poses <<
    ", \"cmd\": " << got_cmds << "}, \"published\": {\"pose\": " << poses << ", \"cmd\": " << cmds <<
    "}, \"answered\": " << answered;
  report(o, done, runs, extra.str());
  return done ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------

int intra(const Options & o)
{
  auto start = Clock::now();
  Counts runs;
  auto opts = rclcpp::NodeOptions().use_intra_process_comms(true);
  auto pub_node = std::make_shared<rclcpp::Node>("intra_pub", o.ns, opts);
  auto shared_node = std::make_shared<rclcpp::Node>("intra_shared", o.ns, opts);
  auto unique_node = std::make_shared<rclcpp::Node>("intra_unique", o.ns, opts);
  auto pub = pub_node->create_publisher<String>("intra", reliable(4));
  std::atomic<int> sent{0}, got_shared{0}, got_unique{0};
  auto shared_sub = shared_node->create_subscription<String>(
    "intra", reliable(4), [&](std::shared_ptr<const String>) {
      runs.add("intra shared");
      ++got_shared;
    });
  auto unique_sub = unique_node->create_subscription<String>(
    "intra", reliable(4), [&](std::unique_ptr<String>) {
      runs.add("intra unique");
      ++got_unique;
    });
  auto timer = pub_node->create_wall_timer(
    30ms, [&]() {
      runs.add("intra timer");
      // Lockstep: the next message once both took the previous one.
      if (sent >= o.intra || got_shared < sent || got_unique < sent) {
        return;
      }
      auto m = std::make_unique<String>();
      m->data = "intra " + std::to_string(sent.load());
      pub->publish(std::move(m));
      ++sent;
    });

  // The lifecycle node, walked through its transitions; it publishes while active.
  auto lc = std::make_shared<rclcpp_lifecycle::LifecycleNode>("lc_talker", o.ns);
  auto lc_pub = lc->create_publisher<String>("lc_chatter", reliable(3));
  using lifecycle_msgs::msg::Transition;
  std::vector<std::string> states;
  auto step = [&](uint8_t transition) {
      states.push_back(lc->trigger_transition(transition).label());
    };
  step(Transition::TRANSITION_CONFIGURE);
  step(Transition::TRANSITION_ACTIVATE);
  int lc_sent = 0;
  for (; lc_sent < 3; ++lc_sent) {
    String m;
    m.data = "lc " + std::to_string(lc_sent);
    lc_pub->publish(m);
  }
  step(Transition::TRANSITION_DEACTIVATE);
  step(Transition::TRANSITION_CLEANUP);
  step(Transition::TRANSITION_UNCONFIGURED_SHUTDOWN);

  // rclcpp's ring buffer on its own, as an intra-process subscription's is not cleared by
  // rclcpp: 3 messages into 2 places (the third overwrites the first), one taken, cleared.
  {
    rclcpp::experimental::buffers::RingBufferImplementation<int> ring(2);
    ring.enqueue(1);
    ring.enqueue(2);
    ring.enqueue(3);
    (void)ring.dequeue();
    ring.clear();
  }

  rclcpp::executors::SingleThreadedExecutor exec;
  exec.add_node(pub_node);
  exec.add_node(shared_node);
  exec.add_node(unique_node);
  exec.add_node(lc->get_node_base_interface());
  std::thread spinner([&]() {exec.spin();});
  bool done = wait_until(
    o, start, [&]() {return got_shared >= o.intra && got_unique >= o.intra;});
  exec.cancel();
  spinner.join();
  std::ostringstream extra;
  extra << ", \"published\": {\"intra\": " << sent << ", \"lc_chatter\": " << lc_sent <<
    "}, \"taken\": {\"intra_shared\": " << got_shared << ", \"intra_unique\": " << got_unique <<
    "}, \"lifecycle_states\": [";
  for (size_t i = 0; i < states.size(); ++i) {
    extra << (i ? ", " : "") << "\"" << states[i] << "\"";
  }
  extra << "]";
  report(o, done, runs, extra.str());
  return done ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------

int vehicle(const Options & o)
{
  auto start = Clock::now();
  auto node = std::make_shared<rclcpp::Node>("cpp_bridge", "/vehicle");
  auto qos = reliable(10);
  std::atomic<int> cmds{0}, imus{0}, python_imus{0}, imu_sent{0}, status_sent{0};
  auto cmd_sub = node->create_subscription<geometry_msgs::msg::TwistStamped>(
    "/control/cmd_vel", qos, [&](const geometry_msgs::msg::TwistStamped &) {++cmds;});
  rclcpp::SubscriptionOptions others;
  others.ignore_local_publications = true;
  auto imu_sub = node->create_subscription<sensor_msgs::msg::Imu>(
    "/sensing/imu", qos, [&](const sensor_msgs::msg::Imu & m) {
      ++imus;
      // The rclpy vehicle interface's frame.
      if (m.header.frame_id == "vehicle") {
        ++python_imus;
      }
    }, others);
  auto imu_pub = node->create_publisher<sensor_msgs::msg::Imu>("/sensing/imu", qos);
  auto status_pub = node->create_publisher<String>("/vehicle/status", qos);
  auto timer = node->create_wall_timer(
    100ms, [&]() {
      sensor_msgs::msg::Imu m;
      m.header.stamp = node->now();
      m.header.frame_id = "cpp_vehicle";
      m.linear_acceleration.z = 9.81;
      imu_pub->publish(m);
      ++imu_sent;
      // Once its reader (the rclpy node's) has matched: nothing is published to nobody.
      if (status_pub->get_subscription_count() > 0) {
        String s;
        s.data = "ok " + std::to_string(status_sent.load());
        status_pub->publish(s);
        ++status_sent;
      }
    });
  rclcpp::executors::SingleThreadedExecutor exec;
  exec.add_node(node);
  // At least the duration, and until it exchanged 5 messages each way with the rclpy node
  // (which starts later: an interpreter and rclpy to load), up to 4 times the duration.
  auto at_least = std::chrono::duration<double>(o.duration);
  while (Clock::now() - start < 4 * at_least &&
    (Clock::now() - start < at_least || python_imus < 5 || status_sent < 5))
  {
    exec.spin_some(100ms);
    std::this_thread::sleep_for(5ms);
  }
  std::printf(
    "{\"process\": \"cpp_vehicle\", \"published\": {\"/sensing/imu\": %d, \"/vehicle/status\": %d}, "
    "\"received\": {\"/control/cmd_vel\": %d, \"/sensing/imu\": %d}}\n",
    imu_sent.load(), status_sent.load(), cmds.load(), imus.load());
  std::fflush(stdout);
  return 0;
}

// ---------------------------------------------------------------------------------------------

int launch(int argc, char ** argv, const Options & o)
{
  auto start = Clock::now();
  char tmpl[] = "/tmp/rostrace-rclcpp-XXXXXX";
  const char * sync = mkdtemp(tmpl);
  if (sync == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const char * roles[] = {"control", "intra", "sensing"};
  struct Child
  {
    std::string role;
    pid_t pid;
    int out;
  };
  std::vector<Child> children;
  for (const char * role : roles) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::perror("pipe");
      return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      close(fds[1]);
      std::vector<std::string> args = {argv[0], role, "--sync", sync};
      for (int i = 1; i < argc; ++i) {
        args.push_back(argv[i]);
      }
      std::vector<char *> cargs;
      for (auto & a : args) {
        cargs.push_back(&a[0]);
      }
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      std::perror("execv");
      _exit(127);
    }
    close(fds[1]);
    children.push_back({role, pid, fds[0]});
  }
  // A child that did its part can still hang in its teardown (Fast DDS destroying its
  // participant): past the deadline and a grace, the children not reaped yet are killed, and
  // those whose report says they did their part are named as stuck in their teardown.
  std::mutex reaping;
  std::vector<bool> reaped(children.size(), false);
  std::atomic<bool> all_reaped{false};
  std::thread watchdog([&]() {
      auto until = start + std::chrono::duration<double>(o.timeout + 15.0);
      while (!all_reaped && Clock::now() < until) {
        std::this_thread::sleep_for(50ms);
      }
      std::lock_guard<std::mutex> lock(reaping);
      for (size_t i = 0; i < children.size() && !all_reaped; ++i) {
        if (!reaped[i]) {
          kill(children[i].pid, SIGKILL);
        }
      }
    });
  bool ok = true;
  std::ostringstream procs;
  std::ostringstream stuck;
  for (size_t i = 0; i < children.size(); ++i) {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(children[i].out, buf, sizeof buf)) > 0) {
      out.append(buf, static_cast<size_t>(n));
    }
    close(children[i].out);
    int status = 0;
    waitpid(children[i].pid, &status, 0);
    {
      std::lock_guard<std::mutex> lock(reaping);
      reaped[i] = true;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    ok = ok && code == 0;
    // The child's last line: its report.
    while (!out.empty() && out.back() == '\n') {
      out.pop_back();
    }
    std::string line = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    if (line.empty() || line[0] != '{') {
      line = "{\"role\": \"" + children[i].role + "\"}";
    }
    if (code == 128 + SIGKILL && line.find("\"ok\": true") != std::string::npos) {
      stuck << (stuck.tellp() > 0 ? ", " : "") << "\"" << children[i].role << "\"";
    }
    line.pop_back();
    procs << (i ? ", " : "") << line << ", \"exit\": " << code << "}";
  }
  all_reaped = true;
  watchdog.join();
  for (const char * f : {"control.ready", "control.done"}) {
    std::remove((std::string(sync) + "/" + f).c_str());
  }
  rmdir(sync);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
    "{\"ok\": %s, \"seconds\": %.3f, \"processes\": [%s], \"stuck_in_teardown\": [%s]}\n",
    ok ? "true" : "false", seconds, procs.str().c_str(), stuck.str().c_str());
  (void)o;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char ** argv)
{
  Options o = parse(argc, argv);
  if (o.role.empty()) {
    return launch(argc, argv, o);
  }
  rclcpp::init(argc, argv, rclcpp::InitOptions(), rclcpp::SignalHandlerOptions::None);
  int code = 2;
  if (o.role == "sensing") {
    code = sensing(o);
  } else if (o.role == "control") {
    code = control(o);
  } else if (o.role == "intra") {
    code = intra(o);
  } else if (o.role == "vehicle") {
    code = vehicle(o);
  } else {
    std::fprintf(stderr, "unknown role %s\n", o.role.c_str());
  }
  rclcpp::shutdown();
  return code;
}
