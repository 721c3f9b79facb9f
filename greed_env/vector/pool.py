"""The vector engine's thread pool, in which the calling thread never waits for a late worker.

A batch call (a step, a resume after a refill, the random policy's actions) is cut into row
ranges that the threads *claim* from one atomic counter, the calling thread included
(:mod:`greed_env.vector.threads`): large ranges first, shrinking as the rows run out (a claim
takes the rows left divided by twice the threads, at least :data:`MIN_ROWS`). A worker that the
operating system wakes late, or that shares its core with another process, claims fewer
ranges and the calling thread runs the rest, so a call never waits longer than one range held
by a descheduled worker, and with every worker asleep it runs the whole batch alone at one
thread's speed. Between calls a worker spins on the counter inside a compiled loop (no GIL)
for up to :data:`IDLE_CYCLES` (about 15 ms), yielding its core between polls, so the steps of a rollout reach it without
a wake-up; after that it sleeps until the next call asks for it again.

numba's own ``parallel=True`` pool splits a loop into one equal share per thread and ends it
at a barrier, so one slow thread held up every call: with another process on one of two
cores, two threads ran at a quarter of one thread's speed (its OpenMP workers also spin while
they wait for the barrier). Here rows are the unit of work and each reads only its own draws,
so results never depend on which thread ran a row.

The workers are daemon threads shared by every batch of the process, started on first use; a
child made by ``fork`` starts its own. A batch holds a :class:`RowPool`, which binds the
batch's arrays to its control block; arrays replaced (a growing table) get a new block.
"""

from __future__ import annotations

import collections
import os
import queue
import statistics
import threading
import time
from typing import Any

import numpy as np

from greed_env.vector import threads as T

__all__ = [
    "IDLE_CYCLES",
    "MIN_ROWS",
    "PROBE_ABORT",
    "PROBE_EVERY",
    "PROBE_STEPS",
    "RECENT",
    "SHARE_GAIN",
    "RowPool",
    "default_threads",
]

MIN_ROWS = 128
"""The smallest row range a thread claims."""

IDLE_CYCLES = 40_000_000
"""Cycles of the processor's cycle counter a worker waits for work before it sleeps (about
10-20 ms: a rollout's steps come closer than that, so its worker stays awake between them)."""


def default_threads() -> int:
    """Threads of a ``parallel=True`` batch: numba's configured count (``NUMBA_NUM_THREADS``,
    else the cores this process may run on)."""
    import numba

    return max(1, int(numba.config.NUMBA_NUM_THREADS))


class _Request:
    """A worker's assignment: serve ``ctl`` with ``args`` until it goes idle."""

    __slots__ = ("args", "ctl", "pool")

    def __init__(self, pool: RowPool, ctl: np.ndarray, args: tuple[Any, ...]) -> None:
        self.pool = pool
        self.ctl = ctl
        self.args = args


class _Workers:
    """Daemon threads taking requests from one queue."""

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self.count = 0
        self.lock = threading.Lock()

    def ensure(self, count: int) -> None:
        with self.lock:
            while self.count < count:
                name = f"greed-vector-{self.count}"
                threading.Thread(target=self._serve, name=name, daemon=True).start()
                self.count += 1

    def _serve(self) -> None:
        while True:
            req = self.requests.get()
            try:
                T.serve(req.ctl, IDLE_CYCLES, *req.args)
            finally:
                req.pool._left(req.ctl)


_workers = _Workers()


def _after_fork() -> None:
    global _workers
    _workers = _Workers()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork)


PROBE_STEPS = 9
"""Steps run in the other mode (alone or shared) at each probe; the first is not timed (a
worker woken, caches refilled), so eight are: an even count, because a game's steps often
alternate a light and a heavy kind (a keep, then a roll on) and an odd sample would favour
whichever mode drew more light steps."""

PROBE_EVERY = (64, 1024)
"""Steps between probes: the shortest after a change of mode, doubled each time a probe
confirms the mode, up to the longest."""

PROBE_ABORT = 2.0
"""A probe step that takes this many times the current mode's mean step time ends the probe
(the other mode stays): light and heavy steps differ by about 2 to 1 between themselves, a
step that waits for a descheduled worker by far more."""

RECENT = 16
"""Step times kept per mode; a mode's cost is their mean (throughput is a mean: a step held
up by a descheduled worker counts in full), taken over an even number of steps."""

SHARE_GAIN = 0.9
"""Running alone, a probe must find sharing this much faster (its mean step time at most
this share of running alone) to share again: sharing risks a descheduled worker, running
alone does not."""


