"""Safe points for Ctrl-C in long compiled work: where a recorded interrupt is raised.

A compiled kernel (numba, ``nogil``) runs a whole pass without returning to Python, and a
``KeyboardInterrupt`` raised inside numba's own C code or one of its compiler callbacks is lost
or crashes the process. So long work marks where an interrupt may start:

* :func:`deferred` wraps a region (:func:`greed_env.solver.solve`, ``greed export``): inside it
  a Ctrl-C is only recorded;
* :func:`check` is a safe point (between the stages of a solve, between levels of a pass, and
  the end of a deferred region): it raises ``KeyboardInterrupt`` when one was recorded.

The record is kept by whoever handles the signals of the process: the ``greed`` command
(:func:`greed_env.commands.signals.handling`) installs a fresh :class:`Record` for the length
of a command (:func:`recording`), its SIGINT handler calls :func:`take`, and its watcher ends a
process that reaches no safe point in time. Outside such a block nothing is ever recorded:
:func:`check` never raises, and Python's own handler raises ``KeyboardInterrupt`` as usual.

>>> with deferred():
...     check()  # nothing recorded: no exception
>>> requested()
False
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

__all__ = ["Record", "check", "current", "deferred", "recording", "requested", "take"]


class Record:
    """The interrupt of one signal-handling block.

    Attributes:
        requested: set once Ctrl-C has been pressed.
        raised: set once ``KeyboardInterrupt`` has been raised for it (by the handler, or at a
            safe point).
        defer: how many :func:`deferred` regions are open.
        active: whether a handler records into it (the record outside any block is not).
    """

    def __init__(self, active: bool = False) -> None:
        self.requested = threading.Event()
        self.raised = threading.Event()
        self.defer = 0
        self.active = active


_RECORD = Record()  # outside recording(): nothing is ever recorded


def current() -> Record:
    """The record interrupts are kept in now."""
    return _RECORD


@contextlib.contextmanager
def recording() -> Iterator[Record]:
    """Within the block, interrupts are kept in a fresh active :class:`Record`; then the
    previous record is back."""
    global _RECORD
    outer = _RECORD
    record = _RECORD = Record(active=True)
    try:
        yield record
    finally:
        record.active = False
        record.raised.set()  # whoever waits for the raise returns
        _RECORD = outer


def take() -> bool:
    """Record a Ctrl-C; True when the caller (a SIGINT handler) is to raise it now: outside a
    deferred region, and only the first time (a second Ctrl-C does not cut short the cleanup
    the first started)."""
    record = _RECORD
    record.requested.set()
    if record.defer > 0 or record.raised.is_set():
        return False
    record.raised.set()
    return True


def requested() -> bool:
    """Whether an interrupt has been recorded in the running block."""
    return _RECORD.requested.is_set()


def check() -> None:
    """A safe point: raise ``KeyboardInterrupt`` when an interrupt has been recorded.

    Raises:
        KeyboardInterrupt: Ctrl-C was pressed while a handler recorded interrupts.
    """
    record = _RECORD
    if record.requested.is_set():
        record.raised.set()
        raise KeyboardInterrupt


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Within the block, an interrupt is only recorded; :func:`check` raises it at the next safe
    point, and leaving the block is one. Regions nest; where nothing records interrupts this
    is a no-op."""
    record = _RECORD
    record.defer += 1
    try:
        yield
    finally:
        record.defer -= 1
    check()


def _forget_in_child() -> None:
    """A forked child records nothing until it installs a handler of its own."""
    global _RECORD
    _RECORD = Record()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_in_child)
