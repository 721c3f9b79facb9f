"""Compiled kernels of the three-player solver (numba, cached on disk).

Every player maximises their own probability of winning (a shared win counts ``1/k``), so a
position is worth a *vector*: ``V[a, b, c, k]`` is the value to the ``k``-th player in turn
order (0: the player to move, at ``a``; 1: the next, at ``b``; 2: the one after, at ``c``) at
the start of a turn, scores in units (0 = not on the board when there is an entry threshold).
See ``docs/three-player.md`` for the method; in brief:

* :func:`turn_dp3` is the in-turn pass: the mover's optimal value and, under the move it
  chooses at every node, the probability of a bust and the two other players' expected values
  of the positions the turn banks into. The mover's choice depends only on its own values; the
  others' values follow its choice. Where moves are equally good for the mover the tie is
  broken by a fixed rule (``tie``): ``0`` banks rather than rolls and keeps the fewest dice,
  then the fewest points; ``1`` rolls rather than banks and keeps the most dice, then the most
  points.
* :func:`last_turn_tables` and :func:`final_round_table` value the final round (the two others'
  last turns after a player reaches the target) by the points each still needs.
* :func:`solve_level` solves every position of one level of score sum ``a + b + c``. A bust
  passes the turn with the scores unchanged, so ``(a, b, c)``, ``(b, c, a)`` and ``(c, a, b)``
  form a cycle; each cycle is solved by policy iteration (:func:`_solve_cycle`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from greed_env.solver.kernels import PARALLEL_MIN_PAIRS

__all__ = [
    "cycle_rows",
    "final_round_table",
    "in_turn_pass",
    "last_turn_tables",
    "level_cycles",
    "middle_margin",
    "mover_margin",
    "solve_level",
    "start_guess3",
    "three_bank_values",
    "turn_dp3",
]


@njit(cache=True)
def turn_dp3(t_cap: int, tab: tuple, bank_val: np.ndarray, bank_e1: np.ndarray, bank_e2: np.ndarray, bank_ok: np.ndarray, x: float, tie: int, c: np.ndarray, d: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> None:
    """Fill the in-turn arrays of one turn of the mover (rules without carry-over or reroll).

    Args:
        t_cap: positions with a turn total ``>= t_cap`` bank at once (legal there).
        tab: ``RollTables.kernel_tables()``.
        bank_val: the mover's value of banking at each turn total (length ``L``).
        bank_e1, bank_e2: the next and the following player's values of that bank.
        bank_ok: whether banking is legal at each turn total.
        x: the mover's value of a bust (also of a stranded turn).
        tie: the tie-break (see the module docstring): 0 or 1.
        c, d, e1, e2: out, flat ``L * (num_dice + 1)``, index ``t * (num_dice + 1) + n``: at
            turn total ``t`` with ``n`` dice to roll after a keep, the mover's value, the
            probability that the turn ends in a bust (``d c / d x``), and the next and the
            following player's expected value of the banks (a bust counted as 0: their value
            of the bust is added by the caller, times ``d``).

    The turn-start value is at ``t = 0`` with ``num_dice`` dice (banking 0 is never legal).
    """
    num_dice, _hot, gs, gp, _ga, pb, ost, _osc, _om, ooff, _max_keep, _pw = tab
    width = num_dice + 1
    size = bank_val.shape[0]
    for t in range(size - 1, t_cap - 1, -1):
        for n in range(width):
            j = t * width + n
            c[j] = bank_val[t]
            d[j] = 0.0
            e1[j] = bank_e1[t]
            e2[j] = bank_e2[t]
    for t in range(t_cap - 1, -1, -1):
        ok = bank_ok[t]
        bank = bank_val[t]
        base = t * width
        for n in range(1, width):
            acc = pb[n] * x
            dacc = pb[n]
            acc1 = 0.0
            acc2 = 0.0
            for g in range(gs[n], gs[n + 1]):
                bv = -np.inf
                bi = 0
                for o in range(ost[g], ost[g + 1]):
                    j = base + ooff[o]
                    if c[j] > bv or (tie == 1 and c[j] == bv):
                        bv = c[j]
                        bi = j
                w = gp[g]
                acc += w * bv
                dacc += w * d[bi]
                acc1 += w * e1[bi]
                acc2 += w * e2[bi]
            j = base + n
            if ok and (bank > acc or (tie == 0 and bank == acc)):
                c[j] = bank
                d[j] = 0.0
                e1[j] = bank_e1[t]
                e2[j] = bank_e2[t]
            else:
                c[j] = acc
                d[j] = dacc
                e1[j] = acc1
                e2[j] = acc2
        if ok:
            c[base] = bank
            d[base] = 0.0
            e1[base] = bank_e1[t]
            e2[base] = bank_e2[t]
        else:
            c[base] = x
            d[base] = 1.0
            e1[base] = 0.0
            e2[base] = 0.0


@njit(cache=True)
def _scratch3(size: int, width: int) -> Any:
    n = size * width
    return np.empty(n), np.empty(n), np.empty(n), np.empty(n)


@njit(cache=True, nogil=True)  # long at a big target: the interrupt watcher runs meanwhile
def last_turn_tables(y_max: int, tab: tuple, tau: float, tie: int) -> Any:
    """The last player's final turn, by the points ``y`` it needs to reach the best score.

    Banking more than ``y`` points wins (1), exactly ``y`` ties and is worth ``tau`` (1/2 with
    one player at the best score, 1/3 with two), anything less loses (as a bust does). With
    ``y = X - score`` the turn is translation invariant, so one pass over the points still
    missing gives every ``y`` (the entry threshold never binds: the player not on the board
    needs ``y = X >= target >= threshold``).

    Returns ``(p_eq, p_gt)``, each indexed by ``y`` in ``0 .. y_max`` (index 0 unused): the
    probability of ending exactly on the best score and above it under the optimal policy
    (with the tie-break ``tie``). Beyond ``y_max`` both are taken as 0.
    """
    num_dice = tab[0]
    width = num_dice + 1
    t_cap = y_max + 1
    size = t_cap + tab[10] + 1
    bank_val = np.zeros(size)
    bank_eq = np.zeros(size)
    bank_gt = np.zeros(size)
    bank_ok = np.zeros(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= y_max
        if t > y_max:
            bank_val[t] = 1.0
            bank_gt[t] = 1.0
        elif t == y_max:
            bank_val[t] = tau
            bank_eq[t] = 1.0
    c, d, e1, e2 = _scratch3(size, width)
    turn_dp3(t_cap, tab, bank_val, bank_eq, bank_gt, bank_ok, 0.0, tie, c, d, e1, e2)
    p_eq = np.zeros(y_max + 1)
    p_gt = np.zeros(y_max + 1)
    for y in range(1, y_max + 1):
        j = (y_max - y) * width + num_dice
        p_eq[y] = e1[j]
        p_gt[y] = e2[j]
    return p_eq, p_gt


@njit(cache=True)
def _last_read(p: np.ndarray, y: int) -> float:
    return p[y] if y < p.shape[0] else 0.0


@njit(cache=True)
def middle_margin(y_c: int, p_min: float, eq2: np.ndarray, gt2: np.ndarray) -> int:
    """Points ``m >= 1`` over the finisher's score from which the middle player banks at once:
    the last player (``y_c`` short of the finisher) then ties or beats it with probability at
    most ``p_min`` (banking is optimal: rolling risks a bust, worth 0, with probability at
    least ``p_min``), or the end of the last player's table."""
    m = 1
    while y_c + m < eq2.shape[0]:
        if 1.0 - (1.0 - eq2[y_c + m] - gt2[y_c + m]) - 0.5 * eq2[y_c + m] <= p_min:
            break
        m += 1
    return m


