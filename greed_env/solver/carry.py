"""Carry-over rules (seed 002, Progressive 10,000): dice states, objectives and the evaluator.

A *dice state* is (dice to roll, carry-over). The reachable dice states and every transition
between them are enumerated by a breadth-first search from a fresh full roll; a roll's keeps,
read as :func:`greed_env.rules.scoring.keep_options` reads them (through the per-carry-over
tables of :mod:`greed_env.solver.keeps`), become (points, next dice state) options.

Progressive has 204 dice states (hot dice clear the carry-over). Under Trippn the carry-over
survives an and-roll; with set counts above 3 read as 3 (:func:`canonical_carry`) its dice
states are finite (see docs/solver.md for their number), but with the target ignored its turn
has no optimum (a turn can roll on for ever once sets of 2s, 3s, 4s and 6s work:
:func:`risk_free_states`); only the exact target bounds it.

Exact target (race, duel, turn): a keep past the target loses the turn, a keep landing on it
forces the roll for nothing, and the value of a position is not monotone in points, so every
distinct (points, next state) keep of a roll is kept. ``turn`` is one turn from score 0, as
``Solitaire-v0`` plays it (the optimal bot plays it from its own score in a game); the points
per turn with the target ignored, which overstate it, stay in the table's meta. Entry ignores
the target (a player far from it), where the best keep per next dice state suffices.

Duel ties: when both players go out, the first finisher's share is the value of the roll-off
under optimal play (the first finisher picks the order, a refusal to split forces the roll-off,
so the tie is worth ``max(rho, 1 - rho)`` to them, ``rho`` the first roller's roll-off value;
ties in the roll-off repeat it). The roll-off horizon (``rolloff_horizon``) is not modelled.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numba
import numpy as np

from greed_env import progress
from greed_env.rules.config import Rules
from greed_env.rules.game import (
    BANK,
    BUST,
    ROLL,
    ROLL_FIRST,
    ROLL_FOR_NOTHING,
    ROLL_LAST,
    SPLIT,
    Move,
    Phase,
    State,
    current_keep_options,
)
from greed_env.rules.scoring import EMPTY_CARRY, Carry
from greed_env.solver import carry_kernels as ck
from greed_env.solver.keeps import carry_keeps
from greed_env.solver.kernels import level_work
from greed_env.solver.model import SolverError, check_supported, roll_distribution, rules_unit
from greed_env.solver.objectives import DEFAULT_TOL
from greed_env.solver.table import SolverTable

__all__ = ["CarryEvaluator", "CarryTables", "carry_tables", "solve"]

DEFAULT_MAX_STATES = 200_000
_MAX_ITER = 60
LANE_MIN_TARGET = 24  # units: below, the per-pair duel solver is as fast (target 600: 0.6x, 1,000: 0.97x, 1,500: 1.36x)


@dataclass(frozen=True, eq=False)
class CarryTables:
    """Dice states and grouped transitions of a carry-over rule set (points in units).

    ``states[i]`` is (dice to roll, carry); state 0 is the fresh full roll with no carry.
    Groups of state ``s`` are ``gs[s] .. gs[s + 1] - 1`` (probability ``gp``); options of group
    ``g`` are ``ost[g] .. ost[g + 1] - 1`` with points ``osc`` and next state ``onx``. ``pb``:
    probability that a roll has no keep; ``pnot``: probability that it has no scoring die
    (a roll for nothing goes out). ``reduced``: only the best keep per next state is kept.
    """

    unit: int
    states: tuple[tuple[int, Carry], ...]
    index: dict[tuple[int, Carry], int]
    gs: np.ndarray
    gp: np.ndarray
    ost: np.ndarray
    osc: np.ndarray
    onx: np.ndarray
    pb: np.ndarray
    pnot: np.ndarray
    max_keep: int
    reduced: bool

    @property
    def n_states(self) -> int:
        return len(self.states)

    def kernel_tables(self) -> tuple:
        return (self.n_states, self.gs, self.gp, self.ost, self.osc, self.onx, self.pb, self.pnot)

    def next_state(self, rules: Rules, dice: int, kept: int, carry: Carry) -> int:
        """Index of the dice state after keeping ``kept`` of ``dice`` dice, leaving ``carry``."""
        return self.index[_next_key(rules, dice, kept, carry)]


def _next_key(rules: Rules, dice: int, kept: int, carry: Carry) -> tuple[int, Carry]:
    left = dice - kept
    if left == 0 and rules.hot_dice:
        return (rules.num_dice, canonical_carry(rules, carry) if rules.trippn else EMPTY_CARRY)
    return (left, canonical_carry(rules, carry))


@lru_cache(maxsize=16)
def _flat_growth(rules: Rules) -> bool:
    """Whether one more die of a working set always adds the same points (additive growth up
    to any count a turn can reach), so a set's count never changes what later dice score."""
    reach = 3 * rules.num_dice + 3
    return all(
        len({rules.set_value(f, c + 1) - rules.set_value(f, c) for c in range(3, reach)}) == 1
        for f in range(1, 7)
    )


