"""Solving the four objectives for rules without carry-over.

Each solver returns a :class:`~greed_env.solver.table.SolverTable` of turn-start values; the
positions inside a turn are recomputed on demand from them by :mod:`greed_env.solver.position`.

* ``turn``: the expected score of one turn of a player on the board. With a penalty after N
  busts in a row, the long-run average points per turn ``rho`` of the average-reward MDP over
  the bust streak, found by Newton's method on ``rho`` (each evaluation an in-turn pass).
* ``entry``: the probability of banking the come-in threshold (or the minimum bank, when it
  is larger) within one turn.
* ``race``: the least expected number of turns for one player to reach the target from every
  banked score.
* ``duel``: the probability that the player to move wins, from every pair of banked scores.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np

from greed_env.progress import advance, counter, plan
from greed_env.rules.config import Rules
from greed_env.solver import kernels
from greed_env.solver.model import (
    RollTables,
    SolverError,
    check_supported,
    needs_full_tables,
    roll_tables,
)
from greed_env.solver.penalty_passes import duel_penalty_solve_lean
from greed_env.solver.table import SolverTable

__all__ = [
    "DEFAULT_TOL",
    "solve_duel",
    "solve_entry",
    "solve_race",
    "solve_turn",
    "tail_gain",
    "turn_arrays",
]

DEFAULT_TOL = 1e-12
_MAX_ITER = 60
_SWEEPS_NOTE = (
    "with a bust penalty the {objective} is solved by sweeps over every score at once, not level by "
    "level, so it does not run on a cluster: solve it without --address"
)


@lru_cache(maxsize=32)
def tail_gain(tb: RollTables) -> np.ndarray:
    """Gain over banking, per dice count, once the turn total is huge (turn objective only).

    With a large total every roll that can bust is worse than banking, but a roll that cannot
    bust (Zilch: six dice always score, thanks to the nothing bonus) is a free gain. ``tail[n]``
    is the expected points of rolling on while the roll cannot bust and banking otherwise.
    """
    n_dice = tb.num_dice
    tail = np.zeros(n_dice + 1)
    safe = [n for n in range(1, n_dice + 1) if tb.p_bust[n] == 0.0]
    for _ in range(10_000):
        new = tail.copy()
        for n in safe:
            acc = 0.0
            for g in range(tb.grp_start[n], tb.grp_start[n + 1]):
                best = -np.inf
                for o in range(tb.opt_start[g], tb.opt_start[g + 1]):
                    best = max(best, tb.opt_s[o] * tb.unit + tail[tb.opt_m[o]])
                acc += tb.grp_prob[g] * best
            new[n] = acc
        if np.max(np.abs(new - tail)) < 1e-13:
            return new
        tail = new
    raise SolverError("the tail gain does not converge: rolling without risk never ends")


def turn_arrays(
    rules: Rules,
    tb: RollTables,
    t_cap: int,
    bank_val: np.ndarray,
    bank_ok: np.ndarray,
    x: float,
    tail: np.ndarray | None = None,
    win: float = 1.0,
) -> dict[str, np.ndarray]:
    """Run the in-turn kernel and return its arrays reshaped to (total, dice).

    ``win``: the value of a roll that wins the game at once (``six_kind_wins``; see
    :meth:`~greed_env.solver.model.RollTables.kernel_tables`).

    Keys: ``c`` (value after a keep), ``d`` (its d/dbust), ``r`` (value of rolling), ``w``
    (value of a reroll-all with bar B), each indexed by turn total in units.
    """
    size = bank_val.shape[0]
    width = tb.num_dice + 1
    c = np.empty(size * width)
    d = np.empty_like(c)
    r = np.empty_like(c)
    dr = np.empty_like(c)
    w = np.zeros(size)
    dw = np.zeros(size)
    if tail is None:
        tail = np.zeros(width)
    kernels.turn_dp(
        t_cap, tb.kernel_tables(win), bank_val, bank_ok, tail, float(x), reroll_mode(rules), c, d, r, dr, w, dw
    )
    return {
        "c": c.reshape(size, width),
        "d": d.reshape(size, width),
        "r": r.reshape(size, width),
        "w": w,
    }


def _need(rules: Rules, unit: int, entered: bool) -> int:
    """Smallest turn total (units) that may be banked."""
    need = rules.min_bank
    if not entered:
        need = max(need, rules.entry_threshold)
    return max(1, -(-need // unit))


def turn_bank(rules: Rules, tb: RollTables, t_cap: int, entered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Bank values (points) and legality for the turn objective."""
    size = t_cap + tb.max_keep + 1
    t = np.arange(size)
    return t * float(tb.unit), t >= _need(rules, tb.unit, entered)


