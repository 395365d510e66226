"""ros2_tracing's ``tracetools_test`` on rostrace: ``TraceTestCase`` with the same constructor and
assertions (``assertEventsSet``, ``assertEventOrder``, ``get_events_with_name``, ``get_field``,
...), whose nodes are launched under ``rostrace.launch.Trace`` (rostrace's embedded tracer by
default, no LTTng session) and whose trace is read by rostrace. A test written for
``tracetools_test`` changes only its import::

    from rostrace.tracetools_test.case import TraceTestCase   # was: from tracetools_test.case ...

rostrace's own assertions on the analysis come beside them (``assertCallbackP99Below``,
``assertEveryMessageMatched``, ``analysis``).
"""
