"""Train sb3-contrib's MaskablePPO on ``greed_env/Solitaire-v0`` (one turn of ten_thousand).

The environment exposes ``action_masks()``, so MaskablePPO needs no wrapper. A few thousand
steps take seconds; pass a larger number for a useful policy:

    python examples/train_maskable_ppo.py --steps 200000
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO

import greed_env  # noqa: F401  (registers the greed_env/* ids)


def evaluate(model: MaskablePPO, episodes: int, seed: int) -> tuple[float, float]:
    """Mean points per turn of the deterministic masked policy, and its standard error."""
    env = gym.make("greed_env/Solitaire-v0", rules="ten_thousand", objective="turn")
    returns = []
    for k in range(episodes):
        obs, info = env.reset(seed=seed + k)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
            obs, reward, terminated, truncated, info = env.step(int(action))
            total += float(reward)
            done = terminated or truncated
        returns.append(total * 1000.0)
    arr = np.asarray(returns)
    return float(arr.mean()), float(arr.std(ddof=1) / np.sqrt(len(arr)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4096, help="environment steps to train")
    ap.add_argument("--episodes", type=int, default=200, help="evaluation turns")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.set_num_threads(1)  # small MLPs: extra threads only contend on a few CPU cores
    env = gym.make("greed_env/Solitaire-v0", rules="ten_thousand", objective="turn")
    model = MaskablePPO("MlpPolicy", env, n_steps=1024, batch_size=256, gamma=1.0, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.steps)
    mean, se = evaluate(model, args.episodes, seed=10_000 + args.seed)
    print(f"trained {args.steps} steps: {mean:.1f} +- {1.96 * se:.1f} points per turn (95% CI)")


if __name__ == "__main__":
    main()
