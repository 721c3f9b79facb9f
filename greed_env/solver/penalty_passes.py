"""Lean in-turn passes of the duel with a bust penalty (Zilch), in absolute scores.

:func:`~greed_env.solver.kernels.duel_penalty_solve` runs one in-turn pass per position
(mover, opponent, both bust streaks) and sweep: about half a million passes a sweep at full
size. Each pass of :func:`~greed_env.solver.kernels.turn_dp` allocated its arrays, filled the
rows past the target with the bank value and wrote the value of rolling beside the value after
a keep. Here a pair's positions share one scratch grid indexed by absolute score: the rows from
the target on (banking there wins: 1, slope 0) are filled once per pair, a pass reads each
bank value ``1 - V[opp, s, sb, 0]`` as it reaches its row and writes only the value after a
keep and its slope. A mover within ``min_bank`` of the target must roll past it before
banking, so its pass also computes those rows, which are put back afterwards.

Every position does :func:`~greed_env.solver.kernels.turn_dp`'s operations in its order (the
first best keep of a roll wins), and the recording pass and its forward pass those of
:func:`~greed_env.solver.kernels.turn_dp_policy` and
:func:`~greed_env.solver.kernels.end_distribution`, so the table is bitwise the same
(``tests/solver/test_penalty_passes.py``). No reroll-all, no rolled win (the penalty rules
have neither).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from greed_env.solver.kernels import (
    PARALLEL_MIN_PAIRS,
    _linear_solve,
    level_work,
    newton_sweeps_left,
    penalty_coef_start,
)

__all__ = ["CONFIRM_BELOW", "duel_penalty_solve_lean", "lean_pass", "pair_scratch"]

CONFIRM_BELOW = 1e-6
"""A recording sweep that changed the table by less than this is followed by a plain one:
its policies have settled (the next change is at the rounding floor, 5e-15, at every target
measured), so the sweep that confirms it need not record them. Its values are those of a
recording sweep; if it does change the table, the sweep after it records again."""


@njit(cache=True)
def pair_scratch(n: int, min_bank: int, tab: tuple) -> Any:
    """The grid of one pair's passes: value ``c`` and slope ``d`` after a keep at absolute
    score ``s`` (index from the floor) with ``m`` dice to roll, ``s * (num_dice + 1) + m``,
    rows ``n`` (the target) on filled with banking's 1 (slope 0); the choices and banking
    flags of a recording pass; the forward pass's mass and banked totals."""
    num_dice, max_keep = tab[0], tab[10]
    width = num_dice + 1
    rows = n + max(min_bank, 1) + max_keep + 1
    c = np.empty(rows * width)
    d = np.empty(rows * width)
    c[n * width :] = 1.0
    d[n * width :] = 0.0
    choice = np.empty(n * tab[2][width], dtype=np.int32)
    banked = np.empty(n * width, dtype=np.bool_)
    mass = np.empty(rows * width)
    end = np.empty(rows)
    return c, d, choice, banked, mass, end


@njit(cache=True)
def lean_pass(i: int, j: int, sb: int, x: float, n: int, min_bank: int, v: np.ndarray, tab: tuple, c: np.ndarray, d: np.ndarray, record: bool, choice: np.ndarray, banked: np.ndarray) -> Any:
    """The in-turn pass of the mover at index ``i`` (from the floor) against ``j`` with
    streak ``sb``, bust value ``x``: ``turn_dp`` with ``bank_val[t] = 1 - V[j, i + t, sb, 0]``
    below the target ``n`` and 1 from it, banking legal from ``max(min_bank, 1)`` points.
    Returns ``(c, d)`` at the start of the turn and the first total of the tail (banking
    always), ``i + t_cap``; with ``record`` the first best option of every roll group
    (``choice``, index into ``c``) and whether each position banks (``banked``) are kept
    for :func:`lean_end_distribution`."""
    num_dice, _hot, gs, gp, _ga, pb, ost, _osc, _om, ooff, _max_keep, pw = tab
    width = num_dice + 1
    n_groups = gs[width]
    need = max(min_bank, 1)
    top = i + max(n - i, need)  # i + t_cap
    for s in range(top - 1, i - 1, -1):
        t = s - i
        bank = 1.0 - v[j, s, sb, 0] if s < n else 1.0
        ok = t >= need
        base = s * width
        for m in range(1, width):
            acc = pb[m] * x + pw[m]
            dacc = pb[m]
            for g in range(gs[m], gs[m + 1]):
                bv = -np.inf
                bi = 0
                for o in range(ost[g], ost[g + 1]):
                    k = base + ooff[o]
                    if c[k] > bv:
                        bv = c[k]
                        bi = k
                if record:
                    choice[t * n_groups + g] = bi
                acc += gp[g] * bv
                dacc += gp[g] * d[bi]
            k = base + m
            if ok and bank >= acc:
                c[k] = bank
                d[k] = 0.0
                if record:
                    banked[t * width + m] = True
            else:
                c[k] = acc
                d[k] = dacc
                if record:
                    banked[t * width + m] = False
        if ok:
            c[base] = bank
            d[base] = 0.0
        else:
            c[base] = x
            d[base] = 1.0
    k = i * width + num_dice
    return c[k], d[k], top


