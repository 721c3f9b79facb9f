"""Bots made on an older action catalog play under today's, never choosing the actions added."""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.bots.cards import NEVER
from greed_env.bots.loader import load
from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.rules import Carry, Phase, Rules, State, current_keep_options, new_game, preset
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM, encode_observation


def _fill_position(name: str) -> tuple[Rules, State]:
    rules = preset(name)
    state = new_game(rules, 2, first_player=0)._replace(
        phase=Phase.KEEP, roll=(1, 1, 2, 2, 3, 3, 4, 4), dice=8, carry=Carry((0,) * 6, (1,), ()), fresh=False
    )
    return rules, state


def test_a_shipped_version_2_bot_plays_the_position_with_both_readings() -> None:
    """trippn/ppo-turn was exported on the version-2 catalog (3,693 logits): it loads, its
    logits of the three alternate keeps are the lowest finite value, and where both readings
    of 1,1,2,2,3,3,4,4 are legal it plays an action of its own."""
    bot = load("trippn/ppo-turn")
    assert bot.card["action_catalog_version"] == 2 and bot.card["num_actions"] == 3693
    rules, state = _fill_position("trippn")
    logits = bot.logits(encode_observation(rules, state))
    assert logits.shape == (3696,) and np.all(logits[3693:] == np.float32(NEVER)) and np.isfinite(logits).all()
    mask, moves = bot.catalog.legal(state)
    assert mask[3693] == 1 and mask[bot.catalog.primary_of(3693)] == 1
    for seed in range(3):
        move = bot.act(rules, state, np.random.default_rng(seed))
        assert bot.catalog.index_of(move, state) < 3693
        assert move in moves.values()
    sampler = load("trippn/ppo-turn", temperature=1.0)
    picks = {sampler.catalog.index_of(sampler.act(rules, state, np.random.default_rng(s)), state) for s in range(50)}
    assert picks and max(picks) < 3693


def test_a_widened_policy_keeps_its_logits_and_never_chooses_the_added_actions() -> None:
    rng = np.random.default_rng(0)
    n = ActionCatalog("progressive").size_of_version(2)
    assert n == 3693
    layers = [(rng.normal(size=(8, OBS_DIM)).astype(np.float32), rng.normal(size=8).astype(np.float32))]
    head = (rng.normal(size=(n, 8)).astype(np.float32), rng.normal(size=n).astype(np.float32))
    policy = NumpyPolicy(layers, head, "tanh")
    wide = policy.widened(3696)
    obs = rng.normal(size=(4, OBS_DIM)).astype(np.float32)
    assert np.array_equal(wide.logits(obs)[:, :n], policy.logits(obs))
    assert np.all(wide.logits(obs)[:, n:] == np.float32(NEVER))
    mask = np.zeros((4, 3696), dtype=np.int8)
    mask[:, [5, 3693, 3695]] = 1
    assert wide.act(obs, mask).tolist() == [5, 5, 5, 5]
    only_added = np.zeros((1, 3696), dtype=np.int8)
    only_added[0, 3694] = 1
    assert wide.act(obs[:1], only_added).tolist() == [3694]  # still a legal move
    with pytest.raises(ValueError, match="narrow"):
        policy.widened(100)


def test_every_reading_of_the_fill_position_is_legal_under_the_catalog() -> None:
    for name in ("progressive", "trippn"):
        rules, state = _fill_position(name)
        catalog = ActionCatalog(rules)
        full = [o for o in current_keep_options(rules, state) if len(o.dice) == 8]
        assert sorted(catalog.index_of(o) for o in full) == [2303, 3693]
