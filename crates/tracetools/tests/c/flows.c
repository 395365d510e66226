/* Replays every flow of the ROS 2 instrumentation design through the tracetools C ABI, in
 * several threads, and writes what it emitted (one line per event: thread id, event, fields
 * as JSON) to the file given as first argument, for the test to compare with the trace.
 * Usage: flows EXPECTED_FILE THREADS ITERATIONS [stress SECONDS [LATE] | bench | ...]
 * `bench`: calls one tracepoint ITERATIONS times in one thread and writes ns per call. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracetools/tracetools.h"

static FILE * expected;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int iterations = 3;

static long tid(void) { return syscall(SYS_gettid); }

/* Records what was emitted: "<tid>\t<event>\t<json fields>". */
static void emitted(const char * event, const char * fmt, ...)
{
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&lock);
  fprintf(expected, "%ld\tros2:%s\t{%s}\n", tid(), event, buf);
  pthread_mutex_unlock(&lock);
}

#define P(x) ((const void *) (uintptr_t) (x))
#define U(x) ((unsigned long long) (uintptr_t) (x))

static void gid_json(char * out, const uint8_t * g)
{
  out += sprintf(out, "[");
  for (int i = 0; i < 16; i++) {
    out += sprintf(out, i ? ",%u" : "%u", g ? g[i] : 0);
  }
  sprintf(out, "]");
}

/* Initialization flows: process, node, publisher, subscription with intra-process buffer,
 * service, client, timer, lifecycle, message links. */
