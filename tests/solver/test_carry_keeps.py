"""The solver's tabulated keeps (greed_env.solver.keeps) against the reference keep_options.

Random (roll, carry-over) pairs from a seeded generator, under Progressive and Trippn: the
options must be the reference's, in its order (dice kept, points, carry-over after the keep),
and ``has_scoring_keep`` must agree. Carry-overs mix working sets (counts 3 and above), open
small straights and working three pairs, reachable or not: the tables must follow the
reference's reading whatever the carry-over.
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.rules import preset
from greed_env.rules.config import Rules
from greed_env.rules.game import ROLL, State, apply, apply_roll, legal_moves, new_game
from greed_env.rules.scoring import EMPTY_CARRY, Carry, has_scoring_keep, keep_options
from greed_env.solver.carry import canonical_carry, carry_tables, risk_free_states
from greed_env.solver.keeps import CarryKeeps, carry_keeps
from greed_env.solver.model import roll_distribution


def _random_carry(rng: np.random.Generator) -> Carry:
    sets = tuple(int(c) for c in rng.choice([0, 0, 0, 3, 4, 5], size=6))
    fills = tuple(sorted(int(f) for f in rng.choice([1, 6], size=int(rng.integers(0, 3)), replace=False)))
    pairs = tuple(sorted(int(f) for f in rng.choice(6, size=3, replace=False) + 1)) if rng.random() < 0.3 else ()
    return Carry(sets, fills, pairs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["progressive", "trippn"])
def test_tabulated_keeps_are_the_reference_options(name: str) -> None:
    rules = preset(name)
    rng = np.random.default_rng(24)
    carries = [EMPTY_CARRY] + [_random_carry(rng) for _ in range(5)]
    checked = 0
    for carry in carries:
        keeps = CarryKeeps(rules, carry)
        for _ in range(14):
            n = int(rng.integers(1, rules.num_dice + 1))
            roll = tuple(sorted(int(d) for d in rng.integers(1, 7, size=n)))
            fresh = bool(rng.random() < 0.5)
            got, scoring = keeps.roll(roll, fresh)
            ref = keep_options(rules, roll, carry, fresh)
            want = [(o.dice, o.score, o.carry) for o in ref]
            assert [(tuple(f for f in range(1, 7) for _ in range(s[f - 1])), sc, c) for s, _k, sc, c in got] == want
            assert [k for _s, k, _sc, _c in got] == [len(o.dice) for o in ref]
            assert scoring == has_scoring_keep(rules, roll, carry)
            checked += 1
    assert checked == 84


def test_whole_fresh_roll_gets_the_all_dice_bonus_once() -> None:
    rules = preset("progressive")
    keeps = carry_keeps(rules, EMPTY_CARRY)
    roll = (1, 2, 3, 4, 5, 6, 6, 6)
    fresh, _ = keeps.roll(roll, True)
    later, _ = keeps.roll(roll, False)
    whole = [sc for _s, k, sc, _c in fresh if k == 8]
    assert whole and [sc - rules.all_dice_bonus for sc in whole] == [sc for _s, k, sc, _c in later if k == 8]
    assert [o for o in fresh if o[1] < 8] == [o for o in later if o[1] < 8]


@pytest.mark.parametrize("reduced", [True, False])
def test_small_dice_states_have_the_reference_groups(reduced: bool) -> None:
    """Progressive's dice states of up to 4 dice: the grouped rolls ``carry_tables`` holds are
    the ones the reference's keep_options gives (points in units, next state, probability)."""
    rules = preset("progressive")
    ct = carry_tables(rules, reduced)
    small = [s for s, (n, _c) in enumerate(ct.states) if n <= 4]
    assert len(small) > 20
    for s in small[:: max(1, len(small) // 20)]:
        n, carry = ct.states[s]
        groups: dict[tuple[tuple[int, int], ...], float] = {}
        p_none = p_nothing = 0.0
        for roll, p in roll_distribution(n):
            row = [(o.score // ct.unit, ct.next_state(rules, n, len(o.dice), o.carry))
                   for o in keep_options(rules, roll, carry, n == rules.num_dice)]
            if not has_scoring_keep(rules, roll, carry):
                p_nothing += p
            if not row:
                p_none += p
                continue
            if reduced:
                best: dict[int, int] = {}
                for sc, nx in row:
                    best[nx] = max(best.get(nx, -1), sc)
                row = [(sc, nx) for nx, sc in best.items()]
            key = tuple(sorted(set(row)))
            groups[key] = groups.get(key, 0.0) + p
        got = {
            tuple((int(ct.osc[o]), int(ct.onx[o])) for o in range(ct.ost[g], ct.ost[g + 1])): float(ct.gp[g])
            for g in range(ct.gs[s], ct.gs[s + 1])
        }
        assert got == groups
        assert ct.pb[s] == p_none and ct.pnot[s] == p_nothing


def test_canonical_carry_reads_trippn_set_counts_as_three() -> None:
    rules = preset("trippn")
    c = Carry((5, 0, 3, 0, 4, 0), (6,), ())
    assert canonical_carry(rules, c) == Carry((3, 0, 3, 0, 3, 0), (6,), ())
    assert canonical_carry(preset("progressive"), c) == c


def _keep_all(rules: Rules, s: State, roll: tuple[int, ...]) -> State:
    s = apply_roll(rules, s, roll)
    move = next(m for m in legal_moves(rules, s) if m.kind == "keep" and sorted(m.taps) == sorted(roll))
    return apply(rules, s, move)


def test_a_trippn_turn_can_roll_on_for_ever() -> None:
    """Why Trippn's turn has no optimum with the target ignored: two and-rolls can leave sets of 2s, 3s, 4s
    and 6s working (the engine's own turn), after which every roll of any number of dice has a
    keep and every keep leaves those sets working, so no roll can ever bust."""
    rules = preset("trippn")
    s = _keep_all(rules, new_game(rules, 1), (1, 2, 2, 2, 3, 3, 3, 5))
    s = _keep_all(rules, apply(rules, s, ROLL), (1, 4, 4, 4, 5, 6, 6, 6))
    assert s.dice == rules.num_dice and all(s.carry.sets[f - 1] for f in (2, 3, 4, 6))
    keeps = CarryKeeps(rules, s.carry)
    for n in range(1, rules.num_dice + 1):
        for roll, _p in roll_distribution(n):
            opts, scoring = keeps.roll(roll, n == rules.num_dice)
            assert scoring and opts
            assert all(all(c.sets[f - 1] for f in (2, 3, 4, 6)) for _s, _k, _sc, c in opts)


def test_risk_free_states_are_none_under_progressive() -> None:
    assert not risk_free_states(carry_tables(preset("progressive"), True)).any()


def _small_trippn(num_dice: int) -> Rules:
    base = preset("trippn")
    return base.replace(num_dice=num_dice, target=3000,
                        straights=tuple(s for s in base.straights if len(s[0]) <= num_dice))


def test_trippn_turn_under_the_exact_target_is_solved_from_one_enumeration() -> None:
    """``solve_exact_turn`` (what scripts/trippn_turn.py runs on the preset): the risk-free
    states of the full tables are those of the best-keep tables (same rolls into the same dice
    states), so a rule set that has some gets no target-ignored value and no second search."""
    from greed_env.solver.carry import solve_exact_turn

    rules = _small_trippn(4)
    full, reduced = carry_tables(rules, False), carry_tables(rules, True)
    assert np.array_equal(risk_free_states(full), risk_free_states(reduced)) and risk_free_states(full).any()
    carry_tables.cache_clear()
    table = solve_exact_turn(rules)
    assert carry_tables.cache_info().misses == 1
    assert table.meta["points_per_turn_target_ignored"] is None and table.meta["risk_free_states"] > 0
    assert 0 < table.headline < rules.target
    assert table.meta["keeps"] == full.osc.shape[0]


def test_carry_entry_at_threshold_zero_is_the_chance_that_a_fresh_roll_keeps() -> None:
    """Read off the keep tables (60 CPU-s -> 0.5 for eight dice through keep_options): equal to
    the reference's count on six dice, where a fresh roll can bust."""
    import math

    from greed_env.solver import solve

    rules = preset("progressive").replace(num_dice=6, straights=(((1, 2, 3, 4, 5, 6), 1500),))
    ref = math.fsum(p for roll, p in roll_distribution(6) if keep_options(rules, roll, EMPTY_CARRY, True))
    assert 0.9 < ref < 1.0
    assert abs(solve(rules, "entry").headline - ref) < 1e-15