def canonical_carry(rules: Rules, carry: Carry) -> Carry:
    """The carry-over with each working set's count read as 3 where growth is flat.

    Under flat growth (Trippn: additive) every further die of a working set scores the same,
    whatever the set's count, and nothing else reads the count but whether the set works
    (the roll-off lock-in), so states that differ only in counts are the same decision
    problem; the points already scored enter as turn total. This closes Trippn's dice
    states. Other growth rules keep the counts, and so does Progressive (whose hot dice
    clear the carry-over anyway: its 204 states are left as they were).
    """
    if not rules.trippn or not any(c > 3 for c in carry.sets) or not _flat_growth(rules):
        return carry
    return carry._replace(sets=tuple(min(c, 3) for c in carry.sets))


@dataclass(frozen=True, eq=False)
class _Reached:
    """Dice states found by the breadth-first search, with every state's rolls grouped by
    their (points, next state) keeps: ``groups[s]`` = (probability per group, options per
    group, points, next state), the groups in sorted order of their keeps, points not yet
    divided by the unit. ``pb``: probability of no keep; ``pnot``: of no scoring die."""

    states: tuple[tuple[int, Carry], ...]
    index: dict[tuple[int, Carry], int]
    groups: tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]
    pb: np.ndarray
    pnot: np.ndarray
    unit: int


@lru_cache(maxsize=4)
def _reachable(rules: Rules, reduced: bool, max_states: int) -> _Reached:
    """Breadth-first search of the dice states from a fresh full roll (see :class:`_Reached`).

    ``reduced``: a roll's keeps are the best points per next state. The keeps of a roll come
    from :class:`greed_env.solver.keeps.CarryKeeps`, in ``keep_options``' order, so states are
    numbered in the order the reference's options find them.
    """
    n_dice = rules.num_dice
    dists = {n: roll_distribution(n) for n in range(1, n_dice + 1)}
    start = (n_dice, EMPTY_CARRY)
    index: dict[tuple[int, Carry], int] = {start: 0}
    states: list[tuple[int, Carry]] = [start]
    queue = deque([start])
    found: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    pb: dict[int, float] = {}
    pnot: dict[int, float] = {}
    scores: set[int] = set()
    next_index: dict[tuple[int, int, Carry], int] = {}

    def number(n: int, kept: int, after: Carry) -> int:
        nxt = _next_key(rules, n, kept, after)
        i = index.get(nxt)
        if i is None:
            if len(states) >= max_states:
                raise SolverError(f"{rules.name}: more than {max_states} dice states (dice, carry-over) "
                                  "are reachable; raise max_states")
            i = index[nxt] = len(states)
            states.append(nxt)
            queue.append(nxt)
        next_index[(n, kept, after)] = i
        return i

    while queue:
        key = queue.popleft()
        n, carry = key
        keeps = carry_keeps(rules, carry)
        groups: dict[tuple[tuple[int, int], ...], float] = {}
        p_none = 0.0
        p_nothing = 0.0
        for roll, p in dists[n]:
            opts, scoring = keeps.roll(roll, n == n_dice)
            if not scoring:
                p_nothing += p
            if not opts:
                p_none += p
                continue
            if reduced:
                best: dict[int, int] = {}
                for _sub, kept, score, after in opts:
                    nx = next_index.get((n, kept, after))
                    if nx is None:
                        nx = number(n, kept, after)
                    if score > best.get(nx, -1):
                        best[nx] = score
                    scores.add(score)
                opts_key = tuple(sorted((sc, nx) for nx, sc in best.items()))
            else:
                row = set()
                for _sub, kept, score, after in opts:
                    nx = next_index.get((n, kept, after))
                    if nx is None:
                        nx = number(n, kept, after)
                    row.add((score, nx))
                    scores.add(score)
                opts_key = tuple(sorted(row))
            groups[opts_key] = groups.get(opts_key, 0.0) + p
        s = index[key]
        ordered = sorted(groups.items())
        flat = [o for opts_key, _ in ordered for o in opts_key]
        found[s] = (
            np.array([p for _, p in ordered]),
            np.array([len(opts_key) for opts_key, _ in ordered], dtype=np.int32),
            np.array([sc for sc, _ in flat], dtype=np.int32),  # int32: Trippn's states hold
            np.array([nx for _, nx in flat], dtype=np.int32),  # hundreds of millions of keeps
        )
        pb[s] = p_none
        pnot[s] = p_nothing
        progress.note(f"dice states: {len(found)} expanded, {len(states)} found")
    progress.note("")
    n_states = len(states)
    return _Reached(
        states=tuple(states),
        index=index,
        groups=tuple(found[s] for s in range(n_states)),
        pb=np.array([pb[s] for s in range(n_states)]),
        pnot=np.array([pnot[s] for s in range(n_states)]),
        unit=rules_unit(rules, sorted(scores)),
    )


