"""OptimalBot played in the engine reproduces the tables' headline values (within 3 SE).

Small targets keep these fast; the full-size checks live in scripts/bench_solver.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.rules import (
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
    sample_roll,
)
from greed_env.solver import OptimalBot, SolverTable, solve


def _play_turn(rules: Rules, state: State, bot: OptimalBot, rng: np.random.Generator) -> State:
    p = state.player
    turns = state.turns[p]
    while not is_over(state) and state.player == p and state.turns[p] == turns:
        if is_chance(state):
            state = apply_roll(rules, state, sample_roll(rules, state, rng))
        else:
            move = bot.act(rules, state, rng)
            assert move in legal_moves(rules, state)
            state = apply(rules, state, move)
    return state


@pytest.mark.parametrize("name", ["ten_thousand", "greed", "farkle5", "progressive"])
def test_turn_headline_by_simulation(name: str) -> None:
    # far from any target; Progressive's exact target would still make the solve cover every
    # total up to it (tests/evaluation/test_policy_value.py checks the turn under one exactly)
    extra = {"exact_target": False, "tie_rule": "shared"} if name == "progressive" else {}
    rules = preset(name, target=1_000_000, min_players=1, **extra)
    table = solve(rules, "turn")
    bot = OptimalBot(rules, "turn", table)
    rng = np.random.default_rng(7)
    n = 2500
    gains = np.empty(n)
    for i in range(n):
        s = new_game(rules, 1)._replace(entered=(True,))
        s = _play_turn(rules, s, bot, rng)
        gains[i] = s.scores[0]
    se = gains.std(ddof=1) / np.sqrt(n)
    assert abs(gains.mean() - table.headline) < 3 * se, (gains.mean(), table.headline, se)


def test_zilch_long_run_points_per_turn() -> None:
    rules = preset("zilch", target=10_000_000, min_players=1, horizon_rounds=100_000)
    table = solve(rules, "turn")
    bot = OptimalBot(rules, "turn", table)
    rng = np.random.default_rng(3)
    s = new_game(rules, 1)
    per_turn = []
    for _ in range(4000):
        before = s.scores[0]
        s = _play_turn(rules, s, bot, rng)
        per_turn.append(s.scores[0] - before)
    x = np.array(per_turn, float)
    batches = x.reshape(40, -1).mean(axis=1)
    se = batches.std(ddof=1) / np.sqrt(len(batches))
    assert abs(x.mean() - table.headline) < 3 * se, (x.mean(), table.headline, se)


def test_entry_headline_by_simulation() -> None:
    rules = preset("ten_thousand", min_players=1)
    table = solve(rules, "entry")
    bot = OptimalBot(rules, "entry", table)
    rng = np.random.default_rng(11)
    n = 3000
    hits = np.array([_play_turn(rules, new_game(rules, 1), bot, rng).scores[0] > 0 for _ in range(n)], float)
    se = np.sqrt(table.headline * (1 - table.headline) / n)
    assert abs(hits.mean() - table.headline) < 3 * se


@pytest.mark.parametrize(("name", "target"), [("ten_thousand", 3000), ("zilch", 2000), ("progressive", 600)])
def test_race_headline_by_simulation(name: str, target: int) -> None:
    rules = preset(name, target=target, min_players=1)
    table = solve(rules, "race")
    bot = OptimalBot(rules, "race", table)
    rng = np.random.default_rng(5)
    n = 400
    turns = np.empty(n)
    for i in range(n):
        s = new_game(rules, 1)
        while not is_over(s):
            s = _play_turn(rules, s, bot, rng)
        turns[i] = s.turns[0]
    se = turns.std(ddof=1) / np.sqrt(n)
    assert abs(turns.mean() - table.headline) < 3 * se, (turns.mean(), table.headline, se)


def _duel_by_simulation(rules: Rules, table: SolverTable, n: int = 1200) -> tuple[float, float, int]:
    """OptimalBot against itself for ``n`` games: seat 0's mean share, its standard error, and
    how many split-vote / roll-off-order decisions were met."""
    bot = OptimalBot(rules, "duel", table)
    rng = np.random.default_rng(17)
    wins = np.empty(n)
    tie_decisions = 0
    for i in range(n):
        s = new_game(rules, 2, first_player=0)
        while not is_over(s):
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
            else:
                tie_decisions += s.phase in (Phase.SPLIT, Phase.ORDER_CHOICE)
                s = apply(rules, s, bot.act(rules, s, rng))
        wins[i] = s.shares[0]
    return float(wins.mean()), float(wins.std(ddof=1) / np.sqrt(n)), tie_decisions


@pytest.mark.parametrize(
    ("name", "target"), [("ten_thousand", 1500), ("greed", 1000), ("zilch", 500), ("progressive", 600)]
)
def test_duel_headline_by_simulation(name: str, target: int) -> None:
    rules = preset(name, target=target)
    table = solve(rules, "duel", floor=-250) if rules.bust_penalty else solve(rules, "duel")
    mean, se, tie_decisions = _duel_by_simulation(rules, table)
    assert abs(mean - table.headline) < 3 * se, (mean, table.headline, se)
    if rules.tie_rule == "split_vote":
        assert tie_decisions > 0, "ties went through the split vote and the roll-off"


def test_final_round_without_bust_bound_by_simulation() -> None:
    """Zilch's scoring "nothing" roll means six dice never bust, so the final-round cap has no
    bust bound; it stops where the opponent's last-turn chances fall below the tolerance."""
    rules = preset("zilch", target=1000, final_round=True, bust_penalty=0)
    table = solve(rules, "duel")
    assert table.meta["p_min_bust"] == 0.0
    assert table.meta["cap_certified"] and 0.0 < table.meta["cap_error_bound"] < 1e-12
    mean, se, _ = _duel_by_simulation(rules, table)
    assert abs(mean - table.headline) < 3 * se, (mean, table.headline, se)
