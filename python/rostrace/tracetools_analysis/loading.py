"""``load_file``: the events of a trace directory (read by rostrace, lazily) or of a
converted file (tracetools_analysis's pickle)."""

import os
import pickle
from typing import Dict, Iterator, List, Optional, Union

from .. import _paths, _rostrace, _warn, iter_events
from .convert import DEFAULT_CONVERT_FILE_NAME, convert


class TraceEvents:
    """The events of trace directories, as ``load_file`` gives them: a sequence of dicts
    (``_name``, ``_timestamp``, fields) read on demand. Iterating streams them; ``len`` counts
    them; indexing reads them all into a list once. Processing it with ``Ros2Handler`` reads
    only the ROS 2 events, in Rust, column by column."""

    def __init__(self, paths: List[str]):
        self.paths = paths
        self._len: Optional[int] = None
        self._list: Optional[List[Dict]] = None

    def __iter__(self) -> Iterator[Dict]:
        if self._list is not None:
            return iter(self._list)
        return iter_events(self.paths)

    def __len__(self) -> int:
        if self._list is not None:
            return len(self._list)
        if self._len is None:
            n, errors = _rostrace.count_events(self.paths, 0)
            _warn(errors)
            self._len = n
        return self._len

    def counted(self, n: int) -> None:
        """Notes the number of events, found while reading them for another purpose."""
        self._len = n

    def __getitem__(self, i):
        if self._list is None:
            self._list = list(iter_events(self.paths))
        return self._list[i]

    def __repr__(self) -> str:
        return f"<events of {', '.join(self.paths)}>"


def _has_ctf(path: str) -> bool:
    for _root, _dirs, files in os.walk(path):
        if "metadata" in files:
            return True
    return False


def _load_pickle(path: str) -> List[Dict]:
    events = []
    with open(path, "rb") as f:
        p = pickle.Unpickler(f)
        while True:
            try:
                events.append(p.load())
            except EOFError:
                break
    return events


def load_file(
    input_path: str,
    do_convert_if_needed: bool = True,
    force_conversion: bool = False,
    quiet: bool = False,
    convert_only: bool = False,
) -> Union[TraceEvents, List[Dict]]:
    """The events of ``input_path``: a trace directory (read by rostrace; a ``converted`` file
    beside it is not needed and not used) or a converted file (a pickle of events, loaded as a
    list). ``do_convert_if_needed`` and ``force_conversion`` are accepted for compatibility;
    ``convert_only`` writes the converted file (as ``process -c``) and returns its events."""
    input_path = os.path.expanduser(input_path)
    if os.path.isdir(input_path) and _has_ctf(input_path):
        if convert_only:
            convert(input_path, DEFAULT_CONVERT_FILE_NAME, quiet=quiet)
        return TraceEvents(_paths(input_path))
    if os.path.isdir(input_path):
        converted = os.path.join(input_path, DEFAULT_CONVERT_FILE_NAME)
        if os.path.isfile(converted):
            return _load_pickle(converted)
    elif os.path.isfile(input_path):
        return _load_pickle(input_path)
    if not quiet:
        print(f"cannot find either a trace directory or a converted file: {input_path}")
    raise RuntimeError(f"could not use input path: {input_path}")