class RowPool:
    """Runs a batch's jobs on ``threads`` threads (the calling one included).

    The pool times its steps and runs each step *shared* (with the workers) or *alone* (on the
    calling thread), whichever has been faster lately: every so often a few steps run in the
    other mode (:data:`PROBE_STEPS`, :data:`PROBE_EVERY`) to keep both estimates fresh. On a
    machine whose other core is busy, a worker can be descheduled while it holds rows, and the
    step then waits for it; such steps make the shared mode slower than one thread and the
    pool runs alone until a probe finds the workers useful again. Which thread runs a row never
    changes the results.

    Args:
        n: rows of the batch.
        threads: threads per job; 1 runs every job on the calling thread.
    """

    def __init__(self, n: int, threads: int) -> None:
        self.n = int(n)
        self.threads = max(1, int(threads))
        self._seq = 0
        self._ctl = self._new_ctl()
        self._args: tuple[Any, ...] | None = None
        self._serving = 0
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._times: dict[bool, collections.deque[float]] = {
            False: collections.deque(maxlen=RECENT),
            True: collections.deque(maxlen=RECENT),
        }
        self._alone = False
        self._steps = 0
        self._every = PROBE_EVERY[0]
        self._probe_left = 0
        self._probe: list[float] = []
        self._last_mode: bool | None = None
        self.shared_steps = 0
        """Steps run with the workers so far."""
        self.alone_steps = 0
        """Steps run on the calling thread alone so far."""

    def _new_ctl(self) -> np.ndarray:
        ctl = np.zeros(T.control_size(self.threads), dtype=np.int64)
        ctl[T.CTL_N] = self.n
        ctl[T.CTL_SEGMENTS] = self.threads
        ctl[T.CTL_MIN_ROWS] = MIN_ROWS
        for seg in range(self.threads):  # no job yet: every counter at its segment's end
            ctl[T.LINE * (seg + 1)] = self.n * (seg + 1) // self.threads
        return ctl

    def _left(self, ctl: np.ndarray) -> None:
        with self._lock:
            if ctl is self._ctl:
                self._serving -= 1

    def _mode_of_step(self) -> bool:
        """Whether the next step runs alone (a probe runs the other mode)."""
        best = self._alone
        if self._probe_left > 0:
            return not best
        self._steps += 1
        if self._steps >= self._every:
            self._steps = 0
            self._probe_left = PROBE_STEPS
            return not best
        return best

    def cost(self, alone: bool) -> float | None:
        """The mean of a mode's recent step times over the latest even number of them (None
        before two)."""
        times = list(self._times[alone])
        even = len(times) - len(times) % 2
        return statistics.fmean(times[len(times) - even :]) if even else None

    def _switch(self, alone: bool) -> None:
        self._alone = alone
        self._every = PROBE_EVERY[0]
        self._steps = 0

    def _record(self, alone: bool, seconds: float) -> None:
        """Keep a step's time; at the end of a probe, or as soon as sharing is slower than
        running alone was, choose the mode."""
        first = alone != self._last_mode  # a worker woken, caches refilled: not timed
        self._last_mode = alone
        if alone == self._alone:
            if not first:
                self._times[alone].append(seconds)
            shared, solo = self.cost(False), self.cost(True)
            if (
                not alone
                and shared is not None
                and solo is not None
                and len(self._times[False]) >= RECENT // 2
                and len(self._times[False]) % 2 == 0
                and shared > solo
            ):
                self._switch(True)
            return
        self._probe_left -= 1
        if not first:
            mine = self.cost(self._alone)
            if mine is not None and seconds > PROBE_ABORT * mine:
                # clearly worse (a descheduled worker held the step): end the probe here, so a
                # busy neighbour costs one slow step per probe, not a probe's worth
                self._probe_left = 0
                self._probe = []
                self._every = min(PROBE_EVERY[1], 2 * self._every)
                return
            self._probe.append(seconds)
        if self._probe_left > 0:
            return
        even = len(self._probe) - len(self._probe) % 2
        probe = statistics.fmean(self._probe[:even]) if even else None
        if self._probe:
            self._times[alone].clear()
            self._times[alone].extend(self._probe)
        self._probe = []
        mine = self.cost(self._alone)
        if (
            probe is not None
            and mine is not None
            and (probe < SHARE_GAIN * mine if self._alone else probe < mine)
        ):
            self._switch(alone)
        else:
            self._every = min(PROBE_EVERY[1], 2 * self._every)

    def run(self, kind: int, args: tuple[Any, ...]) -> int:
        """Run job ``kind`` (``threads.JOB_*``) over every row with the kernels' arguments
        ``args`` (``S, E, acts, tab, ..., unif01, out``: see :func:`threads.drive`); returns
        the sum of the range results."""
        if (
            self._args is None
            or self._pid != os.getpid()
            or any(a is not b for a, b in zip(args, self._args, strict=True))
        ):
            self._rebind(args)
        step = kind == T.JOB_STEP
        alone = self.threads == 1 or (self._mode_of_step() if step else self._alone)
        if alone:
            if self._serving:
                self._rebind(args)  # the workers go back to sleep
        else:
            with self._lock:
                missing = self.threads - 1 - self._serving
                self._serving += max(0, missing)
            if missing > 0:
                _workers.ensure(self.threads - 1)
                for _ in range(missing):
                    _workers.requests.put(_Request(self, self._ctl, args))
        self._seq = (self._seq + 1) & 0x7FFFFF
        start = time.perf_counter()
        result = int(T.drive(self._ctl, self._seq << 8 | kind, *args))
        if step and self.threads > 1:
            self._record(alone, time.perf_counter() - start)
            if alone:
                self.alone_steps += 1
            else:
                self.shared_steps += 1
        return result

    def _rebind(self, args: tuple[Any, ...]) -> None:
        """New arrays, or no workers wanted: stop the workers serving the old control block
        and start a new one."""
        with self._lock:
            self._ctl[T.CTL_STOP] = 1
            self._ctl = self._new_ctl()
            self._serving = 0
        self._args = args
        self._pid = os.getpid()

    def close(self) -> None:
        """Send the workers serving this pool back to sleep."""
        self._ctl[T.CTL_STOP] = 1

    def __getstate__(self) -> dict[str, int]:
        """A copy (pickle, ``copy.deepcopy``) is a fresh pool of the same size: workers, locks
        and step timings belong to the process and the object that made them, and no result
        depends on which thread ran a row."""
        return {"n": self.n, "threads": self.threads}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(state["n"], state["threads"])  # type: ignore[misc]

    def __del__(self) -> None:
        ctl = self.__dict__.get("_ctl")
        if ctl is not None:
            ctl[T.CTL_STOP] = 1
