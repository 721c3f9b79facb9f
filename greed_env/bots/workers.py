"""Worker processes that play games for a parent (evaluation, tournaments, benchmark fields).

A terminal's Ctrl-C reaches every process of the foreground group: left alone, each worker
would print its own ``KeyboardInterrupt`` traceback while the parent ends. :func:`spawn_pool`
starts the workers with SIGINT ignored (an ignored signal stays ignored across ``exec``, and
Python then installs no handler of its own), so the interrupt is the parent's alone: it raises
``KeyboardInterrupt`` in the parent, whose ``with pool:`` block terminates the workers. The
parent ignores SIGINT only while it starts the workers (milliseconds: a Ctrl-C in that instant
is lost, the next one is not).

A bot of a ``py:path/to/file.py:ATTR`` spec is an object of a class whose module was imported
from that file under a name no import statement finds; a worker that unpickled it would fail
(and the pool, starting a new worker each time, would wait for ever). Each worker therefore
first imports the files the parent's ``py:`` specs imported
(:func:`greed_env.bots.loader.file_modules`).

A parent can also end without reaching its ``with pool:`` exit: killed by SIGTERM (``kill``,
``pkill``, a job scheduler's time limit) or SIGKILL. Its workers would then go on playing at
full speed with nobody to report to. Each worker therefore watches its parent: a thread checks
every :data:`PARENT_CHECK_S` seconds that the process that started it is still its parent, and
ends the worker when it is not.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.pool import Pool
from typing import Any

from greed_env.bots.loader import file_modules, import_file_modules

__all__ = ["PARENT_CHECK_S", "sigint_ignored", "spawn_pool"]

PARENT_CHECK_S = 1.0
"""Seconds between a worker's checks that its parent is alive."""


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT within the block, so that the processes started in it ignore it for good;
    the handler is restored after (a no-op off the main thread, where handlers cannot change)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def spawn_pool(
    processes: int, initializer: Callable[..., Any] | None = None, initargs: tuple[Any, ...] = ()
) -> Pool:
    """A ``spawn`` pool of ``processes`` workers that leave Ctrl-C to the parent and can unpickle
    the bots of ``py:`` files (see the module docstring); use it as
    ``with spawn_pool(k) as pool:``."""
    start = (os.getpid(), file_modules(), pickle.dumps((initializer, initargs)))
    with sigint_ignored():
        return mp.get_context("spawn").Pool(processes, _start_worker, start)


def _start_worker(parent: int, modules: dict[str, str], init: bytes) -> None:
    """A worker's start: watch the parent, import the parent's ``py:`` files (see the module
    docstring), then the pool's own initializer (unpickled after the imports: its arguments
    may hold such bots)."""
    threading.Thread(target=_watch_parent, args=(parent,), name="greed-parent-watch", daemon=True).start()
    import_file_modules(modules)
    initializer, initargs = pickle.loads(init)
    if initializer is not None:
        initializer(*initargs)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)  # the parent is gone: nothing will read what this worker computes
