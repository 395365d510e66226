"""Messages numbered per topic, for the test programs that log which input made each output."""

import threading


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
