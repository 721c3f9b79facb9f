"""PettingZoo AEC environment: the ecosystem's API and seed tests, rewards, illegal actions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from greed_env.pettingzoo import greed_v0
from greed_env.rules import IllegalMove, RulesError, preset_names

PRESETS = preset_names()


@pytest.fixture(autouse=True)
def _quiet() -> None:
    warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
    warnings.filterwarnings("ignore", message="Observation space for each agent probably")


@pytest.mark.parametrize("num_players", [2, 3, 8])
@pytest.mark.parametrize("name", PRESETS)
def test_api_and_seed_tests(name: str, num_players: int) -> None:
    api_test(greed_v0.env(rules=name, num_players=num_players), num_cycles=15)
    seed_test(lambda: greed_v0.env(rules=name, num_players=num_players), num_cycles=15)


@pytest.mark.parametrize("name", ["ten_thousand", "farkle5"])
def test_api_test_through_whole_games(name: str) -> None:
    api_test(greed_v0.env(rules=name, num_players=2), num_cycles=1000)


def _play_out(env, rng: np.random.Generator) -> dict[str, float]:  # type: ignore[no-untyped-def]
    totals: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _info = env.last()
        totals[agent] = totals.get(agent, 0.0) + reward
        if termination or truncation:
            env.step(None)
            continue
        assert obs["action_mask"].any() and obs["observation"].dtype == np.float32
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


@pytest.mark.parametrize(("name", "num_players"), [("ten_thousand", 3), ("zilch", 2), ("greed", 4)])
def test_rewards_at_the_end_are_the_zero_sum_pot_shares(name: str, num_players: int) -> None:
    env = greed_v0.env(rules=name, num_players=num_players)
    env.reset(seed=4)
    totals = _play_out(env, np.random.default_rng(4))
    assert set(totals) == set(env.possible_agents)
    assert sum(totals.values()) == pytest.approx(0.0)
    assert totals == pytest.approx(env.unwrapped.final_returns())
    assert max(totals.values()) > 0


def test_progressive_split_vote_rewards_are_shared() -> None:
    """Drive the AEC env into a progressive tie; both finishers agree to split."""
    env = greed_v0.raw_env(rules="progressive", num_players=3)
    env.reset(seed=0)
    from test_envs_catalog import _split_vote_start

    env._set_state(_split_vote_start(env.rules))
    cat = env.catalog
    for _ in range(2):
        agent = env.agent_selection
        assert env.observe(agent)["action_mask"][cat.index_of("split")] == 1
        env.step(cat.index_of("split"))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 0.5, "player_1": -1.0, "player_2": 0.5}


def test_only_the_agent_to_act_sees_a_mask() -> None:
    env = greed_v0.env(rules="ten_thousand", num_players=3)
    env.reset(seed=1)
    acting = env.agent_selection
    for agent in env.agents:
        mask = env.observe(agent)["action_mask"]
        assert mask.any() == (agent == acting)


def test_illegal_action_penalty_and_raise() -> None:
    env = greed_v0.env(rules="ten_thousand", num_players=2, illegal_reward=-2.0)
    env.reset(seed=3)
    offender = env.agent_selection
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[-1]))
    assert env.rewards[offender] == -2.0
    assert env.infos[offender] == {"illegal_action": True}
    assert env.agent_selection != offender

    strict = greed_v0.env(rules="ten_thousand", num_players=2, illegal_action="raise")
    strict.reset(seed=3)
    obs, *_ = strict.last()
    with pytest.raises(IllegalMove):
        strict.step(int(np.flatnonzero(obs["action_mask"] == 0)[-1]))


def test_bad_arguments() -> None:
    with pytest.raises(RulesError):
        greed_v0.env(rules="nope")
    with pytest.raises(ValueError, match="num_players"):
        greed_v0.env(rules="ten_thousand", num_players=1)
    with pytest.raises(ValueError, match="render_mode"):
        greed_v0.env(render_mode="rgb")
    env = greed_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside"):
        env.step(env.catalog.n)


def test_render_ansi() -> None:
    env = greed_v0.env(rules="farkle", num_players=3, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "scores:" in text and "P2" in text
