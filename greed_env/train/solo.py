"""Solitaire: MaskablePPO on ``greed_env/Solitaire-v0``, one turn or a race to the target.

``turn``: each episode is one turn of a player already on the board; the return is the
points banked (times ``reward_scale``), so with ``gamma = 1`` the value of the start is the
expected turn score and the optimum is the solver's table value. ``--entry-starts F`` starts a
share ``F`` of them off the board instead (the turn must reach the entry threshold before it
may bank), as every game's first turns are; evaluations stay on the board. ``race``: -1 per turn until the
target is reached; the optimum is the solver's expected number of turns.

Example::

    greed train solo --objective turn --total-timesteps 300000
    greed train solo --objective race --resume
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import gymnasium as gym

from greed_env.train.args import PPOArgs, rules_from_args, run_script

if TYPE_CHECKING:
    from stable_baselines3.common.vec_env import VecEnv

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.evaluation import EvalResult
    from greed_env.rules import Rules

SCRIPT = "greed_env.train.solo"


@dataclass
class Args(PPOArgs):
    """Train a MaskablePPO agent on greed_env/Solitaire-v0 (objective 'turn' or 'race')."""

    objective: Literal["turn", "race"] = "turn"
    """'turn': maximise the points of one turn; 'race': minimise the turns to the target"""
    reward_scale: float = 1e-3
    """points-to-reward factor of the 'turn' objective (0.001: a 500-point bank is +0.5)"""
    total_timesteps: int = 1_000_000
    """total environment steps (decisions of the learner) of the run"""
    entry_starts: float = 0.0
    """objective 'turn': share of the episodes that start not yet on the board, so the turn
    must reach the rules' entry threshold before it may bank (needs --vector native;
    greed_env.train.curriculum.EntryStarts); evaluations stay on-the-board turns"""
    keep_starts: float = 0.0
    """objective 'turn': share of the episodes that start after a uniformly random legal move at
    the first roll's keep (needs --vector native; greed_env.train.curriculum.KeepStarts), so
    the positions every first keep leads to are trained whatever the policy keeps; evaluations
    play whole turns"""
    race_starts: float = 0.0
    """objective 'race': share of the races that start from a banked score drawn uniformly below
    the target instead of 0 (needs --vector native; greed_env.train.curriculum.RaceStarts), so
    the endgame, landing on an exact target above all, is trained from the first update;
    evaluations run whole races"""
    race_starts_near: float = 0.0
    """share of the --race-starts drawn within the last fifth below the target (the landing)"""
    eval_exact: bool = True
    """objective 'turn': also compute each evaluated policy's exact expected turn score by
    enumerating every roll it can meet (greed_env.policy_value; seconds of CPU, no noise;
    skipped for policies whose turns reach over 10**6 positions, e.g. untrained ones)"""


def make_env(rules: Rules, objective: str, reward_scale: float) -> gym.Env:
    """One ``Solitaire-v0`` environment (module-level, so subprocess workers can build it)."""
    import greed_env.envs  # noqa: F401  (registers the ids)

    return gym.make(
        "greed_env/Solitaire-v0", rules=rules, objective=objective, reward_scale=reward_scale
    )


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run; returns its directory."""
    from greed_env.bots.numpy_backend import PolicyBot
    from greed_env.evaluation import evaluate
    from greed_env.train.loop import run_training

    rules = rules_from_args(args.rules, args.rules_set)

    def env_fns(seed: int, run_dir: Path) -> list[functools.partial[gym.Env]]:
        return [
            functools.partial(make_env, rules, args.objective, args.reward_scale)
            for _ in range(args.num_envs)
        ]

    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            args.objective,
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes),
            exact=args.eval_exact and args.objective == "turn",
            exact_max_positions=1_000_000,  # an untrained policy that keeps rolling: skipped
        )

    if args.entry_starts and (args.objective != "turn" or args.vector != "native"):
        raise SystemExit("--entry-starts needs --objective turn and --vector native")
    if args.keep_starts and (args.objective != "turn" or args.vector != "native"):
        raise SystemExit("--keep-starts needs --objective turn and --vector native")
    if args.race_starts and (args.objective != "race" or args.vector != "native"):
        raise SystemExit("--race-starts needs --objective race and --vector native")
    if args.race_starts_near and not args.race_starts:
        raise SystemExit("--race-starts-near needs --race-starts")

    def wrap(venv: VecEnv) -> VecEnv:
        if args.entry_starts:
            from greed_env.train.curriculum import EntryStarts

            venv = EntryStarts(venv, args.entry_starts, seed=args.seed + 7919)
        if args.keep_starts:
            from greed_env.train.curriculum import KeepStarts

            venv = KeepStarts(venv, args.keep_starts, seed=args.seed + 104729)
        if args.race_starts:
            from greed_env.train.curriculum import RaceStarts

            venv = RaceStarts(venv, args.race_starts, seed=args.seed + 130363, near=args.race_starts_near)
        return venv

    return run_training(
        args,
        script=SCRIPT,
        rules=rules,
        objective=args.objective,
        env_fns=env_fns,
        evaluate_policy=functools.partial(evaluate_policy, episodes=args.eval_episodes),
        final_evaluate=functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        card_extra={
            "entry_starts": args.entry_starts,
            **({"keep_starts": args.keep_starts} if args.keep_starts else {}),
            **({"race_starts": args.race_starts, "race_starts_near": args.race_starts_near} if args.race_starts else {}),
        },
        wrap_venv=wrap,
    )


def cli(argv: Sequence[str] | None = None) -> int:
    return run_script(main, Args, argv, prog="greed train solo")


if __name__ == "__main__":
    sys.exit(cli())
