"""Regret estimates of several duel models and of their ensemble (logits averaged).

Each model, and the policy whose logits are the mean of theirs (deterministic arg-max over the
legal moves, as every policy bot here), plays ``--games`` games of evaluation seed ``--seed``
against ``optimal-duel`` with the solver's regret of every decision measured, and the estimate
``0.5 - mean regret per game`` is printed (``greed eval --regret-episodes``, and the final
evaluation of ``training/ppo_duel.py``). All use the same games, so differences between the rows
are tighter than each row's interval.

Usage::

    python benchmarks/duel_ensemble.py runs/ten_thousand__duel__elamx5__{1,2,3}/model.zip

An ensemble costs the training CPU of all its members; ``docs/results.md`` reports what
averaging three seeds' models gains at each stage of the duel recipe.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

import numpy as np

from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot, load_policy
from greed_env.evaluation import evaluate
from greed_env.rules import Rules, preset


class MeanLogits(NumpyPolicy):
    """A policy whose logits are the mean of its members' (same rules, same action ids)."""

    def __init__(self, members: Sequence[NumpyPolicy]) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one member")
        first = members[0]
        if any(m.n_actions != first.n_actions or m.obs_dim != first.obs_dim for m in members):
            raise ValueError("ensemble members read different observations or act on different action sets")
        super().__init__(first.layers, first.head, first.activation, first.meta, first.features)
        self.members = list(members)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        return np.mean([m.logits(obs) for m in self.members], axis=0)


def estimate(policy: NumpyPolicy, rules: Rules, games: int, seed: int, name: str) -> tuple[float, float]:
    """``(estimate, 95% half-width)`` of ``0.5 - regret per game`` over ``games`` games."""
    res = evaluate(PolicyBot(policy, rules, name=name), rules, "duel", episodes=games, seed=seed, regret_episodes=games)
    if res.regret_estimate is None:
        raise RuntimeError("the evaluation measured no regret")
    return res.regret_estimate.mean, res.regret_estimate.half_width


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="model files (.zip or .npz) of one rules set")
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=5)
    ns = ap.parse_args(argv)
    rules = preset(ns.rules)
    members = [load_policy(p, rules) for p in ns.models]
    rows = [(p, estimate(pol, rules, ns.games, ns.seed, p)) for p, pol in zip(ns.models, members, strict=True)]
    ens = estimate(MeanLogits(members), rules, ns.games, ns.seed, "ensemble")
    print(f"0.5 - regret per game against optimal-duel, {ns.games:,} games of evaluation seed {ns.seed}\n")
    print("| policy | estimate (95% CI) |\n|---|---|")
    for path, (mean, half) in rows:
        print(f"| {path} | {100 * mean:.2f}% ± {100 * half:.2f} |")
    avg = statistics.fmean(mean for _, (mean, _) in rows)
    print(f"| members' mean | {100 * avg:.2f}% |")
    print(f"| ensemble (mean logits) | {100 * ens[0]:.2f}% ± {100 * ens[1]:.2f} ({100 * (ens[0] - avg):+.2f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
