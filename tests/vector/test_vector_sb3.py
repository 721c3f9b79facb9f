"""The native vector env as a Stable-Baselines3 VecEnv: masks, autoreset infos, MaskablePPO."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.vec_env import VecMonitor

import greed_env.envs  # noqa: F401
from greed_env.vector.sb3 import (
    GreedSB3VecEnv,
    make_sb3_vec_env,
    sb3_vec_env_from_env_fns,
)


def test_masks_and_terminal_observations_follow_sb3_conventions() -> None:
    venv = make_sb3_vec_env("greed_env/Solitaire-v0", 16, seed=3, objective="turn")
    assert is_masking_supported(venv)
    obs = venv.reset()
    assert obs.shape == (16, 106) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(30):
        masks = get_action_masks(venv)
        np.testing.assert_array_equal(masks, venv.action_masks())
        assert masks.shape == (16, venv.action_space.n) and np.all(masks.sum(axis=1) > 0)
        obs, rewards, dones, infos = venv.step(venv.env.sample_legal_actions(rng))
        assert rewards.dtype == np.float32 and dones.dtype == np.bool_
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (106,)
            assert infos[i]["TimeLimit.truncated"] is False
            ended += 1
    assert ended > 0


def test_backend_from_env_factories_reads_the_gym_make_spec() -> None:
    fns = [
        functools.partial(gym.make, "greed_env/Duel-v0", rules="farkle", opponent="random")
        for _ in range(4)
    ]
    venv = sb3_vec_env_from_env_fns(fns)
    assert isinstance(venv, GreedSB3VecEnv) and venv.num_envs == 4
    assert venv.env.rules.name == "farkle"
    with pytest.raises(ValueError, match="native vector env needs"):
        sb3_vec_env_from_env_fns([functools.partial(gym.make, "CartPole-v1")])


def test_maskable_ppo_trains_on_the_native_vector_env() -> None:
    venv = VecMonitor(make_sb3_vec_env("greed_env/Solitaire-v0", 32, seed=0))
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=16, batch_size=128, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=get_action_masks(venv), deterministic=True)
    assert np.all(get_action_masks(venv)[np.arange(32), actions] == 1)