def _phi(rules: Rules, tb: RollTables, t_cap: int, tail: np.ndarray, y: float) -> tuple[float, float, dict[str, np.ndarray]]:
    bank_val, bank_ok = turn_bank(rules, tb, t_cap)
    arr = turn_arrays(rules, tb, t_cap, bank_val, bank_ok, y, tail)
    n = tb.num_dice
    return float(arr["c"][0, n]), float(arr["d"][0, n]), arr


def _tail_policy_holds(tb: RollTables, arr: dict[str, np.ndarray], t_cap: int, tail: np.ndarray) -> bool:
    """Whether the solved policy just below the cap is already the tail policy."""
    lo = max(0, t_cap - tb.max_keep - 1)
    for n in range(1, tb.num_dice + 1):
        bank = np.arange(lo, t_cap) * float(tb.unit)
        rolled = arr["r"][lo:t_cap, n]
        if tb.p_bust[n] > 0 and np.any(rolled > bank):
            return False
        if tb.p_bust[n] == 0 and np.any(np.abs(arr["c"][lo:t_cap, n] - bank - tail[n]) > 1e-6):
            return False
    return True


def solve_turn(rules: Rules, tol: float = DEFAULT_TOL, cap: int | None = None) -> SolverTable:
    """Expected points per turn of a player on the board (long-run average with a penalty).

    ``cap`` (points) is where the tail policy starts; by default it is doubled from 20,000
    until the policy just below it is the tail policy and doubling it changes no value by
    more than ``tol``.
    """
    check_supported(rules, "turn")
    t0 = time.perf_counter()
    tb = roll_tables(rules, needs_full_tables(rules, "turn"))
    tail = tail_gain(tb)
    t_cap = (cap or 20_000) // tb.unit
    pen_after = rules.bust_penalty_after if rules.bust_penalty else 0
    probe_y = -float(rules.bust_penalty) if pen_after else 0.0
    cap_change = 0.0
    while True:
        v1, _, arr = _phi(rules, tb, t_cap, tail, probe_y)
        v2, _, _ = _phi(rules, tb, 2 * t_cap, tail, probe_y)
        cap_change = abs(v2 - v1)
        if cap is not None or (_tail_policy_holds(tb, arr, t_cap, tail) and cap_change <= tol):
            break
        t_cap *= 2
        if t_cap * tb.unit > 10_000_000:
            raise SolverError("no cap up to 10,000,000 points makes the turn values converge")
    policy_ok = _tail_policy_holds(tb, arr, t_cap, tail)

    def phi(y: float) -> tuple[float, float]:
        val, slope, _ = _phi(rules, tb, t_cap, tail, y)
        return val, slope

    iterations = 0
    if not pen_after:
        rho, _ = phi(0.0)
        bust_value = np.array([0.0])
        turn_value = np.array([rho])
        iterations = 1
    else:
        rho, bust_value, turn_value, iterations = _average_reward(phi, pen_after, float(rules.bust_penalty), tol)
    single, _ = phi(0.0)
    meta: dict[str, Any] = {
        "headline": rho,
        "headline_label": "expected points per turn" + (" (long-run average)" if pen_after else ""),
        "unit": tb.unit,
        "cap_points": t_cap * tb.unit,
        "cap_change_when_doubled": cap_change,
        "tail_policy_below_cap": bool(policy_ok),
        "full_tables": tb.full,
        "tolerance": tol,
        "iterations": iterations,
        "turn_value_ignoring_penalty": single,
        "elapsed_s": time.perf_counter() - t0,
    }
    arrays = {"bust_value": np.asarray(bust_value, float), "turn_value": np.asarray(turn_value, float)}
    return SolverTable(rules, "turn", arrays, meta)


