"""The environments with the libraries people plug them into: copies that continue, a terminal
mask no sampler chokes on, masks inside the observation, pictures, videos, SB3 and TorchRL."""

from __future__ import annotations

import copy
import functools
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import greed_env
from greed_env.envs.gym_base import MASK_IN_OBS_KEYS
from greed_env.pettingzoo import greed_v0
from greed_env.rules import preset_names
from greed_env.vector.gym_env import make_vector_env

SINGLE_ENVS: dict[str, tuple[str, dict[str, Any]]] = {
    "solitaire-turn": ("greed_env/Solitaire-v0", {"rules": "ten_thousand"}),
    "solitaire-race": ("greed_env/Solitaire-v0", {"rules": "farkle", "objective": "race"}),
    "duel-threshold": ("greed_env/Duel-v0", {"rules": "greed"}),
    "duel-random-3": ("greed_env/Duel-v0", {"rules": "progressive", "opponent": "random", "num_players": 3}),
}


def _legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


# ------------------------------------------------------------------------------------------
# copies


def _continue_gym(env: gym.Env, steps: int, seed: int) -> list[Any]:
    """Play ``steps`` legal actions from wherever ``env`` is, resetting after each ending."""
    rng = np.random.default_rng(seed)
    trace: list[Any] = []
    mask = env.unwrapped.action_masks()
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(_legal(mask, rng))
        trace.append((obs, reward, terminated, truncated, info["action_mask"]))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append(obs)
        mask = info["action_mask"]
    return trace


