"""Progress of a solve: a bar with the time left, on a stream, while a table is solved.

A solve is a list of *stages* (for the carry-over duel: the last turns, the roll-off, the
score pairs), each with its estimated work in one unit (rows of in-turn passes), declared by
:func:`plan` and stepped through by :func:`advance`; a solve that declares none is one stage.
Within a stage the compiled drivers (``duel_solve``, ``duel_penalty_solve``,
``carry_duel_solve``, the race and rounds solvers) write the stage's work done and total work
into :func:`counter` as they go: levels of score sum weighted by the in-turn rows their passes
cover, scores of a race, layers of a game of rounds; the Gauss-Seidel solvers re-estimate
their total after every sweep from the rate at which the sweeps converge. They release the
GIL, so a thread reads the counter while they run. :func:`fraction` is the share of the whole
solve done so far and never goes back (a total re-estimated upwards holds the bar until the
work catches up). Work whose size is not known in advance (finding the dice states of
carry-over rules; turn and entry solves, seconds) reports no fraction, only a :func:`note`.

:func:`watching` calls a function with the fraction while a block runs (at every stage
boundary, at the end, and every ``interval`` seconds from a thread); :func:`solving` draws
the bar with it. The time left is the time since the fraction became known, scaled by the
work left. On a terminal the line is redrawn every ``interval`` seconds; elsewhere (a log, a
captured stream) a line is written when solving starts, at every further tenth of the work
(every minute, with the note, while no fraction is known), and at the end. :func:`reporting` sets the stream used when a caller names none (the
``greed`` command sets standard error), so every solve on demand reports, whichever command
asked for it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

import numpy as np

from greed_env.rules.config import Rules
from greed_env.solver import interrupts

__all__ = [
    "advance",
    "bar",
    "begin",
    "counter",
    "default_stream",
    "end",
    "finish",
    "fraction",
    "note",
    "plan",
    "report_to",
    "reporting",
    "solving",
    "status",
    "watching",
]

_COUNTER = np.zeros(2)
_STREAM: list[TextIO | None] = [None]
_LOCK = threading.RLock()
_LISTENERS: list[Callable[[], None]] = []
_LOG_EVERY = 60.0  # seconds between log lines while the size of the work is unknown


class _Run:
    """The solve in progress: its stages' estimated work, the stage now running, the highest
    fraction reported so far and the note shown beside the bar."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.weights: list[float] = []
        self.stage = 0
        self.best: float | None = None
        self.done = False
        self.active = False
        self.note = ""


_RUN = _Run()


def counter() -> np.ndarray:
    """The progress counter ``[work done, total work]`` of the current stage (the kernels
    update it in place)."""
    return _COUNTER


def begin() -> None:
    """A solve starts: no stages, no fraction yet, an empty note, the counter at 0."""
    global _RUN
    with _LOCK:
        _COUNTER[:] = 0.0
        _RUN = _Run()
        _RUN.active = True


def end() -> None:
    """The solve is over (done or failed): no fraction until the next :func:`begin`, so a
    watcher never reads the last solve's state as the next one's (the counter is kept)."""
    with _LOCK:
        _RUN.active = False


def plan(*stages: tuple[str, float]) -> None:
    """Declare the stages of the running solve as ``(name, estimated work)`` pairs, the work
    in one unit for all (e.g. in-turn rows); the first stage starts now, its counter at 0.

    A safe point for Ctrl-C (:func:`greed_env.solver.interrupts.check`), as :func:`advance` is.
    """
    interrupts.check()
    with _LOCK:
        _RUN.names = [name for name, _ in stages]
        _RUN.weights = [max(float(work), 0.0) for _, work in stages]
        _RUN.stage = 0
        _RUN.best = None
        _RUN.done = False
        _RUN.note = _RUN.names[0] if stages else ""
        _COUNTER[:] = 0.0
    _notify()


def advance() -> None:
    """The current stage is done; the next starts (its counter at 0). A safe point for Ctrl-C."""
    interrupts.check()
    with _LOCK:
        _RUN.stage += 1
        _COUNTER[:] = 0.0
        if _RUN.stage < len(_RUN.names):
            _RUN.note = _RUN.names[_RUN.stage]
    _notify()


def finish() -> None:
    """The solve is done: the fraction is 1."""
    with _LOCK:
        _RUN.done = True
        _RUN.note = ""
    _notify()


def note(text: str) -> None:
    """Show ``text`` beside the bar (what is being done where no fraction is known)."""
    with _LOCK:
        _RUN.note = text


def status() -> str:
    """The note now shown beside the bar (see :func:`note`; the stage's name once planned)."""
    with _LOCK:
        return _RUN.note


