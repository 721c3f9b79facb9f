"""The vector walk over a roll's keeps: each lane's best value and the slope of its first best
keep, as a scalar walk finds them."""

from __future__ import annotations

import numpy as np
from numba import njit

from greed_env.solver.lane_kernel import LANES, NODE
from greed_env.solver.lane_simd import best_keeps


@njit(cache=False)
def _walk(cd: np.ndarray, kw: np.ndarray, lo: int, hi: int, rw: int, b: float, h: float) -> tuple:
    return best_keeps(cd, kw, lo, hi, np.uint64(rw), (b, b, b, b, h, h, h, h))


def test_each_lane_takes_its_first_best_keep() -> None:
    assert LANES == 4
    rng = np.random.default_rng(5)
    nodes = 50
    cd = np.empty(nodes * NODE)
    for k in range(nodes):  # few distinct values, so lanes tie often
        cd[k * NODE:k * NODE + LANES] = rng.integers(0, 4, LANES) / 4.0
        cd[k * NODE + LANES:(k + 1) * NODE] = rng.random(LANES)
    rw = 3
    kw = (rng.integers(0, nodes - 1, 40) * NODE).astype(np.uint64)
    for lo, hi, start in [(0, 40, -np.inf), (5, 6, -np.inf), (7, 7, 0.5), (0, 40, 0.5), (10, 30, 0.75)]:
        got = _walk(cd, kw, lo, hi, rw, start, 0.25)
        for i in range(LANES):
            b, h = start, 0.25
            for o in range(lo, hi):
                j = rw + int(kw[o])
                if cd[j + i] > b:
                    b, h = cd[j + i], cd[j + LANES + i]
            assert (got[i], got[LANES + i]) == (b, h)
