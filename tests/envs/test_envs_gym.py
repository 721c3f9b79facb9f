"""Gymnasium environments: the ecosystem checker, seeding, rewards, masks, errors, rendering."""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import greed_env
from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.envs.duel import DuelEnv
from greed_env.envs.solitaire import SolitaireEnv
from greed_env.rules import IllegalMove, Phase, RulesError, preset_names
from greed_env.spaces.observation import OBS_DIM

PRESETS = preset_names()


def _play(
    env: gym.Env, seed: int, steps: int, rng_seed: int = 0, perturb: bool = False
) -> list[Any]:
    """Random legal play from the mask; returns everything the env emitted."""
    rng = np.random.default_rng(rng_seed)
    obs, info = env.reset(seed=seed)
    out: list[Any] = [obs.tobytes(), info["action_mask"].tobytes()]
    for _ in range(steps):
        if perturb:
            random.seed(12345)
            np.random.seed(54321)
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(
            (obs.tobytes(), float(reward), terminated, truncated, info["action_mask"].tobytes())
        )
        if terminated or truncated:
            obs, info = env.reset()
            out.append(obs.tobytes())
    return out


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("greed_env/Solitaire-v0", {"objective": "turn"}),
        ("greed_env/Solitaire-v0", {"objective": "race"}),
        ("greed_env/Duel-v0", {}),
    ],
    ids=["solitaire-turn", "solitaire-race", "duel"],
)
def test_check_env_every_preset(env_id: str, kwargs: dict[str, Any], name: str) -> None:
    env = gym.make(env_id, rules=name, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("name", PRESETS)
def test_random_play_stays_in_spaces_and_masks_are_exact(name: str) -> None:
    for env in (
        SolitaireEnv(name, objective="race"),
        DuelEnv(name, opponent="random", num_players=3),
    ):
        obs, info = env.reset(seed=5)
        rng = np.random.default_rng(5)
        for _ in range(150):
            assert env.observation_space.contains(obs)
            mask = info["action_mask"]
            assert mask.dtype == np.int8 and mask.any()
            assert np.array_equal(mask, env.action_masks())
            assert np.array_equal(mask, env.catalog.mask(env.state))
            obs, _reward, terminated, truncated, info = env.step(
                int(rng.choice(np.flatnonzero(mask)))
            )
            assert not info["illegal_action"]
            if terminated or truncated:
                assert info["action_mask"].all()  # the terminal mask
                obs, info = env.reset()


def test_ids_register_on_import() -> None:
    assert greed_env.envs.ENV_IDS.keys() <= gym.registry.keys()
    env = gym.make("greed_env/Duel-v0", rules="greed")
    assert isinstance(env.unwrapped, DuelEnv) and env.unwrapped.rules.name == "greed"


@pytest.mark.parametrize(
    "make",
    [
        lambda: SolitaireEnv("ten_thousand", objective="turn"),
        lambda: SolitaireEnv("progressive", objective="race"),
        lambda: DuelEnv("farkle", opponent="random"),
        lambda: DuelEnv("trippn", opponent="threshold:400", num_players=3),
    ],
)
def test_same_seed_same_episode_whatever_the_global_rngs(make: Any) -> None:
    a = _play(make(), seed=11, steps=120)
    b = _play(make(), seed=11, steps=120, perturb=True)
    assert a == b
    c = _play(make(), seed=12, steps=120)
    assert a != c


def test_solitaire_turn_reward_is_the_banked_points_scaled() -> None:
    env = SolitaireEnv("ten_thousand", objective="turn", reward_scale=0.01)
    rng = np.random.default_rng(0)
    banked = 0
    for episode in range(30):
        obs, info = env.reset(seed=episode)
        assert env.state is not None and env.state.entered == (True,)
        done = False
        while not done:
            mask = info["action_mask"]
            bank = env.catalog.index_of("bank")
            if mask[bank] and env.state.turn_total >= 300:
                action = bank
            else:
                legal = np.flatnonzero(mask)
                action = int(legal[legal != bank][0]) if (legal != bank).any() else bank
            total = env.state.turn_total
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        if action == bank:
            assert reward == pytest.approx(total * 0.01)
            banked += 1
        else:
            assert reward == 0.0
        assert obs[greed_env.spaces.observation.OBS_INDEX["phase_ORDER_ROLL"] + Phase.ROLL] == 1.0
    assert banked > 0
    del rng


def test_solitaire_race_return_is_minus_the_turns() -> None:
    env = SolitaireEnv("farkle", objective="race")
    bot = ThresholdBot(bank_at=350)
    env.reset(seed=3)
    total, done = 0.0, False
    rng = np.random.default_rng(0)
    while not done:
        action = env.catalog.index_of(bot.act(env.rules, env.state, rng), env.state)
        _obs, reward, terminated, truncated, _info = env.step(action)
        total += float(reward)
        done = terminated or truncated
    assert terminated and env.state.phase == Phase.OVER
    assert env.state.scores[0] >= env.rules.target
    assert total == -env.state.turns[0]


def test_race_truncates_after_max_turns() -> None:
    env = SolitaireEnv("progressive", objective="race", max_turns=3)
    _, info = env.reset(seed=0)
    total, steps = 0.0, 0
    while True:
        _obs, reward, terminated, truncated, info = env.step(
            env.catalog.index_of("bust")
            if info["action_mask"][env.catalog.index_of("bust")]
            else int(np.flatnonzero(info["action_mask"])[0])
        )
        total += float(reward)
        steps += 1
        if terminated or truncated:
            break
    assert truncated and not terminated and total == -3.0


def test_illegal_action_penalty_forfeits_the_turn() -> None:
    env = SolitaireEnv("ten_thousand", objective="turn")
    _, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[-1])
    _, reward, terminated, _, info = env.step(illegal)
    assert info["illegal_action"] and terminated and reward == -1.0

    duel = DuelEnv("zilch", opponent="random", illegal_reward=-0.5)
    _, info = duel.reset(seed=2)
    seat = info["seat"]
    streak = duel.state.streaks[seat]
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[-1])
    _obs, reward, terminated, _truncated, info = duel.step(illegal)
    assert info["illegal_action"] and not terminated and reward == -0.5
    assert duel.state.streaks[seat] == (streak + 1) % duel.rules.bust_penalty_after