def _average_reward(phi: Any, k: int, penalty: float, tol: float) -> tuple[float, np.ndarray, np.ndarray, int]:
    """Gain and bias of the streak MDP: ``h[s] + rho = phi(x_s)``, ``h[0] = 0``.

    A bust at streak ``s < k - 1`` moves to ``s + 1`` (``x_s = h[s + 1]``); the k-th bust in a
    row costs ``penalty`` and resets the streak (``x_{k-1} = -penalty``). Newton's method on
    ``rho`` (the residual ``h[0](rho)`` is strictly decreasing).
    """
    rho, _ = phi(0.0)
    for it in range(1, _MAX_ITER + 1):
        h = np.zeros(k + 1)
        dh = np.zeros(k + 1)
        x = np.zeros(k)
        x[k - 1] = -penalty
        val, _slope = phi(x[k - 1])
        h[k - 1] = val - rho
        dh[k - 1] = -1.0
        for s in range(k - 2, -1, -1):
            x[s] = h[s + 1]
            val, slope_s = phi(x[s])
            h[s] = val - rho
            dh[s] = slope_s * dh[s + 1] - 1.0
        resid, dres = h[0], dh[0]
        if abs(resid) < tol:
            turn_value = np.array([phi(x[s])[0] for s in range(k)])
            return rho, x, turn_value, it
        rho -= resid / dres
    raise SolverError("the average-reward iteration did not converge")


def solve_entry(rules: Rules, tol: float = DEFAULT_TOL) -> SolverTable:
    """Probability of banking at least the come-in threshold (or the minimum bank) in one turn."""
    check_supported(rules, "entry")
    t0 = time.perf_counter()
    tb = roll_tables(rules, needs_full_tables(rules, "entry"))
    need = _need(rules, tb.unit, entered=False)
    size = need + tb.max_keep + 1
    t = np.arange(size)
    bank_ok = t >= need
    arr = turn_arrays(rules, tb, need, bank_ok.astype(float), bank_ok, 0.0)
    p = float(arr["c"][0, tb.num_dice])
    goal = need * tb.unit
    meta = {
        "headline": p,
        "headline_label": f"probability of banking {goal}+ in one turn",
        "goal_points": goal,
        "unit": tb.unit,
        "tolerance": tol,
        "elapsed_s": time.perf_counter() - t0,
    }
    if rules.entry_threshold == 0:
        meta["note"] = (
            "threshold 0: every player is on the board from the start (probability 1); the "
            f"value is the probability of banking at least {goal} points in one turn"
        )
    return SolverTable(rules, "entry", {"turn_value": np.array([p])}, meta)


