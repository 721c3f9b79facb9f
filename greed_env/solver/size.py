"""How big a solve is before it starts: positions, memory and time, to the order of magnitude.

:func:`estimate` counts what the solver will hold and walk from the rules alone: the banked
scores (or score pairs, with bust streaks and rounds) the table holds, the in-turn rows its
passes cover (the unit of the progress bar: :mod:`greed_env.progress`) and the arrays
of the biggest step. Time is rows times a cost per row measured on the solver's own kernels
(:data:`ROW_SECONDS`, one core), plus a fixed start; it is an order of magnitude, not a
promise: a machine twice as fast or a second core halves it, a rule with many keeps doubles
it, and carry-over rules first find their dice states (not counted: seconds for most rule
books, an hour for Trippn's turn).

:func:`check_size` refuses a solve past the limits (more memory than the machine has, or more
than :data:`MAX_SECONDS`): :func:`greed_env.solver.solve` calls it unless told ``force=True``
(``greed solve --force``), so a target of a billion points is refused at once rather than
after hours of work.

>>> from greed_env.rules import preset
>>> size = estimate(preset("ten_thousand"), "duel")
>>> int(size.positions), size.seconds < 3600
(40000, True)
>>> huge = preset("ten_thousand", target=1_000_000_000)
>>> check_size(estimate(huge, "race"), huge)
Traceback (most recent call last):
...
greed_env.solver.size.SolveTooBigError: the race table of ten_thousand would hold about 20,000,000 positions and take about ... (estimate; the limit is 1 day)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement

from greed_env.rules.config import Rules
from greed_env.rules.scoring import EMPTY_CARRY, keep_options
from greed_env.solver.model import SolverError, needs_full_tables, roll_tables, rules_unit

__all__ = [
    "MAX_SECONDS",
    "ROW_SECONDS",
    "SolveSize",
    "SolveTooBigError",
    "check_size",
    "estimate",
    "machine_memory",
]

MAX_SECONDS = 24 * 3600.0
"""Longest estimated solve run without ``force``: a day."""

ROW_SECONDS = {"turn": 2e-5, "race": 2e-5, "duel": 1.5e-5, "3p": 2.5e-6}
"""Seconds of one core per in-turn row of a pass over the dice counts, by objective (measured
on ten_thousand, farkle5 and zilch at small targets; a carry-over row covers a whole dice
state's keeps and costs about :data:`CARRY_ROW_FACTOR` times more)."""

CARRY_ROW_FACTOR = 4.0
THREE_ROW_CALIBRATION = 0.69
"""Rows a three-player solve runs per row :func:`greed_env.solver.three.three_cost` estimates
(measured at 5,000 points; ten_thousand at 10,000 points: 1.87 billion rows, 3,868 CPU-s)."""
START_SECONDS = 5.0
"""Tables of the roll groups, kernels loaded from numba's cache: the fixed start of a solve."""

_NEWTON_PASSES = 3.0  # in-turn passes per position of a Newton solve (2.4-3 measured)
_PENALTY_SWEEPS = 8.0  # sweeps of a bust-penalty solve (5-6 recording sweeps at 1.5 each)
_FLOAT = 8


class SolveTooBigError(SolverError):
    """A solve whose estimate is past the limits; ``size`` holds the estimate."""

    def __init__(self, message: str, size: SolveSize) -> None:
        super().__init__(message)
        self.size = size


@dataclass(frozen=True)
class SolveSize:
    """The estimate of one solve.

    Attributes:
        objective: the objective solved.
        positions: turn-start positions the table holds (scores, pairs, streaks, turns left).
        rows: in-turn rows the passes cover, in all.
        memory: bytes of the biggest arrays held at once.
        seconds: estimated time on one core (an order of magnitude).
    """

    objective: str
    positions: float
    rows: float
    memory: float
    seconds: float

    def describe(self) -> str:
        """``about 40,000 positions, 1 MiB, about 2 min`` (estimates)."""
        return f"about {_count(self.positions)} positions, {_bytes(self.memory)}, about {_duration(self.seconds)}"


def _count(x: float) -> str:
    return f"{x:,.0f}" if x < 1e9 else f"{x:.0e}"


def _bytes(x: float) -> str:
    for unit, size in (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
        if x >= size:
            value = x / size
            return f"{value:.0e} {unit}" if value >= 1e5 else f"{value:,.0f} {unit}"
    return f"{x:.0f} bytes"


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400.0), ("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            value = seconds / size
            if value >= 1e4:
                return f"{value:.0e} {unit}"
            text = f"{value:,.0f}"
            return f"{text} {unit[:-1] if text == '1' and unit.endswith('s') else unit}"
    return f"{max(seconds, 1.0):.0f} s"


def machine_memory() -> float:
    """Bytes of physical memory of this machine (16 GiB where the system does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16.0 * 2**30


@lru_cache(maxsize=32)
def _plain_unit(rules: Rules) -> tuple[int, int]:
    """The points unit and the best keep (units) from the keeps of fresh rolls: carry-over
    rules' tables (slow to build) are not needed for an estimate."""
    scores: list[int] = []
    for n in range(1, rules.num_dice + 1):
        for roll in combinations_with_replacement(range(1, 7), n):
            scores.extend(o.score for o in keep_options(rules, roll, EMPTY_CARRY, n == rules.num_dice))
    unit = rules_unit(rules, scores)
    return unit, max(scores, default=unit) // unit


def _pair_rows(n: float) -> float:
    """In-turn rows of one sweep over the pairs of an ``n x n`` grid of scores (both passes of
    each pair, a pass as long as the points left to the target): about ``n**3 / 2``."""
    return n * n * (n + 1) / 2.0


def estimate(rules: Rules, objective: str, cap: int | None = None, floor: int | None = None, **_: object) -> SolveSize:
    """The size of solving ``objective`` under ``rules`` (options as :func:`greed_env.solver.solve`).

    Cheap: builds at most the roll groups of rules without carry-over (which the solve builds
    anyway). The figures are estimates (see the module docstring).
    """
    if rules.carry_over:
        unit, max_keep = _plain_unit(rules)
        factor = CARRY_ROW_FACTOR
    else:
        tb = roll_tables(rules, needs_full_tables(rules, objective))
        unit, max_keep = tb.unit, tb.max_keep
        factor = 1.0
    dice = rules.num_dice + 1
    target = -(-rules.target // unit) if rules.target else 0
    pen_after = rules.bust_penalty_after if rules.bust_penalty else 0
    lo = 0
    if pen_after and objective in ("race", "duel"):
        lo = min(floor if floor is not None else -4 * rules.bust_penalty, 0) // unit
    n = float(target - lo)
    scratch = 8.0 * dice * _FLOAT  # per in-turn row: values, derivatives, policies of a pass
    if objective == "turn":
        t_cap = max((cap or 20_000) // unit, 1) * 2.0  # the tail check solves at twice the cap
        positions = t_cap * dice
        rows = 60.0 * t_cap * max(pen_after, 1)
        memory = (t_cap + max_keep) * scratch * 2
    elif objective == "entry":
        t_cap = max(-(-rules.entry_threshold // unit), -(-rules.min_bank // unit), 1) + max_keep
        positions = float(t_cap * dice)
        rows = 10.0 * t_cap
        memory = t_cap * scratch
    elif objective == "race":
        positions = n * max(pen_after, 1)
        per_sweep = n * (n + 1) / 2.0 * max(pen_after, 1)
        rows = per_sweep * (_PENALTY_SWEEPS if pen_after else _NEWTON_PASSES)
        memory = positions * 2 * _FLOAT + (n + max_keep) * scratch
    elif objective == "duel" and rules.rounds and not rules.carry_over:
        turns = 2.0 * rules.rounds
        positions = (turns + 1) * n * n
        rows = turns * _pair_rows(n) / 2.0
        memory = positions * _FLOAT + (n + max_keep) * scratch
    elif objective == "duel":
        streaks = float(max(pen_after, 1) ** 2)
        positions = n * n * streaks
        if pen_after:
            rows = _PENALTY_SWEEPS * streaks * _pair_rows(n)
            memory = positions * 3 * _FLOAT + n * streaks * n * (n - 1) / 2.0 * _FLOAT
        else:
            rows = _NEWTON_PASSES * _pair_rows(n)
            memory = positions * 25.0 + (6 * n + max_keep) * 2 * _FLOAT
        if rules.final_round:
            rows += (6.0 * n + max_keep) ** 2
    elif objective == "3p":
        from greed_env.solver.three import three_cost

        positions = float(n) ** 3
        rows = three_cost(rules) * THREE_ROW_CALIBRATION
        memory = positions * 11 * _FLOAT  # values, iterations, margins, the compact copy: 702 MiB measured at 10,000
    else:
        raise SolverError(f"unknown objective {objective!r}")
    seconds = START_SECONDS + rows * ROW_SECONDS.get(objective, ROW_SECONDS["turn"]) * factor
    return SolveSize(objective, positions, rows, memory, seconds)


def check_size(size: SolveSize, rules: Rules | None = None, max_memory: float | None = None,
               max_seconds: float | None = MAX_SECONDS) -> None:
    """Refuse a solve past the limits.

    Args:
        size: the estimate (:func:`estimate`).
        rules: named in the message.
        max_memory: bytes (default: the machine's memory, :func:`machine_memory`).
        max_seconds: seconds (default :data:`MAX_SECONDS`; None: no limit).

    Raises:
        SolveTooBigError: the estimated memory or time is past its limit; the message gives the
            estimate and the limit.
    """
    limit_memory = machine_memory() if max_memory is None else max_memory
    what = f"the {size.objective} table" + (f" of {rules.name}" if rules is not None else "")
    if size.memory > limit_memory:
        raise SolveTooBigError(
            f"{what} would hold about {_count(size.positions)} positions in about {_bytes(size.memory)} "
            f"(estimate; this machine has {_bytes(limit_memory)})",
            size,
        )
    if max_seconds is not None and size.seconds > max_seconds:
        raise SolveTooBigError(
            f"{what} would hold about {_count(size.positions)} positions and take about "
            f"{_duration(size.seconds)} (estimate; the limit is {_duration(max_seconds)})",
            size,
        )
