"""Compiled kernels of the solver (numba, cached on disk).

The one building block is :func:`turn_dp`, the optimal value of every position inside one turn
of a rule set without carry-over, as a backward pass over turn totals (every keep adds points,
so positions are acyclic in the turn total). The objectives differ only in what banking is worth
at each turn total (``bank_val``), where banking is allowed (``bank_ok``) and what a bust is worth
(``x``). Next to each value the kernel propagates its derivative with respect to ``x`` under the
optimal policy (the probability of ending the turn by a bust), which the drivers use for Newton
steps on the bust value.

Array layout: turn totals are in units of ``RollTables.unit``; ``T`` is the cap (positions with
turn total ``>= T`` bank at once, and the caller guarantees banking is legal there) and
``L = T + max_keep + 1`` the length of every per-total array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

PARALLEL_MIN_PAIRS = 24
"""Levels with fewer pairs run on one thread: waking the worker threads costs more there."""

__all__ = [
    "duel_bank_values",
    "duel_margin",
    "duel_penalty_solve",
    "duel_solve",
    "end_distribution",
    "expected_sweeps",
    "final_turn_values",
    "level_work",
    "race_bank_values",
    "race_penalty_solve",
    "race_solve",
    "turn_dp",
    "turn_dp_policy",
]


@njit(cache=True)
def _reroll_value(b: int, x: float, tab: tuple, c: np.ndarray, d: np.ndarray, w: np.ndarray, dw: np.ndarray, reroll: int) -> Any:
    num_dice, _hot, gs, gp, ga, pb, ost, osc, _om, ooff, _max_keep, pw = tab
    acc = pb[num_dice] * x + pw[num_dice]
    dacc = pb[num_dice]
    for g in range(gs[num_dice], gs[num_dice + 1]):
        if ga[g] <= b:
            acc += gp[g] * x
            dacc += gp[g]
            continue
        if reroll == 2:  # a reroll may be rerolled again only when rerolls are allowed any time
            bv = w[ga[g]]
            bd = dw[ga[g]]
        else:
            bv = -np.inf
            bd = 0.0
        for o in range(ost[g], ost[g + 1]):
            if osc[o] > b:
                j = ooff[o]
                if c[j] > bv:
                    bv = c[j]
                    bd = d[j]
        acc += gp[g] * bv
        dacc += gp[g] * bd
    return acc, dacc


@njit(cache=True)
def turn_dp(t_cap: int, tab: tuple, bank_val: np.ndarray, bank_ok: np.ndarray, tail: np.ndarray, x: float, reroll: int, c: np.ndarray, d: np.ndarray, r: np.ndarray, dr: np.ndarray, w: np.ndarray, dw: np.ndarray) -> Any:
    """Fill the in-turn value arrays of one turn.

    Args:
        t_cap: T, the first turn total from which the player follows the *tail policy*:
            bank at once, except that ``tail[n]`` is added to the bank value with ``n`` dice
            (a roll that cannot bust is worth rolling however large the total; see
            ``greed_env.solver.objectives.tail_gain``).
        tab: ``RollTables.kernel_tables()``.
        bank_val: value of banking at each turn total (length L).
        bank_ok: whether banking is legal at each turn total (must hold from T on).
        tail: (num_dice + 1,) gain over banking in the tail region (zeros: bank at once).
        x: value of a bust (also of a turn stranded with no dice and no legal bank).
        reroll: whether a reroll-all (with the must-beat bar) is a move: 0 never, 1 on the
            turn's first roll only (t = 0 with a full set), 2 after any roll.
        c, d: out, flat (L * (num_dice + 1)): value and d/dx after a keep at total ``t`` with
            ``n`` dice to roll, index ``t * (num_dice + 1) + n`` (n = 0 only without hot dice:
            bank, or stranded).
        r, dr: out, same layout: value and d/dx of rolling ``n`` dice at total ``t``.
        w, dw: out (L,): value and d/dx of rolling a full set with must-beat bar ``B``.

    The value at the start of a turn is ``c[num_dice]`` (t = 0; banking 0 is never legal).
    """
    num_dice, _hot, gs, gp, ga, pb, ost, _osc, _om, ooff, _max_keep, pw = tab
    width = num_dice + 1
    size = bank_val.shape[0]
    for t in range(size - 1, t_cap - 1, -1):
        for n in range(width):
            j = t * width + n
            c[j] = bank_val[t] + tail[n]
            d[j] = 0.0
            r[j] = c[j]
            dr[j] = 0.0
    if reroll:
        for b in range(size - 1, t_cap - 1, -1):
            w[b], dw[b] = _reroll_value(b, x, tab, c, d, w, dw, reroll)
    for t in range(t_cap - 1, -1, -1):
        if reroll:
            w[t], dw[t] = _reroll_value(t, x, tab, c, d, w, dw, reroll)
        bank = bank_val[t]
        ok = bank_ok[t]
        base = t * width
        for n in range(1, width):
            acc = pb[n] * x + pw[n]
            dacc = pb[n]
            for g in range(gs[n], gs[n + 1]):
                bv = -np.inf
                bi = 0
                for o in range(ost[g], ost[g + 1]):
                    j = base + ooff[o]
                    if c[j] > bv:
                        bv = c[j]
                        bi = j
                bd = d[bi]
                if reroll == 2 or (reroll == 1 and t == 0 and n == num_dice):
                    j = t + ga[g]
                    if w[j] > bv:
                        bv = w[j]
                        bd = dw[j]
                acc += gp[g] * bv
                dacc += gp[g] * bd
            j = base + n
            r[j] = acc
            dr[j] = dacc
            if ok and bank >= acc:
                c[j] = bank
                d[j] = 0.0
            else:
                c[j] = acc
                d[j] = dacc
        if ok:
            c[base] = bank
            d[base] = 0.0
        else:
            c[base] = x
            d[base] = 1.0
        r[base] = c[base]
        dr[base] = d[base]


@njit(cache=True)
def _scratch(size: int, num_dice: int) -> Any:
    shape = size * (num_dice + 1)
    return (
        np.empty(shape),
        np.empty(shape),
        np.empty(shape),
        np.empty(shape),
        np.empty(size),
        np.empty(size),
    )


@njit(cache=True)
def _final_turn_one(xx: int, need: int, tab: tuple, reroll: int, tie: float) -> Any:
    num_dice = tab[0]
    t_cap = max(xx + 1, need)
    size = t_cap + tab[10] + 1
    bank_val = np.zeros(size)
    bank_ok = np.zeros(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= need
        if t > xx:
            bank_val[t] = 1.0
        elif t == xx:
            bank_val[t] = tie
    c, d, r, dr, w, dw = _scratch(size, num_dice)
    turn_dp(t_cap, tab, bank_val, bank_ok, np.zeros(num_dice + 1), 0.0, reroll, c, d, r, dr, w, dw)
    return c[num_dice]


@njit(cache=True)
def final_turn_values(x_max: int, need: int, tab: tuple, reroll: int, tie: float = 0.5) -> Any:
    """Value of a last turn that must end with more than ``X`` points (1; exactly ``X``: ``tie``,
    0.5 when a tie shares the pot, 0 when it does not beat the first finisher).

    Returns g with ``g[X]`` for ``X`` in ``0 .. x_max`` (the mover banks with the threshold and
    minimum ``need``, a bust scores 0), cut after the first ``X`` where the value is below
    ``1e-18`` (it never increases in ``X``); callers take ``X`` beyond the end as worth 0.

    Without a reroll-all, a last turn that needs ``X >= need`` is translation invariant: with
    ``y = X - t`` points still missing, banking is legal exactly when ``y <= 0``, so one pass
    over ``t' = x_max - y`` gives every ``X`` at once. Smaller ``X`` (and reroll rules, whose
    reroll resets the turn total) are solved one by one.
    """
    num_dice = tab[0]
    width = num_dice + 1
    out = np.zeros(x_max + 1)
    first = 0
    if not reroll:
        t_cap = x_max + 1
        size = t_cap + tab[10] + 1
        bank_val = np.zeros(size)
        bank_ok = np.zeros(size, dtype=np.bool_)
        for t in range(size):
            bank_ok[t] = t >= x_max
            if t > x_max:
                bank_val[t] = 1.0
            elif t == x_max:
                bank_val[t] = tie
        c, d, r, dr, w, dw = _scratch(size, num_dice)
        turn_dp(t_cap, tab, bank_val, bank_ok, np.zeros(width), 0.0, reroll, c, d, r, dr, w, dw)
        first = max(need, 1)
        for xx in range(first, x_max + 1):
            out[xx] = c[(x_max - xx) * width + num_dice]
    else:
        first = x_max + 1
    for xx in range(0, min(first, x_max + 1)):
        out[xx] = _final_turn_one(xx, need, tab, reroll, tie)
    for xx in range(x_max + 1):
        if out[xx] < 1e-18:
            return out[: xx + 1]
    return out


@njit(cache=True)
def duel_margin(b: int, target: int, v_low: float, p_min: float, gfin: np.ndarray, eps: float) -> Any:
    """Smallest excess ``m`` over the target after which banking is provably optimal.

    The mover's opponent at ``b`` wins or ties a final turn against a score ``target + m``
    with value ``gfin[target + m - b]``; rolling on risks at least ``p_min`` of losing the
    difference between banking and busting, which is at least ``V(b, a) >= v_low``. So once
    ``gfin[X] <= p_min * v_low`` banking is optimal at every larger score (gfin decreases).
    Where some dice count never busts (``p_min`` 0, e.g. a scoring "nothing" roll) the bound
    is void; the cap then stops where rolling on could still win at most ``eps``
    (``gfin[X] <= eps``), and that is the error it may cost (recorded in the table's metadata).
    The search stops at the end of ``gfin`` (the caller checks the bound afterwards).
    """
    x0 = target - b
    need = max(p_min * v_low, eps)
    m = 0
    while x0 + m < gfin.shape[0] - 1 and gfin[x0 + m] > need:
        m += 1
    return m


@njit(cache=True)
def duel_bank_values(a: int, b: int, target: int, margin: int, need: int, final_round: bool, v: np.ndarray, g_in: np.ndarray, g_out: np.ndarray, max_keep: int) -> Any:
    """Cap ``T`` and the bank values / legality of the mover at ``a`` against ``b`` (units).

    ``margin``: positions at ``a + t >= target + margin`` bank at once (final round only).
    """
    t_cap = target - a
    if final_round:
        t_cap += margin
    t_cap = max(t_cap, need)
    size = t_cap + max_keep + 1
    bank_val = np.empty(size)
    bank_ok = np.empty(size, dtype=np.bool_)
    gfin = g_out if b == 0 else g_in
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= need
        sc = a + t
        if sc < target:
            bank_val[t] = 1.0 - v[b, sc]
        elif final_round:
            xx = sc - b
            bank_val[t] = 1.0 - (gfin[xx] if xx < gfin.shape[0] else 0.0)
        else:
            bank_val[t] = 1.0
    return t_cap, bank_val, bank_ok


@njit(cache=True)
def _duel_side(a: int, b: int, x: float, target: int, margin: int, need: int, final_round: bool, v: np.ndarray, g_in: np.ndarray, g_out: np.ndarray, tab: tuple, reroll: int) -> Any:
    """Turn-start value and its slope in the bust value for the mover at ``a`` against ``b``."""
    num_dice = tab[0]
    t_cap, bank_val, bank_ok = duel_bank_values(a, b, target, margin, need, final_round, v, g_in, g_out, tab[10])
    c, d, r, dr, w, dw = _scratch(bank_val.shape[0], num_dice)
    turn_dp(t_cap, tab, bank_val, bank_ok, np.zeros(num_dice + 1), x, reroll, c, d, r, dr, w, dw)
    return c[num_dice], d[num_dice]


@njit(cache=True)
def start_guess(v: np.ndarray, a: int, b: int, n: int, plane: bool = True) -> float:
    """Newton's starting point for ``V[a, b]`` from the solved levels above: the plane through
    ``V[a, b + 1]``, ``V[a + 1, b]``, ``V[a + 1, b + 1]`` (clipped to [0, 1]), else the nearest
    (``plane`` False: ``V[a, b + 1]`` or 0.5, the start used before; 1.2 Newton steps more).

    Only the number of Newton steps depends on it, not the converged value.
    """
    if not plane:
        return v[a, b + 1] if b + 1 < n else 0.5
    if b + 1 < n and a + 1 < n:
        g = v[a, b + 1] + v[a + 1, b] - v[a + 1, b + 1]
        return min(max(g, 0.0), 1.0)
    if b + 1 < n:
        return v[a, b + 1]
    if a + 1 < n:
        return v[a + 1, b]
    return 0.5


@njit(cache=True)
def _duel_pair(a: int, b: int, v: np.ndarray, iters: np.ndarray, margins: np.ndarray, certified: np.ndarray, target: int, thr: int, min_bank: int, final_round: bool, g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int, tol: float, max_iter: int, plane: bool) -> None:
    """Solve the pair ``(a, b), (b, a)`` of one level (see :func:`duel_solve`), in place."""
    need_a = max(min_bank, thr if a == 0 else 0)
    need_b = max(min_bank, thr if b == 0 else 0)
    gfa = g_out if b == 0 else g_in
    gfb = g_out if a == 0 else g_in
    u = start_guess(v, a, b, target, plane)
    w = start_guess(v, b, a, target, plane)
    ma = 0
    mb = 0
    if final_round:
        ma = duel_margin(b, target, 0.5 * w, p_min, gfa, eps)
        mb = duel_margin(a, target, 0.5 * u, p_min, gfb, eps)
    done = -1
    passes = 0
    for _attempt in range(4):
        done = -1
        for it in range(1, max_iter + 1):
            passes += 1
            f0, f1 = _duel_side(a, b, 1.0 - w, target, ma, need_a, final_round, v, g_in, g_out, tab, reroll)
            if a == b:
                if abs(f0 - u) < tol:
                    u = f0
                    w = f0
                    done = it
                    break
                u = (f0 + f1 * u) / (1.0 + f1)
                w = u
                continue
            g0, g1 = _duel_side(b, a, 1.0 - u, target, mb, need_b, final_round, v, g_in, g_out, tab, reroll)
            if abs(f0 - u) < tol and abs(g0 - w) < tol:
                u = f0
                w = g0
                done = it
                break
            aa = f0 + f1 * w
            bb = g0 + g1 * u
            u = (aa - f1 * bb) / (1.0 - f1 * g1)
            w = bb - g1 * u
        if not final_round:
            break
        ma2 = duel_margin(b, target, w, p_min, gfa, eps)
        mb2 = duel_margin(a, target, u, p_min, gfb, eps)
        if ma2 <= ma and mb2 <= mb:
            break
        ma = max(ma, ma2)
        mb = max(mb, mb2)
    v[a, b] = u
    v[b, a] = w
    iters[a, b] = passes if done > 0 else -1
    iters[b, a] = iters[a, b]
    margins[a, b] = ma
    margins[b, a] = mb
    if final_round:
        xa = target + ma - b
        xb = target + mb - a
        certified[a, b] = xa < gfa.shape[0] and gfa[xa] <= max(p_min * w, eps)
        certified[b, a] = xb < gfb.shape[0] and gfb[xb] <= max(p_min * u, eps)


@njit(cache=True)
def level_work(n: int) -> Any:
    """Work of each level of score sum ``L`` of an ``n x n`` pair grid, in in-turn rows: the
    pairs of the level times the rows of their two passes (``2 n - L``). For progress reports."""
    work = np.zeros(2 * n - 1)
    for level in range(2 * n - 1):
        a_lo = max(0, level - (n - 1))
        work[level] = (level // 2 - a_lo + 1) * (2 * n - level)
    return work


@njit(cache=True, parallel=True, nogil=True)
def duel_solve(target: int, thr: int, min_bank: int, final_round: bool, g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int, tol: float, max_iter: int, prog: np.ndarray, plane: bool = True) -> Any:
    """Win probability ``V[a, b]`` of the player to move at the start of a turn, both below target.

    Scores are in units; a score of 0 means "not yet on the board" when ``thr > 0``. Levels of
    equal score sum are solved from the top down; within a level the pair ``(a, b), (b, a)``
    depends on itself only through a bust and is solved by Newton steps on the 2x2 system
    (policy iteration: each step fixes both in-turn policies and solves the linear system),
    started from :func:`start_guess` (``plane``).
    In the final round (``final_round``) each side's cap above the target comes from
    :func:`duel_margin` and is checked against the converged values.

    Returns ``(V, iterations, margins, certified)``: in-turn passes of each pair (-1 where
    ``tol`` was not met within ``max_iter`` passes), the excess over the target used as cap for
    the mover at ``[a, b]``, and whether the bound of :func:`duel_margin` holds there.
    ``prog`` (out, 2 floats): work done and total work (:func:`level_work`), updated per level.
    """
    v = np.zeros((target, target))
    iters = np.zeros((target, target), dtype=np.int64)
    margins = np.zeros((target, target), dtype=np.int64)
    certified = np.ones((target, target), dtype=np.bool_)
    work = level_work(target)
    prog[0] = 0.0
    prog[1] = work.sum()
    for level in range(2 * target - 2, -1, -1):
        a_lo = max(0, level - (target - 1))
        a_hi = level // 2
        npairs = a_hi - a_lo + 1
        if npairs >= PARALLEL_MIN_PAIRS:
            for i in prange(npairs):
                _duel_pair(a_lo + i, level - a_lo - i, v, iters, margins, certified, target, thr, min_bank, final_round, g_in, g_out, p_min, eps, tab, reroll, tol, max_iter, plane)
        else:
            for i in range(npairs):
                _duel_pair(a_lo + i, level - a_lo - i, v, iters, margins, certified, target, thr, min_bank, final_round, g_in, g_out, p_min, eps, tab, reroll, tol, max_iter, plane)
        prog[0] += work[level]
    return v, iters, margins, certified


@njit(cache=True)
def race_bank_values(b: int, target: int, need: int, u: np.ndarray, max_keep: int) -> Any:
    """Cap and bank values (minus the expected turns after banking) of a race turn from ``b``."""
    t_cap = max(target - b, need)
    size = t_cap + max_keep + 1
    bank_val = np.empty(size)
    bank_ok = np.empty(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= need
        bank_val[t] = -u[b + t] if b + t < target else 0.0
    return t_cap, bank_val, bank_ok


@njit(cache=True, nogil=True)
def race_solve(target: int, thr: int, min_bank: int, tab: tuple, reroll: int, tol: float, max_iter: int, prog: np.ndarray) -> Any:
    """Least expected number of turns ``R[b]`` to bank ``target`` from banked score ``b`` (units).

    ``b == 0`` means not on the board when ``thr > 0``. Each ``R[b]`` solves
    ``R = 1 + min(expected R after the turn)``, where a bust leaves ``b`` unchanged: a
    one-dimensional Newton iteration on the bust value. Returns ``(R, iterations)``; ``prog``
    (out): rows done and total rows of the passes, updated per score.
    """
    u = np.zeros(target + 1)
    iters = np.zeros(target, dtype=np.int64)
    prog[0] = 0.0
    prog[1] = 0.5 * target * (target + 1)
    for b in range(target - 1, -1, -1):
        race_score(b, u, iters, target, thr, min_bank, tab, reroll, tol, max_iter)
        prog[0] += target - b
    return u[:target], iters


@njit(cache=True)
def race_score(b: int, u: np.ndarray, iters: np.ndarray, target: int, thr: int, min_bank: int, tab: tuple, reroll: int, tol: float, max_iter: int) -> None:
    """``R[b]`` into ``u[b]`` (and its Newton passes into ``iters[b]``) from the scores above it
    (:func:`race_solve`: one score is one level of the race)."""
    num_dice = tab[0]
    tail = np.zeros(num_dice + 1)
    need = max(min_bank, thr if b == 0 else 0)
    t_cap, bank_val, bank_ok = race_bank_values(b, target, need, u, tab[10])
    c, d, r, dr, w, dw = _scratch(bank_val.shape[0], num_dice)
    x = -u[b + 1] - 1.0
    done = -1
    for it in range(1, max_iter + 1):
        turn_dp(t_cap, tab, bank_val, bank_ok, tail, x, reroll, c, d, r, dr, w, dw)
        f0 = c[num_dice] - 1.0
        f1 = d[num_dice]
        if abs(f0 - x) < tol:
            x = f0
            done = it
            break
        x = (f0 - f1 * x) / (1.0 - f1)
    u[b] = -x
    iters[b] = done


@njit(cache=True)
def expected_sweeps(done: int, change: float, previous: float, tol: float, guess: int) -> float:
    """Sweeps still to come, from the last two sweeps' changes (geometric convergence);
    ``guess`` total before two sweeps are done. For progress reports only."""
    if done < 2 or not (0.0 < change < previous):
        return max(guess - done, 1)
    ratio = change / previous
    return max(np.ceil(np.log(tol / change) / np.log(ratio)), 1.0)


@njit(cache=True)
def newton_sweeps_left(done: int, change: float, previous: float, tol: float, guess: int) -> float:
    """Sweeps still to come under policy iteration, whose changes fall quadratically: the next
    is ``K * change**2``, ``K`` from the last two sweeps; ``guess`` total before three sweeps
    are done, geometric (:func:`expected_sweeps`) while the change falls by less than 10x a
    sweep. For progress reports only (Zilch, target 800: changes 0.47, 0.36, 7e-3, 2e-6, 3e-15)."""
    if done < 3:
        return float(max(guess - done, 1))
    if not (0.0 < change < 0.1 * previous):
        return expected_sweeps(done, change, previous, tol, guess)
    k = change / (previous * previous)
    left = 1.0
    while left < 50.0:
        change = k * change * change
        if change < tol:
            break
        left += 1.0
    return left


@njit(cache=True, nogil=True)
def race_penalty_solve(target: int, lo: int, k: int, pen: int, min_bank: int, tab: tuple, reroll: int, tol: float, max_sweeps: int, prog: np.ndarray) -> Any:
    """Race with a penalty of ``pen`` units on the ``k``-th bust in a row.

    ``R[i, s]``: least expected turns from banked score ``lo + i`` with ``s`` busts in a row.
    The ``k``-th bust moves to ``(b - pen, 0)``, below; scores under ``lo`` are read as ``lo``.
    Gauss-Seidel sweeps from the top score down, streaks from ``k - 1`` down within a score,
    until the largest change of a sweep is below ``tol``. Returns ``(R, sweeps, change)``
    (``sweeps`` -1 if ``max_sweeps`` did not suffice). ``prog`` (out): work done and the
    expected total (:func:`expected_sweeps`), updated per sweep.
    """
    num_dice = tab[0]
    tail = np.zeros(num_dice + 1)
    nb = target - lo
    r_val = np.zeros((nb, k))
    change = 0.0
    previous = 0.0
    prog[0] = 0.0
    prog[1] = 15.0
    for sweep in range(1, max_sweeps + 1):
        previous = change
        change = 0.0
        for i in range(nb - 1, -1, -1):
            b = lo + i
            t_cap = max(target - b, min_bank, 1)
            size = t_cap + tab[10] + 1
            bank_val = np.empty(size)
            bank_ok = np.empty(size, dtype=np.bool_)
            for t in range(size):
                bank_ok[t] = t >= 1 and t >= min_bank
                bank_val[t] = -r_val[i + t, 0] if b + t < target else 0.0
            c, d, r, dr, w, dw = _scratch(size, num_dice)
            for s in range(k - 1, -1, -1):
                x = -r_val[i, s + 1] if s + 1 < k else -r_val[max(i - pen, 0), 0]
                turn_dp(t_cap, tab, bank_val, bank_ok, tail, x, reroll, c, d, r, dr, w, dw)
                new = 1.0 - c[num_dice]
                change = max(change, abs(new - r_val[i, s]))
                r_val[i, s] = new
        prog[0] = sweep
        prog[1] = sweep + (0.0 if change < tol else expected_sweeps(sweep, change, previous, tol, 15))
        if change < tol:
            return r_val, sweep, change
    return r_val, -1, change


@njit(cache=True)
def _penalty_state(i: int, j: int, sa: int, sb: int, lo: int, target: int, k: int, pen: int, min_bank: int, v: np.ndarray, tab: tuple, reroll: int) -> Any:
    """Win probability of the mover at ``lo + i`` (streak ``sa``) against ``lo + j`` (``sb``)."""
    num_dice = tab[0]
    a = lo + i
    t_cap = max(target - a, min_bank, 1)
    size = t_cap + tab[10] + 1
    bank_val = np.empty(size)
    bank_ok = np.empty(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= min_bank
        bank_val[t] = 1.0 - v[j, i + t, sb, 0] if a + t < target else 1.0
    x = 1.0 - v[j, i, sb, sa + 1] if sa + 1 < k else 1.0 - v[j, max(i - pen, 0), sb, 0]
    c, d, r, dr, w, dw = _scratch(size, num_dice)
    turn_dp(t_cap, tab, bank_val, bank_ok, np.zeros(num_dice + 1), x, reroll, c, d, r, dr, w, dw)
    return c[num_dice]


@njit(cache=True)
def _penalty_pair(i: int, j: int, lo: int, target: int, k: int, pen: int, min_bank: int, v: np.ndarray, tab: tuple, reroll: int) -> float:
    """Update every streak state of the pair ``(i, j), (j, i)``; the largest change."""
    delta = 0.0
    for sigma in range(2 * k - 2, -1, -1):
        for sa in range(k):
            sb = sigma - sa
            if sb < 0 or sb >= k:
                continue
            new = _penalty_state(i, j, sa, sb, lo, target, k, pen, min_bank, v, tab, reroll)
            delta = max(delta, abs(new - v[i, j, sa, sb]))
            v[i, j, sa, sb] = new
            if i != j:
                new = _penalty_state(j, i, sa, sb, lo, target, k, pen, min_bank, v, tab, reroll)
                delta = max(delta, abs(new - v[j, i, sa, sb]))
                v[j, i, sa, sb] = new
    return delta


@njit(cache=True)
def turn_dp_policy(t_cap: int, tab: tuple, bank_val: np.ndarray, bank_ok: np.ndarray, x: float, c: np.ndarray, d: np.ndarray, r: np.ndarray, dr: np.ndarray, choice: np.ndarray) -> Any:
    """:func:`turn_dp` without a reroll-all or a tail, also recording the policy: ``choice``
    (out, ``t_cap * groups``) holds, for the roll group ``g`` at turn total ``t``, the index in
    ``c`` of the option chosen (the first best, as :func:`turn_dp` picks it)."""
    num_dice, _hot, gs, gp, _ga, pb, ost, _osc, _om, ooff, _max_keep, _pw = tab
    width = num_dice + 1
    n_groups = gs[width]
    size = bank_val.shape[0]
    for t in range(size - 1, t_cap - 1, -1):
        for n in range(width):
            j = t * width + n
            c[j] = bank_val[t]
            d[j] = 0.0
            r[j] = c[j]
            dr[j] = 0.0
    for t in range(t_cap - 1, -1, -1):
        bank = bank_val[t]
        ok = bank_ok[t]
        base = t * width
        for n in range(1, width):
            acc = pb[n] * x
            dacc = pb[n]
            for g in range(gs[n], gs[n + 1]):
                bv = -np.inf
                bi = 0
                for o in range(ost[g], ost[g + 1]):
                    j = base + ooff[o]
                    if c[j] > bv:
                        bv = c[j]
                        bi = j
                choice[t * n_groups + g] = bi
                acc += gp[g] * bv
                dacc += gp[g] * d[bi]
            j = base + n
            r[j] = acc
            dr[j] = dacc
            if ok and bank >= acc:
                c[j] = bank
                d[j] = 0.0
            else:
                c[j] = acc
                d[j] = dacc
        if ok:
            c[base] = bank
            d[base] = 0.0
        else:
            c[base] = x
            d[base] = 1.0
        r[base] = c[base]
        dr[base] = d[base]


@njit(cache=True)
def end_distribution(t_cap: int, tab: tuple, bank_val: np.ndarray, bank_ok: np.ndarray, r: np.ndarray, choice: np.ndarray, m: np.ndarray, end: np.ndarray) -> float:
    """Where the turn solved by :func:`turn_dp_policy` ends under its policy.

    A forward pass from the start (t = 0, a full set): bank when legal and
    ``bank_val[t] >= r`` (as the backward pass decided), else roll and take the recorded
    ``choice`` of each group. ``end[t]`` (out): probability of banking at turn total ``t``;
    ``m`` is scratch of the layout of ``r``. Returns the probability of a bust (a stranded
    turn counted as one), so the turn's value is ``sum(end * bank_val) + bust * x``.
    """
    num_dice, _hot, gs, gp, _ga, pb, _ost, _osc, _om, _ooff, _max_keep, _pw = tab
    width = num_dice + 1
    n_groups = gs[width]
    size = bank_val.shape[0]
    m[: size * width] = 0.0
    end[:size] = 0.0
    m[num_dice] = 1.0
    bust = 0.0
    for t in range(size):
        base = t * width
        for n in range(width):
            mm = m[base + n]
            if mm == 0.0:
                continue
            if t >= t_cap:
                end[t] += mm
                continue
            ok = bank_ok[t]
            if n == 0:
                if ok:
                    end[t] += mm
                else:
                    bust += mm
                continue
            if ok and bank_val[t] >= r[base + n]:
                end[t] += mm
                continue
            bust += mm * pb[n]
            for g in range(gs[n], gs[n + 1]):
                m[choice[t * n_groups + g]] += mm * gp[g]
    return bust


@njit(cache=True)
def penalty_coef_start(n: int, k: int) -> Any:
    """Offsets of the per-score blocks of the banking coefficients of :func:`duel_penalty_solve`:
    the mover at ``i`` banks to ``n - 1 - i`` scores below the target, for each of ``n * k * k``
    (opponent, streaks) states; the last entry is the total length."""
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        start[i + 1] = start[i] + n * k * k * (n - 1 - i)
    return start


@njit(cache=True)
def _penalty_state_rec(i: int, j: int, sa: int, sb: int, lo: int, target: int, k: int, pen: int, min_bank: int, v: np.ndarray, tab: tuple, reroll: int, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray) -> float:
    """:func:`_penalty_state`, also writing the state's value as a linear function of the table
    under the policy just found: ``V = cst - sum(coef * V[j, i + t, sb, 0]) - bst * V[bust]``."""
    num_dice = tab[0]
    n = target - lo
    a = lo + i
    t_cap = max(target - a, min_bank, 1)
    size = t_cap + tab[10] + 1
    bank_val = np.empty(size)
    bank_ok = np.empty(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= min_bank
        bank_val[t] = 1.0 - v[j, i + t, sb, 0] if a + t < target else 1.0
    x = 1.0 - v[j, i, sb, sa + 1] if sa + 1 < k else 1.0 - v[j, max(i - pen, 0), sb, 0]
    c, d, r, dr, _w, _dw = _scratch(size, num_dice)
    choice = np.empty(t_cap * tab[2][num_dice + 1], dtype=np.int64)
    turn_dp_policy(t_cap, tab, bank_val, bank_ok, x, c, d, r, dr, choice)
    end = np.empty(size)
    bust = end_distribution(t_cap, tab, bank_val, bank_ok, r, choice, d, end)
    width_i = n - 1 - i
    base = cstart[i] + ((j * k + sa) * k + sb) * width_i
    total = bust
    for t in range(size):
        total += end[t]
        if t >= 1 and i + t < n:
            coef[base + t - 1] = end[t]
    cst[i, j, sa, sb] = total
    bst[i, j, sa, sb] = bust
    return c[num_dice]


@njit(cache=True)
def _penalty_pair_rec(i: int, j: int, lo: int, target: int, k: int, pen: int, min_bank: int, v: np.ndarray, tab: tuple, reroll: int, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray) -> float:
    """:func:`_penalty_pair` with the linear form of every state recorded."""
    delta = 0.0
    for sigma in range(2 * k - 2, -1, -1):
        for sa in range(k):
            sb = sigma - sa
            if sb < 0 or sb >= k:
                continue
            new = _penalty_state_rec(i, j, sa, sb, lo, target, k, pen, min_bank, v, tab, reroll, coef, cst, bst, cstart)
            delta = max(delta, abs(new - v[i, j, sa, sb]))
            v[i, j, sa, sb] = new
            if i != j:
                new = _penalty_state_rec(j, i, sa, sb, lo, target, k, pen, min_bank, v, tab, reroll, coef, cst, bst, cstart)
                delta = max(delta, abs(new - v[j, i, sa, sb]))
                v[j, i, sa, sb] = new
    return delta


@njit(cache=True)
def _linear_state(i: int, j: int, sa: int, sb: int, k: int, pen: int, v: np.ndarray, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray) -> float:
    n = v.shape[0]
    width_i = n - 1 - i
    base = cstart[i] + ((j * k + sa) * k + sb) * width_i
    acc = cst[i, j, sa, sb]
    for t in range(1, n - i):
        acc -= coef[base + t - 1] * v[j, i + t, sb, 0]
    xr = v[j, i, sb, sa + 1] if sa + 1 < k else v[j, max(i - pen, 0), sb, 0]
    return acc - bst[i, j, sa, sb] * xr


@njit(cache=True)
def _linear_pair(i: int, j: int, k: int, pen: int, v: np.ndarray, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray) -> float:
    delta = 0.0
    for sigma in range(2 * k - 2, -1, -1):
        for sa in range(k):
            sb = sigma - sa
            if sb < 0 or sb >= k:
                continue
            new = _linear_state(i, j, sa, sb, k, pen, v, coef, cst, bst, cstart)
            delta = max(delta, abs(new - v[i, j, sa, sb]))
            v[i, j, sa, sb] = new
            if i != j:
                new = _linear_state(j, i, sa, sb, k, pen, v, coef, cst, bst, cstart)
                delta = max(delta, abs(new - v[j, i, sa, sb]))
                v[j, i, sa, sb] = new
    return delta


@njit(cache=True, parallel=True, nogil=True)
def _linear_solve(k: int, pen: int, v: np.ndarray, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray, tol: float, max_sweeps: int) -> Any:
    """Gauss-Seidel sweeps of the recorded linear forms (policies fixed) until the largest
    change of a sweep is below ``tol``; ``v`` in place. Returns (sweeps, last change)."""
    n = v.shape[0]
    deltas = np.zeros(n)
    change = 0.0
    for sweep in range(1, max_sweeps + 1):
        change = 0.0
        for level in range(2 * n - 2, -1, -1):
            i_lo = max(0, level - (n - 1))
            npairs = level // 2 - i_lo + 1
            if npairs >= PARALLEL_MIN_PAIRS:
                for q in prange(npairs):
                    deltas[q] = _linear_pair(i_lo + q, level - i_lo - q, k, pen, v, coef, cst, bst, cstart)
            else:
                for q in range(npairs):
                    deltas[q] = _linear_pair(i_lo + q, level - i_lo - q, k, pen, v, coef, cst, bst, cstart)
            for q in range(npairs):
                change = max(change, deltas[q])
        if change < tol:
            return sweep, change
    return -1, change


@njit(cache=True, parallel=True, nogil=True)
def duel_penalty_solve(target: int, lo: int, k: int, pen: int, min_bank: int, tab: tuple, reroll: int, tol: float, max_sweeps: int, prog: np.ndarray, newton: bool = True) -> Any:
    """Duel (first to the target wins) with a penalty on the ``k``-th bust in a row.

    ``V[i, j, sa, sb]``: win probability of the player to move at ``lo + i`` with ``sa`` busts
    in a row against ``lo + j`` with ``sb``. Within a level of equal score sum, a bust leads
    to a state with a larger streak sum (solved first) or, on the ``k``-th bust, to a lower
    level; Gauss-Seidel sweeps of in-turn passes repeat until the largest change of a sweep
    is below ``tol``. Scores under ``lo`` are read as ``lo``.

    ``newton`` (policy iteration): each sweep also records every state's value as a linear
    function of the table under the in-turn policy it just chose (its banking distribution,
    :func:`end_distribution`), and that linear system (the third-bust edge included) is
    solved exactly by cheap sweeps before the next sweep of in-turn passes, which then only
    has to correct the policies. ``False``: plain sweeps (the old method, 12-16 sweeps).
    Both stop on a sweep of in-turn passes that changes nothing by ``tol``.

    Returns ``(V, sweeps, change, linear_sweeps)``: sweeps of in-turn passes (-1 if
    ``max_sweeps`` did not suffice), the last one's largest change and the sweeps of the
    linear systems in all. ``prog`` (out): work done and the expected total (levels weighted
    by :func:`level_work`, a recording sweep as 1.5 plain ones; sweeps to come by
    :func:`newton_sweeps_left`, or :func:`expected_sweeps` without ``newton``), updated per
    level; the linear solves between sweeps (cheaper) are not counted.
    """
    n = target - lo
    v = np.full((n, n, k, k), 0.5)
    deltas = np.zeros(n)
    change = 0.0
    previous = 0.0
    work = level_work(n)
    per_sweep = work.sum()
    guess = 5 if newton else 14  # pass sweeps: 5 at targets 800 and 1,500, 6 at 3,000 (newton)
    rec_cost = 1.5  # a recording sweep against a plain one (docs/results.md), for prog only
    cstart = penalty_coef_start(n if newton else 1, k)
    coef = np.zeros(cstart[-1])
    cst = np.zeros((n, n, k, k) if newton else (1, 1, 1, 1))
    bst = np.zeros_like(cst)
    linear = 0
    prog[0] = 0.0
    prog[1] = (1.0 + (guess - 1) * rec_cost if newton else guess) * per_sweep
    for sweep in range(1, max_sweeps + 1):
        previous = change
        change = 0.0
        rec = newton and sweep > 1  # the first sweep's policies answer the 0.5 start: not worth a system
        cost = rec_cost if rec else 1.0
        for level in range(2 * n - 2, -1, -1):
            i_lo = max(0, level - (n - 1))
            i_hi = level // 2
            npairs = i_hi - i_lo + 1
            if npairs >= PARALLEL_MIN_PAIRS:
                for q in prange(npairs):
                    if rec:
                        deltas[q] = _penalty_pair_rec(i_lo + q, level - i_lo - q, lo, target, k, pen, min_bank, v, tab, reroll, coef, cst, bst, cstart)
                    else:
                        deltas[q] = _penalty_pair(i_lo + q, level - i_lo - q, lo, target, k, pen, min_bank, v, tab, reroll)
            else:
                for q in range(npairs):
                    if rec:
                        deltas[q] = _penalty_pair_rec(i_lo + q, level - i_lo - q, lo, target, k, pen, min_bank, v, tab, reroll, coef, cst, bst, cstart)
                    else:
                        deltas[q] = _penalty_pair(i_lo + q, level - i_lo - q, lo, target, k, pen, min_bank, v, tab, reroll)
            for q in range(npairs):
                change = max(change, deltas[q])
            prog[0] += work[level] * cost
        if change < tol:
            prog[1] = prog[0]
            return v, sweep, change, linear
        if rec:
            backup = v.copy()
            done, _lin_change = _linear_solve(k, pen, v, coef, cst, bst, cstart, 0.1 * tol, 1000)
            if done < 0:  # the fixed policies do not end the game: keep the sweep's values
                v[:] = backup
                done = 1000
            linear += done
            left = newton_sweeps_left(sweep, change, previous, tol, guess) * rec_cost
        elif newton:
            left = (guess - 1) * rec_cost
        else:
            left = expected_sweeps(sweep, change, previous, tol, guess)
        prog[1] = prog[0] + left * per_sweep
    return v, -1, change, linear