static void init_flows(uintptr_t base)
{
  char g[128];
  uint8_t gid[16];
  for (int i = 0; i < 16; i++) gid[i] = (uint8_t) (base + i);
  uintptr_t ctx = base + 0x1, node = base + 0x10, rmw_node = base + 0x11;
  TRACETOOLS_TRACEPOINT(rcl_init, P(ctx));
  emitted("rcl_init", "\"context_handle\":%llu,\"version\":\"8.10.1\"", U(ctx));
  TRACETOOLS_TRACEPOINT(rcl_node_init, P(node), P(rmw_node), "my_node", "/ns");
  emitted("rcl_node_init", "\"node_handle\":%llu,\"rmw_handle\":%llu,\"node_name\":\"my_node\",\"namespace\":\"/ns\"", U(node), U(rmw_node));
  /* Publisher creation. */
  TRACETOOLS_TRACEPOINT(rmw_publisher_init, P(base + 0x20), gid);
  gid_json(g, gid);
  emitted("rmw_publisher_init", "\"rmw_publisher_handle\":%llu,\"gid\":%s", U(base + 0x20), g);
  TRACETOOLS_TRACEPOINT(rcl_publisher_init, P(base + 0x21), P(node), P(base + 0x20), "/chatter", (size_t) 10);
  emitted("rcl_publisher_init", "\"publisher_handle\":%llu,\"node_handle\":%llu,\"rmw_publisher_handle\":%llu,\"topic_name\":\"/chatter\",\"queue_depth\":10", U(base + 0x21), U(node), U(base + 0x20));
  /* Subscription creation, with an intra-process buffer. */
  TRACETOOLS_TRACEPOINT(rmw_subscription_init, P(base + 0x30), NULL);
  gid_json(g, NULL);
  emitted("rmw_subscription_init", "\"rmw_subscription_handle\":%llu,\"gid\":%s", U(base + 0x30), g);
  TRACETOOLS_TRACEPOINT(rcl_subscription_init, P(base + 0x31), P(node), P(base + 0x30), "/chatter", (size_t) 5);
  emitted("rcl_subscription_init", "\"subscription_handle\":%llu,\"node_handle\":%llu,\"rmw_subscription_handle\":%llu,\"topic_name\":\"/chatter\",\"queue_depth\":5", U(base + 0x31), U(node), U(base + 0x30));
  TRACETOOLS_TRACEPOINT(rclcpp_construct_ring_buffer, P(base + 0x40), (uint64_t) 8);
  emitted("rclcpp_construct_ring_buffer", "\"buffer\":%llu,\"capacity\":8", U(base + 0x40));
  TRACETOOLS_TRACEPOINT(rclcpp_buffer_to_ipb, P(base + 0x40), P(base + 0x41));
  emitted("rclcpp_buffer_to_ipb", "\"buffer\":%llu,\"ipb\":%llu", U(base + 0x40), U(base + 0x41));
  TRACETOOLS_TRACEPOINT(rclcpp_ipb_to_subscription, P(base + 0x41), P(base + 0x42));
  emitted("rclcpp_ipb_to_subscription", "\"ipb\":%llu,\"subscription\":%llu", U(base + 0x41), U(base + 0x42));
  TRACETOOLS_TRACEPOINT(rclcpp_subscription_callback_added, P(base + 0x42), P(base + 0x43));
  emitted("rclcpp_subscription_callback_added", "\"subscription\":%llu,\"callback\":%llu", U(base + 0x42), U(base + 0x43));
  TRACETOOLS_TRACEPOINT(rclcpp_subscription_init, P(base + 0x31), P(base + 0x42));
  emitted("rclcpp_subscription_init", "\"subscription_handle\":%llu,\"subscription\":%llu", U(base + 0x31), U(base + 0x42));
  TRACETOOLS_TRACEPOINT(rclcpp_subscription_init, P(base + 0x31), P(base + 0x32));
  emitted("rclcpp_subscription_init", "\"subscription_handle\":%llu,\"subscription\":%llu", U(base + 0x31), U(base + 0x32));
  TRACETOOLS_TRACEPOINT(rclcpp_subscription_callback_added, P(base + 0x32), P(base + 0x33));
  emitted("rclcpp_subscription_callback_added", "\"subscription\":%llu,\"callback\":%llu", U(base + 0x32), U(base + 0x33));
  TRACETOOLS_TRACEPOINT(rclcpp_callback_register, P(base + 0x33), "void (Listener::?)(std::unique_ptr<std_msgs::msg::String>)");
  emitted("rclcpp_callback_register", "\"callback\":%llu,\"symbol\":\"void (Listener::?)(std::unique_ptr<std_msgs::msg::String>)\"", U(base + 0x33));
  /* Service and client creation. */
  TRACETOOLS_TRACEPOINT(rcl_service_init, P(base + 0x50), P(node), P(base + 0x51), "/add_two_ints");
  emitted("rcl_service_init", "\"service_handle\":%llu,\"node_handle\":%llu,\"rmw_service_handle\":%llu,\"service_name\":\"/add_two_ints\"", U(base + 0x50), U(node), U(base + 0x51));
  TRACETOOLS_TRACEPOINT(rclcpp_service_callback_added, P(base + 0x50), P(base + 0x52));
  emitted("rclcpp_service_callback_added", "\"service_handle\":%llu,\"callback\":%llu", U(base + 0x50), U(base + 0x52));
  TRACETOOLS_TRACEPOINT(rmw_client_init, P(base + 0x61), gid);
  gid_json(g, gid);
  emitted("rmw_client_init", "\"rmw_client_handle\":%llu,\"gid\":%s", U(base + 0x61), g);
  TRACETOOLS_TRACEPOINT(rcl_client_init, P(base + 0x60), P(node), P(base + 0x61), "/add_two_ints");
  emitted("rcl_client_init", "\"client_handle\":%llu,\"node_handle\":%llu,\"rmw_client_handle\":%llu,\"service_name\":\"/add_two_ints\"", U(base + 0x60), U(node), U(base + 0x61));
  /* Timer creation. */
  TRACETOOLS_TRACEPOINT(rcl_timer_init, P(base + 0x70), (int64_t) 100000000);
  emitted("rcl_timer_init", "\"timer_handle\":%llu,\"period\":100000000", U(base + 0x70));
  TRACETOOLS_TRACEPOINT(rclcpp_timer_callback_added, P(base + 0x70), P(base + 0x71));
  emitted("rclcpp_timer_callback_added", "\"timer_handle\":%llu,\"callback\":%llu", U(base + 0x70), U(base + 0x71));
  TRACETOOLS_TRACEPOINT(rclcpp_callback_register, P(base + 0x71), NULL);
  emitted("rclcpp_callback_register", "\"callback\":%llu,\"symbol\":\"(null)\"", U(base + 0x71));
  TRACETOOLS_TRACEPOINT(rclcpp_timer_link_node, P(base + 0x70), P(node));
  emitted("rclcpp_timer_link_node", "\"timer_handle\":%llu,\"node_handle\":%llu", U(base + 0x70), U(node));
  /* Lifecycle state machine. */
  TRACETOOLS_TRACEPOINT(rcl_lifecycle_state_machine_init, P(node), P(base + 0x80));
  emitted("rcl_lifecycle_state_machine_init", "\"node_handle\":%llu,\"state_machine\":%llu", U(node), U(base + 0x80));
  /* Message links (annotations). */
  const void * subs[2] = {P(base + 0x31), P(base + 0x91)};
  const void * pubs[1] = {P(base + 0x21)};
  TRACETOOLS_TRACEPOINT(message_link_periodic_async, subs, 2, pubs, 1);
  emitted("message_link_periodic_async", "\"_subs_length\":2,\"subs\":[%llu,%llu],\"_pubs_length\":1,\"pubs\":[%llu]", U(base + 0x31), U(base + 0x91), U(base + 0x21));
  TRACETOOLS_TRACEPOINT(message_link_partial_sync, NULL, 0, pubs, 1);
  emitted("message_link_partial_sync", "\"_subs_length\":0,\"subs\":[],\"_pubs_length\":1,\"pubs\":[%llu]", U(base + 0x21));
}

