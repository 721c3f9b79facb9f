"""Compiled kernels for carry-over rules (Progressive 10,000).

Inside a turn the position is (turn total, *dice state*), where a dice state is the number of
dice to roll together with the carry-over (working sets, open straights, working pairs); the
dice states and their transitions come from :mod:`greed_env.solver.carry`. Arrays are flat,
index ``t * n_states + s``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from greed_env.solver.kernels import PARALLEL_MIN_PAIRS, level_work, start_guess
from greed_env.solver.lane_kernel import LANES, NODE, lane_rows

__all__ = ["carry_dp", "carry_duel_solve", "carry_duel_solve_lanes", "carry_race_solve", "rolloff_dp"]


@njit(cache=True)
def carry_dp(t_cap: int, t_exact: int, out_val: float, ctab: tuple, bank_val: np.ndarray, bank_ok: np.ndarray, tail: np.ndarray, x: float, vbust: bool, c: np.ndarray, d: np.ndarray, r: np.ndarray, dr: np.ndarray) -> Any:
    """In-turn values of one turn under carry-over rules.

    Args:
        t_cap: without an exact target (``t_exact < 0``): first total of the tail policy
            (bank, plus ``tail[s]``).
        t_exact: turn total that lands exactly on the target (-1: none). Above it the turn is
            lost (value ``x``); on it the player must roll for nothing: with probability
            ``p_nothing[s]`` they go out (``out_val``), else the turn is lost.
        out_val: value of going out.
        ctab: ``CarryTables.kernel_tables()``.
        bank_val, bank_ok: value and legality of banking per turn total (length L).
        tail: per dice state, gain over banking in the tail region.
        x: value of a bust; vbust: whether busting on purpose is a move.
        c, d: out: value (and d/dx) after a keep; r, dr: out: value of rolling.

    The value at the start of a turn is ``c[0]`` (state 0 is a fresh full roll).
    """
    n_states, gs, gp, ost, osc, onx, pb, pnot = ctab
    size = bank_val.shape[0]
    if t_exact >= 0:
        for t in range(t_exact + 1, size):
            for s in range(n_states):
                j = t * n_states + s
                c[j] = x
                d[j] = 1.0
                r[j] = x
                dr[j] = 1.0
        for s in range(n_states):
            j = t_exact * n_states + s
            c[j] = pnot[s] * out_val + (1.0 - pnot[s]) * x
            d[j] = 1.0 - pnot[s]
            r[j] = c[j]
            dr[j] = d[j]
        top = t_exact
    else:
        for t in range(t_cap, size):
            for s in range(n_states):
                j = t * n_states + s
                c[j] = bank_val[t] + tail[s]
                d[j] = 0.0
                r[j] = c[j]
                dr[j] = 0.0
        top = t_cap
    for t in range(top - 1, -1, -1):
        bank = bank_val[t]
        ok = bank_ok[t]
        for s in range(n_states):
            acc = pb[s] * x
            dacc = pb[s]
            for g in range(gs[s], gs[s + 1]):
                if vbust:
                    bv = x
                    bd = 1.0
                else:
                    bv = -np.inf
                    bd = 0.0
                for o in range(ost[g], ost[g + 1]):
                    j = (t + osc[o]) * n_states + onx[o]
                    if c[j] > bv:
                        bv = c[j]
                        bd = d[j]
                acc += gp[g] * bv
                dacc += gp[g] * bd
            j = t * n_states + s
            r[j] = acc
            dr[j] = dacc
            if ok and bank >= acc:
                c[j] = bank
                d[j] = 0.0
            else:
                c[j] = acc
                d[j] = dacc


@njit(cache=True)
def rolloff_dp(top: int, ctab: tuple, reward: np.ndarray, locked: np.ndarray, c: np.ndarray) -> Any:
    """Values of a roll-off turn: no banking, the turn ends only by a bust, scoring ``reward[t]``.

    Totals ``t >= top`` are worth 1 (won); dice states with ``locked[s]`` win at once (Trippn
    lock-in). ``c`` (out) holds the value after each keep, state 0 at ``t = 0`` the start.
    """
    n_states, gs, gp, ost, osc, onx, pb, _pnot = ctab
    size = c.shape[0] // n_states
    for t in range(top, size):
        for s in range(n_states):
            c[t * n_states + s] = 1.0
    for t in range(top - 1, -1, -1):
        for s in range(n_states):
            j = t * n_states + s
            if locked[s]:
                c[j] = 1.0
                continue
            acc = pb[s] * reward[t]
            for g in range(gs[s], gs[s + 1]):
                bv = -np.inf
                for o in range(ost[g], ost[g + 1]):
                    v = c[(t + osc[o]) * n_states + onx[o]]
                    if v > bv:
                        bv = v
                acc += gp[g] * bv
            c[j] = acc


@njit(cache=True)
def _scratch(size: int, n_states: int) -> Any:
    m = size * n_states
    return np.empty(m), np.empty(m), np.empty(m), np.empty(m)


@njit(cache=True)
def exact_bank_values(a: int, b_opp: int, target: int, v: np.ndarray, max_keep: int) -> Any:
    """Duel bank values below an exact target: ``1 - V[b, a + t]``; no bank from the target on."""
    t_exact = target - a
    size = t_exact + max_keep + 1
    bank_val = np.zeros(size)
    bank_ok = np.zeros(size, dtype=np.bool_)
    for t in range(1, t_exact):
        bank_ok[t] = True
        bank_val[t] = 1.0 - v[b_opp, a + t]
    return t_exact, bank_val, bank_ok


@njit(cache=True)
def exact_race_bank_values(b: int, target: int, r_turns: np.ndarray, max_keep: int) -> Any:
    """Race bank values below an exact target: minus the expected turns after banking."""
    t_exact = target - b
    size = t_exact + max_keep + 1
    bank_val = np.zeros(size)
    bank_ok = np.zeros(size, dtype=np.bool_)
    for t in range(1, t_exact):
        bank_ok[t] = np.isfinite(r_turns[b + t])
        bank_val[t] = -r_turns[b + t] if bank_ok[t] else 0.0
    return t_exact, bank_val, bank_ok


@njit(cache=True, nogil=True)
def carry_race_solve(target: int, ctab: tuple, max_keep: int, vbust: bool, tol: float, max_iter: int, prog: np.ndarray) -> Any:
    """Least expected turns ``R[b]`` to go out exactly on ``target`` (units) from ``b``.

    Banking is legal below the target; a keep past it loses the turn; landing on it forces a
    roll for nothing. Newton steps on the bust value ``R[b]`` itself. A score from which no
    turn can go out or bank at a score that can (e.g. one unit short: the only keep leaves at
    least ``num_dice - 1`` dice for the roll for nothing, and those always score) gets
    ``R = inf``; banking there is never chosen. Returns ``(R, iters)``; ``prog`` (out): rows
    done and total rows of the passes, updated per score.
    """
    r_turns = np.zeros(target + 1)
    iters = np.zeros(target, dtype=np.int64)
    prog[0] = 0.0
    prog[1] = 0.5 * target * (target + 1)
    for b in range(target - 1, -1, -1):
        carry_race_score(b, r_turns, iters, target, ctab, max_keep, vbust, tol, max_iter)
        prog[0] += target - b
    return r_turns[:target], iters


@njit(cache=True)
def carry_race_score(b: int, r_turns: np.ndarray, iters: np.ndarray, target: int, ctab: tuple, max_keep: int, vbust: bool, tol: float, max_iter: int) -> None:
    """``R[b]`` into ``r_turns[b]`` (its Newton passes into ``iters[b]``) from the scores above
    it (:func:`carry_race_solve`: one score is one level of the race)."""
    n_states = ctab[0]
    tail = np.zeros(n_states)
    t_exact, bank_val, bank_ok = exact_race_bank_values(b, target, r_turns, max_keep)
    c, d, r, dr = _scratch(bank_val.shape[0], n_states)
    reach = np.where(bank_ok, 1.0, 0.0)
    carry_dp(0, t_exact, 1.0, ctab, reach, bank_ok, tail, 0.0, vbust, c, d, r, dr)
    if c[0] <= 0.0:
        r_turns[b] = np.inf
        iters[b] = 0
        return
    x = -r_turns[b + 1] - 1.0 if np.isfinite(r_turns[b + 1]) else -1.0
    done = -1
    for it in range(1, max_iter + 1):
        carry_dp(0, t_exact, 0.0, ctab, bank_val, bank_ok, tail, x, vbust, c, d, r, dr)
        f0 = c[0] - 1.0
        f1 = d[0]
        if abs(f0 - x) < tol:
            x = f0
            done = it
            break
        x = (f0 - f1 * x) / (1.0 - f1)
    r_turns[b] = -x
    iters[b] = done


@njit(cache=True)
def last_turn_out(target: int, ctab: tuple, max_keep: int) -> Any:
    """``Q[b]``: best probability of going out within one last turn from banked ``b``."""
    n_states = ctab[0]
    q = np.zeros(target)
    tail = np.zeros(n_states)
    for b in range(target):
        t_exact = target - b
        size = t_exact + max_keep + 1
        bank_val = np.zeros(size)
        bank_ok = np.zeros(size, dtype=np.bool_)
        c, d, r, dr = _scratch(size, n_states)
        carry_dp(0, t_exact, 1.0, ctab, bank_val, bank_ok, tail, 0.0, False, c, d, r, dr)
        q[b] = c[0]
    return q


@njit(cache=True)
def live_scores(target: int, ctab: tuple, max_keep: int, vbust: bool) -> Any:
    """Whether a turn from banked ``b`` can ever bank or go out (else it is lost for sure)."""
    n_states = ctab[0]
    live = np.zeros(target, dtype=np.bool_)
    tail = np.zeros(n_states)
    for b in range(target):
        t_exact = target - b
        size = t_exact + max_keep + 1
        bank_ok = np.zeros(size, dtype=np.bool_)
        for t in range(1, t_exact):
            bank_ok[t] = True
        c, d, r, dr = _scratch(size, n_states)
        carry_dp(0, t_exact, 1.0, ctab, np.where(bank_ok, 1.0, 0.0), bank_ok, tail, 0.0, vbust, c, d, r, dr)
        live[b] = c[0] > 0.0
    return live


@njit(cache=True)
def _carry_side(a: int, b: int, x: float, target: int, v: np.ndarray, out_val: float, ctab: tuple, max_keep: int, vbust: bool) -> Any:
    n_states = ctab[0]
    t_exact, bank_val, bank_ok = exact_bank_values(a, b, target, v, max_keep)
    c, d, r, dr = _scratch(bank_val.shape[0], n_states)
    carry_dp(0, t_exact, out_val, ctab, bank_val, bank_ok, np.zeros(n_states), x, vbust, c, d, r, dr)
    return c[0], d[0]


@njit(cache=True)
def newton_pair_step(u: float, w: float, f0: float, f1: float, g0: float, g1: float, same: bool, tol: float) -> Any:
    """One Newton step on a pair's two turn equations ``u = f(1 - w)``, ``w = g(1 - u)``.

    ``f0, f1`` (``g0, g1``): the first (second) side's pass at the current estimates, value and
    slope in its bust value; ``same``: a diagonal pair (one position, ``g`` unused). Returns
    ``(u, w, converged)``: the passes' own values when both residuals are below ``tol``, else
    the next estimates (a plain fixed-point step where both bust for sure).
    """
    if same:
        if abs(f0 - u) < tol:
            return f0, f0, True
        u = (f0 + f1 * u) / (1.0 + f1)
        return u, u, False
    if abs(f0 - u) < tol and abs(g0 - w) < tol:
        return f0, g0, True
    if 1.0 - f1 * g1 < 1e-14:  # both bust for sure at this point: a plain fixed-point step
        return f0, g0, False
    aa = f0 + f1 * w
    bb = g0 + g1 * u
    u = (aa - f1 * bb) / (1.0 - f1 * g1)
    return u, bb - g1 * u, False


@njit(cache=True)
def _carry_pair(a: int, b: int, v: np.ndarray, iters: np.ndarray, target: int, ctab: tuple, max_keep: int, vbust: bool, q: np.ndarray, live: np.ndarray, tie: float, tol: float, max_iter: int, plane: bool) -> None:
    """Solve the pair ``(a, b), (b, a)`` of one level (see :func:`carry_duel_solve`)."""
    out_a = 1.0 - q[b] * (1.0 - tie)
    out_b = 1.0 - q[a] * (1.0 - tie)
    if not live[a] and not live[b]:  # both lose every turn: any u = 1 - w solves; the horizon shares
        v[a, b] = 0.5
        v[b, a] = 0.5
        iters[a, b] = 0
        iters[b, a] = 0
        return
    u = start_guess(v, a, b, target, plane)
    w = start_guess(v, b, a, target, plane)
    done = -1
    for it in range(1, max_iter + 1):
        f0, f1 = _carry_side(a, b, 1.0 - w, target, v, out_a, ctab, max_keep, vbust)
        g0, g1 = f0, f1
        if a != b:
            g0, g1 = _carry_side(b, a, 1.0 - u, target, v, out_b, ctab, max_keep, vbust)
        u, w, ok = newton_pair_step(u, w, f0, f1, g0, g1, a == b, tol)
        if ok:
            done = it
            break
    v[a, b] = u
    v[b, a] = w
    iters[a, b] = done
    iters[b, a] = done


@njit(cache=True, parallel=True, nogil=True)
def carry_duel_solve(target: int, ctab: tuple, max_keep: int, vbust: bool, q: np.ndarray, tie: float, tol: float, max_iter: int, prog: np.ndarray, plane: bool = True) -> Any:
    """Win probability ``V[a, b]`` of the mover in a duel to go out exactly on ``target``.

    Going out first is worth ``1 - q[b] * (1 - tie)``: the opponent's last turn goes out too
    with probability ``q[b]``, and the tie is worth ``tie`` to the first finisher. Levels of
    equal score sum from the top, Newton steps on each pair as in the six-dice duel, started
    from :func:`~greed_env.solver.kernels.start_guess` (``plane`` False: from the neighbour
    ``V[a, b + 1]``, as before). Where every turn of both players is lost for sure
    (:func:`live_scores`; e.g. both one unit short) the game runs to the round horizon and the
    pot is shared: 0.5. (Before, that case was read off a singular Newton step, which also
    fired where only one player was stuck, giving 0.5 where the other surely wins.) Returns ``(V, iterations)``; ``prog`` (out):
    work done and total (:func:`~greed_env.solver.kernels.level_work`), updated per level.
    """
    v = np.zeros((target, target))
    iters = np.zeros((target, target), dtype=np.int64)
    live = live_scores(target, ctab, max_keep, vbust)
    work = level_work(target)
    prog[0] = 0.0
    prog[1] = work.sum()
    for level in range(2 * target - 2, -1, -1):
        a_lo = max(0, level - (target - 1))
        a_hi = level // 2
        npairs = a_hi - a_lo + 1
        if npairs >= PARALLEL_MIN_PAIRS:
            for i in prange(npairs):
                _carry_pair(a_lo + i, level - a_lo - i, v, iters, target, ctab, max_keep, vbust, q, live, tie, tol, max_iter, plane)
        else:
            for i in range(npairs):
                _carry_pair(a_lo + i, level - a_lo - i, v, iters, target, ctab, max_keep, vbust, q, live, tie, tol, max_iter, plane)
        prog[0] += work[level]
    return v, iters



@njit(cache=True)
def reach_points(ctab: tuple) -> Any:
    """The fewest points (units) a turn scores before it stands in each dice state, from a
    fresh roll (state 0, 0 points): shortest paths over the keeps, relaxed until nothing
    changes."""
    n_states, gs, _gp, ost, osc, onx, _pb, _pnot = ctab
    never = np.iinfo(np.int64).max
    reach = np.full(n_states, never, dtype=np.int64)
    reach[0] = 0
    changed = True
    while changed:
        changed = False
        for s in range(n_states):
            if reach[s] == never:
                continue
            for g in range(gs[s], gs[s + 1]):
                for o in range(ost[g], ost[g + 1]):
                    t = reach[s] + osc[o]
                    if t < reach[onx[o]]:
                        reach[onx[o]] = t
                        changed = True
    return reach


@njit(cache=True, nogil=True)
def lane_pass(mover: np.ndarray, opp: np.ndarray, xs: np.ndarray, outs: np.ndarray, n: int, target: int, ctab: tuple, koff: np.ndarray, v: np.ndarray, max_keep: int, vbust: bool, f0: np.ndarray, f1: np.ndarray, reach: Any = None) -> None:
    """:func:`carry_dp` of up to ``LANES`` duel positions at once, in absolute scores.

    Position ``l`` (``l < n``) is mover ``mover[l]`` against ``opp[l]`` with bust value
    ``xs[l]`` and going-out value ``outs[l]``. Its in-turn node (turn total ``t``, dice state)
    is the node (score ``mover[l] + t``, dice state) of a grid shared by all lanes: the keeps,
    the exact target and the lost totals past it are the same in absolute scores, only the
    bank values ``1 - V[opp[l], s]`` and ``x`` differ per lane. So one walk over the keeps
    (``koff``: each keep's offset, points times states plus next state) serves every lane,
    and a node's values and slopes, every lane's, share one cache line. Rows below a lane's
    own score are computed and never read. Every lane's values are bitwise those of a pass of its own
    (:func:`~greed_env.solver.lane_kernel.lane_rows`). Returns (in ``f0``, ``f1``) each
    position's value at the start of its turn and its derivative in ``x``. ``reach``
    (:func:`reach_points`, computed here when None) lets the pass skip the nodes that no turn
    of the block reaches.
    """
    if reach is None:
        reach = reach_points(ctab)
    if n < 1 or n > LANES:
        raise ValueError("lane_pass takes 1 to LANES positions")
    n_states, pnot = ctab[0], ctab[7]
    s_lo = target
    for i in range(n):
        s_lo = min(s_lo, mover[i])
    rows = target + max_keep + 1 - s_lo
    cd = np.empty(rows * n_states * NODE)
    x = np.zeros(LANES)
    out = np.zeros(LANES)
    lo = np.full(LANES, target)  # padding lanes never bank and are never read
    oppl = np.zeros(LANES, dtype=np.int64)
    for i in range(n):
        x[i] = xs[i]
        out[i] = outs[i]
        lo[i] = mover[i]
        oppl[i] = opp[i]
    for s in range(target + 1, target + max_keep + 1):  # past the target: the turn is lost
        base = (s - s_lo) * n_states * NODE
        for k in range(n_states):
            for i in range(LANES):
                cd[base + k * NODE + i] = x[i]
                cd[base + k * NODE + LANES + i] = 1.0
    base = (target - s_lo) * n_states * NODE  # on it: the roll for nothing
    for k in range(n_states):
        for i in range(LANES):
            cd[base + k * NODE + i] = pnot[k] * out[i] + (1.0 - pnot[k]) * x[i]
            cd[base + k * NODE + LANES + i] = 1.0 - pnot[k]
    lane_rows(cd, target, s_lo, ctab, koff, vbust, x, lo, oppl, v, reach)
    for i in range(n):
        j = (mover[i] - s_lo) * n_states * NODE + i
        f0[i] = cd[j]
        f1[i] = cd[j + LANES]


@njit(cache=True, parallel=True, nogil=True)
def carry_duel_solve_lanes(target: int, ctab: tuple, max_keep: int, vbust: bool, q: np.ndarray, tie: float, tol: float, max_iter: int, prog: np.ndarray) -> Any:
    """:func:`carry_duel_solve` with the in-turn passes of a level run ``LANES`` at a time.

    The same levels, starting points (the plane) and Newton steps per pair, so the same values
    to the last bit; but each Newton step first runs the passes of every unfinished position of
    the level, grouped by the mover's score into :func:`lane_pass` blocks (in parallel), then
    updates every pair.
    """
    n_states = ctab[0]
    osc, onx = ctab[4], ctab[5]
    koff = osc * n_states + onx
    reach = reach_points(ctab)
    v = np.zeros((target, target))
    iters = np.zeros((target, target), dtype=np.int64)
    live = live_scores(target, ctab, max_keep, vbust)
    work = level_work(target)
    prog[0] = 0.0
    prog[1] = work.sum()
    cap = target + 1
    pa = np.zeros(cap, dtype=np.int64)
    u = np.zeros(cap)
    w = np.zeros(cap)
    done = np.zeros(cap, dtype=np.int64)
    mover = np.zeros(2 * cap, dtype=np.int64)
    opp = np.zeros(2 * cap, dtype=np.int64)
    xs = np.zeros(2 * cap)
    outs = np.zeros(2 * cap)
    f0 = np.zeros(2 * cap)
    f1 = np.zeros(2 * cap)
    slot = np.zeros((cap, 2), dtype=np.int64)
    for level in range(2 * target - 2, -1, -1):
        a_lo = max(0, level - (target - 1))
        a_hi = level // 2
        npairs = a_hi - a_lo + 1
        for i in range(npairs):
            a = a_lo + i
            b = level - a
            pa[i] = a
            done[i] = -1
            if not live[a] and not live[b]:  # both lose every turn: the horizon shares the pot
                u[i] = 0.5
                w[i] = 0.5
                done[i] = 0
            else:
                u[i] = start_guess(v, a, b, target, True)
                w[i] = start_guess(v, b, a, target, True)
        for it in range(1, max_iter + 1):
            m = 0
            for i in range(npairs):  # first sides: movers ascending
                if done[i] < 0:
                    a = pa[i]
                    b = level - a
                    mover[m] = a
                    opp[m] = b
                    xs[m] = 1.0 - w[i]
                    outs[m] = 1.0 - q[b] * (1.0 - tie)
                    slot[i, 0] = m
                    m += 1
            for i in range(npairs - 1, -1, -1):  # second sides: movers ascending too
                a = pa[i]
                b = level - a
                if done[i] < 0 and a != b:
                    mover[m] = b
                    opp[m] = a
                    xs[m] = 1.0 - u[i]
                    outs[m] = 1.0 - q[a] * (1.0 - tie)
                    slot[i, 1] = m
                    m += 1
            if m == 0:
                break
            nblocks = (m + LANES - 1) // LANES
            for i in prange(nblocks):
                # blocks in the order first, last, second, second last...: a block's rows grow as
                # its movers' scores fall, so two contiguous halves (prange's default) hold equal
                # rows; under numba.parallel_chunksize(1) (solve) a free thread takes the next
                blk = i // 2 if i % 2 == 0 else nblocks - 1 - i // 2
                s = blk * LANES
                k = min(LANES, m - s)
                lane_pass(mover[s:s + k], opp[s:s + k], xs[s:s + k], outs[s:s + k], k, target, ctab, koff, v, max_keep, vbust, f0[s:s + k], f1[s:s + k], reach)
            for i in range(npairs):
                if done[i] >= 0:
                    continue
                a = pa[i]
                b = level - a
                k0 = slot[i, 0]
                k1 = slot[i, 1] if a != b else k0
                u[i], w[i], ok = newton_pair_step(u[i], w[i], f0[k0], f1[k0], f0[k1], f1[k1], a == b, tol)
                if ok:
                    done[i] = it
        for i in range(npairs):
            a = pa[i]
            b = level - a
            v[a, b] = u[i]
            v[b, a] = w[i]
            iters[a, b] = done[i]
            iters[b, a] = done[i]
        prog[0] += work[level]
    return v, iters
