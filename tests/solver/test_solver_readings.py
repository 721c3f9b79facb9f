"""The solver on every option the engine plays: six of a kind rolled, rounds without a target,
a final round past the last round, and Progressive's other reading of a working face.

Each is checked against an independent brute force over the engine itself (``legal_moves`` /
``apply`` / ``chance_outcomes`` / ``apply_roll``, memoised expectimax) on tiny rules, and by
simulation of the optimal bot against itself (``|z| < 3``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pytest

from greed_env.rules import (
    BANK,
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    chance_outcomes,
    legal_moves,
    new_game,
    preset,
)
from greed_env.solver import SolverError, solve
from greed_env.solver.simulate import simulate_duel

sys.setrecursionlimit(20_000)

# six dice where only 1s score: a turn is short, and six of a kind stays a real outcome
ONES = {"straights": (), "three_pairs": 0, "single_values": (100, 0, 0, 0, 0, 0),
        "triple_values": (1000, 0, 0, 0, 0, 0), "entry_threshold": 0, "final_round": False}


def _game_value(rules: Rules, start: State, leaf: Callable[[State], float | None] = lambda s: None,
                force_bank: Callable[[State], bool] = lambda s: False) -> float:
    """Seat 0's best share from ``start``, seat 1 minimising, by expectimax over the engine."""
    memo: dict[State, float] = {}

    def value(s: State) -> float:
        k = s._replace(event="")
        hit = memo.get(k)
        if hit is not None:
            return hit
        v = leaf(s)
        if v is None:
            if s.phase == Phase.OVER:
                v = s.shares[0]
            elif s.phase == Phase.ROLL:
                v = sum(p * value(apply_roll(rules, s, roll)) for roll, p in chance_outcomes(rules, s))
            else:
                moves = legal_moves(rules, s)
                if s.phase == Phase.CONTINUE and BANK in moves and force_bank(s):
                    moves = [BANK]
                vals = [value(apply(rules, s, m)) for m in moves]
                v = max(vals) if s.player == 0 else min(vals)
        memo[k] = v
        return v

    return value(start)


def _duel_by_value_iteration(rules: Rules) -> dict[tuple[int, int], float]:
    """P(mover wins) from every pair of banked scores below the target (steps of 100), by value
    iteration over turn starts with expectimax inside the turn."""
    scores = range(0, rules.target, 100)
    est = {(a, b): 0.5 for a in scores for b in scores}
    for _ in range(500):
        change = 0.0
        for (a, b), old in est.items():
            start = new_game(rules, 2, first_player=0)._replace(scores=(a, b), entered=(True, True))

            def leaf(s: State) -> float | None:
                if s.phase != Phase.OVER and s.player == 1 and s.phase == Phase.ROLL:
                    return 1.0 - est[(s.scores[1], s.scores[0])]
                return None

            new = _game_value(rules, start, leaf, lambda s: s.scores[s.player] + s.turn_total >= rules.target)
            change = max(change, abs(new - old))
            est[(a, b)] = new
        if change < 1e-13:
            return est
    raise AssertionError("value iteration did not converge")


# ------------------------------------------------------------------------------------------
# six of a kind rolled wins (001 variant)