def solve_race(rules: Rules, tol: float = DEFAULT_TOL, floor: int | None = None, levels: Any = None) -> SolverTable:
    """Least expected number of turns to bank the target from every banked score (a fixed
    number of rounds is ignored: the race counts the turns however many are played).

    ``levels``: where the levels run (:class:`greed_env.solver.distributed.ClusterLevels`: a
    Ray cluster); None: here, by the compiled driver.
    """
    check_supported(rules, "race")
    if rules.target <= 0:
        raise SolverError("the race needs a target (target=0: a game of rounds alone)")
    t0 = time.perf_counter()
    tb = roll_tables(rules, needs_full_tables(rules, "race"))
    unit = tb.unit
    target = -(-rules.target // unit)
    thr = -(-rules.entry_threshold // unit)
    mb = -(-rules.min_bank // unit)
    pen_after = rules.bust_penalty_after if rules.bust_penalty else 0
    meta: dict[str, Any] = {"unit": unit, "tolerance": tol}
    if pen_after and levels is not None:
        raise SolverError(_SWEEPS_NOTE.format(objective="race"))
    if pen_after:
        lo = _floor_units(rules, unit, floor)
        pen = rules.bust_penalty // unit
        r, sweeps, change = kernels.race_penalty_solve(
            target, lo, pen_after, pen, mb, tb.kernel_tables(), reroll_mode(rules), tol, 10_000, counter()
        )
        if sweeps < 0:
            raise SolverError("the race sweeps did not converge")
        head = float(r[-lo, 0])
        meta.update(floor_points=lo * unit, sweeps=sweeps, last_change=change)
        arrays = {"expected_turns": r}
    else:
        # a roll that wins at once ends the race: no turns left after it
        race = kernels.race_solve if levels is None else levels.race
        r, iters = race(target, thr, mb, tb.kernel_tables(0.0), reroll_mode(rules), tol, _MAX_ITER, counter())
        if np.any(iters < 0):
            raise SolverError("the race Newton iteration did not converge")
        head = float(r[0])
        meta.update(max_iterations=int(iters.max()), floor_points=0)
        arrays = {"expected_turns": r}
    meta.update(
        headline=head,
        headline_label="expected turns to reach the target from 0",
        elapsed_s=time.perf_counter() - t0,
    )
    return SolverTable(rules, "race", arrays, meta)


def _floor_units(rules: Rules, unit: int, floor: int | None) -> int:
    """Lowest banked score modelled (units, <= 0); lower scores are read as this one."""
    if floor is None:
        floor = -4 * rules.bust_penalty
    if floor > 0:
        raise SolverError("floor must be <= 0 points")
    return floor // unit


def reroll_mode(rules: Rules) -> int:
    """The kernels' reroll-all switch: 0 none, 1 the turn's first roll only, 2 any roll."""
    if not rules.reroll_all:
        return 0
    return 2 if rules.reroll_all_any_time else 1


def cap_eps(tol: float) -> float:
    """Largest value a final-round cap may forgo where the bust bound cannot certify it."""
    return tol * 1e-2


def final_round_tables(rules: Rules, tb: RollTables, x_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Opponent's last-turn value by points to beat, on the board and not (units)."""
    mb = -(-rules.min_bank // tb.unit)
    thr = -(-rules.entry_threshold // tb.unit)
    tab = tb.kernel_tables()
    tie = 0.0 if rules.tie_rule == "first_finisher" else 0.5
    g_in = kernels.final_turn_values(x_max, mb, tab, reroll_mode(rules), tie)
    g_out = kernels.final_turn_values(x_max, max(mb, thr), tab, reroll_mode(rules), tie) if thr else g_in
    return g_in, g_out


def final_round_caps(
    rules: Rules, tb: RollTables, target: int, p_min: float, eps: float
) -> tuple[np.ndarray, np.ndarray]:
    """The opponent's last-turn tables (see :func:`final_round_tables`) up to a cap that holds:
    ``6 * target`` past the best keep, doubled while no bust bound exists (``p_min`` 0) and the
    last turn could still win more than ``eps`` at the cap. Without a final round, zeros."""
    if not rules.final_round:
        zero = np.zeros(1)
        return zero, zero
    x_max = 6 * target + tb.max_keep
    g_in, g_out = final_round_tables(rules, tb, x_max)
    while p_min <= 0.0 and max(g_in[-1], g_out[-1]) > eps and x_max < 200 * target:
        x_max *= 2
        g_in, g_out = final_round_tables(rules, tb, x_max)
    return g_in, g_out


_PENALTY_SWEEP_SHARE = 60.0
"""The sweeps of a bust-penalty duel against its starting values, in work (for the bar):
four to five recording sweeps of nine streak states per pair, against 2.4 Newton passes of
the duel without the penalty."""


def penalty_start(tb: RollTables, n: int, mb: int, k: int, p_min: float, tol: float) -> np.ndarray:
    """Starting values of the duel with a bust penalty over ``n`` scores (from the floor to
    the target, units): the duel without the penalty at a target ``n`` away from the floor
    (first to it wins), read at the same distances to the target for every pair of bust
    streaks (``k`` each). Within 0.06 of the solution at targets 1,500 and 3,000, where the
    sweeps from 0.5 begin 0.5 away: 4 sweeps of in-turn passes instead of 5 and 6 (policy
    iteration then stops at the same fixed point, 4e-16 from the sweeps from 0.5)."""
    zero = np.zeros(1)
    w, iters, _margins, _certified = kernels.duel_solve(
        n, 0, mb, False, zero, zero, p_min, cap_eps(tol), tb.kernel_tables(), 0, tol, _MAX_ITER, counter()
    )
    if np.any(iters < 0):
        raise SolverError("the duel Newton iteration did not converge")
    start = np.empty((n, n, k, k))
    start[:] = w[:, :, None, None]
    return start


def solve_duel(rules: Rules, tol: float = DEFAULT_TOL, floor: int | None = None, levels: Any = None) -> SolverTable:
    """Probability that the player to move wins, from every pair of banked scores (2 players).

    ``levels``: where the levels run (:class:`greed_env.solver.distributed.ClusterLevels`: a
    Ray cluster); None: here, by the compiled driver.
    """
    check_supported(rules, "duel")
    if rules.max_players < 2:
        raise SolverError(f"{rules.name} is not played by two players")
    if rules.rounds:
        raise SolverError("a game of a fixed number of rounds is solved by greed_env.solver.rounds")
    t0 = time.perf_counter()
    tb = roll_tables(rules, needs_full_tables(rules, "duel"))
    unit = tb.unit
    target = -(-rules.target // unit)
    thr = -(-rules.entry_threshold // unit)
    mb = -(-rules.min_bank // unit)
    pen_after = rules.bust_penalty_after if rules.bust_penalty else 0
    meta: dict[str, Any] = {"unit": unit, "tolerance": tol}
    p_min = float(min(tb.p_bust[1:]))
    if pen_after:
        if rules.final_round:
            raise SolverError("the solver does not model a final round together with a bust penalty")
        if levels is not None:
            raise SolverError(_SWEEPS_NOTE.format(objective="duel"))
        lo = _floor_units(rules, unit, floor)
        pen = rules.bust_penalty // unit
        if reroll_mode(rules) == 0:
            plan(("the duel without the penalty: starting values", 1.0), ("sweeps", _PENALTY_SWEEP_SHARE))
            start = penalty_start(tb, target - lo, mb, pen_after, p_min, tol)
            advance()
            v, sweeps, change, linear = duel_penalty_solve_lean(
                target, lo, pen_after, pen, mb, tb.kernel_tables(), tol, 10_000, counter(), start
            )
        else:  # a reroll-all keeps the plain sweeps (no preset has one with a penalty)
            v, sweeps, change, linear = kernels.duel_penalty_solve(
                target, lo, pen_after, pen, mb, tb.kernel_tables(), reroll_mode(rules), tol, 10_000,
                counter(), False,
            )
        if sweeps < 0:
            raise SolverError("the duel sweeps did not converge")
        head = float(v[-lo, -lo, 0, 0])
        meta.update(floor_points=lo * unit, sweeps=sweeps, linear_sweeps=linear, last_change=change)
        arrays = {"win": v}
    else:
        g_in, g_out = final_round_caps(rules, tb, target, p_min, cap_eps(tol))
        duel = kernels.duel_solve if levels is None else levels.duel
        v, iters, margins, certified = duel(
            target, thr, mb, rules.final_round, g_in, g_out, p_min, cap_eps(tol), tb.kernel_tables(),
            reroll_mode(rules), tol, _MAX_ITER, counter(),
        )
        if np.any(iters < 0):
            raise SolverError("the duel Newton iteration did not converge")
        head = float(v[0, 0])
        arrays = {"win": v}
        if rules.final_round:
            arrays.update(final_entered=g_in, final_not_entered=g_out)
            meta.update(
                max_margin_points=int(margins.max()) * unit,
                cap_certified=bool(certified.all()),
                cap_error_bound=cap_eps(tol) if p_min * float(v.min()) < cap_eps(tol) else 0.0,
            )
        meta.update(max_iterations=int(iters.max()), mean_iterations=float(iters.mean()),
                    full_tables=tb.full)
    meta.update(
        headline=head,
        headline_label="first player's win probability at the start",
        p_min_bust=p_min,
        elapsed_s=time.perf_counter() - t0,
    )
    return SolverTable(rules, "duel", arrays, meta)