def test_illegal_action_raise_mode() -> None:
    env = SolitaireEnv("ten_thousand", illegal_action="raise")
    _obs, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[-1])
    before = env.state
    with pytest.raises(IllegalMove, match="not legal"):
        env.step(illegal)
    assert env.state == before


def test_bad_arguments_get_clear_errors() -> None:
    with pytest.raises(RulesError, match="unknown rules preset"):
        SolitaireEnv("yahtzee")
    with pytest.raises(RulesError, match="unknown rules field"):
        SolitaireEnv("farkle", rules_overrides={"dice": 5})
    with pytest.raises(ValueError, match="objective"):
        SolitaireEnv("farkle", objective="sprint")
    with pytest.raises(ValueError, match="illegal_action"):
        DuelEnv("farkle", illegal_action="ignore")
    with pytest.raises(ValueError, match="num_players"):
        DuelEnv("farkle", num_players=9)
    with pytest.raises(ValueError, match="unknown"):
        DuelEnv("farkle", opponent="grandmaster-9000")
    with pytest.raises(ValueError, match="max_turns"):
        SolitaireEnv("farkle", objective="race", max_turns=10**6)
    env = SolitaireEnv("farkle")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    for bad in (-1, env.catalog.n, 0.5, "bank"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)


def test_opponent_specs_go_through_the_bot_loader() -> None:
    assert isinstance(DuelEnv("farkle", opponent="random").opponent, RandomBot)
    for spec in ("threshold:450", "threshold-450", "bot:farkle/threshold-450"):
        bot = DuelEnv("farkle", opponent=spec).opponent
        assert isinstance(bot, ThresholdBot) and bot.bank_at == 450
    with pytest.raises(ValueError, match="whole number"):
        DuelEnv("farkle", opponent="threshold:lots")
    with pytest.raises(ValueError, match="must be a Bot"):
        DuelEnv("farkle", opponent=42)  # type: ignore[arg-type]


def test_rules_overrides_and_rules_objects() -> None:
    env = SolitaireEnv("farkle", rules_overrides={"piggyback": True, "entry_threshold": 500})
    assert env.rules.piggyback and env.rules.entry_threshold == 500
    assert "piggyback" in env.catalog.summary()["kinds"]
    env2 = DuelEnv(greed_env.preset("greed"), opponent=RandomBot())
    assert env2.rules.name == "greed"


def test_duel_several_players_fixed_seat_and_rewards() -> None:
    env = DuelEnv("ten_thousand", opponent="threshold:300", num_players=4, seat=2)
    rng = np.random.default_rng(0)
    results = []
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        assert info["seat"] == 2 and env.state.player == 2
        assert obs[greed_env.spaces.observation.OBS_INDEX["seat_present_3"]] == 1.0
        assert obs[greed_env.spaces.observation.OBS_INDEX["seat_present_4"]] == 0.0
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, done, _, info = env.step(action)
        results.append(reward)
        assert reward in (-1.0, 3.0, 1.0, 1 / 3, 0.0)
    seats = {DuelEnv("farkle").reset(seed=s)[1]["seat"] for s in range(12)}
    assert seats == {0, 1}


def test_render_modes(capsys: pytest.CaptureFixture[str]) -> None:
    env = DuelEnv("progressive", render_mode="ansi", opponent="random")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "scores:" in text and "(you)" in text and "working:" in text
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert "last:" in env.render()
    human = SolitaireEnv("ten_thousand", render_mode="human")
    human.reset(seed=0)
    assert "roll:" in capsys.readouterr().out
    with pytest.raises(ValueError, match="render_mode"):
        SolitaireEnv("ten_thousand", render_mode="rgb")


def test_observation_shape_is_the_same_for_every_preset() -> None:
    for name in PRESETS:
        env = SolitaireEnv(name)
        assert env.observation_space.shape == (OBS_DIM,)
        assert env.observation_space.dtype == np.float32