@njit(cache=True)
def _restore(i: int, n: int, top: int, width: int, c: np.ndarray, d: np.ndarray) -> None:
    """Put back banking's 1 in the rows from the target that a pass near it computed."""
    for s in range(n, top):
        for m in range(width):
            c[s * width + m] = 1.0
            d[s * width + m] = 0.0


@njit(cache=True)
def lean_end_distribution(i: int, top: int, n: int, min_bank: int, tab: tuple, choice: np.ndarray, banked: np.ndarray, mass: np.ndarray, end: np.ndarray) -> float:
    """:func:`~greed_env.solver.kernels.end_distribution` of the pass just recorded by
    :func:`lean_pass` (turn totals ``t``, ``end[t]`` for ``t`` below ``top - i + max_keep``):
    where the turn banks under its policy, and the probability of a bust."""
    num_dice, _hot, gs, gp, _ga, pb, _ost, _osc, _om, _ooff, max_keep, _pw = tab
    width = num_dice + 1
    n_groups = gs[width]
    t_cap = top - i
    size = t_cap + max_keep + 1
    need = max(min_bank, 1)
    mass[: size * width] = 0.0
    end[:size] = 0.0
    mass[num_dice] = 1.0
    bust = 0.0
    for t in range(size):
        base = t * width
        for m in range(width):
            mm = mass[base + m]
            if mm == 0.0:
                continue
            if t >= t_cap:
                end[t] += mm
                continue
            if m == 0:
                if t >= need:
                    end[t] += mm
                else:
                    bust += mm
                continue
            if banked[base + m]:
                end[t] += mm
                continue
            bust += mm * pb[m]
            for g in range(gs[m], gs[m + 1]):
                mass[choice[t * n_groups + g] - i * width] += mm * gp[g]
    return bust


@njit(cache=True)
def _bust_value(i: int, j: int, sa: int, sb: int, k: int, pen: int, v: np.ndarray) -> float:
    return 1.0 - v[j, i, sb, sa + 1] if sa + 1 < k else 1.0 - v[j, max(i - pen, 0), sb, 0]


@njit(cache=True)
def _lean_state(i: int, j: int, sa: int, sb: int, k: int, pen: int, min_bank: int, v: np.ndarray, tab: tuple, scratch: tuple, record: bool, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray) -> float:
    """One position's pass (see :func:`~greed_env.solver.kernels._penalty_state` and, with
    ``record``, ``_penalty_state_rec``); returns its value."""
    c, d, choice, banked, mass, end = scratch
    n = v.shape[0]
    width = tab[0] + 1
    x = _bust_value(i, j, sa, sb, k, pen, v)
    value, _slope, top = lean_pass(i, j, sb, x, n, min_bank, v, tab, c, d, record, choice, banked)
    if top > n:
        _restore(i, n, top, width, c, d)
    if record:
        bust = lean_end_distribution(i, top, n, min_bank, tab, choice, banked, mass, end)
        width_i = n - 1 - i
        base = cstart[i] + ((j * k + sa) * k + sb) * width_i
        total = bust
        for t in range(top - i + tab[10] + 1):
            total += end[t]
            if t >= 1 and i + t < n:
                coef[base + t - 1] = end[t]
        cst[i, j, sa, sb] = total
        bst[i, j, sa, sb] = bust
    return value