@njit(cache=True, parallel=True, nogil=True)
def final_round_table(y_max: int, tab: tuple, p_min: float, eq2: np.ndarray, gt2: np.ndarray, eq3: np.ndarray, gt3: np.ndarray, tie: int) -> Any:
    """The final round's value to the finisher, the middle and the last player.

    A player has just banked ``S >= target``; the next player (the *middle*, ``y_b = S - b``
    short) then the following one (the *last*, ``y_c = S - c`` short) each take one last turn;
    the highest score wins, a tie shares. ``eq2, gt2`` / ``eq3, gt3``: the last player's
    :func:`last_turn_tables` with one (tie worth 1/2) and two (1/3) players on the best score.

    Returns ``F[k, y_b, y_c]`` for ``1 <= y_b, y_c <= y_max`` (k = 0 finisher, 1 middle,
    2 last). For each ``y_c`` one pass over the points the middle player still misses gives
    every ``y_b``: below ``S`` banking is worth what a bust is to everyone (the middle player
    has lost and the last one must beat ``S``), so it is left out; on ``S`` three-way stakes
    with the last player needing ``y_c``; above, the last player needs ``y_c`` plus the excess.
    """
    num_dice = tab[0]
    width = num_dice + 1
    max_keep = tab[10]
    out = np.zeros((3, y_max + 1, y_max + 1))
    for y_c in prange(1, y_max + 1):
        m = middle_margin(y_c, p_min, eq2, gt2)
        z0 = y_max  # node t' holds the middle player z = z0 - t' points short of S
        t_cap = z0 + m
        size = t_cap + max_keep + 1
        bank_val = np.zeros(size)
        bank_a = np.zeros(size)
        bank_c = np.zeros(size)
        bank_ok = np.zeros(size, dtype=np.bool_)
        for tp in range(z0, size):
            bank_ok[tp] = True
            if tp == z0:
                q_eq = _last_read(eq3, y_c)
                q_gt = _last_read(gt3, y_c)
                mine = 0.5 * (1.0 - q_eq - q_gt) + q_eq / 3.0
                bank_val[tp] = mine
                bank_a[tp] = mine
                bank_c[tp] = q_gt + q_eq / 3.0
            else:
                y = y_c + tp - z0
                q_eq = _last_read(eq2, y)
                q_gt = _last_read(gt2, y)
                bank_val[tp] = 1.0 - q_eq - q_gt + 0.5 * q_eq
                bank_c[tp] = q_gt + 0.5 * q_eq
        q_eq = _last_read(eq2, y_c)
        q_gt = _last_read(gt2, y_c)
        bust_a = 1.0 - q_eq - q_gt + 0.5 * q_eq
        bust_c = q_gt + 0.5 * q_eq
        c, d, e1, e2 = _scratch3(size, width)
        turn_dp3(t_cap, tab, bank_val, bank_a, bank_c, bank_ok, 0.0, tie, c, d, e1, e2)
        for y_b in range(1, y_max + 1):
            j = (z0 - y_b) * width + num_dice
            out[0, y_b, y_c] = e1[j] + d[j] * bust_a
            out[1, y_b, y_c] = c[j]
            out[2, y_b, y_c] = e2[j] + d[j] * bust_c
    return out


