"""Transition tables for the solver, derived from the reference scoring.

Everything the kernels know about dice comes from :func:`greed_env.rules.scoring.keep_options`
called on every distinct roll; nothing here scores dice by itself.

For rules without carry-over, the state inside a turn is (turn total, dice to roll). Where the
value after a keep never decreases in points (checked on solved tables by the tests), only the
best-scoring keep of each size matters: a roll of ``n`` dice is summarised by the vector
``best[k]`` = most points any keep of ``k`` dice scores (``-1``: no such keep), and rolls with
equal vectors are merged into one *group* whose probability is their sum. Two rule features
break the monotonicity, and then the *full* tables keep every distinct (size, points) keep:

* a final round, in the duel: just below the target the opponent must still reach it and the
  mover gets a last turn, on it the opponent only has to beat the score;
* a reroll-all with a must-beat bar (Greed): more points kept now raise the bar of a later
  reroll.

>>> from greed_env.rules import preset
>>> t = roll_tables(preset("ten_thousand"))
>>> t.unit, t.num_dice, round(float(t.p_bust[6]), 6)
(50, 6, 0.023148)
>>> [int(t.grp_best[g, 1]) * t.unit for g in range(t.grp_start[1], t.grp_start[2])]  # one die
[50, 100]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial, gcd

import numpy as np

from greed_env.rules.config import Rules
from greed_env.rules.game import roll_wins
from greed_env.rules.scoring import EMPTY_CARRY, keep_options

__all__ = [
    "SIX_KIND_REASON",
    "RollTables",
    "SolverError",
    "check_supported",
    "needs_full_tables",
    "roll_distribution",
    "roll_tables",
]


class SolverError(ValueError):
    """The solver cannot handle this request (unsupported rule variant, bad option)."""


def roll_distribution(n: int) -> list[tuple[tuple[int, ...], float]]:
    """Every sorted roll of ``n`` dice with its exact probability."""
    out = []
    for roll in combinations_with_replacement(range(1, 7), n):
        ways = factorial(n)
        for f in range(1, 7):
            ways //= factorial(roll.count(f))
        out.append((roll, ways / 6**n))
    return out


SIX_KIND_REASON = {
    "turn": "a rolled six of a kind ends the game with a win, which is worth no number of "
    "points; the race and the duel count it",
    "entry": "a rolled six of a kind ends the game with a win, which is not coming in; the race "
    "and the duel count it",
}
"""Why the objective cannot value ``six_kind_wins`` (the refusal names it)."""


def check_supported(rules: Rules, objective: str | None = None) -> None:
    """Raise :class:`SolverError` naming the field if the solver does not model it.

    Unsupported: ``piggyback`` (the previous player's turn would enter every position),
    ``entry_scope='roll'``, ``entry_until_made=False`` with an entry threshold,
    a bust penalty combined with an entry threshold or without hot dice,
    ``six_kind_wins`` where the win has no value in the objective's terms (``turn``: points;
    ``entry``: coming in; see :data:`SIX_KIND_REASON`), with carry-over rules or with a bust
    penalty, and Trippn (``trippn=True``) on demand for every objective but ``entry``: its dice states
    are finite but take about an hour of CPU (and 17 GB) to enumerate, so its ``turn`` table (bounded by
    the exact target only: with sets of 2s, 3s, 4s and 6s working every die scores) is solved
    once by ``benchmarks/trippn_turn.py`` and shipped, without move values; ``race`` and
    ``duel`` would pass over 18,000 times Progressive's keeps (docs/solver.md).
    """
    bad = []
    if rules.trippn and objective != "entry":
        bad.append("Trippn mode on demand (its dice states take an hour of CPU and 17 GB to enumerate: the "
                   "turn table of the preset is shipped, solved by benchmarks/trippn_turn.py, without "
                   "move values; race and duel are ~38 and ~6,500 CPU-hours; see "
                   "docs/solver.md)")
    if rules.piggyback:
        bad.append("piggyback=True")
    if rules.tie_rule == "first_finisher" and rules.exact_target:
        bad.append("tie_rule='first_finisher' with exact_target=True")
    if rules.entry_threshold and rules.entry_scope != "turn":
        bad.append("entry_scope='roll'")
    if rules.entry_threshold and not rules.entry_until_made:
        bad.append("entry_until_made=False")
    if rules.six_kind_wins:
        if objective in ("turn", "entry"):
            bad.append(f"six_kind_wins=True for the {objective} objective ({SIX_KIND_REASON[objective]})")
        if rules.carry_over:
            bad.append("six_kind_wins=True with carry-over rules (their tables hold no terminal roll outcome)")
        if rules.bust_penalty_after and rules.bust_penalty:
            bad.append("six_kind_wins=True with a bust penalty (the penalty solvers hold no terminal roll outcome)")
    if rules.bust_penalty_after and rules.bust_penalty and (rules.entry_threshold or not rules.hot_dice):
        bad.append("a bust penalty together with an entry threshold or without hot dice")
    if bad:
        raise SolverError("the solver does not model " + ", ".join(bad))


@dataclass(frozen=True, eq=False)
class RollTables:
    """Grouped roll tables of one rule set (no carry-over). Points are in ``unit`` steps.

    Attributes:
        unit: the points granularity (gcd of every keep score and rule constant).
        num_dice: dice in a full roll.
        hot_dice: whether keeping every die gives a fresh full roll.
        grp_start: groups of ``n`` dice are ``grp_start[n] .. grp_start[n + 1] - 1``.
        grp_prob: probability of each group.
        grp_best: ``grp_best[g, k]``: best keep of ``k`` dice in units, -1 if none.
        full: whether the options are every distinct keep (else the best per size).
        grp_any: best keep of any size (the points given up by a reroll-all).
        p_bust: probability that a roll of ``n`` dice has no keep.
        max_keep: largest keep score in units.
        opt_start: the options (sizes with a keep) of group ``g`` are
            ``opt_start[g] .. opt_start[g + 1] - 1``.
        opt_s: points of the option in units.
        opt_m: dice to roll after the option (a full set after hot dice).
        opt_off: ``opt_s * (num_dice + 1) + opt_m``, the option's offset in a flat
            (turn total, dice) array.
        p_win: probability that a roll of ``n`` dice wins the game at once
            (``six_kind_wins``: six or more of one face showing); such rolls are in no group
            and not in ``p_bust``.
    """

    unit: int
    num_dice: int
    hot_dice: bool
    full: bool
    grp_start: np.ndarray
    grp_prob: np.ndarray
    grp_best: np.ndarray
    grp_any: np.ndarray
    p_bust: np.ndarray
    max_keep: int
    opt_start: np.ndarray
    opt_s: np.ndarray
    opt_m: np.ndarray
    opt_off: np.ndarray
    p_win: np.ndarray

    def kernel_tables(self, win: float = 1.0) -> tuple:
        """The tuple the kernels take (see ``greed_env.solver.kernels``).

        ``win``: the value of a roll that wins the game at once, in the objective's terms (1 for
        a probability of winning, 0 turns left for the race); its last entry is
        ``p_win * win``, the expected value a roll of ``n`` dice gets from such rolls.
        """
        return (
            self.num_dice,
            self.hot_dice,
            self.grp_start,
            self.grp_prob,
            self.grp_any,
            self.p_bust,
            self.opt_start,
            self.opt_s,
            self.opt_m,
            self.opt_off,
            self.max_keep,
            self.p_win * float(win),
        )


def rules_unit(rules: Rules, scores: list[int]) -> int:
    """gcd of the keep scores and every rule constant that points are compared with."""
    g = 0
    for v in (*scores, rules.target, rules.entry_threshold, rules.min_bank, rules.bust_penalty):
        g = gcd(g, int(v))
    return g or 50


def needs_full_tables(rules: Rules, objective: str) -> bool:
    """Whether ``objective`` needs every keep (values not monotone in points): a duel with a
    final round, or a reroll-all with a must-beat bar."""
    return (objective == "duel" and rules.final_round) or (
        rules.reroll_all and rules.reroll_all_must_beat
    )


@lru_cache(maxsize=32)
def roll_tables(rules: Rules, full: bool = False) -> RollTables:
    """Build the grouped tables of ``rules`` (carry-over rules are refused).

    ``full``: keep every distinct (size, points) keep of a roll, not only the best per size.
    """
    if rules.carry_over:
        raise SolverError("carry-over rules use greed_env.solver.carry, not roll tables")
    n_dice = rules.num_dice
    raw: list[tuple[int, float, list[tuple[int, int]]]] = []
    scores: list[int] = []
    p_win = np.zeros(n_dice + 1)
    for n in range(1, n_dice + 1):
        for roll, p in roll_distribution(n):
            if roll_wins(rules, roll):
                p_win[n] += p
                continue
            opts = {(len(o.dice), o.score) for o in keep_options(rules, roll, EMPTY_CARRY, n == n_dice)}
            scores.extend(sc for _, sc in opts)
            raw.append((n, p, sorted(opts)))
    unit = rules_unit(rules, scores)
    groups: dict[tuple[int, tuple[tuple[int, int], ...]], float] = {}
    p_bust = np.zeros(n_dice + 1)
    for n, p, opts in raw:
        if not opts:
            p_bust[n] += p
            continue
        if full:
            kept = tuple((k, sc // unit) for k, sc in opts)
        else:
            best: dict[int, int] = {}
            for k, sc in opts:
                best[k] = max(best.get(k, -1), sc // unit)
            kept = tuple(sorted(best.items()))
        key = (n, kept)
        groups[key] = groups.get(key, 0.0) + p
    keys = sorted(groups)
    grp_start = np.zeros(n_dice + 2, dtype=np.int64)
    for n, _ in keys:
        grp_start[n + 1] += 1
    grp_start = np.cumsum(grp_start)
    grp_prob = np.array([groups[k] for k in keys])
    grp_best = np.full((len(keys), n_dice + 1), -1, dtype=np.int64)
    opt_start = [0]
    opt_s: list[int] = []
    opt_m: list[int] = []
    for g, (n, kept) in enumerate(keys):
        for k, sc in kept:
            grp_best[g, k] = max(grp_best[g, k], sc)
            left = n - k
            opt_s.append(sc)
            opt_m.append(n_dice if (left == 0 and rules.hot_dice) else left)
        opt_start.append(len(opt_s))
    grp_any = grp_best.max(axis=1)
    s_arr = np.array(opt_s, dtype=np.int64)
    m_arr = np.array(opt_m, dtype=np.int64)
    return RollTables(
        unit=unit,
        num_dice=n_dice,
        hot_dice=rules.hot_dice,
        full=full,
        grp_start=grp_start,
        grp_prob=grp_prob,
        grp_best=grp_best,
        grp_any=grp_any,
        p_bust=p_bust,
        max_keep=int(grp_any.max()),
        opt_start=np.array(opt_start, dtype=np.int64),
        opt_s=s_arr,
        opt_m=m_arr,
        opt_off=s_arr * (n_dice + 1) + m_arr,
        p_win=p_win,
    )