/* Runtime flows: executor, subscription callback, intra-process callback, publishing
 * (inter- and intra-process), service callback, client request/response, timer, lifecycle. */
static void runtime_flows(uintptr_t base, int k)
{
  char g[128];
  uint8_t gid[16];
  for (int i = 0; i < 16; i++) gid[i] = (uint8_t) (base + i);
  uintptr_t msg = base + 0x1000 + (uintptr_t) k;
  int64_t src = 1700000000000000000LL + k;
  /* Executor. */
  TRACETOOLS_TRACEPOINT(rclcpp_executor_get_next_ready);
  emitted("rclcpp_executor_get_next_ready", "");
  TRACETOOLS_TRACEPOINT(rclcpp_executor_wait_for_work, (int64_t) -1);
  emitted("rclcpp_executor_wait_for_work", "\"timeout\":-1");
  /* Timer callback, publishing inter-process. */
  TRACETOOLS_TRACEPOINT(rclcpp_executor_execute, P(base + 0x70));
  emitted("rclcpp_executor_execute", "\"handle\":%llu", U(base + 0x70));
  TRACETOOLS_TRACEPOINT(callback_start, P(base + 0x71), false);
  emitted("callback_start", "\"callback\":%llu,\"is_intra_process\":0", U(base + 0x71));
  TRACETOOLS_TRACEPOINT(rclcpp_publish, P(base + 0x21), P(msg));
  emitted("rclcpp_publish", "\"message\":%llu", U(msg));
  TRACETOOLS_TRACEPOINT(rcl_publish, P(base + 0x21), P(msg));
  emitted("rcl_publish", "\"publisher_handle\":%llu,\"message\":%llu", U(base + 0x21), U(msg));
  TRACETOOLS_TRACEPOINT(rmw_publish, P(base + 0x20), P(msg), src);
  emitted("rmw_publish", "\"rmw_publisher_handle\":%llu,\"message\":%llu,\"timestamp\":%lld", U(base + 0x20), U(msg), (long long) src);
  /* Intra-process publishing. */
  TRACETOOLS_TRACEPOINT(rclcpp_intra_publish, P(base + 0x21), P(msg));
  emitted("rclcpp_intra_publish", "\"publisher_handle\":%llu,\"message\":%llu", U(base + 0x21), U(msg));
  TRACETOOLS_TRACEPOINT(rclcpp_ring_buffer_enqueue, P(base + 0x40), (uint64_t) k % 8, (uint64_t) 1, k >= 8);
  emitted("rclcpp_ring_buffer_enqueue", "\"buffer\":%llu,\"index\":%d,\"size\":1,\"overwritten\":%d", U(base + 0x40), k % 8, k >= 8);
  TRACETOOLS_TRACEPOINT(callback_end, P(base + 0x71));
  emitted("callback_end", "\"callback\":%llu", U(base + 0x71));
  /* Subscription callback. */
  TRACETOOLS_TRACEPOINT(rclcpp_executor_execute, P(base + 0x31));
  emitted("rclcpp_executor_execute", "\"handle\":%llu", U(base + 0x31));
  TRACETOOLS_TRACEPOINT(rmw_take, P(base + 0x30), P(msg + 1), src, true);
  emitted("rmw_take", "\"rmw_subscription_handle\":%llu,\"message\":%llu,\"source_timestamp\":%lld,\"taken\":1", U(base + 0x30), U(msg + 1), (long long) src);
  TRACETOOLS_TRACEPOINT(rcl_take, P(msg + 1));
  emitted("rcl_take", "\"message\":%llu", U(msg + 1));
  TRACETOOLS_TRACEPOINT(rclcpp_take, P(msg + 1));
  emitted("rclcpp_take", "\"message\":%llu", U(msg + 1));
  TRACETOOLS_TRACEPOINT(callback_start, P(base + 0x33), false);
  emitted("callback_start", "\"callback\":%llu,\"is_intra_process\":0", U(base + 0x33));
  TRACETOOLS_TRACEPOINT(callback_end, P(base + 0x33));
  emitted("callback_end", "\"callback\":%llu", U(base + 0x33));
  /* A take that took nothing. */
  TRACETOOLS_TRACEPOINT(rmw_take, P(base + 0x30), NULL, (int64_t) 0, false);
  emitted("rmw_take", "\"rmw_subscription_handle\":%llu,\"message\":0,\"source_timestamp\":0,\"taken\":0", U(base + 0x30));
  /* Intra-process callback. */
  TRACETOOLS_TRACEPOINT(rclcpp_ring_buffer_dequeue, P(base + 0x40), (uint64_t) k % 8, (uint64_t) 0);
  emitted("rclcpp_ring_buffer_dequeue", "\"buffer\":%llu,\"index\":%d,\"size\":0", U(base + 0x40), k % 8);
  TRACETOOLS_TRACEPOINT(callback_start, P(base + 0x43), true);
  emitted("callback_start", "\"callback\":%llu,\"is_intra_process\":1", U(base + 0x43));
  TRACETOOLS_TRACEPOINT(callback_end, P(base + 0x43));
  emitted("callback_end", "\"callback\":%llu", U(base + 0x43));
  /* Client request, service callback, response. */
  TRACETOOLS_TRACEPOINT(rmw_send_request, P(base + 0x61), P(msg + 2), (int64_t) k);
  emitted("rmw_send_request", "\"rmw_client_handle\":%llu,\"request\":%llu,\"sequence_number\":%d", U(base + 0x61), U(msg + 2), k);
  TRACETOOLS_TRACEPOINT(rmw_take_request, P(base + 0x51), P(msg + 3), gid, (int64_t) k, true);
  gid_json(g, gid);
  emitted("rmw_take_request", "\"rmw_service_handle\":%llu,\"request\":%llu,\"client_gid\":%s,\"sequence_number\":%d,\"taken\":1", U(base + 0x51), U(msg + 3), g, k);
  TRACETOOLS_TRACEPOINT(callback_start, P(base + 0x52), false);
  emitted("callback_start", "\"callback\":%llu,\"is_intra_process\":0", U(base + 0x52));
  TRACETOOLS_TRACEPOINT(callback_end, P(base + 0x52));
  emitted("callback_end", "\"callback\":%llu", U(base + 0x52));
  TRACETOOLS_TRACEPOINT(rmw_send_response, P(base + 0x51), P(msg + 4), gid, (int64_t) k, src + 5);
  emitted("rmw_send_response", "\"rmw_service_handle\":%llu,\"response\":%llu,\"client_gid\":%s,\"sequence_number\":%d,\"timestamp\":%lld", U(base + 0x51), U(msg + 4), g, k, (long long) (src + 5));
  TRACETOOLS_TRACEPOINT(rmw_take_response, P(base + 0x61), P(msg + 5), (int64_t) k, src + 5, true);
  emitted("rmw_take_response", "\"rmw_client_handle\":%llu,\"response\":%llu,\"sequence_number\":%d,\"source_timestamp\":%lld,\"taken\":1", U(base + 0x61), U(msg + 5), k, (long long) (src + 5));
  /* Lifecycle transition, ring buffer clear. */
  TRACETOOLS_TRACEPOINT(rcl_lifecycle_transition, P(base + 0x80), "unconfigured", "configuring");
  emitted("rcl_lifecycle_transition", "\"state_machine\":%llu,\"start_label\":\"unconfigured\",\"goal_label\":\"configuring\"", U(base + 0x80));
  TRACETOOLS_TRACEPOINT(rclcpp_ring_buffer_clear, P(base + 0x40));
  emitted("rclcpp_ring_buffer_clear", "\"buffer\":%llu", U(base + 0x40));
  if (TRACETOOLS_TRACEPOINT_ENABLED(callback_start)) {
    TRACETOOLS_DO_TRACEPOINT(callback_start, P(base + 0x99), true);
    emitted("callback_start", "\"callback\":%llu,\"is_intra_process\":1", U(base + 0x99));
  }
}

