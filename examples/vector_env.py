"""Thousands of games in lockstep: the native vector environment, then MaskablePPO on it.

Part 1 plays random legal moves in ``SolitaireVectorEnv`` (whole games: objective ``race``)
and prints decisions per second. Part 2 trains sb3-contrib's MaskablePPO on the same engine
through the Stable-Baselines3 ``VecEnv`` (``make_sb3_vec_env``), which needs no wrapper for
the masks, and prints the mean points per turn of the greedy policy on fresh episodes:

    python examples/vector_env.py --envs 4096 --timesteps 200000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from greed_env.vector import SolitaireVectorEnv


def random_play(num_envs: int, steps: int, seed: int) -> None:
    envs = SolitaireVectorEnv(num_envs, rules="ten_thousand", objective="race")
    envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    games = 0
    start = time.perf_counter()
    for _ in range(steps):
        terminated = envs.step(envs.sample_legal_actions(rng))[2]
        games += int(terminated.sum())
    rate = num_envs * steps / (time.perf_counter() - start)
    print(
        f"random play, {num_envs} games in lockstep: {rate:,.0f} decisions/s, {games} games finished"
    )


def train(num_envs: int, timesteps: int, seed: int) -> None:
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from greed_env.vector.sb3 import make_sb3_vec_env

    torch.set_num_threads(1)
    venv = make_sb3_vec_env("greed_env/Solitaire-v0", num_envs, seed=seed, objective="turn")
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=max(8, 2048 // num_envs), batch_size=512, gamma=1.0, seed=seed
    )
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    elapsed = time.perf_counter() - start
    test = make_sb3_vec_env("greed_env/Solitaire-v0", 512, seed=seed + 1, objective="turn")
    obs = test.reset()
    points = np.zeros(512)
    open_rows = np.ones(512, dtype=bool)
    while open_rows.any():
        actions, _ = model.predict(obs, action_masks=get_action_masks(test), deterministic=True)
        obs, rewards, dones, _ = test.step(actions)
        points[open_rows] += 1000.0 * rewards[open_rows]
        open_rows &= ~dones
    print(
        f"MaskablePPO: {model.num_timesteps} steps in {elapsed:.1f} s "
        f"({model.num_timesteps / elapsed:,.0f} steps/s); greedy policy: "
        f"{points.mean():.0f} points per turn on 512 fresh turns"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=4096, help="games stepped together (part 1)")
    ap.add_argument("--steps", type=int, default=100, help="lockstep steps of random play")
    ap.add_argument("--train-envs", type=int, default=64, help="environments of the PPO run")
    ap.add_argument("--timesteps", type=int, default=20_000, help="PPO environment steps (0: skip)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    random_play(args.envs, args.steps, args.seed)
    if args.timesteps:
        train(args.train_envs, args.timesteps, args.seed)


if __name__ == "__main__":
    main()