def test_six_of_a_kind_duel_matches_brute_force() -> None:
    """001: 'Rolling six of the same number in one roll is an instant win.' A terminal outcome
    of the roll distribution, worth 1 to the roller."""
    rules = preset("ten_thousand", target=300, six_kind_wins=True, **ONES)
    table = solve(rules, "duel")
    brute = _duel_by_value_iteration(rules)
    v, unit = table.arrays["win"], table.meta["unit"]
    for (a, b), val in brute.items():
        assert abs(v[a // unit, b // unit] - val) < 1e-9, (a, b, v[a // unit, b // unit], val)
    plain = solve(rules.replace(six_kind_wins=False), "duel").headline
    assert abs(plain - table.headline) > 1e-6, "the instant win changes the value"


def test_six_of_a_kind_race_matches_brute_force() -> None:
    """The race ends on the winning roll as on reaching the target: no turns after it."""
    rules = preset("ten_thousand", target=300, six_kind_wins=True, min_players=1, **ONES)
    table = solve(rules, "race")
    est = {b: 0.0 for b in range(0, rules.target, 100)}
    for _ in range(3000):
        change = 0.0
        for b in est:
            start = new_game(rules, 1)._replace(scores=(b,))
            turns0 = start.turns

            def leaf(s: State, turns0: tuple[int, ...] = turns0) -> float | None:
                if s.phase == Phase.OVER:
                    return 0.0
                if s.turns != turns0:
                    return -est[s.scores[0]]
                return None

            new = 1.0 - _game_value(rules, start, leaf, lambda s: s.scores[0] + s.turn_total >= rules.target)
            change = max(change, abs(new - est[b]))
            est[b] = new
        if change < 1e-12:
            break
    r, unit = table.arrays["expected_turns"], table.meta["unit"]
    for b, val in est.items():
        assert abs(r[b // unit] - val) < 1e-9, (b, r[b // unit], val)
    assert abs(solve(rules.replace(six_kind_wins=False), "race").headline - table.headline) > 1e-6


def test_six_of_a_kind_duel_by_simulation() -> None:
    rules = preset("ten_thousand", target=1500, six_kind_wins=True, entry_threshold=300)
    table = solve(rules, "duel")
    check = simulate_duel(table, 1200, np.random.default_rng(23))
    assert abs(check.z) < 3, (check, table.headline)


def test_six_of_a_kind_refusals_name_the_reason() -> None:
    rules = preset("ten_thousand", six_kind_wins=True)
    with pytest.raises(SolverError, match="worth no number of points"):
        solve(rules, "turn")
    with pytest.raises(SolverError, match="which is not coming in"):
        solve(rules, "entry")
    with pytest.raises(SolverError, match="carry-over rules"):
        solve(preset("progressive", six_kind_wins=True), "duel")
    with pytest.raises(SolverError, match="with a bust penalty"):
        solve(preset("zilch", six_kind_wins=True), "race")
    from greed_env.bots.solver_backend import unavailable_reason

    assert "worth no number of points" in unavailable_reason(rules, "turn")
    assert unavailable_reason(rules, "duel") == ""


# ------------------------------------------------------------------------------------------
# rounds without a target, and a final round past the last round (001)

TINY = {"num_dice": 3, "straights": (), "three_pairs": 0, "hot_dice": False}


def test_rounds_without_a_target_match_brute_force() -> None:
    """Without hot dice a turn is bounded, so the window holds every lead and the value is the
    whole game's expectimax exactly."""
    rules = preset("ten_thousand", **TINY, rounds=2, target=0, entry_threshold=150)
    table = solve(rules, "duel")
    assert table.meta["window_error_bound"] == 0.0
    brute = _game_value(rules, new_game(rules, 2, first_player=0))
    assert abs(table.headline - brute) < 1e-9, (table.headline, brute)


def test_rounds_without_a_target_by_simulation() -> None:
    rules = preset("ten_thousand", rounds=2, target=0)
    table = solve(rules, "duel")
    assert 0.0 < table.meta["window_error_bound"] <= 1e-12
    check = simulate_duel(table, 1500, np.random.default_rng(31))
    assert abs(check.z) < 3, (check, table.headline)


@pytest.mark.parametrize("past", [False, True])
def test_final_round_past_the_rounds_matches_brute_force(past: bool) -> None:
    """001: 'each player gets one final chance to beat that score': with the field the second
    seat's target on the last turn gives the first seat its final turn."""
    rules = preset("ten_thousand", **TINY, rounds=1, target=300, entry_threshold=0,
                   final_round_past_rounds=past)
    table = solve(rules, "duel")
    brute = _game_value(rules, new_game(rules, 2, first_player=0))
    assert abs(table.headline - brute) < 1e-9, (table.headline, brute)


def test_final_round_past_the_rounds_changes_the_game() -> None:
    base = preset("ten_thousand", **TINY, rounds=1, target=300, entry_threshold=0)
    cut = solve(base, "duel").headline
    past = solve(base.replace(final_round_past_rounds=True), "duel").headline
    assert past > cut + 1e-4, "the first seat gains its final chance"


def test_final_round_past_the_rounds_by_simulation() -> None:
    rules = preset("ten_thousand", rounds=3, target=2000, entry_threshold=300, final_round_past_rounds=True)
    table = solve(rules, "duel")
    check = simulate_duel(table, 1500, np.random.default_rng(37))
    assert abs(check.z) < 3, (check, table.headline)


# ------------------------------------------------------------------------------------------
# Progressive: a die of a working face may complete a small straight (002)


def test_progressive_turn_under_the_other_reading_is_the_bots_exact_play() -> None:
    """The solver's turn under working_set_claims=False, enumerated exactly in the engine
    (every roll the optimal bot can meet), gives the table's value; the other reading only adds
    keeps, so it is worth at least the default."""
    from greed_env.evaluation.policy_value import turn_value
    from greed_env.solver import OptimalBot

    base = preset("progressive", target=1500, min_players=1)
    free = base.replace(working_set_claims=False)
    table = solve(free, "turn")
    res = turn_value(OptimalBot(free, "turn", table), free)
    assert res.value == pytest.approx(table.headline, abs=1e-8)
    assert table.headline > solve(base, "turn").headline