static void * thread_main(void * arg)
{
  uintptr_t base = (uintptr_t) arg;
  init_flows(base);
  for (int k = 0; k < iterations; k++) {
    runtime_flows(base, k);
  }
  return NULL;
}

static volatile int stop_stress;
static unsigned long long stress_counts[64];

static void * stress_main(void * arg)
{
  uintptr_t i = (uintptr_t) arg;
  unsigned long long n = 0;
  while (!stop_stress) {
    TRACETOOLS_TRACEPOINT(callback_start, P(n), false);
    n++;
  }
  stress_counts[i] = n;
  return NULL;
}

/* A thread that starts late: records N events (its argument) as fast as it can. */
static void * late_main(void * arg)
{
  unsigned long long n = (uintptr_t) arg;
  for (unsigned long long i = 0; i < n; i++) TRACETOOLS_TRACEPOINT(callback_start, P(i), false);
  return NULL;
}

static void * clock_main(void * arg)
{
  uintptr_t k = (uintptr_t) arg;
  struct timespec now, pause = {0, 1000000};
  for (long i = 0; i < iterations; i++) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    TRACETOOLS_TRACEPOINT(rmw_take, P(0x3000 + k), P(i), (int64_t) now.tv_sec * 1000000000 + now.tv_nsec, true);
    if (i % 16 == 15) nanosleep(&pause, NULL);
  }
  /* The last event's bound. */
  clock_gettime(CLOCK_MONOTONIC, &now);
  TRACETOOLS_TRACEPOINT(rmw_take, P(0x3000 + k), P(iterations), (int64_t) now.tv_sec * 1000000000 + now.tv_nsec, false);
  return NULL;
}

