"""The vector engine against the reference engine, step by step, on the same rolls and actions.

Game level: ``BatchGame`` rows and :mod:`greed_env.rules.game` states receive the same dice
codes (the reference decodes them through :func:`~greed_env.rules.sample_roll`) and the same
actions (random legal ones, plus a few random ids that may be illegal and forfeit the turn);
after every transition each row must equal its reference state field by field, and masks and
observations (from every seat) must be identical.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

from greed_env.envs.conventions import forfeit
from greed_env.rules import Phase, State, apply, apply_roll, new_game, preset, sample_roll
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import encode_observation
from greed_env.vector.engine import BatchGame
from greed_env.vector.tables import VectorUnsupportedError, check_vector_supported

VARIANTS: list[tuple[str, dict[str, Any], int]] = [
    ("ten_thousand", {}, 2),
    ("greed", {}, 2),
    ("farkle", {}, 2),
    ("farkle5", {}, 2),
    ("zilch", {}, 2),
    (
        "ten_thousand",
        {"six_kind_wins": True, "target": 3000, "single_values": (100, 0, 0, 0, 50, 60)},
        3,
    ),
    ("farkle", {"entry_scope": "roll", "entry_until_made": False, "first_player": "seat0"}, 3),
    ("greed", {"reroll_all_must_beat": False, "target": 2000, "voluntary_bust": True}, 2),
    ("zilch", {"min_bank": 0, "bust_penalty_after": 2, "target": 2500, "hot_dice": True}, 4),
    ("ten_thousand", {"hot_dice": False, "target": 2000, "horizon_rounds": 6}, 2),
    ("greed", {"all_dice_bonus": 500, "target": 1500, "final_round": True}, 1),
    ("ten_thousand", {"rounds": 3, "target": 3000, "entry_threshold": 300}, 2),
    ("farkle", {"rounds": 4, "target": 0, "entry_threshold": 0}, 3),
    ("zilch", {"rounds": 2, "target": 1500}, 1),
]


class CodeRng:
    """Stands in for a Generator: the next ``integers(high)`` is ``code % high``."""

    def __init__(self, code: int) -> None:
        self.code = int(code)

    def integers(self, high: int, *args: Any, **kwargs: Any) -> int:
        return self.code % high


def reference_fields(s: State) -> dict[str, Any]:
    return {
        "phase": int(s.phase),
        "player": s.player,
        "scores": s.scores,
        "entered": s.entered,
        "streaks": s.streaks,
        "turns": s.turns,
        "turn_total": s.turn_total,
        "dice": s.dice,
        "roll": s.roll,
        "fresh": s.fresh,
        "bar": s.bar,
        "entry_met": s.entry_met,
        "rounds": s.rounds,
        "endgame": s.endgame,
        "final_left": s.final_left,
        "contenders": s.contenders,
        "order_rolls": s.order_rolls,
        "winners": s.winners,
        "carry": s.carry,
        "for_nothing": s.for_nothing,
        "finishers": s.finishers,
        "votes": s.votes,
        "rolloff": s.rolloff,
        "rolloff_scores": s.rolloff_scores,
        "rolloff_round": s.rolloff_round,
        "rules_name": s.rules_name,
    }


def test_unmodelled_rules_are_refused_with_the_reason() -> None:
    with pytest.raises(VectorUnsupportedError, match="hot_dice=False"):
        check_vector_supported(preset("progressive", hot_dice=False))
    with pytest.raises(VectorUnsupportedError, match="piggyback"):
        check_vector_supported(preset("farkle", piggyback=True))


@pytest.mark.parametrize(("name", "overrides", "players"), VARIANTS)
def test_game_rows_follow_the_reference_engine(
    name: str, overrides: dict[str, Any], players: int
) -> None:
    rules = preset(name, **overrides)
    if players < rules.min_players:
        rules = rules.replace(min_players=players)
    n_games, n_steps = 16, 260
    game = BatchGame(rules, n_games, players)
    catalog = ActionCatalog(rules)
    # a seed fixed by the case itself (``hash`` of a str changes from process to process)
    rng = np.random.default_rng(zlib.crc32(repr((name, sorted(overrides.items()), players)).encode()))
    ref = [new_game(rules, players) for _ in range(n_games)]
    high = 6**rules.num_dice
    games_over = 0
    for _ in range(n_steps):
        over = np.array([s.phase == Phase.OVER for s in ref])
        if over.any():
            games_over += int(over.sum())
            game.new_games(rows=over)
            for i in np.flatnonzero(over):
                ref[i] = new_game(rules, players)
        chance = game.chance_rows()
        codes = rng.integers(0, high, size=n_games)
        for i in np.flatnonzero(chance):
            ref[i] = apply_roll(rules, ref[i], sample_roll(rules, ref[i], CodeRng(codes[i])))
        game.apply_rolls(codes, chance)
        masks = game.masks()
        decide = game.decision_rows()
        actions = np.zeros(n_games, dtype=np.int64)
        for i in np.flatnonzero(decide):
            legal = np.flatnonzero(masks[i])
            wild = rng.random() < 0.03
            actions[i] = rng.integers(catalog.n) if wild else legal[rng.integers(len(legal))]
            moves = catalog.legal(ref[i])[1]
            move = moves.get(int(actions[i]))
            ref[i] = apply(rules, ref[i], move) if move is not None else forfeit(rules, ref[i])
        illegal = game.apply_actions(actions, decide)
        for i in np.flatnonzero(decide):
            assert bool(illegal[i]) == (masks[i, actions[i]] == 0)
        masks = game.masks()
        for seat in range(players):
            obs = game.observations(np.full(n_games, seat))
            for i in range(n_games):
                np.testing.assert_array_equal(obs[i], encode_observation(rules, ref[i], seat))
        for i in range(n_games):
            assert game.fields(i) == reference_fields(ref[i]), f"row {i}"
            np.testing.assert_array_equal(masks[i], catalog.mask(ref[i]))
    assert games_over > 0 or players == 1 or rules.target >= 10_000


def test_a_rolled_six_of_a_kind_wins_in_the_vector_engine_too() -> None:
    """001: 'Rolling six of the same number in one roll is an instant win.'"""
    rules = preset("ten_thousand", six_kind_wins=True, num_dice=7)
    codes = np.array([2 * sum(6**k for k in range(6)), 3 * sum(6**k for k in range(7))])  # 3x6+1, 4x7
    game = BatchGame(rules, 2, 2)
    game.new_games(first_player=1)
    ref = [new_game(rules, 2, first_player=1) for _ in range(2)]
    ref = [apply_roll(rules, s, sample_roll(rules, s, CodeRng(c))) for s, c in zip(ref, codes, strict=True)]
    game.apply_rolls(codes, np.array([True, True]))
    for i in range(2):
        assert ref[i].phase == Phase.OVER and ref[i].winners == (1,)
        assert game.fields(i) == reference_fields(ref[i])
