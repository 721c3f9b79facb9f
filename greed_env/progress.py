"""Progress of long compiled work (a solve), and its bar drawn by ``rich.progress``.

A solve is a list of *stages* (for the carry-over duel: the last turns, the roll-off, the
score pairs), each with its estimated work in one unit (rows of in-turn passes), declared by
:func:`plan` and stepped through by :func:`advance`; a solve that declares none is one stage.
Within a stage the compiled drivers (``duel_solve``, ``duel_penalty_solve``,
``carry_duel_solve``, the race and rounds solvers) write the stage's work done and total work
into :func:`counter` as they go: levels of score sum weighted by the in-turn rows their passes
cover, scores of a race, layers of a game of rounds; the Gauss-Seidel solvers re-estimate
their total after every sweep from the rate at which the sweeps converge. They release the
GIL, so another thread reads the counter while they run. :func:`fraction` is the share of the
whole solve done so far and never goes back (a total re-estimated upwards holds the bar until
the work catches up). Work whose size is not known in advance (finding the dice states of
carry-over rules; turn and entry solves, seconds) reports no fraction, only a :func:`note`.

:func:`showing` draws the bar on a stream while a block runs: a ``rich.progress`` display
whose every refresh (rich's own refresh thread, and each stage boundary) reads the fraction and
the note. On a terminal (or in Jupyter) the bar is drawn in place and cleared at the end; on
any other stream (a log, a captured stream) a line is written when the work starts, at every
further tenth of the work (every minute, with the note, while no fraction is known), and at the
end. :func:`reporting` sets the stream used when a caller names none (the ``greed`` command sets
standard error), so every solve on demand reports, whichever command asked for it.

:func:`plan` and :func:`advance` are safe points for Ctrl-C (:func:`greed_env.interrupts.check`).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TextIO

import numpy as np
from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column

from greed_env import interrupts

__all__ = [
    "CountBar",
    "advance",
    "begin",
    "close_display",
    "counter",
    "default_stream",
    "end",
    "finish",
    "fraction",
    "note",
    "plan",
    "report_to",
    "reporting",
    "showing",
    "snapshot",
    "status",
]

_COUNTER = np.zeros(2)
_STREAM: list[TextIO | None] = [None]
_LOCK = threading.RLock()
_LOG_EVERY = 60.0  # seconds between log lines while the size of the work is unknown
_LOG_WIDTH = 1000  # characters a log line may take: rich wraps at the console's width


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
    display never reads the last solve's state as the next one's (the counter is kept)."""
    with _LOCK:
        _RUN.active = False


