"""The bust-penalty duel's lean passes and its start from the duel without the penalty.

The lean passes (one grid of absolute scores per pair) must give every position bitwise the
value, policy, banking distribution and linear form of ``turn_dp`` / ``turn_dp_policy`` /
``end_distribution``, on any table of values, near the target too (a mover within the
minimum bank of it rolls past it before banking); the whole sweep driver bitwise the old one
from the same start; and the solve from the duel without the penalty the table of the sweeps
from 0.5 within 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.progress import counter
from greed_env.rules import preset
from greed_env.solver import kernels, solve
from greed_env.solver import penalty_passes as pp
from greed_env.solver.model import roll_tables


def _zilch(target: int) -> tuple:
    rules = preset("zilch").replace(target=target)
    tb = roll_tables(rules, False)
    unit = tb.unit
    return rules, tb, unit, rules.bust_penalty_after, rules.bust_penalty // unit, -(-rules.min_bank // unit)


def test_lean_passes_are_the_turn_passes_position_by_position() -> None:
    rules, tb, unit, k, pen, mb = _zilch(1000)
    tab = tb.kernel_tables()
    lo = -500 // unit
    target = rules.target // unit
    n = target - lo
    rng = np.random.default_rng(7)
    v = rng.random((n, n, k, k))
    cstart = kernels.penalty_coef_start(n, k)
    want_coef, got_coef = np.zeros(cstart[-1]), np.zeros(cstart[-1])
    want_cst, got_cst = np.zeros((n, n, k, k)), np.zeros((n, n, k, k))
    want_bst, got_bst = np.zeros_like(want_cst), np.zeros_like(got_cst)
    scratch = pp.pair_scratch(n, mb, tab)
    movers = [0, 1, n // 2, n - mb - 1, n - mb, n - 2, n - 1]  # near the target: rows past it
    for i in movers:
        for j in rng.choice(n, size=4, replace=False):
            for sa in range(k):
                for sb in range(k):
                    want = kernels._penalty_state(i, j, sa, sb, lo, target, k, pen, mb, v, tab, 0)
                    got = pp._lean_state(i, j, sa, sb, k, pen, mb, v, tab, scratch, False,
                                         got_coef, got_cst, got_bst, cstart)
                    assert got == want, (i, j, sa, sb)
                    want = kernels._penalty_state_rec(i, j, sa, sb, lo, target, k, pen, mb, v, tab, 0,
                                                      want_coef, want_cst, want_bst, cstart)
                    got = pp._lean_state(i, j, sa, sb, k, pen, mb, v, tab, scratch, True,
                                         got_coef, got_cst, got_bst, cstart)
                    assert got == want, (i, j, sa, sb)
    np.testing.assert_array_equal(got_coef, want_coef)
    np.testing.assert_array_equal(got_cst, want_cst)
    np.testing.assert_array_equal(got_bst, want_bst)
    # the rows from the target are banking's 1 again after the passes that computed them
    width = tab[0] + 1
    assert (scratch[0][n * width :] == 1.0).all() and (scratch[1][n * width :] == 0.0).all()


def test_the_lean_sweeps_are_the_sweeps_bitwise() -> None:
    rules, tb, unit, k, pen, mb = _zilch(800)
    tab = tb.kernel_tables()
    lo = -500 // unit
    want = kernels.duel_penalty_solve(rules.target // unit, lo, k, pen, mb, tab, 0, 1e-12, 100, counter(), True)
    got = pp.duel_penalty_solve_lean(rules.target // unit, lo, k, pen, mb, tab, 1e-12, 100, counter())
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1:] == want[1:]


@pytest.mark.parametrize(("target", "floor"), [(800, -500), (1000, -1000)])
def test_the_start_without_the_penalty_reaches_the_same_table(target: int, floor: int) -> None:
    rules, tb, unit, k, pen, mb = _zilch(target)
    lo = floor // unit
    want, sweeps, _change, _linear = kernels.duel_penalty_solve(
        target // unit, lo, k, pen, mb, tb.kernel_tables(), 0, 1e-12, 100, counter(), True
    )
    table = solve(rules, "duel", floor=floor)
    assert np.abs(table.arrays["win"] - want).max() <= 1e-12
    assert table.meta["sweeps"] < sweeps
    assert table.headline == pytest.approx(float(want[-lo, -lo, 0, 0]), abs=1e-13)
