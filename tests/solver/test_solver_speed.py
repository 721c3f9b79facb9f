"""The faster duel solvers give the values of the old algorithm, on reduced targets.

``tests/data/solver_duel_reference.npz`` holds ``win`` arrays computed by the solver before
the speed work (commit 52aa059): ten_thousand at target 1,500 and Zilch at target 800 with a
floor of -500 points. Progressive is compared with the old Newton start, still callable
(``plane=False``): the old table's pairs with a player who can never score again were wrong
(see ``test_a_stuck_mover_loses_to_an_opponent_who_can_go_out``), so its old values are no
reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from greed_env.progress import counter
from greed_env.rules import preset
from greed_env.solver import carry_kernels as ck
from greed_env.solver import kernels, solve
from greed_env.solver.carry import carry_tables, rolloff_value
from greed_env.solver.model import roll_tables
from greed_env.solver.objectives import turn_arrays, turn_bank

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "solver_duel_reference.npz"


@pytest.mark.parametrize(("name", "target", "opts"), [("ten_thousand", 1500, {}), ("zilch", 800, {"floor": -500})])
def test_duel_values_match_the_old_solver(name: str, target: int, opts: dict[str, int]) -> None:
    old = np.load(REFERENCE)[f"{name}_{target}"]
    new = solve(preset(name).replace(target=target), "duel", **opts).arrays["win"]
    assert new.shape == old.shape
    assert np.abs(new - old).max() < 1e-9


def _progressive(target: int) -> tuple:
    rules = preset("progressive").replace(target=target)
    ct = carry_tables(rules, False)
    n = target // ct.unit
    q = ck.last_turn_out(n, ct.kernel_tables(), ct.max_keep)
    rho, _ = rolloff_value(rules, ct, 1e-12)
    return rules, ct, n, q, max(rho, 1.0 - rho)


def test_progressive_newton_start_changes_no_value() -> None:
    rules, ct, n, q, tie = _progressive(800)
    args = (n, ct.kernel_tables(), ct.max_keep, rules.voluntary_bust, q, tie, 1e-12, 60, counter())
    v_plane, it_plane = ck.carry_duel_solve(*args, True)
    v_old, it_old = ck.carry_duel_solve(*args, False)
    assert (it_plane >= 0).all() and (it_old >= 0).all()
    assert np.abs(v_plane - v_old).max() < 1e-9
    assert it_plane.sum() < it_old.sum()


def test_a_stuck_mover_loses_to_an_opponent_who_can_go_out() -> None:
    rules, ct, n, q, tie = _progressive(800)
    live = ck.live_scores(n, ct.kernel_tables(), ct.max_keep, rules.voluntary_bust)
    assert not live[n - 1] and live[: n - 1].all()  # one unit short: no turn ever scores
    v = solve(rules, "duel").arrays["win"]
    assert np.abs(v[n - 1, : n - 1]).max() < 1e-9 and np.abs(v[: n - 1, n - 1] - 1.0).max() < 1e-9
    assert v[n - 1, n - 1] == 0.5
    for b in (1, 2, 5):  # every pair is a fixed point of its two turn equations
        out_a = 1.0 - q[b] * (1.0 - tie)
        f0, _ = ck._carry_side(n - 1, b, 1.0 - v[b, n - 1], n, v, out_a, ct.kernel_tables(), ct.max_keep,
                               rules.voluntary_bust)
        assert abs(f0 - v[n - 1, b]) < 1e-9


def test_a_turn_is_worth_its_banking_distribution() -> None:
    """The forward pass under the turn's own policy reproduces the turn's value for any bank
    values (here a row that is not monotone, and a bust worth 0.3), and its masses sum to 1."""
    rules = preset("zilch")
    tb = roll_tables(rules)
    t_cap = 60
    bank_val, bank_ok = turn_bank(rules, tb, t_cap)
    bank_val = np.cos(bank_val / 900.0) ** 2  # not monotone: the policy is not a threshold
    arr = turn_arrays(rules, tb, t_cap, bank_val, bank_ok, 0.3)
    c, d, r, dr = (np.empty(arr["c"].size) for _ in range(4))
    choice = np.empty(t_cap * tb.grp_start[-1], dtype=np.int64)
    kernels.turn_dp_policy(t_cap, tb.kernel_tables(), bank_val, bank_ok, 0.3, c, d, r, dr, choice)
    assert np.array_equal(c, arr["c"].ravel()) and np.array_equal(r, arr["r"].ravel())
    end = np.empty(bank_val.shape[0])
    bust = kernels.end_distribution(t_cap, tb.kernel_tables(), bank_val, bank_ok, r, choice, d, end)
    assert 0.0 < bust < 1.0 and abs(end.sum() + bust - 1.0) < 1e-12
    assert abs(float(end @ bank_val) + bust * 0.3 - c[tb.num_dice]) < 1e-12


def test_zilch_duel_policy_iteration_gives_the_plain_sweeps_values() -> None:
    """Recording each state's linear form and solving it between sweeps (``newton``) reaches
    the fixed point of the plain Gauss-Seidel sweeps in fewer sweeps of in-turn passes."""
    rules = preset("zilch").replace(target=1000)
    tb = roll_tables(rules)
    args = (20, -20, 3, 10, 6, tb.kernel_tables(), 0, 1e-12, 100)
    v_new, sweeps_new, change_new, linear = kernels.duel_penalty_solve(*args, counter(), True)
    v_old, sweeps_old, change_old, _ = kernels.duel_penalty_solve(*args, counter(), False)
    assert 0 < sweeps_new < sweeps_old and linear > 0
    assert change_new < 1e-12 and change_old < 1e-12
    assert np.abs(v_new - v_old).max() < 1e-11
