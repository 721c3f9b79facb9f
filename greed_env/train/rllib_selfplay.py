"""Self-play with Ray RLlib: multi-agent PPO, one shared action-masked policy, on ``greed_v0``.

Every seat of the PettingZoo game is played by the same policy (``greed_env.rllib``); each
iteration samples ``--train-batch-size`` agent steps and runs PPO on them. Checkpoints go to
``RUN/checkpoints/iter_N`` (RLlib's own format), and at the end the shared policy is exported
to a greed_env bot, ``RUN/bots/<rules>/NAME.onnx`` + ``NAME.json`` (with
``GREED_BOTS_PATH=RUN/bots`` the registry loads it as ``<rules>/NAME``), optionally evaluated
against the built-in bots. With ``--eval-every N`` the policy is also exported every ``N``
iterations and plays the first ``--curve-games`` games of benchmark field tasks (default
``RULES/ffaK-threshold``), giving the learning curve ``RUN/curve.csv`` / ``curve.json``.

One machine, everything in this process (the defaults)::

    greed train rllib --rules ten_thousand --iterations 200

The same script on a Ray cluster (``ray start --head`` on one machine, ``ray start
--address=HEAD:6379`` on the others, greed_env installed everywhere)::

    greed train rllib --address auto --num-env-runners 32 \\
        --num-envs-per-env-runner 8 --train-batch-size 64000 --minibatch-size 4000

See docs/scale.md for resources, learners and the export step. Ray is an optional extra
(``pip install 'greed-env[ray]'``): importing this module, parsing its arguments or printing its
help does not import it; :func:`main` does.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from greed_env.files import atomic_write_text
from greed_env.rules import preset
from greed_env.train.args import parse_args, run_name


class RayMissingError(ValueError):
    """The optional ``ray`` extra is not installed."""


@dataclass
class Args:
    """Train one shared PPO policy by self-play on greed_v0 with Ray RLlib."""

    rules: str = "ten_thousand"
    """rules preset"""
    num_players: int = 2
    """seats per game (all played by the shared policy)"""
    illegal_action: Literal["penalty", "raise"] = "penalty"
    """'raise' turns a masked action sampled by the policy into an error (checks the masking)"""
    iterations: int = 100
    """training iterations (each samples --train-batch-size agent steps)"""
    train_batch_size: int = 4000
    """agent steps per iteration (per learner)"""
    minibatch_size: int = 500
    """PPO minibatch size"""
    num_epochs: int = 4
    """PPO epochs per iteration"""
    lr: float = 3e-4
    """Adam learning rate"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    net_width: int = 128
    """units per hidden layer (separate policy and value MLPs)"""
    net_depth: int = 2
    """hidden layers"""
    num_env_runners: int = 0
    """remote sampling actors (0: sample in this process)"""
    num_envs_per_env_runner: int = 1
    """games stepped by each runner"""
    native_games: int = 0
    """0: each env is one greed_v0 game; N > 0: each env is N games on the native engine (NativeSelfPlayEnv)"""
    num_cpus_per_env_runner: float = 1.0
    """CPUs Ray reserves for each runner"""
    num_learners: int = 0
    """remote learner actors (0: learn in this process)"""
    address: str | None = None
    """Ray cluster to join ('auto' after `ray start`, or ray://HOST:10001); None starts a local Ray"""
    local_cpus: int | None = None
    """CPUs of the local Ray instance when --address is not given (None: all)"""
    seed: int = 0
    """seed of the samplers and the network"""
    checkpoint_every: int = 10
    """iterations between checkpoints (the last iteration is always saved)"""
    export_name: str = "rllib-selfplay"
    """bot name of the exported policy ('' skips the export)"""
    export_check_positions: int = 500
    """positions on which the ONNX bot must act as the RLlib module does"""
    eval_games: int = 0
    """games against each default opponent after the export (0: none)"""
    eval_every: int = 0
    """iterations between learning-curve points (0: none); each exports the policy and plays --curve-tasks"""
    curve_games: int = 500
    """games per curve point and task: the first games of the task's fixed protocol (same seeds every point)"""
    curve_tasks: str = ""
    """comma-separated benchmark tasks of the curve ('': RULES/ffaN-threshold for N = --num-players)"""
    gae_lambda: float = 1.0
    """lambda of generalised advantage estimation"""
    max_minutes: float = 0.0
    """stop after the iteration that passes this many minutes of training (0: no limit); the last iteration is saved and exported"""
    runs_dir: str = "runs"
    """directory holding one sub-directory per run"""
    run_name: str | None = None
    """explicit run name (default rules__selfplay__rllib__seed__time)"""


