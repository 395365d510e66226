"""Shared fixtures: where the shared traces and references are."""

import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("ROSTRACE_TEST_DATA", Path(__file__).resolve().parents[2].parent / "shared"))


def trace_of(name: str) -> Path:
    """The trace of a reference name (``caret-analyze-samples__<app>`` is a sample)."""
    if name.startswith("caret-analyze-samples__"):
        return SHARED / "traces/caret-analyze-samples" / name[len("caret-analyze-samples__"):]
    return SHARED / "traces" / name


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"{SHARED} is missing (set ROSTRACE_TEST_DATA)")
    return SHARED
