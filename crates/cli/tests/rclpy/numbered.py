"""Messages numbered per topic, for the test programs that log which input made each output."""

import threading
import time


class Numbered:
    """Publishes ``std_msgs/String`` messages whose text is their index on their topic, and
    counts them per topic (``published``)."""

    def __init__(self, string_type):
        self._string = string_type
        self._lock = threading.Lock()
        self.published = {}

    def send(self, pub, topic):
        """Publishes the next message of `topic` on `pub`; returns its index."""
        with self._lock:
            i = self.published.get(topic, 0)
            self.published[topic] = i + 1
        pub.publish(self._string(data=str(i)))
        return i

    def drain(self, taken, topic, timeout=5.0):
        """Once the sources have stopped: waits until `taken()` (how many messages of `topic`
        the sink took) has reached how many were published and stayed so a moment, or
        `timeout` seconds, so that the last messages in flight are delivered before shutdown."""
        end, since = time.monotonic() + timeout, None
        while time.monotonic() < end:
            with self._lock:
                done = taken() >= self.published.get(topic, 0)
            if not done:
                since = None
            elif since is None:
                since = time.monotonic()
            elif time.monotonic() - since > 0.3:
                return
            time.sleep(0.05)

