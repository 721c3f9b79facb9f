"""Self-play: one shared MaskablePPO policy against a pool of its own past snapshots.

2-8 players on the PettingZoo ``greed_v0`` game, seen through
:class:`~greed_env.train.selfplay_env.SelfPlayEnv`: the learner takes a random seat and the other
seats are played by snapshots of the learner saved every ``--snapshot-every`` steps into
``<run>/pool`` (the newest ``--pool-size`` stay in play). Evaluations: with two players, win
rate against the solver's optimal duel bot (optimum one half, regret measured); with more,
win share against ``--eval-opponent`` bots in every other seat (fair share ``1/players``).

Example::

    greed train selfplay --num-players 2 --total-timesteps 3000000
    greed train selfplay --num-players 4 --eval-opponent threshold:400
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from greed_env.train.args import PPOArgs, rules_from_args, run_script

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.evaluation import EvalResult
    from greed_env.rules import Rules

SCRIPT = "greed_env.train.selfplay"


@dataclass
class Args(PPOArgs):
    """Train one MaskablePPO policy by self-play against a pool of its past snapshots."""

    num_players: int = 2
    """players per game (2-8)"""
    snapshot_every: int = 50_000
    """environment steps between snapshots added to the opponent pool"""
    pool_size: int = 10
    """newest snapshots kept in the opponent pool"""
    latest_prob: float = 0.5
    """probability that an opponent seat plays the newest snapshot (else a uniform pick)"""
    eval_opponent: str = "optimal"
    """evaluation opponent: 'optimal' for two players, else a bot spec such as 'threshold:400'"""
    total_timesteps: int = 3_000_000
    """total environment steps (decisions of the learner) of the run"""
    num_steps: int = 1024
    """steps per environment per rollout (rollout size = num_envs * num_steps)"""
    gae_lambda: float = 0.98
    """lambda of generalised advantage estimation (long games: a longer credit horizon)"""
    eval_every: int = 100_000
    """environment steps between evaluations"""
    eval_episodes: int = 1000
    """games per periodic evaluation (seats balanced)"""
    eval_regret_episodes: int = 200
    """games of each evaluation whose decisions are scored by the solver (two players only)"""
    final_eval_episodes: int = 10_000
    """games of the final evaluation written into the model card"""
    checkpoint_every: int = 100_000
    """environment steps between checkpoints (written atomically; --resume restarts there)"""


def make_env(rules: Rules, num_players: int, pool_dir: str, pool_size: int, latest_prob: float) -> gym.Env:
    """One self-play environment reading its opponents from ``pool_dir``."""
    from greed_env.train.selfplay_env import SelfPlayEnv

    return SelfPlayEnv(rules, num_players, pool_dir=pool_dir, pool_size=pool_size, latest_prob=latest_prob)


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run; returns its directory."""
    from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
    from greed_env.evaluation import evaluate
    from greed_env.train.loop import run_training
    from greed_env.train.selfplay_env import snapshot_name

    rules = rules_from_args(args.rules, args.rules_set)
    if not max(2, rules.min_players) <= args.num_players <= min(8, rules.max_players):
        raise ValueError(f"--num-players must be within 2..8 and the rules' limits, got {args.num_players}")
    if args.num_players > 2 and args.eval_opponent == "optimal":
        raise ValueError("the solver's optimal bot plays duels only: pass --eval-opponent for more players")
    pool: dict[str, Any] = {"next": 0, "dir": None}

    def env_fns(seed: int, run_dir: Path) -> list[functools.partial[gym.Env]]:
        pool["dir"] = run_dir / "pool"
        pool["dir"].mkdir(exist_ok=True)
        return [
            functools.partial(
                make_env, rules, args.num_players, str(pool["dir"]), args.pool_size, args.latest_prob
            )
            for _ in range(args.num_envs)
        ]

    def add_snapshot(model: MaskablePPO, step: int) -> None:
        if step >= pool["next"]:
            NumpyPolicy.from_sb3(model, meta={"step": step}).save(pool["dir"] / snapshot_name(step))
            pool["next"] = step + args.snapshot_every

    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        two = args.num_players == 2
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "duel",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes) if two else 0,
            opponent=args.eval_opponent,
            num_players=args.num_players,
        )

    return run_training(
        args,
        script=SCRIPT,
        rules=rules,
        objective=f"selfplay{args.num_players}",
        env_fns=env_fns,
        evaluate_policy=functools.partial(evaluate_policy, episodes=args.eval_episodes),
        final_evaluate=functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        card_extra={"num_players": args.num_players, "eval_opponent": args.eval_opponent},
        extra_state=lambda: {"next_snapshot": pool["next"]},
        restore_extra=lambda extra: pool.update(next=int(extra.get("next_snapshot", 0))),
        on_iteration=add_snapshot,
    )


def cli(argv: Sequence[str] | None = None) -> int:
    return run_script(main, Args, argv, prog="greed train selfplay")


if __name__ == "__main__":
    sys.exit(cli())
