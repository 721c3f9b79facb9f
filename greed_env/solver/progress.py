"""Progress of a solve: a bar with the time left, on a stream, while a table is solved.

The compiled drivers (``duel_solve``, ``duel_penalty_solve``, ``carry_duel_solve``, the race
and rounds solvers) write the work done and the total work into :func:`counter` as they go:
levels of score sum weighted by the in-turn rows their passes cover, scores of a race, layers
of a game of rounds; the Gauss-Seidel solvers re-estimate their total after every sweep from
the rate at which the sweeps converge. They release the GIL, so a thread reads the counter
while they run. The time left is the elapsed time scaled by the work left. Turn and entry
solves (seconds) report no work; their line shows the time elapsed only.

On a terminal the line is redrawn every ``interval`` seconds; elsewhere (a log, a captured
stream) a line is written when solving starts, at every further tenth of the work, and at the
end. :func:`reporting` sets the stream used when a caller names none (the ``greed`` command
sets standard error), so every solve on demand reports, whichever command asked for it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TextIO

import numpy as np

from greed_env.rules.config import Rules

__all__ = ["bar", "counter", "default_stream", "report_to", "reporting", "solving"]

_COUNTER = np.zeros(2)
_STREAM: list[TextIO | None] = [None]


def counter() -> np.ndarray:
    """The process's progress counter ``[work done, total work]`` that the kernels update."""
    return _COUNTER


def report_to(stream: TextIO | None) -> None:
    """Report every later solve of this process on ``stream`` (None: silent)."""
    _STREAM[0] = stream


@contextlib.contextmanager
def reporting(stream: TextIO | None) -> Iterator[None]:
    """Within the block, solves report on ``stream`` (see :func:`report_to`); then as before."""
    before = _STREAM[0]
    _STREAM[0] = stream
    try:
        yield
    finally:
        _STREAM[0] = before


def default_stream() -> TextIO | None:
    """The stream set by :func:`report_to`, or None."""
    return _STREAM[0]


def bar(done: float, total: float, elapsed: float, width: int = 24) -> str:
    """``[#####.....]  41%  12 s, about 17 s left``; without known work, the seconds alone."""
    if total <= 0.0:
        return f"{elapsed:.0f} s"
    frac = min(max(done / total, 0.0), 1.0)
    fill = round(frac * width)
    text = f"[{'#' * fill}{'.' * (width - fill)}] {100 * frac:3.0f}%  {elapsed:.0f} s"
    if 0.0 < frac < 1.0:
        text += f", about {elapsed * (1.0 - frac) / frac:.0f} s left"
    return text


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def solving(rules: Rules, objective: str, stream: TextIO, interval: float = 1.0) -> Iterator[None]:
    """Report on ``stream`` while the body solves ``objective`` under ``rules``."""
    what = f"solving the {objective} table for {rules.name} ({rules.fingerprint})"
    _COUNTER[:] = 0.0
    t0 = time.perf_counter()
    stop = threading.Event()
    tty = _isatty(stream)
    lock = threading.Lock()

    def tick() -> None:
        tenth = 0
        while not stop.wait(interval):
            done, total = float(_COUNTER[0]), float(_COUNTER[1])
            elapsed = time.perf_counter() - t0
            with lock:
                if tty:
                    stream.write(f"\r{what}: {bar(done, total, elapsed)} ")
                    stream.flush()
                elif total > 0 and int(10 * done / total) > tenth:
                    tenth = int(10 * done / total)
                    print(f"{what}: {bar(done, total, elapsed)}", file=stream, flush=True)

    if tty:
        stream.write(f"{what}: 0 s ")
        stream.flush()
    else:
        print(f"{what} ...", file=stream, flush=True)
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    except BaseException:
        stop.set()
        thread.join()
        if tty:  # the error that follows says why; clear the bar
            stream.write("\r\033[K")
            stream.flush()
        raise
    stop.set()
    thread.join()
    ending = f"{what}: done in {time.perf_counter() - t0:.0f} s"
    if tty:
        stream.write(f"\r{ending}\033[K\n")
        stream.flush()
    else:
        print(ending, file=stream, flush=True)