def plan(*stages: tuple[str, float]) -> None:
    """Declare the stages of the running solve as ``(name, estimated work)`` pairs, the work
    in one unit for all (e.g. in-turn rows); the first stage starts now, its counter at 0.

    A safe point for Ctrl-C (:func:`greed_env.interrupts.check`), as :func:`advance` is.
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
    _refresh_displays()


def advance() -> None:
    """The current stage is done; the next starts (its counter at 0). A safe point for Ctrl-C."""
    interrupts.check()
    with _LOCK:
        _RUN.stage += 1
        _COUNTER[:] = 0.0
        if _RUN.stage < len(_RUN.names):
            _RUN.note = _RUN.names[_RUN.stage]
    _refresh_displays()


def finish() -> None:
    """The solve is done: the fraction is 1."""
    with _LOCK:
        _RUN.done = True
        _RUN.note = ""
    _refresh_displays()


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


def snapshot() -> tuple[float | None, str, float]:
    """``(fraction(), status(), work done in the stage)``, read together."""
    with _LOCK:
        return fraction(), _RUN.note, float(_COUNTER[0])


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


def _console(stream: TextIO) -> Console:
    """A console on ``stream``; on a stream that is no terminal its lines are never wrapped."""
    console = Console(file=stream, highlight=False, soft_wrap=True)
    if not (console.is_interactive or console.is_jupyter):
        console.width = _LOG_WIDTH
    return console


class _Display(Progress):
    """A ``rich.progress`` display of one task whose every refresh (rich's own refresh thread,
    and :meth:`refresh`) first reads the work done into the task (:meth:`read`). On a stream
    that is no terminal rich draws nothing live, so there the refresh writes a log line
    instead, each time the work reaches a further tenth (``log_from``: the first tenth logged;
    0 writes a line at the start)."""

    def __init__(self, console: Console, interval: float, *columns: ProgressColumn, log_from: int) -> None:
        self.log = not (console.is_interactive or console.is_jupyter)
        self.tenth = log_from - 1
        super().__init__(
            TextColumn("{task.description}", markup=False, table_column=Column(no_wrap=True)),
            BarColumn(bar_width=24),
            TaskProgressColumn(),
            *columns,
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TimeRemainingColumn(),
            TextColumn("left {task.fields[note]}", markup=False),
            console=console,
            refresh_per_second=1.0 / interval,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def read(self) -> None:
        """Bring the task up to date (nothing here: it is updated as the work is done)."""

    def log_line_due(self, frac: float | None) -> bool:
        """Whether a log line is due at ``frac`` (a further tenth crossed)."""
        if frac is None or int(10 * frac) <= self.tenth:
            return False
        self.tenth = int(10 * frac)
        return True

    def get_renderables(self) -> Iterable[RenderableType]:
        if self.tasks:  # rich renders once while it builds the display, before the task exists
            self.read()
            if self.log:
                task = self.tasks[0]
                frac = task.completed / task.total if task.total else None
                if self.log_line_due(frac):
                    with self.console.capture() as line:
                        self.console.print(self.make_tasks_table(self.tasks))
                    self.console.file.write(line.get().rstrip() + "\n")
                    self.console.file.flush()
        return super().get_renderables()

    def stop(self) -> None:
        """Stop the display (rich's own stop also writes an empty line on a log)."""
        self.live.stop()


class _SolveBar(_Display):
    """A solve's display: it reads the solve's fraction and note (this module's record). In a
    log, a line per tenth of the work between the first line and the last (and every minute,
    with the note, while no fraction is known)."""

    def __init__(self, title: str, about: str, console: Console, interval: float) -> None:
        self.about = about
        self.quiet = time.monotonic()  # when the last log line was written
        super().__init__(console, interval, log_from=1)
        self.task_id = self.add_task(f"{title}:", total=None, note=f"({about})" if about else "")

    def read(self) -> None:
        frac = fraction()
        text = status()
        extra = f"({text})" if text and frac != 1.0 else ""
        if frac is None and not extra and self.about:
            extra = f"({self.about})"
        if frac is None:
            self.update(self.task_id, note=extra)
        else:
            self.update(self.task_id, total=1.0, completed=frac, note=extra)

    def log_line_due(self, frac: float | None) -> bool:
        now = time.monotonic()
        if frac is None:  # work of unknown size: a line a minute while there is a note
            due = bool(self.tasks[0].fields.get("note")) and now - self.quiet >= _LOG_EVERY
        else:
            due = frac < 1.0 and super().log_line_due(frac)  # the end has a line of its own
        if due:
            self.quiet = now
        return due


class CountBar(_Display):
    """A bar of ``total`` counted steps (games, episodes) on ``stream`` (default standard
    error), started at once: :meth:`update` with the number done so far, :meth:`close` at the
    end (or on an error). In a log, a line at the start, at every further tenth and at the end.

    >>> import io
    >>> bar = CountBar("round robin", 4, io.StringIO(), unit="game")
    >>> for done in range(1, 5):
    ...     bar.update_to(done)
    >>> bar.close()
    >>> print(bar.console.file.getvalue())
    round robin...0% 0/4 games...left
    round robin...25% 1/4 games...left
    ...
    round robin...100% 4/4 games 0:00:00 elapsed, 0:00:00 left
    <BLANKLINE>
    """

    def __init__(
        self, description: str, total: int, stream: TextIO | None = None, unit: str = "game", interval: float = 1.0
    ) -> None:
        super().__init__(
            _console(stream or sys.stderr), interval, MofNCompleteColumn(), TextColumn(f"{unit}s"), log_from=0
        )
        self.task_id = self.add_task(description, total=total, note="")
        with _LOCK:
            _DISPLAYS.append(self)
        self.start()

    def update_to(self, done: int) -> None:
        """``done`` steps of the total are done (a bar in a log writes its line now if due)."""
        self.update(self.task_id, completed=done)
        if self.log:
            self.refresh()

    def close(self) -> None:
        """Stop drawing (a terminal's bar is cleared)."""
        with _LOCK:
            if self in _DISPLAYS:
                _DISPLAYS.remove(self)
        self.stop()


_DISPLAYS: list[_Display] = []


def _refresh_displays() -> None:
    """A stage boundary: every display reads the new fraction now."""
    for display in list(_DISPLAYS):
        with contextlib.suppress(Exception):
            display.refresh()


def close_display() -> None:
    """Stop the bars being drawn (a terminal's is cleared): the process is about to end, and
    nothing is to be drawn after the line that says why."""
    for display in list(_DISPLAYS):
        with contextlib.suppress(Exception):
            display.stop()


@contextlib.contextmanager
def showing(title: str, stream: TextIO, about: str = "", interval: float = 1.0) -> Iterator[None]:
    """Draw the running solve's progress on ``stream`` while the block runs, ``title`` (what
    is solved) first; ``about`` (the size estimate,
    :meth:`greed_env.solver.size.SolveSize.describe`) is shown when solving starts and beside
    the bar while no fraction is known. The display reads the fraction every ``interval``
    seconds and at every stage boundary; when the block ends without an error, a line says how
    long it took."""
    console = _console(stream)
    bar = _SolveBar(title, about, console, interval)
    if bar.log:
        console.print(f"{title} ({about}) ..." if about else f"{title} ...", markup=False)
    with _LOCK:
        _DISPLAYS.append(bar)
    bar.start()
    try:
        yield
    finally:
        with _LOCK:
            _DISPLAYS.remove(bar)
        bar.stop()  # on a terminal the bar is cleared: an error that follows says why
    elapsed = bar.tasks[0].elapsed or 0.0
    console.print(f"{title}: done in {elapsed:.0f} s", markup=False)
