"""Duel: MaskablePPO on ``greed_env/Duel-v0``, a whole game against a chosen opponent bot.

The learner's seat is drawn at every reset; the reward is +1 / -1 (0 for a shared pot) at the
end of the game. The opponent is any bot spec (``optimal``: the solver's optimal duel bot,
``threshold:N``, ``random``, a registry id, or a trained model file). Evaluations play against
the optimal bot with balanced seats; the optimum is a win rate of one half.

With ``--vector native`` the games run in the numba engine, the optimal bot included
(:mod:`greed_env.vector.optimal`), some 30 times faster than ``Duel-v0`` environments in
subprocesses. Two options change what the learner sees, never what it is evaluated on:
``--final-round-starts F`` starts a share ``F`` of the episodes at the learner's last turn of
the final round and ``--score-starts F`` a share at a turn start with random banked scores
(exploring starts, :mod:`greed_env.train.curriculum`), and ``--shaping
solver`` adds the solver's win probability as a potential-based reward
(:mod:`greed_env.train.shaping`: it puts the exact solution into training, so results with it
are reported apart). The recipe of ``docs/results.md`` is ``greed train recipe duel``
(:mod:`greed_env.train.recipes.duel`).

Example::

    greed train duel --opponent optimal --vector native --num-envs 512 \
        --init-from runs/bench_ppo/ten_thousand__turn__ppo__1/model.zip --final-round-starts 0.5
    greed train duel --opponent threshold:350 --resume
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

SCRIPT = "greed_env.train.duel"


@dataclass
class Args(PPOArgs):
    """Train a MaskablePPO agent on greed_env/Duel-v0 against an opponent bot."""

    opponent: str = "optimal"
    """opponent bot: 'optimal' (solver), 'threshold:N', 'random', a registry id or a model file"""
    total_timesteps: int = 3_000_000
    """total environment steps (decisions of the learner) of the run"""
    num_steps: int = 1024
    """steps per environment per rollout (rollout size = num_envs * num_steps)"""
    gae_lambda: float = 0.98
    """lambda of generalised advantage estimation (long games: a longer credit horizon)"""
    eval_every: int = 100_000
    """environment steps between evaluations against the optimal bot"""
    eval_episodes: int = 1000
    """games per periodic evaluation (seats balanced)"""
    eval_regret_episodes: int = 200
    """games of each evaluation whose decisions are scored by the solver (regret)"""
    final_eval_episodes: int = 10_000
    """games of the final evaluation written into the model card"""
    checkpoint_every: int = 100_000
    """environment steps between checkpoints (written atomically; --resume restarts there)"""
    final_round_starts: float = 0.0
    """share of training episodes that start at the learner's final-round turn, the opponent
    just past the target (exploring starts; needs --vector native and a final round;
    greed_env.train.curriculum; evaluations play whole games)"""
    final_round_near: float = 0.0
    """share of those final-round starts in which the learner trails by at most 3,000 points,
    as real games leave it (uniform scores mostly trail by more than a turn can make up)"""
    final_round_warmup: int = 0
    """final-round starts move on into the learner's turn by up to this many rolls, each with a
    random legal keep (episodes then also begin at bank-or-roll decisions mid-turn)"""
    score_starts: float = 0.0
    """share of training episodes that start at a turn start with both banked scores drawn
    uniformly below the target, either seat to move (exploring starts: short, low-variance
    episodes at every stage of the game; needs --vector native; greed_env.train.curriculum)"""
    score_starts_warmup: int = 0
    """random-score starts on the learner's turn move on into it by up to this many rolls,
    each with a random legal keep"""
    score_starts_near: float = 0.0
    """share of the random-score starts with both scores in the endgame, within a fifth of the
    target below it (where banking that reaches the target must leave a lead that survives
    the opponent's last turn)"""
    shaping: Literal["none", "solver"] = "none"
    """'solver': add the potential-based shaping reward phi(s') - phi(s) with phi = 2 P - 1,
    P the solver's optimal win probability from the learner's turn start (policy-invariant,
    but it feeds the exact solution into training; needs --vector native, and --opponent
    optimal where the rules can play a final round; greed_env.train.shaping)"""


def make_env(rules: Rules, opponent: str) -> gym.Env:
    """One ``Duel-v0`` environment with its own opponent bot (built in the worker process)."""
    import greed_env.envs  # noqa: F401  (registers the ids)
    from greed_env.evaluation import resolve_bot

    return gym.make("greed_env/Duel-v0", rules=rules, opponent=resolve_bot(opponent, rules, "duel"))


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run; returns its directory."""
    from greed_env.bots.numpy_backend import PolicyBot
    from greed_env.evaluation import evaluate, resolve_bot
    from greed_env.train.loop import run_training

    rules = rules_from_args(args.rules, args.rules_set)
    resolve_bot(args.opponent, rules, "duel")

    def env_fns(seed: int, run_dir: Path) -> list[functools.partial[gym.Env]]:
        return [functools.partial(make_env, rules, args.opponent) for _ in range(args.num_envs)]

    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "duel",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes),
            opponent="optimal",
        )

    if args.shaping == "solver" and args.vector != "native":
        raise SystemExit("--shaping solver needs --vector native")
    if (args.shaping == "solver" and args.opponent.strip().lower() != "optimal" and rules.final_round
            and not rules.exact_target):
        raise SystemExit("--shaping solver needs --opponent optimal on rules with a final round and no exact target")
    if (args.final_round_starts or args.score_starts) and args.vector != "native":
        raise SystemExit("--final-round-starts and --score-starts need --vector native")

    def wrap(venv: VecEnv) -> VecEnv:
        if args.final_round_starts or args.score_starts:
            from greed_env.train.curriculum import FinalRoundStarts

            venv = FinalRoundStarts(
                venv,
                args.final_round_starts,
                seed=args.seed + 7919,
                near=args.final_round_near,
                warmup=args.final_round_warmup,
                scores=args.score_starts,
                scores_warmup=args.score_starts_warmup,
                scores_near=args.score_starts_near,
            )
        if args.shaping == "solver":
            from greed_env.train.shaping import SolverPotentialShaping

            venv = SolverPotentialShaping(venv)
        return venv
    return run_training(
        args,
        script=SCRIPT,
        rules=rules,
        objective="duel",
        env_fns=env_fns,
        evaluate_policy=functools.partial(evaluate_policy, episodes=args.eval_episodes),
        final_evaluate=functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        card_extra={
            "opponent": args.opponent,
            "shaping": args.shaping,
            "final_round_starts": args.final_round_starts,
            "final_round_near": args.final_round_near,
            "final_round_warmup": args.final_round_warmup,
            "score_starts": args.score_starts,
            "score_starts_warmup": args.score_starts_warmup,
            "score_starts_near": args.score_starts_near,
        },
        wrap_venv=wrap,
    )


def cli(argv: Sequence[str] | None = None) -> int:
    return run_script(main, Args, argv, prog="greed train duel")


if __name__ == "__main__":
    sys.exit(cli())