@njit(cache=True)
def _lean_pair(i: int, j: int, k: int, pen: int, min_bank: int, v: np.ndarray, tab: tuple, record: bool, coef: np.ndarray, cst: np.ndarray, bst: np.ndarray, cstart: np.ndarray) -> float:
    """Every streak state of the pair ``(i, j), (j, i)`` in ``_penalty_pair``'s order; the
    largest change."""
    scratch = pair_scratch(v.shape[0], min_bank, tab)
    delta = 0.0
    for sigma in range(2 * k - 2, -1, -1):
        for sa in range(k):
            sb = sigma - sa
            if sb < 0 or sb >= k:
                continue
            new = _lean_state(i, j, sa, sb, k, pen, min_bank, v, tab, scratch, record, coef, cst, bst, cstart)
            delta = max(delta, abs(new - v[i, j, sa, sb]))
            v[i, j, sa, sb] = new
            if i != j:
                new = _lean_state(j, i, sa, sb, k, pen, min_bank, v, tab, scratch, record, coef, cst, bst, cstart)
                delta = max(delta, abs(new - v[j, i, sa, sb]))
                v[j, i, sa, sb] = new
    return delta


@njit(cache=True, parallel=True, nogil=True)
def duel_penalty_solve_lean(target: int, lo: int, k: int, pen: int, min_bank: int, tab: tuple, tol: float, max_sweeps: int, prog: np.ndarray, start: Any = None) -> Any:
    """:func:`~greed_env.solver.kernels.duel_penalty_solve` (policy iteration, no reroll-all)
    with the passes of this module: the same sweeps, levels, pairs and states in the same
    order, so the same table to the last bit.

    ``start``: the table to start from (``V[i, j, sa, sb]``, changed in place) instead of
    0.5 everywhere; its first sweep then records its policies too (a sweep from the 0.5
    start does not: its policies answer values far from the solution). The sweeps stop at
    the same fixed point, a sweep of in-turn passes that changes nothing by ``tol``, which is
    a plain sweep after one that changed less than :data:`CONFIRM_BELOW`.
    Returns ``(V, sweeps, change, linear_sweeps)``; ``prog`` as there.
    """
    n = target - lo
    warm = start is not None
    v = start if start is not None else np.full((n, n, k, k), 0.5)
    deltas = np.zeros(n)
    change = 0.0
    previous = 0.0
    work = level_work(n)
    per_sweep = work.sum()
    guess = 4 if warm else 5
    rec_cost = 1.5
    cstart = penalty_coef_start(n, k)
    coef = np.zeros(cstart[-1])
    cst = np.zeros((n, n, k, k))
    bst = np.zeros_like(cst)
    linear = 0
    prog[0] = 0.0
    prog[1] = (guess * rec_cost if warm else 1.0 + (guess - 1) * rec_cost) * per_sweep
    confirm = False
    for sweep in range(1, max_sweeps + 1):
        previous = change
        change = 0.0
        rec = (warm or sweep > 1) and not confirm
        cost = rec_cost if rec else 1.0
        for level in range(2 * n - 2, -1, -1):
            i_lo = max(0, level - (n - 1))
            i_hi = level // 2
            npairs = i_hi - i_lo + 1
            if npairs >= PARALLEL_MIN_PAIRS:
                for q in prange(npairs):
                    deltas[q] = _lean_pair(i_lo + q, level - i_lo - q, k, pen, min_bank, v, tab, rec, coef, cst, bst, cstart)
            else:
                for q in range(npairs):
                    deltas[q] = _lean_pair(i_lo + q, level - i_lo - q, k, pen, min_bank, v, tab, rec, coef, cst, bst, cstart)
            for q in range(npairs):
                change = max(change, deltas[q])
            prog[0] += work[level] * cost
        if change < tol:
            prog[1] = prog[0]
            return v, sweep, change, linear
        if rec:
            backup = v.copy()
            done, _lin_change = _linear_solve(k, pen, v, coef, cst, bst, cstart, 0.1 * tol, 1000)
            if done < 0:
                v[:] = backup
                done = 1000
            linear += done
            left = newton_sweeps_left(sweep, change, previous, tol, guess) * rec_cost
            confirm = change < CONFIRM_BELOW
        else:
            left = (guess - 1) * rec_cost
            confirm = False
        prog[1] = prog[0] + left * per_sweep
    return v, -1, change, linear
