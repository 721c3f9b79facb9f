"""The carry-over duel's lane passes: generated code that is its generator's output, and
values bitwise those of the per-pair solver they replace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from greed_env.progress import counter
from greed_env.rules import preset
from greed_env.solver import carry_kernels as ck
from greed_env.solver import lane_codegen
from greed_env.solver.carry import carry_tables, rolloff_value


def test_the_lane_kernel_is_the_generators_output() -> None:
    path = Path(lane_codegen.__file__).with_name("lane_kernel.py")
    assert path.read_text() == lane_codegen.source(), "run python -m greed_env.solver.lane_codegen"


def _setup(target: int, **changes: object) -> tuple:
    rules = preset("progressive").replace(target=target, **changes)
    ct = carry_tables(rules, False)
    n = target // ct.unit
    q = ck.last_turn_out(n, ct.kernel_tables(), ct.max_keep)
    rho, _ = rolloff_value(rules, ct, 1e-12)
    return rules, ct, n, q, max(rho, 1.0 - rho)


@pytest.mark.parametrize("changes", [{}, {"voluntary_bust": True}])
def test_lane_passes_equal_passes_of_their_own(changes: dict[str, object]) -> None:
    """Any bank values, bust and going-out values, a padded block (fewer positions than lanes)
    with movers far apart: each lane is bitwise the single pass. More positions than lanes are
    refused."""
    rules, ct, n, _q, _tie = _setup(2000, **changes)
    tab = ct.kernel_tables()
    koff = ct.osc * ct.n_states + ct.onx
    rng = np.random.default_rng(3)
    v = rng.random((n, n))
    for k in (ck.LANES, max(1, ck.LANES - 1)):
        mover = np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
        opp = rng.integers(0, n, size=k)
        xs, outs = rng.random(k), rng.random(k)
        f0, f1 = np.zeros(k), np.zeros(k)
        ck.lane_pass(mover, opp, xs, outs, k, n, tab, koff, v, ct.max_keep, rules.voluntary_bust, f0, f1)
        for i in range(k):
            g0, g1 = ck._carry_side(int(mover[i]), int(opp[i]), xs[i], n, v, outs[i], tab, ct.max_keep,
                                    rules.voluntary_bust)
            assert (f0[i], f1[i]) == (g0, g1)
    k = ck.LANES + 1
    with pytest.raises(ValueError, match="LANES"):
        ck.lane_pass(np.arange(k), np.zeros(k, dtype=np.int64), np.zeros(k), np.zeros(k), k, n, tab, koff, v,
                     ct.max_keep, rules.voluntary_bust, np.zeros(k), np.zeros(k))


def test_the_lane_solver_gives_the_per_pair_solvers_table() -> None:
    rules, ct, n, q, tie = _setup(1500)
    args = (n, ct.kernel_tables(), ct.max_keep, rules.voluntary_bust, q, tie, 1e-12, 60, counter())
    v_lanes, it_lanes = ck.carry_duel_solve_lanes(*args)
    v_pair, it_pair = ck.carry_duel_solve(*args)
    assert (it_lanes >= 0).all()
    assert np.array_equal(v_lanes, v_pair)
    assert np.array_equal(it_lanes, it_pair)


def test_reach_points_are_the_fewest_points_to_each_dice_state() -> None:
    """Shortest paths over the keeps: no keep improves on them, and every state but the fresh
    roll is reached through a keep that attains its value."""
    _rules, ct, _n, _q, _tie = _setup(2000)
    reach = ck.reach_points(ct.kernel_tables())
    assert reach[0] == 0 and (reach >= 0).all()
    attained = np.zeros(ct.n_states, dtype=bool)
    attained[0] = True
    for s in range(ct.n_states):
        for g in range(ct.gs[s], ct.gs[s + 1]):
            for o in range(ct.ost[g], ct.ost[g + 1]):
                nxt = ct.onx[o]
                assert reach[nxt] <= reach[s] + ct.osc[o]
                attained[nxt] |= reach[nxt] == reach[s] + ct.osc[o]
    assert attained.all()
