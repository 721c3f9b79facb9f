"""The pieces fit sb3-contrib's MaskablePPO with no wrapper (no claim about learning quality)."""

from __future__ import annotations

import numpy as np
import sb3_contrib


def test_maskable_ppo_runs_on_solitaire_turn() -> None:
    import gymnasium as gym
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    import greed_env  # noqa: F401

    vec = make_vec_env(
        "greed_env/Solitaire-v0",
        n_envs=1,
        seed=0,
        env_kwargs={"rules": "ten_thousand", "render_mode": None},
    )
    assert is_masking_supported(vec)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        vec,
        n_steps=512,
        batch_size=256,
        n_epochs=1,
        policy_kwargs={"net_arch": [32, 32]},
        seed=0,
        verbose=0,
        device="cpu",
    )
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048

    env = gym.make("greed_env/Solitaire-v0", rules="ten_thousand")
    obs, info = env.reset(seed=1)
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=get_action_masks(env), deterministic=True)
        assert info["action_mask"][int(action)] == 1
        obs, reward, terminated, truncated, info = env.step(int(action))
        assert not info["illegal_action"]
        if terminated or truncated:
            obs, info = env.reset()
    assert np.isfinite(reward)