@lru_cache(maxsize=8)
def carry_tables(rules: Rules, reduced: bool, max_states: int = DEFAULT_MAX_STATES) -> CarryTables:
    """Enumerate the dice states reachable from a fresh roll and their transitions.

    ``reduced``: keep only the best keep per next dice state (exact when values never
    decrease in points: turn and entry).

    Raises:
        SolverError: more than ``max_states`` dice states, or a rule the engine's
            transitions need that this module does not model (no hot dice).
    """
    if not rules.carry_over:
        raise SolverError("carry tables are for carry-over rules")
    if not rules.hot_dice:
        raise SolverError("the carry-over solver needs hot dice")
    found = _reachable(rules, reduced, max_states)
    unit = found.unit
    gp = np.concatenate([g[0] for g in found.groups])
    lens = np.concatenate([g[1] for g in found.groups])
    osc = np.concatenate([g[2] for g in found.groups]).astype(np.int64) // unit
    onx = np.concatenate([g[3] for g in found.groups]).astype(np.int64)
    gs = np.zeros(found.pb.shape[0] + 1, dtype=np.int64)
    gs[1:] = np.cumsum([g[0].shape[0] for g in found.groups])
    ost = np.zeros(lens.shape[0] + 1, dtype=np.int64)
    ost[1:] = np.cumsum(lens)
    return CarryTables(
        unit=unit,
        states=found.states,
        index=found.index,
        gs=gs,
        gp=gp,
        ost=ost,
        osc=osc,
        onx=onx,
        pb=found.pb,
        pnot=found.pnot,
        max_keep=int(osc.max()),
        reduced=reduced,
    )


def risk_free_states(ct: CarryTables) -> np.ndarray:
    """Dice states from which a player can roll on for ever with no chance of a bust.

    The largest set ``W`` of states whose every roll has a keep (``pb == 0``) and whose every
    roll has a keep into ``W`` (a greatest fixed point). Every keep scores, so from a state of
    ``W`` a turn's points grow without bound: the expected points of a turn have no maximum.
    Empty under Progressive (hot dice clear the carry-over); Trippn's sets of 2s, 3s, 4s and 6s
    working make every die score (1s and 5s as singles), and they never stop working.
    """
    w = ct.pb == 0.0
    while True:
        into = np.concatenate(([0], np.cumsum(w[ct.onx])))
        group_ok = into[ct.ost[1:]] > into[ct.ost[:-1]]
        bad = np.concatenate(([0], np.cumsum(~group_ok)))
        keep = w & (bad[ct.gs[1:]] == bad[ct.gs[:-1]])
        if np.array_equal(keep, w):
            return w
        w = keep


def tail_gain(ct: CarryTables) -> np.ndarray:
    """Per dice state: expected points of rolling on while no bust is possible, then banking."""
    tail = np.zeros(ct.n_states)
    safe = [s for s in range(ct.n_states) if ct.pb[s] == 0.0]
    for _ in range(100_000):
        new = tail.copy()
        for s in safe:
            acc = 0.0
            for g in range(ct.gs[s], ct.gs[s + 1]):
                best = max(ct.osc[o] * ct.unit + tail[ct.onx[o]] for o in range(ct.ost[g], ct.ost[g + 1]))
                acc += ct.gp[g] * best
            new[s] = acc
        if np.max(np.abs(new - tail)) < 1e-12:
            return new
        tail = new
    raise SolverError("the tail gain does not converge")


def run_dp(
    ct: CarryTables,
    rules: Rules,
    t_cap: int,
    t_exact: int,
    out_val: float,
    bank_val: np.ndarray,
    bank_ok: np.ndarray,
    x: float,
    tail: np.ndarray | None = None,
    vbust: bool | None = None,
) -> dict[str, np.ndarray]:
    """Run :func:`carry_kernels.carry_dp`; arrays reshaped to (turn total, dice state)."""
    size = bank_val.shape[0]
    n = ct.n_states
    c = np.empty(size * n)
    d = np.empty_like(c)
    r = np.empty_like(c)
    dr = np.empty_like(c)
    if tail is None:
        tail = np.zeros(n)
    if vbust is None:
        vbust = rules.voluntary_bust
    ck.carry_dp(t_cap, t_exact, float(out_val), ct.kernel_tables(), bank_val, bank_ok, tail, float(x), vbust, c, d, r, dr)
    return {"c": c.reshape(size, n), "d": d.reshape(size, n), "r": r.reshape(size, n)}