@njit(cache=True)
def _need(p: int, thr: int, min_bank: int) -> int:
    """Smallest bankable turn total of a mover at ``p`` (units)."""
    need = min_bank if min_bank > 1 else 1
    if p == 0 and thr > need:
        need = thr
    return need


@njit(cache=True)
def mover_margin(q: int, r: int, x: float, target: int, p_min: float, eps: float, fin: np.ndarray, max_keep: int) -> Any:
    """Points ``m`` over the target from which the mover (next players at ``q``, ``r``) banks
    at once, and whether the bound certifies it.

    Rolling on risks a bust (worth ``x`` to the mover) with probability at least ``p_min`` and
    can win at most 1, so banking a score ``S`` worth ``F`` is optimal once
    ``1 - F <= p_min * (1 - x)`` (``eps`` where that bound is void). ``m`` is one past the last
    ``S`` in the final-round table where that fails; not certified when the table ends first.
    """
    need = max(p_min * (1.0 - x), eps)
    y_top = fin.shape[1] - 1
    s_lim = y_top + min(q, r) - max_keep  # banks up to S + max_keep must be in the table
    m = 0
    for s in range(target, s_lim + 1):
        if 1.0 - fin[0, s - q, s - r] > need:
            m = s - target + 1
    if target + m > s_lim:  # the table ends first: stay inside it, uncertified
        return max(s_lim - target, 0), False
    return m, True