def _scalar(tree: dict[str, Any], *path: str) -> float | None:
    node: Any = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    try:
        return float(node)
    except (TypeError, ValueError):
        return None


CURVE_COLUMNS = (
    "iteration", "env_steps", "train_seconds", "task", "games", "share", "ci95", "low", "high",
    "fair_share",
)
"""Columns of ``RUN/curve.csv``."""


def _curve_tasks(args: Args) -> list[Any]:
    """The benchmark tasks of the learning curve (checked before training starts).

    Raises:
        UnknownTaskError: a task that does not exist; ValueError: one for other rules or seats.
    """
    from greed_env.benchmark import get_task

    if args.eval_every <= 0:
        return []
    if args.curve_games < 1:
        raise ValueError(f"--curve-games must be at least 1, got {args.curve_games}")
    names = [t.strip() for t in args.curve_tasks.split(",") if t.strip()] or [
        f"{args.rules}/ffa{args.num_players}-threshold"
    ]
    tasks = [get_task(name) for name in names]
    for task in tasks:
        if task.kind != "field" or task.rules != args.rules or task.seats != args.num_players:
            raise ValueError(
                f"curve task {task.id} is a {task.seats}-seat {task.kind} task of {task.rules}; "
                f"the curve needs field tasks of {args.rules} with {args.num_players} seats"
            )
    return tasks


def curve_point(
    checkpoint: Path, out_dir: Path, rules: Any, tasks: list[Any], games: int, *, seed: int = 0
) -> list[dict[str, Any]]:
    """Export ``checkpoint`` to ``out_dir`` and play the first ``games`` games of each task.

    Every point plays the same games (the task's fixed seeds), so points differ only by the
    policy. Returns one row per task: the share of the pot with its 95% interval.
    """
    import dataclasses as dc

    from greed_env.benchmark import run_task
    from greed_env.rllib.export import export_checkpoint

    exported = export_checkpoint(
        checkpoint, out_dir, rules, name="policy", check_positions=100, seed=seed
    )
    rows = []
    for task in tasks:
        short = dc.replace(task, games=min(games, task.games))
        r = run_task(short, str(exported.onnx_path))
        rows.append({
            "task": task.id,
            "games": short.games,
            "share": r.value,
            "ci95": r.ci95,
            "low": r.value - r.ci95,
            "high": r.value + r.ci95,
            "fair_share": 1.0 / task.seats,
        })
    return rows


def write_curve(run_dir: Path, curve: list[dict[str, Any]]) -> None:
    """``RUN/curve.csv`` and ``RUN/curve.json`` (rewritten whole, atomically, at every point)."""
    lines = [",".join(CURVE_COLUMNS)]
    for point in curve:
        lines.append(",".join(
            f"{point[c]:.6g}" if isinstance(point[c], float) else str(point[c]) for c in CURVE_COLUMNS
        ))
    atomic_write_text(run_dir / "curve.csv", "\n".join(lines) + "\n")
    atomic_write_text(run_dir / "curve.json", json.dumps(curve, indent=1) + "\n")