int main(int argc, char ** argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: %s EXPECTED THREADS ITERATIONS [stress SECONDS]\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[2]);
  iterations = atoi(argv[3]);
  if (argc >= 6 && strcmp(argv[4], "run") == 0) {
    /* A long-running node: initializes at once, then runs its flows every 2 ms for SECONDS. */
    expected = fopen(argv[1], "w");
    if (!expected) return 1;
    double seconds = atof(argv[5]);
    struct timespec a, b, d = {0, 2000000};
    uintptr_t base = 0x10000 + 0x100000 * (uintptr_t) getpid();
    init_flows(base);
    clock_gettime(CLOCK_MONOTONIC, &a);
    int k = 0;
    do {
      runtime_flows(base, k++);
      nanosleep(&d, NULL);
      clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
    fclose(expected);
    return 0;
  }
  if (argc >= 5 && strcmp(argv[4], "crash") == 0) {
    /* Records ITERATIONS events, then dies of SIGSEGV: the events must still be in the trace. */
    for (long i = 0; i < iterations; i++) TRACETOOLS_TRACEPOINT(callback_end, P(i + 1));
    volatile int * null = NULL;
    return *null;
  }
  if (argc >= 5 && strcmp(argv[4], "idle") == 0) {
    /* Records ITERATIONS events, says so on stdout, then idles until killed (SIGKILL: no
       handler runs, only what the writer wrote before is in the trace). */
    for (long i = 0; i < iterations; i++) TRACETOOLS_TRACEPOINT(callback_end, P(i + 1));
    printf("recorded\n");
    fflush(stdout);
    for (;;) pause();
  }
  if (argc >= 5 && strcmp(argv[4], "inits") == 0) {
    /* Initializes ITERATIONS nodes (rcl_node_init, each its own handle and name), says
       "initialized" on stdout, waits for the end of stdin, then writes its peak resident memory
       (VmHWM, kB) to EXPECTED_FILE. */
    char name[32];
    for (long i = 0; i < iterations; i++) {
      snprintf(name, sizeof name, "node_%ld", i);
      TRACETOOLS_TRACEPOINT(rcl_node_init, P(0x100000 + 16 * i), P(0x200000 + 16 * i), name, "/");
    }
    printf("initialized\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    char line[256];
    FILE * status = fopen("/proc/self/status", "r");
    long hwm = -1;
    while (status && fgets(line, sizeof line, status)) {
      if (strncmp(line, "VmHWM:", 6) == 0) hwm = atol(line + 6);
    }
    if (status) fclose(status);
    FILE * f = fopen(argv[1], "w");
    fprintf(f, "%ld\n", hwm);
    fclose(f);
    return 0;
  }
  if (argc >= 5 && strcmp(argv[4], "clock") == 0) {
    /* THREADS threads each record ITERATIONS rmw_take whose source_timestamp is CLOCK_MONOTONIC
       read just before the call, pausing 1 ms every 16: each event's time lies between its own
       clock read and the next one. */
    pthread_t t[16];
    for (int i = 0; i < threads && i < 16; i++) pthread_create(&t[i], NULL, clock_main, (void *) (uintptr_t) i);
    for (int i = 0; i < threads && i < 16; i++) pthread_join(t[i], NULL);
    return 0;
  }
  if (argc >= 5 && strcmp(argv[4], "bench") == 0) {
    struct timespec a, b;
    long n = iterations;
    /* Warm up (initialization, first ring). */
    for (long i = 0; i < 1000; i++) TRACETOOLS_TRACEPOINT(callback_start, P(i), false);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
      TRACETOOLS_TRACEPOINT(rmw_take, P(0x1000), P(i), (int64_t) i, true);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double) n;
    /* Baseline: a call into the library that does nothing. */
    volatile bool sink = false;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) sink ^= ros_trace_compile_status();
    clock_gettime(CLOCK_MONOTONIC, &b);
    double base = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double) n;
    FILE * f = fopen(argv[1], "w");
    fprintf(f, "%.3f %.3f\n", ns, base);
    fclose(f);
    return 0;
  }
  if (argc >= 6 && strcmp(argv[4], "stress") == 0) {
    /* Emit as fast as possible from THREADS threads for SECONDS; print events emitted. With
       LATE (stress SECONDS LATE), a thread started after them then records LATE events. */
    double seconds = atof(argv[5]);
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, stress_main, (void *) (uintptr_t) i);
    struct timespec d = {(time_t) seconds, (long) ((seconds - (time_t) seconds) * 1e9)};
    nanosleep(&d, NULL);
    stop_stress = 1;
    unsigned long long total = 0;
    for (int i = 0; i < threads && i < 64; i++) {
      pthread_join(t[i], NULL);
      total += stress_counts[i];
    }
    if (argc >= 7) {
      unsigned long long late = strtoull(argv[6], NULL, 10);
      pthread_t l;
      pthread_create(&l, NULL, late_main, (void *) (uintptr_t) late);
      pthread_join(l, NULL);
      total += late;
    }
    FILE * f = fopen(argv[1], "w");
    fprintf(f, "%llu\n", total);
    fclose(f);
    return 0;
  }
  expected = fopen(argv[1], "w");
  if (!expected) return 1;
  if (!ros_trace_compile_status()) return 3;
  pthread_t t[16];
  for (int i = 0; i < threads && i < 16; i++) {
    pthread_create(&t[i], NULL, thread_main, (void *) (uintptr_t) (0x10000 * (i + 1) + 0x100000 * (uintptr_t) getpid()));
  }
  for (int i = 0; i < threads && i < 16; i++) pthread_join(t[i], NULL);
  fclose(expected);
  return 0;
}
