"""rclpy instrumentation: the callback events rclcpp records, emitted for rclpy's callbacks.

rclpy calls rcl and rmw, which are traced, but has no tracepoints of its own: without this, a
Python node's trace has no callback runs and nothing that ties a callback to its subscription,
timer or service. ``instrument()`` patches rclpy's classes (not its files) so that

* ``Node.create_subscription`` emits ``ros2:rclcpp_subscription_init`` (the rcl_subscription_t
  rclpy holds, the Python Subscription object), ``rclcpp_subscription_callback_added`` and
  ``rclcpp_callback_register`` (the callback's qualified name and file:line);
* ``Node.create_timer`` emits ``rclcpp_timer_callback_added``, ``rclcpp_timer_link_node`` and
  ``rclcpp_callback_register`` (timers rclpy makes for itself, such as an executor's timeout
  timer, get none: they are not a node's);
* ``Node.create_service`` emits ``rclcpp_service_callback_added`` and ``rclcpp_callback_register``;
* ``Node.create_client`` emits ``rclcpp_service_callback_added`` with the rcl_client_t (rclcpp has
  no event for a client's callback; rostrace's analysis tells the two apart by the handle) and
  ``rclcpp_callback_register``;
* each of these entities also emits CARET's ``callback_group_add_*`` (its group), and
  ``Executor.add_node`` CARET's executor events (``construct_executor``,
  ``executor_entity_collector_to_executor``, ``callback_group_to_executor_entity_collector``),
  when the library has them (rostrace's does, upstream's not);
* every executor (they all hand each ready entity to ``Executor._take_*``) emits
  ``callback_start``/``callback_end`` around each run of a subscription, timer, service or client
  callback. A coroutine callback is one run from its start to its return, its awaits included,
  and may end on another thread than it started on (MultiThreadedExecutor).

The events go through the ``libtracetools.so`` the process has loaded (rostrace's, preloaded by
``rostrace record``, or upstream's), called with ctypes. ``rostrace record`` and ``rostrace demo``
load this into every Python they run (a ``sitecustomize`` on ``PYTHONPATH``); by hand::

    import rostrace.rclpy
    rostrace.rclpy.instrument()

``ROSTRACE_RCLPY=0`` turns it off, both ways. This file is also shipped on its own (the CLI
writes it beside its ``sitecustomize.py`` as ``_rostrace_rclpy.py``), so it must import nothing
but the standard library and rclpy.
"""

import ctypes
import os
import sys
import threading
import time

__all__ = ["instrument", "enabled", "message_link_periodic_async", "message_link_partial_sync"]

_lock = threading.Lock()
_done = False
# The emitting functions, once the library is found.
_tp = None


def enabled():
    """Whether ``ROSTRACE_RCLPY`` leaves the instrumentation on (anything but ``0``)."""
    return os.environ.get("ROSTRACE_RCLPY", "1").strip() != "0"


class _Tracepoints:
    """The ``ros_trace_*`` functions of a libtracetools.so, typed."""

    def __init__(self, lib):
        vp, b, s = ctypes.c_void_p, ctypes.c_bool, ctypes.c_char_p

        def fn(name, *args):
            f = getattr(lib, "ros_trace_" + name)
            f.argtypes = list(args)
            f.restype = None
            return f

        self.callback_start = fn("callback_start", vp, b)
        self.callback_end = fn("callback_end", vp)
        self.subscription_init = fn("rclcpp_subscription_init", vp, vp)
        self.subscription_callback_added = fn("rclcpp_subscription_callback_added", vp, vp)
        self.service_callback_added = fn("rclcpp_service_callback_added", vp, vp)
        self.timer_callback_added = fn("rclcpp_timer_callback_added", vp, vp)
        self.timer_link_node = fn("rclcpp_timer_link_node", vp, vp)
        self.callback_register = fn("rclcpp_callback_register", vp, s)
        # CARET's executor and callback group events: rostrace's library has them, upstream's
        # does not (then callbacks are traced without their groups and executors).
        try:
            i64 = ctypes.c_int64
            self.construct_executor = fn("caret_construct_executor", vp, s, i64)
            self.collector_to_executor = fn("caret_executor_entity_collector_to_executor", vp, vp, i64)
            self.group_to_collector = fn("caret_callback_group_to_executor_entity_collector", vp, vp, s, i64)
            self.group_add = {
                "subscription": fn("caret_callback_group_add_subscription", vp, vp, i64),
                "timer": fn("caret_callback_group_add_timer", vp, vp, i64),
                "service": fn("caret_callback_group_add_service", vp, vp, i64),
                "client": fn("caret_callback_group_add_client", vp, vp, i64),
            }
        except AttributeError:
            self.group_add = None
        # Message links: tracetools 8.10 and later, and rostrace's library.
        try:
            pp, n = ctypes.POINTER(vp), ctypes.c_size_t
            self.message_link = {k: fn("message_link_" + k, pp, n, pp, n) for k in ("periodic_async", "partial_sync")}
        except AttributeError:
            self.message_link = None