def main(args: Args) -> Path:
    """Train, checkpoint and export one run; returns its directory.

    Raises:
        RayMissingError: ray (the ``ray`` extra) is not installed.
    """
    try:
        import ray
    except ImportError:
        raise RayMissingError("Ray RLlib is not installed (an optional extra: pip install 'greed-env[ray]')") from None

    from greed_env.rllib.config import SHARED_MODULE, selfplay_config
    from greed_env.rllib.export import export_checkpoint

    rules = preset(args.rules)
    curve_tasks = _curve_tasks(args)
    run_dir = Path(args.runs_dir) / (
        args.run_name or run_name(args.rules, "selfplay", "rllib", args.seed)
    )
    run_dir.mkdir(parents=True, exist_ok=False)
    atomic_write_text(run_dir / "args.json", json.dumps(dataclasses.asdict(args), indent=1) + "\n")
    if not ray.is_initialized():
        if args.address:
            ray.init(address=args.address)
        else:
            ray.init(num_cpus=args.local_cpus, include_dashboard=False)
    config = selfplay_config(
        {
            "rules": args.rules,
            "num_players": args.num_players,
            "illegal_action": args.illegal_action,
        },
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
    history = []
    curve: list[dict[str, Any]] = []
    checkpoint = None
    start = time.perf_counter()
    try:
        for it in range(1, args.iterations + 1):
            result = algo.train()
            row = {
                "iteration": it,
                "env_steps": _scalar(result, "env_runners", "num_env_steps_sampled_lifetime"),
                "episode_len_mean": _scalar(result, "env_runners", "episode_len_mean"),
                "entropy": _scalar(result, "learners", SHARED_MODULE, "entropy"),
                "total_loss": _scalar(result, "learners", SHARED_MODULE, "total_loss"),
                "seconds": round(time.perf_counter() - start, 2),
            }
            history.append(row)
            print(json.dumps(row), flush=True)
            last = it == args.iterations or (
                args.max_minutes > 0 and row["seconds"] >= 60 * args.max_minutes
            )
            on_curve = args.eval_every > 0 and (it % args.eval_every == 0 or last)
            if on_curve or last or it % args.checkpoint_every == 0:
                checkpoint = Path(
                    algo.save_to_path(str((run_dir / "checkpoints" / f"iter_{it}").resolve()))
                )
            if on_curve:
                assert checkpoint is not None
                eval_start = time.perf_counter()
                points = curve_point(
                    checkpoint, run_dir / "curve" / f"iter_{it}", rules, curve_tasks,
                    args.curve_games, seed=args.seed,
                )
                for point in points:
                    point.update(iteration=it, env_steps=row["env_steps"], train_seconds=row["seconds"])
                    print(json.dumps(point), flush=True)
                curve.extend(points)
                write_curve(run_dir, curve)
                start += time.perf_counter() - eval_start
            if last:
                break
    finally:
        algo.stop()
    summary: dict[str, Any] = {
        "rules": rules.to_dict(),
        "history": history,
        "curve": curve,
        "checkpoint": None
        if checkpoint is None
        else checkpoint.relative_to(run_dir.resolve()).as_posix(),
    }
    if args.export_name and checkpoint is not None:
        exported = export_checkpoint(
            checkpoint,
            run_dir / "bots" / rules.name,
            rules,
            name=args.export_name,
            check_positions=args.export_check_positions,
            seed=args.seed,
            training={"script": "greed_env.train.rllib_selfplay", "args": dataclasses.asdict(args)},
        )
        summary["bot"] = exported.card["id"]
        summary["bot_card"] = exported.card_path.relative_to(run_dir).as_posix()
        if args.eval_games > 0:
            from greed_env.bots.cards import read_card, write_card
            from greed_env.bots.tournament import default_opponents, evaluate_bot

            summary["evaluation"] = evaluate_bot(
                str(exported.card_path),
                rules,
                list(default_opponents(rules)),
                args.eval_games,
                seed=args.seed,
            )
            card = read_card(exported.card_path)
            card["evaluation"] = summary["evaluation"]  # the card carries its measured strength
            write_card(exported.card_path, card)
    atomic_write_text(run_dir / "run.json", json.dumps(summary, indent=1) + "\n")
    return run_dir


def cli(argv: list[str] | None = None) -> int:
    """``python -m greed_env.train.rllib_selfplay ARGS`` (the same as ``greed train rllib ARGS``)."""
    args = parse_args(Args, argv, prog="greed train rllib")
    run_dir = main(args)
    print(f"run directory: {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
