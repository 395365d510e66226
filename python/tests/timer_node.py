"""A timer node through the C ABI (Jazzy's signatures), for the tests of the test helpers
(python/tests/test_testing.py, crates/testing/tests/tracing.rs): registered, then RUNS runs of
about 2 ms (``python3 timer_node.py RUNS``, with libtracetools.so preloaded)."""
import ctypes, sys, time
lib = ctypes.CDLL(None)
vp, s, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
def fn(name, *args):
    f = getattr(lib, "ros_trace_" + name); f.argtypes = list(args); f.restype = None; return f
node, timer, cb = vp(0x1000), vp(0x2000), vp(0x3000)
fn("rcl_init", vp)(vp(0x10))
fn("rcl_node_init", vp, vp, s, s)(node, vp(0x1001), b"ticker", b"/")
fn("rcl_timer_init", vp, i64)(timer, 100_000_000)
fn("rclcpp_timer_callback_added", vp, vp)(timer, cb)
fn("rclcpp_timer_link_node", vp, vp)(timer, node)
fn("rclcpp_callback_register", vp, s)(cb, b"Ticker::on_tick")
start, end = fn("callback_start", vp, ctypes.c_bool), fn("callback_end", vp)
for _ in range(int(sys.argv[1])):
    start(cb, False); time.sleep(0.002); end(cb)
