"""MaskablePPO self-play: one shared policy, 2-8 players, against a pool of its own past snapshots.

The learner plays one seat of the PettingZoo game ``greed_v0`` (``SelfPlayEnv``, drawn at every
reset); every other seat is played by a snapshot of the learner, saved every
``--snapshot-every`` steps into ``RUN/pool`` (the newest ``--pool-size`` stay in play, the newest
of all in a seat with probability ``--latest-prob``; with an empty pool, uniformly random legal
moves). The reward is the learner's share of the pot at the end, ``players * share - 1``.
Evaluations: with two players the win rate against the solver's optimal duel bot (optimum one
half, decisions scored by the solver); with more, the share against ``--eval-opponent`` in every
other seat (fair share ``1 / players``).

No shipped bot comes from this script (the self-play bot in the registry,
``ten_thousand/rllib-selfplay``, is ``rllib_selfplay.py``'s); the defaults are the script's own
settings, not a measured recipe::

    greed train ppo_selfplay --num-players 2 --total-timesteps 3000000
    greed train ppo_selfplay --num-players 4 --eval-opponent threshold:400

Run it as ``python training/ppo_selfplay.py ARGS`` or ``greed train ppo_selfplay ARGS``. A run
writes ``runs/RULES__selfplayN__EXP__SEED__TIME/`` (``model.zip``, ``model.json``,
``eval.csv``, ``tb/``, checkpoints, the snapshot pool); ``--export NAME`` also writes the ONNX
bot and its card to ``agents/RULES/``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from sb3_contrib import MaskablePPO

from greed_env.bots.export import export_model
from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.train.backends import make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.network import policy_class, policy_kwargs
from greed_env.train.run import Run, start_run
from greed_env.train.selfplay_env import SelfPlayEnv, snapshot_name
from greed_env.train.settings import (
    EvalSettings,
    ExportSettings,
    NetworkSettings,
    PPOSettings,
    RunSettings,
    parse_args,
    ppo_kwargs,
)
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_selfplay.py"


@dataclass
class Args(EvalSettings, NetworkSettings, PPOSettings, ExportSettings, RunSettings):
    """Train one MaskablePPO policy by self-play against a pool of its past snapshots."""

    # the run (RunSettings, ExportSettings): the defaults of this recipe
    checkpoint_every: int = 100_000
    total_timesteps: int = 3_000_000

    # the environments
    num_players: int = 2
    """players per game (2-8)"""
    snapshot_every: int = 50_000
    """environment steps between snapshots added to the opponent pool"""
    pool_size: int = 10
    """newest snapshots kept in the opponent pool"""
    latest_prob: float = 0.5
    """probability that an opponent seat plays the newest snapshot (else a uniform pick)"""
    num_envs: int = 2
    """parallel games"""
    vector: Literal["subproc", "dummy"] = "subproc"
    """'subproc': one process per game; 'dummy': all in this process"""

    # PPO (PPOSettings)
    num_steps: int = 1024
    minibatch_size: int = 256
    gae_lambda: float = 0.98
    """lambda of generalised advantage estimation (long games: a longer credit horizon)"""

    # the network (NetworkSettings)
    features: Literal["greed", "margin", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, turn total and scores; 'margin'
    adds the margin after banking over the best other seat; 'none' feeds the observation alone"""

    # evaluation (EvalSettings)
    eval_opponent: str = "optimal"
    """evaluation opponent: 'optimal' (the solver's duel bot, two players only) or a bot spec
    such as 'threshold:400' in every other seat"""
    eval_every: int = 100_000
    eval_regret_episodes: int = 200
    """games of each evaluation whose decisions the solver scores (two players only)"""
    final_eval_episodes: int = 10_000


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run and return its folder; ``--export`` also writes the bot."""
    rules = rules_from_args(args.rules, args.rules_set)
    if not max(2, rules.min_players) <= args.num_players <= min(8, rules.max_players):
        raise ValueError(f"--num-players must be within 2..8 and the rules' limits, got {args.num_players}")
    if args.num_players > 2 and args.eval_opponent == "optimal":
        raise ValueError("the solver's optimal bot plays duels only: pass --eval-opponent for more players")
    with start_run(args, objective=f"selfplay{args.num_players}") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, the snapshot pool, environments, MaskablePPO, learning."""
    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the games of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # environments: one seat of greed_v0 each, the other seats read their policies from the pool
    pool = run.dir / "pool"
    pool.mkdir(exist_ok=True)
    env_fn = functools.partial(
        SelfPlayEnv, rules, args.num_players, pool_dir=str(pool), pool_size=args.pool_size, latest_prob=args.latest_prob
    )
    envs = make_vec_env([env_fn] * args.num_envs, args.vector, env_seed)

    # the agent
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed)
    else:
        model = MaskablePPO(
            policy_class(args), envs, **ppo_kwargs(args), policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed, device="cpu",
        )  # fmt: skip
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
    model.set_logger(make_logger(run.dir))  # TensorBoard: charts/, losses/, eval/

    # the snapshot pool: a copy of the learner every --snapshot-every steps (kept with each
    # checkpoint, so a resumed run goes on from where its pool was)
    next_snapshot = {"step": int(run.state.extra.get("next_snapshot", 0))}

    def add_snapshot(model: MaskablePPO, step: int) -> None:
        if step >= next_snapshot["step"]:
            NumpyPolicy.from_sb3(model, meta={"step": step}).save(pool / snapshot_name(step))
            next_snapshot["step"] = step + args.snapshot_every

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

    # learning
    callback = TrainingCallback(
        run, functools.partial(evaluate_policy, episodes=args.eval_episodes), ppo=args, evaluation=args,
        extra_state=lambda: {"next_snapshot": next_snapshot["step"]}, on_iteration=add_snapshot,
    )  # fmt: skip
    try:
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation, model.zip and its card model.json
    run.finish(
        model, callback, functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        script=SCRIPT, rules=rules, objective=f"selfplay{args.num_players}",
        card_extra={"num_players": args.num_players, "eval_opponent": args.eval_opponent},
    )  # fmt: skip


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    evaluation = json.loads((run_dir / "model.json").read_text())["evaluation"]
    result = export_model(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        name=args.export,
        objective="duel",
        description=(
            f"MaskablePPO self-play, {args.num_players} players, {args.net_width} units; "
            f"{100 * evaluation['mean']:.2f}% vs {args.eval_opponent}"
        ),
        check_positions=args.export_check_positions,
        seed=args.seed,
        notes=f"{SCRIPT}, run {run_dir.name} (arguments in the training card)",
    )
    print(f"exported {result.onnx_path} and {result.card_path}")


if __name__ == "__main__":
    main(parse_args(Args))