def _turn_phi(rules: Rules, ct: CarryTables, t_cap: int, tail: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    size = t_cap + ct.max_keep + 1
    t = np.arange(size)
    arr = run_dp(ct, rules, t_cap, -1, 0.0, t * float(ct.unit), t >= max(1, -(-rules.min_bank // ct.unit)), 0.0, tail)
    return float(arr["c"][0, 0]), arr


def solve(rules: Rules, objective: str, tol: float = DEFAULT_TOL, cap: int | None = None,
          max_states: int = DEFAULT_MAX_STATES, levels: Any = None) -> SolverTable:
    """Solve ``objective`` under carry-over rules (see the module docstring); ``levels``: where
    the race's and the duel's levels run (:class:`greed_env.solver.distributed.ClusterLevels`:
    a Ray cluster), None: here."""
    check_supported(rules, objective)
    t0 = time.perf_counter()
    if objective == "entry":
        return _solve_entry(rules, tol, t0)
    if objective == "turn" and rules.exact_target:
        return solve_exact_turn(rules, max_states, t0)
    if objective == "turn":
        ct = carry_tables(rules, True, max_states)
        free = risk_free_states(ct)
        if free.any():
            n, carry = ct.states[int(np.argmax(free))]
            raise SolverError(
                f"{rules.name}: the expected points of a turn have no maximum: from {n} dice with "
                f"{carry.describe()} (and {int(free.sum()) - 1} more dice states) no roll can bust "
                "and the turn can go on for ever"
            )
        tail = tail_gain(ct)
        t_cap = (cap or 20_000) // ct.unit
        while True:
            v1, arr = _turn_phi(rules, ct, t_cap, tail)
            v2, _ = _turn_phi(rules, ct, 2 * t_cap, tail)
            ok = _tail_policy_holds(ct, arr, t_cap, tail)
            if cap is not None or (ok and abs(v2 - v1) <= tol):
                break
            t_cap *= 2
        meta = {
            "headline": v1,
            "headline_label": "expected points per turn (target ignored)",
            "unit": ct.unit,
            "cap_points": t_cap * ct.unit,
            "cap_change_when_doubled": abs(v2 - v1),
            "tail_policy_below_cap": bool(ok),
            "dice_states": ct.n_states,
            "tolerance": tol,
            "elapsed_s": time.perf_counter() - t0,
        }
        return SolverTable(rules, "turn", {"bust_value": np.array([0.0]), "turn_value": np.array([v1])}, meta)
    ct = carry_tables(rules, False, max_states)
    target = rules.target // ct.unit
    if rules.target % ct.unit:
        raise SolverError("the target is not a multiple of the points unit")
    if objective == "race":
        progress.plan(("the scores", 1.0))
        race = ck.carry_race_solve if levels is None else levels.carry_race
        r, iters = race(target, ct.kernel_tables(), ct.max_keep, rules.voluntary_bust, tol, _MAX_ITER, progress.counter())
        if np.any(iters < 0):
            raise SolverError("the race Newton iteration did not converge")
        meta = {
            "headline": float(r[0]),
            "headline_label": "expected turns to go out from 0",
            "unit": ct.unit,
            "dice_states": ct.n_states,
            "max_iterations": int(iters.max()),
            "tolerance": tol,
            "floor_points": 0,
            "elapsed_s": time.perf_counter() - t0,
        }
        return SolverTable(rules, "race", {"expected_turns": r}, meta)
    if objective == "duel":
        if not rules.exact_target:
            raise SolverError("the carry-over duel is solved for exact-target rules only")
        progress.plan(*duel_work(target))
        q = ck.last_turn_out(target, ct.kernel_tables(), ct.max_keep)
        progress.advance()
        rho, _first_choice = rolloff_value(rules, ct, tol, progress.counter())
        tie = max(rho, 1.0 - rho) if rules.tie_rule == "split_vote" else 0.5
        progress.advance()
        # the same table both ways; lane passes pay a fixed start per block that small grids do not repay
        fn = ck.carry_duel_solve_lanes if target >= LANE_MIN_TARGET else ck.carry_duel_solve
        if levels is not None:
            fn = levels.carry_duel
        with numba.parallel_chunksize(1):  # a step's lane blocks one at a time to whichever thread is free
            v, iters = fn(target, ct.kernel_tables(), ct.max_keep, rules.voluntary_bust, q, tie, tol, _MAX_ITER, progress.counter())
        if np.any(iters < 0):
            raise SolverError("the duel Newton iteration did not converge")
        meta = {
            "headline": float(v[0, 0]),
            "headline_label": "first player's win probability at the start",
            "unit": ct.unit,
            "dice_states": ct.n_states,
            "rolloff_first_roller": rho,
            "tie_value_first_finisher": tie,
            "max_iterations": int(iters.max()),
            "mean_iterations": float(iters.mean()),
            "tolerance": tol,
            "elapsed_s": time.perf_counter() - t0,
        }
        return SolverTable(rules, "duel", {"win": v, "last_turn_out": q}, meta)
    raise SolverError(f"unknown objective {objective!r}")


def exact_turn_context(rules: Rules, ct: CarryTables, score: int) -> dict[str, Any]:
    """The in-turn problem of the ``turn`` objective under an exact target, for a player with
    ``score`` banked: points gained this turn, where a total past the target loses the turn
    and one landing on it must roll for nothing (going out banks the rest of the way)."""
    unit = ct.unit
    t_exact = (rules.target - score) // unit
    size = t_exact + ct.max_keep + 1
    t = np.arange(size)
    bank_ok = (t >= max(1, -(-rules.min_bank // unit))) & (t < t_exact)
    return dict(t_cap=0, t_exact=t_exact, out=float(t_exact * unit), x=0.0, bank_val=t * float(unit),
                bank_ok=bank_ok, tail=None, sense=1)


def solve_exact_turn(rules: Rules, max_states: int = DEFAULT_MAX_STATES, t0: float | None = None) -> SolverTable:
    """``turn`` under an exact target: one turn from score 0 as ``Solitaire-v0`` plays it.

    A turn that passes the target is lost, so the points per turn with the target ignored
    (kept in the meta for comparison) would overstate what any policy can bank in the
    environment: Progressive 2,171.2 there against 2,168.8 here, and the target-ignoring
    policy itself banks 2,151.3 in the environment (exact enumeration). Values are not
    monotone in points near the target, so every distinct keep is kept (``reduced=False``).

    Called by :func:`solve` for the rules it models on demand, and directly (no
    :func:`check_supported` refusal) by ``scripts/trippn_turn.py`` for Trippn, whose
    dice states take an hour of CPU to enumerate: the target-ignored value is then skipped
    (the full and the best-keep tables have the same rolls into the same dice states, hence
    the same risk-free states, and Trippn has some: no maximum), so the states are found once.
    """
    t0 = time.perf_counter() if t0 is None else t0
    ct = carry_tables(rules, False, max_states)
    if rules.target % ct.unit:
        raise SolverError("the target is not a multiple of the points unit")
    ctx = exact_turn_context(rules, ct, 0)
    arr = run_dp(ct, rules, ctx["t_cap"], ctx["t_exact"], ctx["out"], ctx["bank_val"], ctx["bank_ok"], ctx["x"])
    v = float(arr["c"][0, 0])
    ignored = None  # no maximum where a turn can roll on for ever (Trippn)
    free = risk_free_states(ct)
    if not free.any():
        reduced = carry_tables(rules, True, max_states)
        ignored, _ = _turn_phi(rules, reduced, 20_000 // reduced.unit, tail_gain(reduced))
    meta = {
        "headline": v,
        "headline_label": f"expected points of one turn from 0 (exact target {rules.target}: past it the turn is lost)",
        "unit": ct.unit,
        "cap_points": rules.target,
        "cap_change_when_doubled": 0.0,
        "tail_policy_below_cap": True,
        "points_per_turn_target_ignored": ignored,
        "dice_states": ct.n_states,
        "roll_groups": int(ct.gp.shape[0]),
        "keeps": int(ct.osc.shape[0]),
        "risk_free_states": int(free.sum()),
        "tolerance": 0.0,
        "elapsed_s": time.perf_counter() - t0,
    }
    return SolverTable(rules, "turn", {"bust_value": np.array([0.0]), "turn_value": np.array([v])}, meta)


def _tail_policy_holds(ct: CarryTables, arr: dict[str, np.ndarray], t_cap: int, tail: np.ndarray) -> bool:
    lo = max(0, t_cap - ct.max_keep - 1)
    bank = np.arange(lo, t_cap) * float(ct.unit)
    for s in range(ct.n_states):
        if ct.pb[s] > 0 and np.any(arr["r"][lo:t_cap, s] > bank):
            return False
        if ct.pb[s] == 0 and np.any(np.abs(arr["c"][lo:t_cap, s] - bank - tail[s]) > 1e-6):
            return False
    return True


def _solve_entry(rules: Rules, tol: float, t0: float) -> SolverTable:
    """Probability of banking the threshold (at least one unit) in one turn.

    Solved on the rolls of a fresh full set: with threshold 0 any keep banks. A positive
    threshold needs the full dice-state tables.
    """
    goal = max(rules.entry_threshold, rules.min_bank)
    if goal > 0:
        ct = carry_tables(rules, True)
        need = -(-goal // ct.unit)
        size = need + ct.max_keep + 1
        ok = np.arange(size) >= need
        arr = run_dp(ct, rules, need, -1, 0.0, ok.astype(float), ok, 0.0)
        p = float(arr["c"][0, 0])
    else:  # the tabulated keeps (solver/keeps.py, tested equal to keep_options): 0.2 s, not 60
        keeps = carry_keeps(rules, EMPTY_CARRY)
        p = min(1.0, math.fsum(prob for roll, prob in roll_distribution(rules.num_dice)
                               if keeps.roll(roll, True)[0]))
    meta = {
        "headline": p,
        "headline_label": f"probability of banking {goal or 'anything'} in one turn",
        "goal_points": goal,
        "tolerance": tol,
        "elapsed_s": time.perf_counter() - t0,
    }
    if goal == 0:
        meta["note"] = ("threshold 0: every player is on the board from the start (probability "
                        "1); the value is the probability that the first roll has a keep")
    return SolverTable(rules, "entry", {"turn_value": np.array([p])}, meta)


def _locked(rules: Rules, ct: CarryTables) -> np.ndarray:
    """Dice states whose carry-over locks a Trippn roll-off (sets of 2s, 3s, 4s, 6s working)."""
    out = np.zeros(ct.n_states, dtype=bool)
    if rules.trippn:
        for i, (_, carry) in enumerate(ct.states):
            out[i] = all(carry.sets[f - 1] for f in (2, 3, 4, 6))
    return out


def _rolloff_second(ct: CarryTables, locked: np.ndarray, tie_again: float, y_max: int) -> np.ndarray:
    """``H[X]``: second roller's value against a first-roller total ``X`` (units).

    Translation invariant in ``y = X - t``: computed once over ``t' = y_max - y``.
    """
    size = y_max + 1 + ct.max_keep + 1
    reward = np.zeros(size)
    reward[y_max] = tie_again
    c = np.empty(size * ct.n_states)
    ck.rolloff_dp(y_max + 1, ct.kernel_tables(), reward, locked, c)
    arr = c.reshape(size, ct.n_states)
    return arr[y_max::-1, 0].copy()


def _rolloff_first(ct: CarryTables, locked: np.ndarray, second: np.ndarray) -> tuple[float, np.ndarray]:
    top = second.shape[0]
    size = top + ct.max_keep + 1
    reward = np.ones(size)
    reward[:top] = 1.0 - second
    c = np.empty(size * ct.n_states)
    ck.rolloff_dp(top, ct.kernel_tables(), reward, locked, c)
    return float(c[0]), c.reshape(size, ct.n_states)


_ROLLOFF_START = 400  # first cap (units) of the roll-off's second roller
# in-turn rows of a duel pass per roll-off row (no derivative, no banking), and the roll-off's
# passes as Progressive takes them (7 per cap, caps 400 to 3,200): estimates for the bar only
_ROLLOFF_ROW_COST = 0.5
_ROLLOFF_GUESS = 7 * 2 * sum(_ROLLOFF_START * 2**i + 1 for i in range(4))
_PASSES_PER_SIDE = 2.5  # Newton passes per side of a pair (2.4-2.7 measured, docs/results.md)


def duel_work(target: int) -> tuple[tuple[str, float], ...]:
    """The carry-over duel's stages and their estimated work in in-turn rows, for
    :func:`greed_env.progress.plan`: the last turns (a pass per score), the roll-off
    and the score pairs (a pass per score to find the live ones, then
    :func:`~greed_env.solver.kernels.level_work` times the Newton passes per side)."""
    scores = 0.5 * target * (target + 1)
    return (
        ("the last turns", scores),
        ("the roll-off", _ROLLOFF_ROW_COST * _ROLLOFF_GUESS),
        ("the score pairs", scores + _PASSES_PER_SIDE * float(level_work(target).sum())),
    )


def rolloff_value(rules: Rules, ct: CarryTables, tol: float, prog: np.ndarray | None = None) -> tuple[float, int]:
    """First roller's value ``rho`` of a two-player roll-off, and the cap (units) used.

    The second roller's chance to beat a total ``X`` falls geometrically in ``X``; the cap is
    doubled until it is below ``tol`` at the cap. ``prog`` (out, for the progress bar): rows
    of the passes done, against Progressive's number as the total.
    """
    locked = _locked(rules, ct)
    y_max = _ROLLOFF_START
    if prog is not None:
        prog[0], prog[1] = 0.0, _ROLLOFF_GUESS
    while True:
        rho = 0.5
        for _ in range(200):
            second = _rolloff_second(ct, locked, 1.0 - rho, y_max)
            new, _ = _rolloff_first(ct, locked, second)
            if prog is not None:
                prog[0] += 2 * (y_max + 1)
            if abs(new - rho) < tol:
                rho = new
                break
            rho = new
        if second[-1] < tol * 1e-3:
            return rho, y_max
        y_max *= 2


CONTEXT_CACHE_SIZE = 256
"""In-turn problems a :class:`CarryEvaluator` keeps (least recently used dropped first). A duel
context holds its turn's value arrays, about 0.7 MB for Progressive (some 200 turn totals x 204
dice states, twice): unbounded, a long run of games (a ladder calibration) filled 21 GB with
one per score pair met."""


class CarryEvaluator:
    """Values of legal moves under carry-over rules, recomputed from a solved table."""

    def __init__(self, rules: Rules, table: SolverTable) -> None:
        self.rules = rules
        self.table = table
        obj = table.objective
        self.trivial_entry = obj == "entry" and int(table.meta.get("goal_points", 0)) == 0
        self.exact_turn = obj == "turn" and rules.exact_target
        reduced = obj == "entry" or (obj == "turn" and not self.exact_turn)
        self.ct = None if self.trivial_entry else carry_tables(rules, reduced)
        self._cache: OrderedDict[Any, dict[str, Any]] = OrderedDict()
        self._rolloff: dict[str, Any] | None = None

    def context(self, state: State) -> dict[str, Any]:
        """The in-turn problem of ``state.player`` and its solved arrays (key ``arr``: ``c``
        after a keep, ``r`` rolling, indexed [turn total / unit, dice state]), cached."""
        rules, ct, table = self.rules, self.ct, self.table
        unit = ct.unit
        p = state.player
        obj = table.objective
        if state.in_rolloff:
            return self._rolloff_context(state)
        if self.exact_turn:
            key: tuple[Any, ...] = (obj, state.scores[p])
        elif obj in ("turn", "entry"):
            key = (obj,)
        elif obj == "race":
            key = (obj, state.scores[p])
        else:
            key = (obj, state.scores, p, state.endgame)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        if self.exact_turn:
            ctx = exact_turn_context(rules, ct, state.scores[p])
        elif obj == "turn":
            t_cap = table.meta["cap_points"] // unit
            size = t_cap + ct.max_keep + 1
            t = np.arange(size)
            bank_val = t * float(unit)
            bank_ok = t >= max(1, -(-rules.min_bank // unit))
            ctx = dict(t_cap=t_cap, t_exact=-1, out=0.0, x=0.0, bank_val=bank_val, bank_ok=bank_ok,
                       tail=tail_gain(ct), sense=1)
        elif obj == "entry":
            goal = max(1, -(-int(table.meta["goal_points"]) // unit))
            size = goal + ct.max_keep + 1
            ok = np.arange(size) >= goal
            ctx = dict(t_cap=goal, t_exact=-1, out=0.0, x=0.0, bank_val=ok.astype(float), bank_ok=ok,
                       tail=None, sense=1)
        else:
            target = rules.target // unit
            a = state.scores[p] // unit
            t_exact = target - a
            size = t_exact + ct.max_keep + 1
            t = np.arange(size)
            bank_ok = (t >= 1) & (t < t_exact)
            if obj == "race":
                r = table.arrays["expected_turns"]
                bank_val = np.where(bank_ok, -r[np.minimum(a + t, target - 1)], 0.0)
                ctx = dict(t_cap=0, t_exact=t_exact, out=0.0, x=-float(r[a]), bank_val=bank_val,
                           bank_ok=bank_ok, tail=None, sense=-1)
            else:
                v = table.arrays["win"]
                q = table.arrays["last_turn_out"]
                tie = float(table.meta["tie_value_first_finisher"])
                b = state.scores[1 - p] // unit
                if state.endgame:
                    bank_val = np.zeros(size)
                    ctx = dict(t_cap=0, t_exact=t_exact, out=1.0 - tie, x=0.0, bank_val=bank_val,
                               bank_ok=bank_ok, tail=None, sense=1)
                else:
                    bank_val = np.where(bank_ok, 1.0 - v[b, np.minimum(a + t, target - 1)], 0.0)
                    ctx = dict(t_cap=0, t_exact=t_exact, out=1.0 - q[b] * (1.0 - tie),
                               x=1.0 - float(v[b, a]), bank_val=bank_val, bank_ok=bank_ok,
                               tail=None, sense=1)
        ctx["arr"] = run_dp(ct, rules, ctx["t_cap"], ctx["t_exact"], ctx["out"], ctx["bank_val"],
                            ctx["bank_ok"], ctx["x"], ctx["tail"])
        self._cache[key] = ctx
        if len(self._cache) > CONTEXT_CACHE_SIZE:  # least recently used first
            self._cache.popitem(last=False)
        return ctx

    def _rolloff_tables(self) -> dict[str, Any]:
        if self._rolloff is None:
            ct = self.ct
            if ct.reduced:
                raise SolverError("roll-off play needs the duel table")
            locked = _locked(self.rules, ct)
            rho, y_max = rolloff_value(self.rules, ct, DEFAULT_TOL)
            second = _rolloff_second(ct, locked, 1.0 - rho, y_max)
            _, first = _rolloff_first(ct, locked, second)
            self._rolloff = {"rho": rho, "y_max": y_max, "second": second, "first": first,
                             "locked": locked, "by_x": {}}
        return self._rolloff

    def _rolloff_context(self, state: State) -> dict[str, Any]:
        ro = self._rolloff_tables()
        ct = self.ct
        if not state.rolloff_scores:
            arr = ro["first"]
            return {"rolloff": True, "arr": arr, "x_reward": 1.0 - ro["second"]}
        xx = state.rolloff_scores[0] // ct.unit
        hit = ro["by_x"].get(xx)
        if hit is None:
            size = xx + 1 + ct.max_keep + 1
            reward = np.zeros(size)
            reward[xx] = 1.0 - ro["rho"]
            c = np.empty(size * ct.n_states)
            ck.rolloff_dp(xx + 1, ct.kernel_tables(), reward, ro["locked"], c)
            hit = {"rolloff": True, "arr": c.reshape(size, ct.n_states), "x_reward": reward}
            ro["by_x"][xx] = hit
        return hit

    def tie_choices(self) -> tuple[float, float]:
        """(first roller's roll-off value, value of rolling last) for the first finisher."""
        rho = self._rolloff_tables()["rho"]
        return rho, 1.0 - rho

    def turn_start_value(self, state: State) -> float:
        """Value of a turn about to start for ``state.player`` (fresh roll, no carry-over)."""
        if self.trivial_entry:
            return self.table.headline
        ctx = self.context(state._replace(carry=EMPTY_CARRY))
        value = float(ctx["arr"]["c"][0, 0])
        return 1.0 - value if ctx.get("sense", 1) < 0 else value

    def _trivial_entry_values(self, state: State, moves: list[Move]) -> list[tuple[Move, float]]:
        """Entry with nothing to reach: any keep banks next, so only busting loses."""
        out = []
        for m in moves:
            if m.kind == "keep" or m == BANK:
                out.append((m, 1.0))
            elif m in (ROLL, ROLL_FOR_NOTHING):
                rolls = roll_distribution(state.dice)
                full = state.fresh and state.dice == self.rules.num_dice
                keeps = carry_keeps(self.rules, state.carry)
                out.append((m, math.fsum(p for roll, p in rolls if keeps.roll(roll, full)[0])))
            else:
                out.append((m, 0.0))
        return out

    def move_values(self, state: State, moves: list[Move]) -> list[tuple[Move, float]]:
        """Value of each move in ``moves`` (legal moves of ``state``)."""
        if self.trivial_entry:
            return self._trivial_entry_values(state, moves)
        rules, ct = self.rules, self.ct
        assert ct is not None
        if state.phase == Phase.SPLIT:
            rho = self._rolloff_tables()["rho"]
            me_first = state.player == state.finishers[0]
            tie = max(rho, 1.0 - rho)
            val = tie if me_first else 1.0 - tie
            return [(m, 0.5 if m == SPLIT else val) for m in moves]
        if state.phase == Phase.ORDER_CHOICE:
            rho = self._rolloff_tables()["rho"]
            return [(m, rho if m == ROLL_FIRST else 1.0 - rho) for m in moves if m in (ROLL_FIRST, ROLL_LAST)]
        ctx = self.context(state)
        unit = ct.unit
        t_now = state.turn_total // unit
        arr = ctx["arr"]
        out: list[tuple[Move, float]] = []
        c = arr if ctx.get("rolloff") else arr["c"]
        if state.phase == Phase.KEEP:
            opts = {o.taps: o for o in current_keep_options(rules, state)}
            for m in moves:
                if m.kind == "keep":
                    o = opts[m.taps]
                    nxt = ct.index[_next_key(rules, state.dice, len(o.dice), o.carry)]
                    t2 = t_now + o.score // unit
                    val = float(c[min(t2, c.shape[0] - 1), nxt])
                elif m == BUST:
                    val = float(ctx["x"])
                else:
                    raise SolverError(f"no value for move {m}")
                out.append((m, val))
        elif state.phase == Phase.CONTINUE:
            s = ct.index[(state.dice, canonical_carry(rules, state.carry))]
            for m in moves:
                if m == BANK:
                    val = float(ctx["bank_val"][t_now])
                elif m in (ROLL, ROLL_FOR_NOTHING):
                    r = c if ctx.get("rolloff") else arr["r"]
                    val = float(r[min(t_now, r.shape[0] - 1), s])
                else:
                    raise SolverError(f"no value for move {m}")
                out.append((m, val))
        else:
            return [(m, 0.0) for m in moves]
        if ctx.get("sense", 1) < 0:
            out = [(m, 1.0 - v) for m, v in out]
        return out

