"""Simulated turn value of a checkpoint on the native vector engine (fast, with a 95% CI).

``greed eval --exact`` enumerates every roll a policy can meet, which takes minutes for an
eight-dice Progressive policy; this plays ``--turns`` turns of ``Solitaire-v0`` (objective
``turn``) in batches on the numba engine with the checkpoint's greedy policy (its
:class:`~greed_env.bots.numpy_backend.NumpyPolicy`), and prints the mean points per turn, its
95% CI and the share of the solver's optimum. Used to compare training runs at equal steps
when CPU time is short, and where the enumeration is out of reach (a Trippn turn meets
millions of positions).

Each of the ``--num-envs`` games counts its first ``--turns / --num-envs`` turns (rounded up):
taking the first turns to *finish* instead would leave out the longest ones still running when
the count is reached, and long turns are the high-scoring ones.

With ``--teacher-arrays`` (the saved turn value arrays of ``greed train ppo_teacher_turn``,
:class:`~greed_env.train.teacher.TurnValueArrays`) every decision is also scored with the
optimal turn's move values, and the script prints the *regret estimate* of the policy's turn
value: the optimum less the mean, over the turns, of the points each turn's decisions gave up
(the value of the best move less that of the move played, summed over the turn). By the
performance-difference identity its expectation is the policy's exact turn value, and since
most decisions give up nothing its interval is a small fraction of the simulated mean's (a
Trippn turn's points spread with a standard deviation of about 4,400).

Usage::

    python scripts/fast_turn_eval.py runs/prog/prog_parts_1/checkpoints/step_000000065536.zip \
        --rules progressive --turns 20000 --optimal 2171.2075
    python scripts/fast_turn_eval.py runs/trippn_2/model.zip --rules trippn --turns 4000 \
        --optimal 4429.8042 --teacher-arrays trippn_turn.npz
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np

from greed_env.bots.loader import load
from greed_env.bots.numpy_backend import load_policy
from greed_env.rules import Rules, preset
from greed_env.train.teacher import TeacherLabeller, TurnValueArrays
from greed_env.vector.sb3 import make_sb3_vec_env


def _greedy(spec: str, rules: Rules) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The greedy masked actions of a batch under the model or bot ``spec``."""
    if spec.endswith((".zip", ".npz")):
        return load_policy(spec, rules).act
    bot = load(spec, rules=rules)
    if not hasattr(bot, "act_batch") or not hasattr(bot, "logits"):
        raise SystemExit(f"{spec}: not a model file or a network bot")
    return bot.act_batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="model zips (or .npz policies), or ONNX bot ids / card files")
    ap.add_argument("--rules", default="progressive")
    ap.add_argument("--turns", type=int, default=20_000)
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument(
        "--optimal", type=float, required=True, help="the solver's turn optimum (docs/results.md)"
    )
    ap.add_argument("--teacher-arrays", default="", help="turn value arrays: also the regret estimate")
    args = ap.parse_args()
    rules = preset(args.rules)
    labeller = None
    if args.teacher_arrays:
        labeller = TeacherLabeller(rules, "turn", arrays=TurnValueArrays.load(args.teacher_arrays, rules))
    optimal = args.optimal
    per_env = -(-args.turns // args.num_envs)
    for path in args.models:
        act = _greedy(path, rules)
        venv = make_sb3_vec_env(
            "greed_env/Solitaire-v0",
            args.num_envs,
            seed=args.seed,
            rules=args.rules,
            reward_scale=1.0,
        )
        venv.seed(args.seed)
        obs = venv.reset()
        batch = venv.env.batch
        running = np.zeros(args.num_envs)
        lost = np.zeros(args.num_envs)
        counted = np.zeros(args.num_envs, dtype=np.int64)
        done_totals: list[float] = []
        done_lost: list[float] = []
        unvalued = decisions = 0
        while (counted < per_env).any():
            masks = venv.action_masks()
            actions = act(obs, masks)
            if labeller is not None:
                for i, got in enumerate(labeller.values(batch.S.copy(), masks)):
                    decisions += 1
                    if got is None:
                        unvalued += 1
                        continue
                    ids, values = got
                    lost[i] += float(values.max() - values[ids == actions[i]][0])
            obs, rewards, dones, _ = venv.step(actions)
            running += rewards
            for i in np.flatnonzero(dones):
                if counted[i] < per_env:
                    done_totals.append(running[i])
                    done_lost.append(lost[i])
                    counted[i] += 1
                running[i] = lost[i] = 0.0
        venv.close()
        vals = np.asarray(done_totals)
        mean, ci = vals.mean(), 1.96 * vals.std(ddof=1) / math.sqrt(len(vals))
        print(
            f"{path}: {mean:.1f} ± {ci:.1f} points per turn ({len(vals)} turns), "
            f"{100 * mean / optimal:.2f}% of {optimal:.2f} (± {100 * ci / optimal:.2f})"
        )
        if labeller is not None:
            gave = np.asarray(done_lost)
            est, eci = optimal - gave.mean(), 1.96 * gave.std(ddof=1) / math.sqrt(len(gave))
            print(
                f"  regret estimate: {est:.1f} ± {eci:.1f} points per turn, {100 * est / optimal:.2f}% "
                f"(± {100 * eci / optimal:.2f}); {decisions:,} decisions, {unvalued} not valued"
            )


if __name__ == "__main__":
    main()
