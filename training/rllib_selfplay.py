"""Self-play with Ray RLlib: multi-agent PPO, one shared action-masked policy, on ``greed_v0``.

Every seat of the PettingZoo game is played by the same policy (``greed_env.rllib``: the
observation adapter, the masking RLModule, the PPO config); each iteration samples
``--train-batch-size`` agent steps and runs PPO on them. The reward is ``players * share - 1``
at the end of each game. Checkpoints go to ``RUN/checkpoints/iter_N`` (RLlib's format); with
``--eval-every N`` the policy is exported every ``N`` iterations and plays the first
``--curve-games`` games of benchmark field tasks (default ``RULES/ffaK-threshold``, the same games
at every point), giving the learning curve ``RUN/curve.csv``. At the end the shared policy is
exported to an ONNX bot, ``RUN/bots/RULES/rllib-selfplay.onnx`` with its card
(``GREED_BOTS_PATH=RUN/bots`` loads it as ``RULES/rllib-selfplay``); ``--export NAME`` also
writes it into ``agents/RULES/``.

The defaults are the run behind the shipped ``ten_thousand/rllib-selfplay`` (three players,
two remote env runners of 16 games, 8,000 agent steps per iteration, 42 minutes of training)::

    greed train rllib_selfplay --export rllib-selfplay
        # 91 iterations, 729,757 agent steps; ten_thousand/ffa3-threshold-v1: 52.55% +- 2.18 of
        # the pot against two threshold-300 bots (fair share 33.3%), ffa3-v1: 25.15% +- 1.89

One process, a short run::

    greed train rllib_selfplay --num-players 2 --num-env-runners 0 --num-envs-per-env-runner 1 \\
        --iterations 20 --max-minutes 0

On a Ray cluster (``ray start --head`` on one machine, ``ray start --address=HEAD:6379`` on the
others, greed_env installed everywhere; docs/scale.md)::

    greed train rllib_selfplay --address auto --num-env-runners 32 --num-envs-per-env-runner 8 \\
        --train-batch-size 64000 --minibatch-size 4000

Ray is an optional extra (``pip install 'greed-env[ray]'``): this file imports it in
:func:`main`, so its help works without it. Run it as ``python training/rllib_selfplay.py ARGS``
or ``greed train rllib_selfplay ARGS``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from greed_env.bots.cards import read_card, write_card
from greed_env.bots.tournament import default_opponents, evaluate_bot
from greed_env.files import atomic_write_text
from greed_env.rules import preset
from greed_env.train.rllib_curve import (
    RayMissingError,
    curve_point,
    curve_tasks,
    result_scalar,
    write_curve,
)
from greed_env.train.settings import (
    ExportSettings,
    OptionalInt,
    OptionalStr,
    check_run_folder,
    parse_args,
    run_name,
)

SCRIPT = "training/rllib_selfplay.py"


@dataclass
class Args(ExportSettings):
    """Train one shared PPO policy by self-play on greed_v0 with Ray RLlib, then export it as a bot."""

    # the run
    rules: str = "ten_thousand"
    """rules preset"""
    seed: int = 0
    """seed of the samplers and the network"""
    runs_dir: str = "runs/rllib"
    """folder holding one sub-folder per run"""
    run_name: OptionalStr = None
    """explicit run name (default rules__selfplay__rllib__seed__time)"""
    iterations: int = 10_000
    """training iterations (each samples --train-batch-size agent steps)"""
    max_minutes: float = 42.0
    """stop after the iteration that passes this many minutes of training (0: no limit); the
    last iteration is saved and exported"""
    checkpoint_every: int = 10
    """iterations between checkpoints (the last iteration is always saved)"""
    bot_name: str = "rllib-selfplay"
    """name of the bot exported into RUN/bots/RULES/ at the end ('' skips it)"""
    export_check_positions: int = 500
    """positions on which the ONNX bot must act as the RLlib module does"""

    # the game and the samplers
    num_players: int = 3
    """seats per game (all played by the shared policy)"""
    illegal_action: Literal["penalty", "raise"] = "penalty"
    """'raise' turns a masked action sampled by the policy into an error (checks the masking)"""
    num_env_runners: int = 2
    """remote sampling actors (0: sample in this process)"""
    num_envs_per_env_runner: int = 16
    """games stepped by each runner"""
    native_games: int = 0
    """0: each env is one greed_v0 game; N > 0: each env is N games of the native engine"""
    num_cpus_per_env_runner: float = 1.0
    """CPUs Ray reserves for each runner"""
    num_learners: int = 0
    """remote learner actors (0: learn in this process)"""
    address: OptionalStr = None
    """Ray cluster to join ('auto' after `ray start`, or ray://HOST:10001); None starts a local Ray"""
    local_cpus: OptionalInt = None
    """CPUs of the local Ray instance when --address is not given (None: all)"""

    # PPO
    train_batch_size: int = 8000
    """agent steps per iteration (per learner)"""
    minibatch_size: int = 1000
    """PPO minibatch size"""
    num_epochs: int = 4
    """PPO epochs per iteration"""
    lr: float = 3e-4
    """Adam learning rate"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    net_width: int = 128
    """units per hidden layer (separate policy and value MLPs)"""
    net_depth: int = 2
    """hidden layers"""

    # evaluation
    eval_every: int = 10
    """iterations between learning-curve points (0: none); each exports the policy and plays --curve-tasks"""
    curve_games: int = 500
    """games per curve point and task: the first games of the task's fixed protocol"""
    curve_tasks: str = ""
    """comma-separated benchmark tasks of the curve ('': RULES/ffaN-threshold for N = --num-players)"""
    eval_games: int = 0
    """games against each default opponent after the export, stored in the bot card (0: none)"""

    def check(self) -> None:
        super().check()
        check_run_folder(self.runs_dir, self.run_name)


def main(args: Args) -> Path:
    """Train, checkpoint and export one run; returns its folder.

    One function on purpose, as a CleanRL recipe is: the run reads top to bottom in the order
    it happens (Ray up, the PPO config, the loop of iterations with its checkpoints and
    learning-curve points, the export, Ray down), each step a few lines under a comment.

    Raises:
        RayMissingError: ray (the ``ray`` extra) is not installed.
    """
    try:
        import ray
    except ImportError:
        raise RayMissingError("Ray RLlib is not installed (an optional extra: pip install 'greed-env[ray]')") from None
    from greed_env.rllib.config import SHARED_MODULE, selfplay_config
    from greed_env.rllib.export import export_checkpoint

    args.check()
    rules = preset(args.rules)
    tasks = curve_tasks(args.rules, args.num_players, args.curve_tasks, args.curve_games) if args.eval_every > 0 else []
    run_dir = Path(args.runs_dir) / (args.run_name or run_name(args.rules, "selfplay", "rllib", args.seed))
    run_dir.mkdir(parents=True, exist_ok=False)
    atomic_write_text(run_dir / "args.json", json.dumps(dataclasses.asdict(args), indent=1) + "\n")

    # Ray: a private local instance, or the cluster at --address
    if not ray.is_initialized():
        if args.address:
            ray.init(address=args.address)
        else:
            ray.init(num_cpus=args.local_cpus, include_dashboard=False)

    # PPO on every seat with one shared, action-masked module
    config = selfplay_config(
        {"rules": args.rules, "num_players": args.num_players, "illegal_action": args.illegal_action},
        num_env_runners=args.num_env_runners,
        num_envs_per_env_runner=args.num_envs_per_env_runner,
        num_cpus_per_env_runner=args.num_cpus_per_env_runner,
        num_learners=args.num_learners,
        train_batch_size=args.train_batch_size,
        minibatch_size=args.minibatch_size,
        num_epochs=args.num_epochs,
        lr=args.lr,
        lambda_=args.gae_lambda,
        entropy_coeff=args.entropy_coeff,
        hidden=(args.net_width,) * args.net_depth,
        seed=args.seed,
        native_games=args.native_games,
    )
    algo = config.build_algo()

    # the training loop: one PPO iteration, its metrics, checkpoints and curve points
    history: list[dict[str, Any]] = []
    curve: list[dict[str, Any]] = []
    checkpoint = None
    start = time.perf_counter()
    try:
        for it in range(1, args.iterations + 1):
            result = algo.train()
            row = {
                "iteration": it,
                "env_steps": result_scalar(result, "env_runners", "num_env_steps_sampled_lifetime"),
                "episode_len_mean": result_scalar(result, "env_runners", "episode_len_mean"),
                "entropy": result_scalar(result, "learners", SHARED_MODULE, "entropy"),
                "total_loss": result_scalar(result, "learners", SHARED_MODULE, "total_loss"),
                "seconds": round(time.perf_counter() - start, 2),
            }
            history.append(row)
            print(json.dumps(row), flush=True)
            last = it == args.iterations or (args.max_minutes > 0 and row["seconds"] >= 60 * args.max_minutes)
            on_curve = args.eval_every > 0 and (it % args.eval_every == 0 or last)
            if on_curve or last or it % args.checkpoint_every == 0:
                checkpoint = Path(algo.save_to_path(str((run_dir / "checkpoints" / f"iter_{it}").resolve())))
            if on_curve and checkpoint is not None:
                eval_start = time.perf_counter()
                points = curve_point(checkpoint, run_dir / "curve" / f"iter_{it}", rules, tasks, args.curve_games, seed=args.seed)
                for point in points:
                    point.update(iteration=it, env_steps=row["env_steps"], train_seconds=row["seconds"])
                    print(json.dumps(point), flush=True)
                curve.extend(points)
                write_curve(run_dir, curve)
                start += time.perf_counter() - eval_start  # the curve's time is not training time
            if last:
                break
    finally:
        algo.stop()

    # the bot: the last checkpoint's shared module as ONNX with its card, measured if asked
    summary: dict[str, Any] = {
        "rules": rules.to_dict(),
        "history": history,
        "curve": curve,
        "checkpoint": None if checkpoint is None else checkpoint.relative_to(run_dir.resolve()).as_posix(),
    }
    training = {"script": SCRIPT, "args": dataclasses.asdict(args)}
    if args.bot_name and checkpoint is not None:
        exported = export_checkpoint(
            checkpoint, run_dir / "bots" / rules.name, rules, name=args.bot_name,
            check_positions=args.export_check_positions, seed=args.seed, training=training,
        )  # fmt: skip
        summary["bot"] = exported.card["id"]
        summary["bot_card"] = exported.card_path.relative_to(run_dir).as_posix()
        if args.eval_games > 0:
            summary["evaluation"] = evaluate_bot(
                str(exported.card_path), rules, list(default_opponents(rules)), args.eval_games, seed=args.seed
            )
            card = read_card(exported.card_path)
            card["evaluation"] = summary["evaluation"]  # the card carries its measured strength
            write_card(exported.card_path, card)
    if args.export and checkpoint is not None:
        registry = export_checkpoint(
            checkpoint, Path(args.export_dir) / rules.name, rules, name=args.export,
            check_positions=args.export_check_positions, seed=args.seed, training=training,
        )  # fmt: skip
        if "evaluation" in summary:
            card = read_card(registry.card_path)
            card["evaluation"] = summary["evaluation"]
            write_card(registry.card_path, card)
        print(f"exported {registry.onnx_path} and {registry.card_path}")
    atomic_write_text(run_dir / "run.json", json.dumps(summary, indent=1) + "\n")
    print(f"run directory: {run_dir}")
    return run_dir


if __name__ == "__main__":
    main(parse_args(Args))
