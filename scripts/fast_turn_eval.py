"""Simulated turn value of a checkpoint on the native vector engine (fast, with a 95% CI).

``greed eval --exact`` enumerates every roll a policy can meet, which takes minutes for an
eight-dice Progressive policy; this plays ``--turns`` turns of ``Solitaire-v0`` (objective
``turn``) in batches on the numba engine with the checkpoint's greedy policy (its
:class:`~greed_env.bots.numpy_backend.NumpyPolicy`), and prints the mean points per turn, its
95% CI and the share of the solver's optimum. Used to compare training runs at equal steps
when CPU time is short.

Usage::

    python scripts/fast_turn_eval.py runs/prog/prog_parts_1/checkpoints/step_000000065536.zip \
        --rules progressive --turns 20000 --optimal 2171.2075
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from sb3_contrib import MaskablePPO

from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.vector.sb3 import make_sb3_vec_env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="model zips")
    ap.add_argument("--rules", default="progressive")
    ap.add_argument("--turns", type=int, default=20_000)
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument(
        "--optimal", type=float, required=True, help="the solver's turn optimum (docs/results.md)"
    )
    args = ap.parse_args()
    optimal = args.optimal
    for path in args.models:
        policy = NumpyPolicy.from_sb3(MaskablePPO.load(path, device="cpu"))
        venv = make_sb3_vec_env(
            "greed_env/Solitaire-v0",
            args.num_envs,
            seed=args.seed,
            rules=args.rules,
            reward_scale=1.0,
        )
        venv.seed(args.seed)
        obs = venv.reset()
        running = np.zeros(args.num_envs)
        done_totals: list[float] = []
        while len(done_totals) < args.turns:
            actions = policy.act(obs, venv.action_masks())
            obs, rewards, dones, _ = venv.step(actions)
            running += rewards
            for i in np.flatnonzero(dones):
                done_totals.append(running[i])
                running[i] = 0.0
        venv.close()
        vals = np.asarray(done_totals[: args.turns])
        mean, ci = vals.mean(), 1.96 * vals.std(ddof=1) / math.sqrt(len(vals))
        print(
            f"{path}: {mean:.1f} ± {ci:.1f} points per turn ({len(vals)} turns), "
            f"{100 * mean / optimal:.2f}% of {optimal:.2f} (± {100 * ci / optimal:.2f})"
        )


if __name__ == "__main__":
    main()
