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

:func:`map_chunks` is what the game runners call: chunks of games in this process, over a
local pool, or as tasks of a Ray cluster (``address``; :mod:`greed_env.cluster`), the same
function and items each way, so a chunk's result never depends on where it ran.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.pool import Pool
from typing import Any, TypeVar

from greed_env import cluster
from greed_env.bots.loader import file_modules, import_file_modules

__all__ = ["PARENT_CHECK_S", "map_chunks", "parallelism", "sigint_ignored", "spawn_pool"]

Item = TypeVar("Item")
Result = TypeVar("Result")

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


def parallelism(workers: int, address: str | None) -> int:
    """How many chunks can run at once: the cluster's CPUs with an ``address`` (connected by
    :func:`greed_env.cluster.connected`), else ``workers``."""
    return cluster.cluster_cpus() if address is not None else max(1, int(workers))


def map_chunks(
    fn: Callable[[Item], Result],
    items: Sequence[Item],
    *,
    workers: int = 1,
    address: str | None = None,
    initializer: Callable[..., Any] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[Result]:
    """``fn`` of every item, in the order they finish: in this process (``workers`` 1), over
    a :func:`spawn_pool` of ``workers`` processes, or as Ray tasks on the cluster at
    ``address`` (each task first imports the parent's ``py:`` bot files, as a pool worker
    does; :func:`greed_env.cluster.run_chunks`, which runs a lost task again). ``initializer``
    runs once per process before its first item.

    Raises:
        ClusterError: no Ray or no cluster at ``address``.
    """
    if not items:
        return
    if address is not None:
        with cluster.connected(address):
            prepare = functools.partial(import_file_modules, file_modules())
            for _, result in cluster.run_chunks(fn, items, prepare=prepare, initializer=initializer, initargs=initargs):
                yield result
        return
    if workers <= 1 or len(items) <= 1:
        if initializer is not None:
            initializer(*initargs)
        for item in items:
            yield fn(item)
        return
    with spawn_pool(min(workers, len(items)), initializer, initargs) as pool:
        yield from pool.imap_unordered(fn, items)