def _raw_fraction() -> float | None:
    if not _RUN.active:
        return None
    if _RUN.done:
        return 1.0
    done, total = float(_COUNTER[0]), float(_COUNTER[1])
    inner = min(max(done / total, 0.0), 1.0) if total > 0.0 else None
    if not _RUN.weights:
        return inner
    whole = sum(_RUN.weights)
    if whole <= 0.0:
        return None
    i = min(_RUN.stage, len(_RUN.weights))
    passed = sum(_RUN.weights[:i])
    current = _RUN.weights[i] * (inner or 0.0) if i < len(_RUN.weights) else 0.0
    return min((passed + current) / whole, 1.0)


def fraction() -> float | None:
    """Share of the running solve's work done (None while unknown); it never decreases."""
    with _LOCK:
        raw = _raw_fraction()
        if raw is None:
            return None if not _RUN.active else _RUN.best
        if _RUN.best is None or raw > _RUN.best:
            _RUN.best = raw
        return _RUN.best


def _notify() -> None:
    with _LOCK:
        listeners = list(_LISTENERS)
    for listen in listeners:
        listen()


@contextlib.contextmanager
def watching(callback: Callable[[float | None], None], interval: float = 1.0) -> Iterator[None]:
    """Within the block, call ``callback(fraction())`` at every :func:`plan`, :func:`advance`
    and :func:`finish`, and every ``interval`` seconds from a thread (calls never overlap)."""
    lock = threading.Lock()

    def call() -> None:
        with lock:  # read under the lock: the calls see the fraction in order
            callback(fraction())

    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(interval):
            call()

    with _LOCK:
        _LISTENERS.append(call)
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        with _LOCK:
            _LISTENERS.remove(call)


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


def bar(frac: float | None, elapsed: float, left: float | None = None, width: int = 24) -> str:
    """``[#####.....]  41%  12 s, about 17 s left``; without a known fraction, the seconds alone."""
    if frac is None:
        return f"{elapsed:.0f} s"
    frac = min(max(frac, 0.0), 1.0)
    fill = round(frac * width)
    text = f"[{'#' * fill}{'.' * (width - fill)}] {100 * frac:3.0f}%  {elapsed:.0f} s"
    if left is not None and 0.0 < frac < 1.0:
        text += f", about {left:.0f} s left"
    return text


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def solving(
    rules: Rules, objective: str, stream: TextIO, interval: float = 1.0, about: str = ""
) -> Iterator[None]:
    """Report on ``stream`` while the body solves ``objective`` under ``rules``; ``about`` (the
    size estimate, :meth:`greed_env.solver.size.SolveSize.describe`) is shown when solving
    starts and beside the bar while no fraction is known."""
    what = f"solving the {objective} table for {rules.name} ({rules.fingerprint})"
    first = f"{what} ({about})" if about else what
    t0 = time.perf_counter()
    tty = _isatty(stream)
    known: list[tuple[float, float]] = []  # (time, fraction) when the fraction became known
    tenth = [0]
    quiet = [t0]  # when the last line was written to a log

    def draw(frac: float | None) -> None:
        now = time.perf_counter()
        left = None
        if frac is not None:
            if not known:
                known.append((now, frac))
            t_known, f_known = known[0]
            if frac > f_known and now > t_known:
                left = (now - t_known) * (1.0 - frac) / (frac - f_known)
        with _LOCK:
            extra = f" ({_RUN.note})" if _RUN.note and frac != 1.0 else ""
        if frac is None and not extra and about:
            extra = f" ({about})"
        text = f"{what}: {bar(frac, now - t0, left)}{extra}"
        if tty:
            stream.write(f"\r{text}\033[K")
            stream.flush()
        elif frac is not None and 0.0 < frac < 1.0 and int(10 * frac) > tenth[0]:
            tenth[0] = int(10 * frac)
            quiet[0] = now
            print(text, file=stream, flush=True)
        elif frac is None and extra and now - quiet[0] >= _LOG_EVERY:  # work of unknown size
            quiet[0] = now
            print(text, file=stream, flush=True)

    if tty:
        stream.write(f"{first}: 0 s")
        stream.flush()
    else:
        print(f"{first} ...", file=stream, flush=True)
    try:
        with watching(draw, interval):
            yield
    except BaseException:
        if tty:  # the error that follows says why; clear the bar
            stream.write("\r\033[K")
            stream.flush()
        raise
    ending = f"{what}: done in {time.perf_counter() - t0:.0f} s"
    if tty:
        stream.write(f"\r{ending}\033[K\n")
        stream.flush()
    else:
        print(ending, file=stream, flush=True)