@njit(cache=True)
def three_bank_values(p: int, q: int, r: int, target: int, margin: int, thr: int, min_bank: int, final_round: bool, v: np.ndarray, fin: np.ndarray, max_keep: int) -> Any:
    """Cap and bank arrays of the mover at ``p`` before ``q`` and ``r`` (units).

    Returns ``(t_cap, bank_val, bank_e1, bank_e2, bank_ok)``: below the target a bank at
    ``s = p + t`` leads to the turn start ``(q, r, s)``, where the mover is the last in turn
    order (``V[q, r, s, 2]``) and the next player moves (``V[q, r, s, 0]``); at or past it the
    final round (:func:`final_round_table`) or, without one, a win.
    """
    need = _need(p, thr, min_bank)
    t_cap = target - p + (margin if final_round else 0)
    if t_cap < need:
        t_cap = need
    size = t_cap + max_keep + 1
    bank_val = np.zeros(size)
    bank_e1 = np.zeros(size)
    bank_e2 = np.zeros(size)
    bank_ok = np.zeros(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= need
        s = p + t
        if s < target:
            if t >= need:
                bank_val[t] = v[q, r, s, 2]
                bank_e1[t] = v[q, r, s, 0]
                bank_e2[t] = v[q, r, s, 1]
        elif final_round:
            bank_val[t] = fin[0, s - q, s - r]
            bank_e1[t] = fin[1, s - q, s - r]
            bank_e2[t] = fin[2, s - q, s - r]
        else:
            bank_val[t] = 1.0
    return t_cap, bank_val, bank_e1, bank_e2, bank_ok


@njit(cache=True)
def in_turn_pass(p: int, q: int, r: int, x: float, margin: int, target: int, thr: int, min_bank: int, final_round: bool, v: np.ndarray, fin: np.ndarray, tab: tuple, tie: int) -> Any:
    """One in-turn pass at the turn start ``(p, q, r)``: the mover's value, the bust
    probability and the two others' expected banks (see :func:`turn_dp3`)."""
    num_dice = tab[0]
    t_cap, bv, b1, b2, ok = three_bank_values(p, q, r, target, margin, thr, min_bank, final_round, v, fin, tab[10])
    c, d, e1, e2 = _scratch3(bv.shape[0], num_dice + 1)
    turn_dp3(t_cap, tab, bv, b1, b2, ok, x, tie, c, d, e1, e2)
    j = num_dice
    return c[j], d[j], e1[j], e2[j], t_cap + 1


@njit(cache=True)
def _next_valid(p: int, thr: int) -> int:
    return thr if (p == 0 and thr > 1) else p + 1


@njit(cache=True)
def start_guess3(v: np.ndarray, p: int, q: int, r: int, k: int, thr: int) -> float:
    """Policy iteration's starting value of ``V[p, q, r, k]`` from solved higher levels: the
    plane through the three neighbours one score up in each coordinate and the one up in all
    three (clipped to [0, 1]); else their mean, else 1/3. Only the number of steps depends
    on it, not the converged values."""
    n = v.shape[0]
    p1 = _next_valid(p, thr)
    q1 = _next_valid(q, thr)
    r1 = _next_valid(r, thr)
    if p1 < n and q1 < n and r1 < n:
        g = 0.5 * (v[p1, q, r, k] + v[p, q1, r, k] + v[p, q, r1, k] - v[p1, q1, r1, k])
        return min(max(g, 0.0), 1.0)
    acc = 0.0
    cnt = 0
    if p1 < n:
        acc += v[p1, q, r, k]
        cnt += 1
    if q1 < n:
        acc += v[p, q1, r, k]
        cnt += 1
    if r1 < n:
        acc += v[p, q, r1, k]
        cnt += 1
    return acc / cnt if cnt else 1.0 / 3.0


@njit(cache=True)
def _solve_cycle(a: int, b: int, c: int, v: np.ndarray, iters: np.ndarray, margins: np.ndarray, certified: np.ndarray, target: int, thr: int, min_bank: int, final_round: bool, fin: np.ndarray, p_min: float, eps: float, tab: tuple, tol: float, max_iter: int, tie: int) -> float:
    """Solve the cycle ``(a, b, c), (b, c, a), (c, a, b)`` of one level in place (see
    :func:`solve_level`); returns the in-turn rows it ran.

    Policy iteration: each step runs the three movers' in-turn passes, each at its current
    bust value (its own value at the next turn start of the cycle), which fixes the three
    policies; under fixed policies every player's value around the cycle is a linear system
    with one unknown per player, solved exactly. It stops when a step changes no value by
    ``tol``. With the final round, each mover's cap past the target comes from
    :func:`mover_margin` at the current bust value and is re-checked once the values settle.
    """
    st = np.empty((3, 3), dtype=np.int64)
    st[0, 0], st[0, 1], st[0, 2] = a, b, c
    st[1, 0], st[1, 1], st[1, 2] = b, c, a
    st[2, 0], st[2, 1], st[2, 2] = c, a, b
    ncyc = 1 if (a == b and b == c) else 3
    x = np.empty(3)
    for i in range(3):
        j = (i + 1) % 3
        x[i] = start_guess3(v, st[j, 0], st[j, 1], st[j, 2], 2, thr)
    marg = np.zeros(3, dtype=np.int64)
    cert = np.ones(3, dtype=np.bool_)
    if final_round:
        for i in range(3):
            marg[i], cert[i] = mover_margin(st[i, 1], st[i, 2], x[i], target, p_min, eps, fin, tab[10])
    mv = np.empty(3)
    dv = np.empty(3)
    f1 = np.empty(3)
    f2 = np.empty(3)
    w = np.full((3, 3), np.nan)
    new = np.empty((3, 3))
    rows = 0.0
    done = -1
    steps = 0
    for _attempt in range(4):
        done = -1
        for it in range(1, max_iter + 1):
            steps += 1
            for i in range(ncyc):
                val, dd, g1, g2, nr = in_turn_pass(st[i, 0], st[i, 1], st[i, 2], x[i], marg[i], target, thr, min_bank, final_round, v, fin, tab, tie)
                mv[i] = val - dd * x[i]
                dv[i] = dd
                f1[i] = g1
                f2[i] = g2
                rows += nr
            for i in range(ncyc, 3):
                mv[i] = mv[0]
                dv[i] = dv[0]
                f1[i] = f1[0]
                f2[i] = f2[0]
            det = 1.0 - dv[0] * dv[1] * dv[2]
            for i in range(3):
                j = (i + 1) % 3
                k = (i + 2) % 3
                own = (mv[i] + dv[i] * (f2[j] + dv[j] * f1[k])) / det
                new[i, 0] = own
                new[k, 1] = f1[k] + dv[k] * own
                new[j, 2] = f2[j] + dv[j] * new[k, 1]
            change = 0.0
            for i in range(3):
                for k in range(3):
                    dlt = abs(new[i, k] - w[i, k])
                    if not (dlt <= change):  # NaN on the first step
                        change = dlt if dlt == dlt else np.inf
                    w[i, k] = new[i, k]
            for i in range(3):
                x[i] = w[(i + 1) % 3, 2]
            if change < tol:
                done = it
                break
        if not final_round:
            break
        grown = False
        for i in range(3):
            m2, c2 = mover_margin(st[i, 1], st[i, 2], x[i], target, p_min, eps, fin, tab[10])
            cert[i] = c2
            if m2 > marg[i]:
                marg[i] = m2
                grown = True
        if not grown:
            break
    for i in range(3):
        p, q, r = st[i, 0], st[i, 1], st[i, 2]
        for k in range(3):
            v[p, q, r, k] = w[i, k]
        iters[p, q, r] = steps if done > 0 else -1
        margins[p, q, r] = marg[i]
        certified[p, q, r] = cert[i]
    return rows


@njit(cache=True)
def _valid(p: int, thr: int, target: int) -> bool:
    return 0 <= p < target and (p == 0 or p >= thr)


@njit(cache=True)
def level_cycles(level: int, target: int, thr: int) -> Any:
    """The cycles of one level of score sum: one row ``(a, b, c)`` per cycle, the rotation
    that is smallest in lexicographic order (valid scores only: 0 or at least ``thr``)."""
    count = 0
    for pass_ in range(2):
        if pass_ == 1:
            out = np.empty((count, 3), dtype=np.int64)
            count = 0
        for a in range(target):
            if not _valid(a, thr, target):
                continue
            for b in range(a, target):
                if not _valid(b, thr, target):
                    continue
                c = level - a - b
                if c < a or not _valid(c, thr, target):
                    continue
                if c == a and b > a:
                    continue  # (a, b, a) with b > a: its rotation (a, a, b) is smaller
                if pass_ == 1:
                    out[count, 0] = a
                    out[count, 1] = b
                    out[count, 2] = c
                count += 1
    return out[:count]


@njit(cache=True)
def cycle_rows(cycles: np.ndarray, target: int, thr: int, min_bank: int) -> float:
    """Rows of one policy-iteration step over ``cycles`` without margins (for progress)."""
    rows = 0.0
    for i in range(cycles.shape[0]):
        a, b, c = cycles[i, 0], cycles[i, 1], cycles[i, 2]
        if a == b and b == c:
            rows += max(target - a, _need(a, thr, min_bank)) + 1
        else:
            for p in (a, b, c):
                rows += max(target - p, _need(p, thr, min_bank)) + 1
    return rows


@njit(cache=True, parallel=True, nogil=True)
def solve_level(cycles: np.ndarray, v: np.ndarray, iters: np.ndarray, margins: np.ndarray, certified: np.ndarray, target: int, thr: int, min_bank: int, final_round: bool, fin: np.ndarray, p_min: float, eps: float, tab: tuple, tol: float, max_iter: int, tie: int) -> float:
    """Solve every cycle of one level (rows of :func:`level_cycles`), in parallel; the levels
    above must be solved. Returns the in-turn rows run."""
    n = cycles.shape[0]
    rows = np.zeros(n)
    if n >= PARALLEL_MIN_PAIRS:
        for i in prange(n):
            rows[i] = _solve_cycle(cycles[i, 0], cycles[i, 1], cycles[i, 2], v, iters, margins, certified, target, thr, min_bank, final_round, fin, p_min, eps, tab, tol, max_iter, tie)
    else:
        for i in range(n):
            rows[i] = _solve_cycle(cycles[i, 0], cycles[i, 1], cycles[i, 2], v, iters, margins, certified, target, thr, min_bank, final_round, fin, p_min, eps, tab, tol, max_iter, tie)
    return rows.sum()