@pytest.mark.parametrize("case", sorted(SINGLE_ENVS))
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_gym_env_copy_continues_identically(case: str, how: str) -> None:
    env_id, kwargs = SINGLE_ENVS[case]
    env = gym.make(env_id, **kwargs)
    env.reset(seed=7)
    _continue_gym(env, 5, seed=1)
    clone = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    original, copied = _continue_gym(env, 40, seed=2), _continue_gym(clone, 40, seed=2)
    assert all(_same(a, b) for a, b in zip(original, copied, strict=True))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_pettingzoo_env_copy_continues_identically(how: str) -> None:
    def play(e: Any, steps: int, seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        trace = []
        for _ in range(steps):
            obs, reward, term, trunc, _info = e.last()
            action = None if term or trunc else _legal(obs["action_mask"], rng)
            e.step(action)
            trace.append((e.agent_selection, obs, reward, term))
            if not e.agents:
                e.reset()
        return trace

    env = greed_v0.env(rules="ten_thousand", num_players=3)
    env.reset(seed=3)
    play(env, 6, seed=1)
    clone = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    assert clone.unwrapped.game == env.unwrapped.game
    assert all(_same(a, b) for a, b in zip(play(env, 60, 2), play(clone, 60, 2), strict=True))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("kind", ["native", "sync"])
def test_vector_env_copy_continues_identically(kind: str, how: str) -> None:
    if kind == "native":
        envs: Any = make_vector_env("duel", 3, rules="farkle", opponent="random")
    else:
        # a list of picklable makers; gym.make_vec(mode="sync") keeps a generator, which
        # Gymnasium itself cannot pickle
        maker = functools.partial(gym.make, "greed_env/Solitaire-v0", rules="ten_thousand")
        envs = SyncVectorEnv([maker, maker])
    _obs, infos = envs.reset(seed=11)
    mask = _continue_vector_from(envs, infos["action_mask"], 4, seed=1)[-1][-1]
    clone = pickle.loads(pickle.dumps(envs)) if how == "pickle" else copy.deepcopy(envs)
    a = _continue_vector_from(envs, mask, 30, seed=2)
    b = _continue_vector_from(clone, mask, 30, seed=2)
    assert all(_same(x, y) for x, y in zip(a, b, strict=True))


def _continue_vector_from(envs: Any, mask: np.ndarray, steps: int, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        actions = np.array([_legal(m, rng) for m in mask])
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        mask = infos["action_mask"]
        trace.append((obs, rewards, terminated, truncated, mask))
    return trace


# ------------------------------------------------------------------------------------------
# the terminal mask


def _vector(mode: str, env_id: str) -> Any:
    if mode == "native-next":
        return gym.make_vec(
            env_id, 4, vectorization_mode="vector_entry_point", autoreset_mode=AutoresetMode.NEXT_STEP
        )
    if mode == "native-same":
        return gym.make_vec(env_id, 4, vectorization_mode="vector_entry_point")
    return gym.make_vec(env_id, 4, vectorization_mode=mode)


@pytest.mark.parametrize("mode", ["sync", "async", "native-next", "native-same"])
@pytest.mark.parametrize("env_id", ["greed_env/Solitaire-v0", "greed_env/Duel-v0"])
def test_no_row_of_any_vector_env_has_an_empty_mask(mode: str, env_id: str) -> None:
    envs = _vector(mode, env_id)
    try:
        _obs, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        ended = 0
        for _ in range(150):
            mask = infos["action_mask"]
            assert mask.dtype == np.int8 and (mask.sum(axis=1) > 0).all()
            _obs, _r, terminated, truncated, infos = envs.step(
                np.array([_legal(m, rng) for m in mask])
            )
            done = terminated | truncated
            ended += int(done.sum())
            if mode in ("sync", "async", "native-next"):
                # next-step autoreset: the ended rows show the terminal mask, all ones
                assert infos["action_mask"][done].all()
            elif done.any():
                assert infos["final_info"]["action_mask"][done].all()
        assert ended > 0
    finally:
        envs.close()


def test_single_env_terminal_mask_is_all_ones_and_catalog_mask_stays_exact() -> None:
    env = gym.make("greed_env/Solitaire-v0")
    _obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    terminated = truncated = False
    while not (terminated or truncated):
        _obs, _r, terminated, truncated, info = env.step(_legal(info["action_mask"], rng))
    core = env.unwrapped
    assert info["action_mask"].all() and core.action_masks().all()
    assert not core.catalog.mask(core.state).any()
    with pytest.raises(gym.error.ResetNeeded):
        core.step(0)


# ------------------------------------------------------------------------------------------
# masks inside the observation


@pytest.mark.parametrize("convention", [True, *MASK_IN_OBS_KEYS])
def test_mask_in_obs_dict_observations(convention: bool | str) -> None:
    obs_key, mask_key = MASK_IN_OBS_KEYS["pettingzoo" if convention is True else convention]
    for env_id in ("greed_env/Solitaire-v0", "greed_env/Duel-v0"):
        env = gym.make(env_id, mask_in_obs=convention)
        assert set(env.observation_space.spaces) == {obs_key, mask_key}
        obs, info = env.reset(seed=2)
        rng = np.random.default_rng(2)
        for _ in range(30):
            assert env.observation_space.contains(obs)
            assert np.array_equal(obs[mask_key], info["action_mask"])
            obs, _r, terminated, truncated, info = env.step(_legal(obs[mask_key], rng))
            if terminated or truncated:
                assert obs[mask_key].all()
                obs, info = env.reset()


def test_mask_in_obs_passes_check_env_and_keeps_the_default() -> None:
    check_env(gym.make("greed_env/Duel-v0", mask_in_obs=True).unwrapped, skip_render_check=True)
    plain = gym.make("greed_env/Solitaire-v0")
    assert isinstance(plain.observation_space, gym.spaces.Box)
    with pytest.raises(ValueError, match="mask_in_obs must be"):
        gym.make("greed_env/Solitaire-v0", mask_in_obs="keras")


def test_native_vector_env_mask_in_obs_matches_infos() -> None:
    envs = make_vector_env("solitaire", 3, mask_in_obs="tianshou")
    obs, infos = envs.reset(seed=0)
    assert set(obs) == {"obs", "mask"} and obs["obs"].shape == (3, greed_env.spaces.OBS_DIM)
    assert np.array_equal(obs["mask"], infos["action_mask"])
    assert envs.single_observation_space.contains({k: v[0] for k, v in obs.items()})


# ------------------------------------------------------------------------------------------
# pictures


def _frames(env: Any, steps: int, seed: int) -> list[np.ndarray]:
    _obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames = [env.render()]
    for _ in range(steps):
        _obs, _r, terminated, truncated, info = env.step(_legal(info["action_mask"], rng))
        frames.append(env.render())
        if terminated or truncated:
            break
    return frames


@pytest.mark.parametrize("rules", preset_names())
def test_rgb_array_render_of_every_preset(rules: str) -> None:
    for env_id, extra in (
        ("greed_env/Solitaire-v0", {}),
        ("greed_env/Duel-v0", {"opponent": "random", "num_players": 5}),
    ):
        env = gym.make(env_id, rules=rules, render_mode="rgb_array", **extra)
        frames = _frames(env, 6, 4)
        assert len({f.shape for f in frames}) == 1, "every frame of an env has one size"
        frame = frames[0]
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        assert len({f.tobytes() for f in frames}) > 1, "the picture follows the game"


def test_pettingzoo_rgb_array_render() -> None:
    env = greed_v0.env(rules="progressive", num_players=2, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    rng = np.random.default_rng(0)
    for _ in range(4):
        obs, *_ = env.last()
        env.step(_legal(obs["action_mask"], rng))
    assert first.shape == env.render().shape and first.dtype == np.uint8
    assert not np.array_equal(first, env.render())


def test_pettingzoo_render_test_passes_every_mode(capsys: pytest.CaptureFixture[str]) -> None:
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: greed_v0.env(render_mode=render_mode))
    assert "scores:" in capsys.readouterr().out  # the human mode printed the table


def test_text_render_lists_the_turns_keeps_in_tap_order() -> None:
    env = gym.make("greed_env/Solitaire-v0", rules="progressive", render_mode="ansi")
    _obs, info = env.reset(seed=5)
    core = env.unwrapped
    keeps = [a for a in np.flatnonzero(info["action_mask"]) if core.catalog.entries[a].kind == "keep"]
    move = core.catalog.action_to_move(core.state, int(keeps[-1]))
    env.step(int(keeps[-1]))
    text = env.render()
    assert "kept:   " + ",".join(map(str, move.taps)) in text


def test_import_greed_env_does_not_import_pillow() -> None:
    code = (
        "import sys, gymnasium as gym, greed_env\n"
        "e = gym.make('greed_env/Solitaire-v0', render_mode='rgb_array'); e.reset(seed=0)\n"
        "assert 'PIL' not in sys.modules, 'PIL imported'\n"
        "e.render(); assert 'PIL' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_record_video_writes_a_solitaire_episode(tmp_path: Path) -> None:
    # RecordVideo writes through moviepy (the video extra, in dev)
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(
        gym.make("greed_env/Solitaire-v0", render_mode="rgb_array"),
        str(tmp_path / "videos"),
        episode_trigger=lambda _episode: True,
        disable_logger=True,
    )
    _obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _obs, _r, terminated, truncated, info = env.step(_legal(info["action_mask"], rng))
        done = terminated or truncated
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


# ------------------------------------------------------------------------------------------
# other libraries, with their defaults


SB3_SCRIPT = """
import greed_env  # registers the ids; SubprocVecEnv's forkserver imports this script too
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

if __name__ == "__main__":
    vec = make_vec_env("greed_env/Solitaire-v0", n_envs=2, vec_env_cls=SubprocVecEnv)
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(128)
    frame = vec.render()
    print(vec.render_mode, model.num_timesteps, frame.dtype)
    vec.close()
"""


def test_sb3_make_vec_env_defaults_with_subprocesses_train_maskable_ppo(tmp_path: Path) -> None:
    # a script, as users run it: the workers find the ids because the forkserver imports the
    # main module (which imports greed_env)
    script = tmp_path / "train_sb3.py"
    script.write_text(SB3_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["rgb_array", "128", "uint8"]


@pytest.mark.parametrize("env_id", ["greed_env/Solitaire-v0", "greed_env/Duel-v0"])
def test_torchrl_check_env_specs_passes_every_seed(env_id: str) -> None:
    from torchrl.envs import GymEnv, TransformedEnv
    from torchrl.envs.transforms import ActionMask
    from torchrl.envs.utils import check_env_specs

    for seed in range(20):
        env = TransformedEnv(GymEnv(env_id, mask_in_obs=True), ActionMask())
        check_env_specs(env, seed=seed)
        env.close()
