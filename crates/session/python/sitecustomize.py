"""rostrace's rclpy instrumentation, loaded into every Python that `rostrace record` and
`rostrace demo` run (this directory is put first on PYTHONPATH): see _rostrace_rclpy.py.
ROSTRACE_RCLPY=0 turns it off. The sitecustomize module this one hides, if any, is run after it.
"""


def _rostrace_start():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import _rostrace_rclpy

        _rostrace_rclpy.instrument()
    except Exception as e:  # never break the traced program
        sys.stderr.write("rostrace: rclpy instrumentation not loaded: %r\n" % (e,))
    spec = None
    # Python imports one sitecustomize: run the one found after this directory, as it would have.
    try:
        import importlib.machinery
        import importlib.util

        rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
        if spec is not None and spec.loader is not None:
            mod = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = mod
            spec.loader.exec_module(mod)
    except Exception as e:
        sys.stderr.write("rostrace: error in sitecustomize %s: %r\n" % (getattr(spec, "origin", "?"), e))


_rostrace_start()
del _rostrace_start