def _find_library():
    """The libtracetools.so this process uses: the global scope first (a preloaded library, as
    `rostrace record` does), else the one mapped (loaded by rcl), else None."""
    # PyDLL: the calls keep the GIL (they take well under a microsecond and never call back into
    # Python; releasing and taking the GIL would cost more than the call).
    try:
        lib = ctypes.PyDLL(None)
        lib.ros_trace_callback_start
        return _Tracepoints(lib)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/maps") as f:
            paths = [l.split(None, 5)[5].strip() for l in f if "libtracetools" in l and len(l.split(None, 5)) == 6]
    except OSError:
        paths = []
    for p in dict.fromkeys(paths):
        try:
            return _Tracepoints(ctypes.PyDLL(p))
        except (OSError, AttributeError):
            continue
    return None


def _symbol(cb):
    """``module.qualname file:line`` of a callback (functions, methods, partials, callables)."""
    f = cb
    for _ in range(8):
        inner = getattr(f, "func", None) or getattr(f, "__wrapped__", None) or getattr(f, "__func__", None)
        if inner is None or inner is f:
            break
        f = inner
    code = getattr(f, "__code__", None)
    if code is None and not hasattr(f, "__qualname__"):
        f = type(f)
        call = getattr(f, "__call__", None)
        code = getattr(call, "__code__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    module = getattr(f, "__module__", None)
    if module and module != "__main__":
        name = module + "." + name
    if code is not None:
        name += " " + code.co_filename + ":" + str(code.co_firstlineno)
    return name


def _pointer(entity):
    """The address of the rcl object rclpy holds for `entity` (its handle's `pointer`)."""
    return entity.handle.pointer


def _token(entity):
    """A stable address standing for `entity`'s callback: an object kept alive by the entity,
    so that no other live callback has it."""
    t = _Token()
    entity._rostrace_callback = t
    return t, id(t)


class _Token:
    __slots__ = ("__weakref__",)


def _encode(s):
    return s.encode("utf-8", "replace")


def _group_type(group):
    """CARET's name of a callback group's type."""
    return b"reentrant" if type(group).__name__.startswith("Reentrant") else b"mutually_exclusive"


def _link_group(collector, group):
    """`callback_group_to_executor_entity_collector`, once per group (under `_lock`): a group
    belongs to the first executor it is added to, as in rclcpp, which refuses to add a group
    to a second executor (rclpy lets a node move from one executor to another)."""
    if group is None or getattr(group, "_rostrace_linked", False):
        return
    group._rostrace_linked = True
    _tp.group_to_collector(collector, id(group), _group_type(group), time.monotonic_ns())


def _added_to_group(node, kind, entity):
    """`callback_group_add_<kind>` for a new entity, and its group's link to the executors the
    node was already added to."""
    if _tp.group_add is None:
        return
    group = getattr(entity, "callback_group", None)
    if group is None:
        return
    _tp.group_add[kind](id(group), _pointer(entity), time.monotonic_ns())
    with _lock:
        for collector in getattr(node, "_rostrace_collectors", ()):
            _link_group(collector, group)


def _patch_node(node_mod):
    Node = node_mod.Node
    if getattr(Node, "_rostrace_instrumented", False):
        return
    tp = _tp
    orig_sub, orig_timer = Node.create_subscription, Node.create_timer
    orig_srv, orig_cli = Node.create_service, Node.create_client

    def create_subscription(self, *args, **kwargs):
        sub = orig_sub(self, *args, **kwargs)
        try:
            _, cb = _token(sub)
            tp.subscription_init(_pointer(sub), id(sub))
            tp.subscription_callback_added(id(sub), cb)
            tp.callback_register(cb, _encode(_symbol(sub.callback)))
            _added_to_group(self, "subscription", sub)
        except Exception:
            pass
        return sub

    def create_timer(self, *args, **kwargs):
        tmr = orig_timer(self, *args, **kwargs)
        try:
            _, cb = _token(tmr)
            h = _pointer(tmr)
            tp.timer_callback_added(h, cb)
            tp.timer_link_node(h, self.handle.pointer)
            tp.callback_register(cb, _encode(_symbol(tmr.callback)))
            _added_to_group(self, "timer", tmr)
        except Exception:
            pass
        return tmr

    def create_service(self, *args, **kwargs):
        srv = orig_srv(self, *args, **kwargs)
        try:
            _, cb = _token(srv)
            tp.service_callback_added(_pointer(srv), cb)
            tp.callback_register(cb, _encode(_symbol(srv.callback)))
            _added_to_group(self, "service", srv)
        except Exception:
            pass
        return srv

    def create_client(self, *args, **kwargs):
        cli = orig_cli(self, *args, **kwargs)
        try:
            _, cb = _token(cli)
            tp.service_callback_added(_pointer(cli), cb)
            tp.callback_register(cb, _encode("rclpy.client.Client response " + str(cli.srv_name)))
            _added_to_group(self, "client", cli)
        except Exception:
            pass
        return cli

    for f, o in (
        (create_subscription, orig_sub),
        (create_timer, orig_timer),
        (create_service, orig_srv),
        (create_client, orig_cli),
    ):
        setattr(Node, o.__name__, _like(f, o))
    Node._rostrace_instrumented = True


def _traced_take(orig, start, end):
    """`Executor._take_*` method `orig`, with callback_start/callback_end around each run.

    `_take_*` takes the message (or request, response, timer call) and returns the coroutine
    function that runs the callback, or None: the run is that coroutine, so it is the same for
    every executor and spin function, and follows its take on the thread."""

    def take(self, entity):
        run = orig(self, entity)
        if run is None:
            return None
        token = getattr(entity, "_rostrace_callback", None)
        if token is None:
            return run
        cb = id(token)

        async def _execute():
            start(cb, False)
            try:
                await run()
            finally:
                end(cb)

        return _execute

    return _like(take, orig)


def _traced_add_node(orig, multi_threaded):
    """`Executor.add_node`, which also emits CARET's executor events: the executor (once), its
    entity collector (an object standing for it, as rclcpp's executors have one) and the node's
    callback groups in it."""

    def add_node(self, node):
        added = orig(self, node)
        if _tp.group_add is None:
            return added
        try:
            with _lock:
                collector = getattr(self, "_rostrace_collector", None)
                if collector is None:
                    now = time.monotonic_ns()
                    kind = b"multi_threaded_executor" if isinstance(self, multi_threaded) else b"single_threaded_executor"
                    self._rostrace_collector = collector = _Token()
                    _tp.construct_executor(id(self), kind, now)
                    _tp.collector_to_executor(id(self), id(collector), now)
                collectors = node.__dict__.setdefault("_rostrace_collectors", [])
                if id(collector) not in collectors:
                    collectors.append(id(collector))
                for entities in (node.subscriptions, node.timers, node.services, node.clients):
                    for e in entities:
                        _link_group(id(collector), getattr(e, "callback_group", None))
        except Exception:
            pass
        return added

    return _like(add_node, orig)


def _traced_remove_node(orig):
    """`Executor.remove_node`: the node's later entities are no longer in this executor."""

    def remove_node(self, node):
        orig(self, node)
        collector = getattr(self, "_rostrace_collector", None)
        collectors = node.__dict__.get("_rostrace_collectors")
        if collector is not None and collectors and id(collector) in collectors:
            with _lock:
                collectors.remove(id(collector))

    return _like(remove_node, orig)


def _like(f, orig):
    """`f`, named and documented as `orig`, which it wraps."""
    f.__wrapped__ = orig
    f.__name__ = orig.__name__
    f.__qualname__ = orig.__qualname__
    f.__doc__ = orig.__doc__
    return f


def _patch_executor(ex_mod):
    Executor = ex_mod.Executor
    if getattr(Executor, "_rostrace_instrumented", False):
        return
    Executor.add_node = _traced_add_node(Executor.add_node, getattr(ex_mod, "MultiThreadedExecutor", ()))
    Executor.remove_node = _traced_remove_node(Executor.remove_node)
    for name in ("_take_subscription", "_take_timer", "_take_service", "_take_client"):
        orig = getattr(Executor, name, None)
        if orig is not None:
            setattr(Executor, name, _traced_take(orig, _tp.callback_start, _tp.callback_end))
    Executor._rostrace_instrumented = True


def _patch_loaded():
    """Patches the rclpy modules already imported; returns whether both are done."""
    node_mod, ex_mod = sys.modules.get("rclpy.node"), sys.modules.get("rclpy.executors")
    global _tp
    if (node_mod or ex_mod) and _tp is None:
        _tp = _find_library()
    if _tp is None:
        return False
    if node_mod is not None and hasattr(node_mod, "Node"):
        _patch_node(node_mod)
    if ex_mod is not None and hasattr(ex_mod, "Executor"):
        _patch_executor(ex_mod)
    return all(getattr(m, c, None) is not None and getattr(getattr(m, c), "_rostrace_instrumented", False)
               for m, c in ((node_mod, "Node"), (ex_mod, "Executor")))


class _Finder:
    """Patches `rclpy.node` and `rclpy.executors` as soon as each has been imported."""

    _names = ("rclpy.node", "rclpy.executors")

    def find_spec(self, name, path=None, target=None):
        if name not in self._names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        class Loader:
            def create_module(self_, spec_):
                return loader.create_module(spec_)

            def exec_module(self_, module):
                # The module's own loader, so that its __loader__ and __spec__ stay rclpy's.
                module.__loader__ = loader
                module.__spec__.loader = loader
                exec_module(module)
                with _lock:
                    try:
                        if _patch_loaded():
                            _remove_finder()
                    except Exception as e:  # never break the user's import
                        sys.stderr.write("rostrace: rclpy instrumentation failed: %r\n" % (e,))

        spec.loader = Loader()
        return spec


_finder = None


def _remove_finder():
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None


def message_link_periodic_async(subscriptions, publishers):
    """Declares that ``publishers`` (rclpy Publishers) publish from the latest message of each of
    ``subscriptions`` (rclpy Subscriptions): a timer fusing the data it holds. Emits
    ``ros2:message_link_periodic_async``, through which analyses follow a message from each input
    to every output published while it is the latest. Returns whether a tracer library took it
    (recorded with Rolling's tracepoints only, as upstream's tracetools 8.10 records it).
    Importable as ``rostrace.rclpy`` and, in a process ``rostrace record`` runs, as
    ``_rostrace_rclpy``."""
    return _message_link("periodic_async", subscriptions, publishers)


def message_link_partial_sync(subscriptions, publishers):
    """Declares that ``publishers`` publish once they have a new message of each of
    ``subscriptions``, each message used once (a synchronizer): as
    :func:`message_link_periodic_async`, but a message feeds at most one publication."""
    return _message_link("partial_sync", subscriptions, publishers)


def _message_link(kind, subscriptions, publishers):
    global _tp
    with _lock:
        if _tp is None:
            _tp = _find_library()
        tp = _tp
    if tp is None or tp.message_link is None:
        return False
    subs = [_pointer(s) for s in subscriptions]
    pubs = [_pointer(p) for p in publishers]
    tp.message_link[kind]((ctypes.c_void_p * len(subs))(*subs), len(subs), (ctypes.c_void_p * len(pubs))(*pubs), len(pubs))
    return True


def instrument():
    """Instruments rclpy: now if it is imported, else as soon as it is. Returns False when
    ``ROSTRACE_RCLPY=0`` turned it off; a second call does nothing."""
    global _done, _finder
    if not enabled():
        return False
    with _lock:
        if _done:
            return True
        _done = True
        if _patch_loaded():
            return True
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)
        return True
