"""Compiled kernels that solve one piece of one level: what a worker of a cluster solve runs.

Each calls the per-position function of the single-machine driver it stands beside (the same
arithmetic, position by position), on the positions it is given rather than a whole level:
:func:`duel_pairs` (``kernels.duel_solve``), :func:`carry_pairs` (``carry_kernels``),
:func:`rounds_cells` (``rounds.rounds_duel_solve``). The race's levels are single scores
(``kernels.race_score``, ``carry_kernels.carry_race_score``) and a three-player level's
cycles already run through ``three_kernels.solve_level``; :func:`cycle_costs` estimates their
work for cutting a level into pieces.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from greed_env.solver.carry_kernels import _carry_pair
from greed_env.solver.kernels import PARALLEL_MIN_PAIRS, _duel_pair
from greed_env.solver.rounds import _rounds_value

__all__ = ["carry_pairs", "cycle_costs", "duel_pairs", "rounds_cells"]


@njit(cache=True, parallel=True, nogil=True)
def duel_pairs(level: int, movers: np.ndarray, v: np.ndarray, iters: np.ndarray, margins: np.ndarray, certified: np.ndarray, target: int, thr: int, min_bank: int, final_round: bool, g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int, tol: float, max_iter: int, plane: bool) -> None:
    """The pairs ``(a, level - a)`` of one duel level, ``a`` in ``movers``, in place."""
    n = movers.shape[0]
    if n >= PARALLEL_MIN_PAIRS:
        for i in prange(n):
            _duel_pair(movers[i], level - movers[i], v, iters, margins, certified, target, thr, min_bank, final_round, g_in, g_out, p_min, eps, tab, reroll, tol, max_iter, plane)
    else:
        for i in range(n):
            _duel_pair(movers[i], level - movers[i], v, iters, margins, certified, target, thr, min_bank, final_round, g_in, g_out, p_min, eps, tab, reroll, tol, max_iter, plane)


@njit(cache=True, parallel=True, nogil=True)
def carry_pairs(level: int, movers: np.ndarray, v: np.ndarray, iters: np.ndarray, target: int, ctab: tuple, max_keep: int, vbust: bool, q: np.ndarray, live: np.ndarray, tie: float, tol: float, max_iter: int) -> None:
    """The pairs ``(a, level - a)`` of one level of a carry-over duel, in place (Newton steps
    from the plane, as ``carry_duel_solve_lanes`` runs them)."""
    n = movers.shape[0]
    if n >= PARALLEL_MIN_PAIRS:
        for i in prange(n):
            _carry_pair(movers[i], level - movers[i], v, iters, target, ctab, max_keep, vbust, q, live, tie, tol, max_iter, True)
    else:
        for i in range(n):
            _carry_pair(movers[i], level - movers[i], v, iters, target, ctab, max_keep, vbust, q, live, tie, tol, max_iter, True)


@njit(cache=True, parallel=True, nogil=True)
def rounds_cells(k: int, cells: np.ndarray, v: np.ndarray, target: int, thr: int, min_bank: int, final_round: bool, past: bool, g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int) -> None:
    """``V[k, a, b]`` of the cells ``a * target + b`` of layer ``k``, in place."""
    for i in prange(cells.shape[0]):
        a = cells[i] // target
        b = cells[i] % target
        v[k, a, b] = _rounds_value(k, a, b, v, target, thr, min_bank, final_round, past, g_in, g_out, p_min, eps, tab, reroll)


@njit(cache=True)
def cycle_costs(cycles: np.ndarray, target: int, thr: int, min_bank: int) -> Any:
    """Rows of one policy-iteration step of each cycle (``three_kernels.cycle_rows`` per row)."""
    out = np.zeros(cycles.shape[0])
    for i in range(cycles.shape[0]):
        a, b, c = cycles[i, 0], cycles[i, 1], cycles[i, 2]
        distinct = 1 if (a == b and b == c) else 3
        for j in range(distinct):
            p = cycles[i, j]
            need = min_bank if min_bank > 1 else 1
            if p == 0 and thr > need:
                need = thr
            out[i] += max(target - p, need) + 1
    return out
