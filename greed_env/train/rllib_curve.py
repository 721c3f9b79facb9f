"""The reusable parts of ``training/rllib_selfplay.py``: reading RLlib's results, and the
learning curve against the benchmark's field tasks.

Every curve point exports a checkpoint to an ONNX bot (:func:`greed_env.rllib.export.export_checkpoint`)
and plays the first games of each task's fixed protocol with the task's own seeds, so points
differ only by the policy (:func:`curve_point`); :func:`write_curve` keeps ``RUN/curve.csv`` and
``RUN/curve.json``. Nothing here imports ray at import time.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from greed_env.benchmark import get_task, run_task
from greed_env.files import atomic_write_text
from greed_env.rules import Rules

__all__ = ["CURVE_COLUMNS", "RayMissingError", "curve_point", "curve_tasks", "result_scalar", "write_curve"]


class RayMissingError(ValueError):
    """The optional ``ray`` extra is not installed."""


CURVE_COLUMNS = (
    "iteration", "env_steps", "train_seconds", "task", "games", "share", "ci95", "low", "high",
    "fair_share",
)  # fmt: skip
"""Columns of ``RUN/curve.csv``."""


def result_scalar(tree: dict[str, Any], *path: str) -> float | None:
    """The number at ``path`` in an RLlib result dict (None where it is missing or not a number)."""
    node: Any = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    try:
        return float(node)
    except (TypeError, ValueError):
        return None


def curve_tasks(rules: str, num_players: int, names: str, curve_games: int) -> list[Any]:
    """The benchmark tasks of the learning curve, checked before training starts.

    Args:
        rules: the trained preset.
        num_players: the trained seats.
        names: comma-separated task ids ('': ``RULES/ffaN-threshold`` for ``N = num_players``).
        curve_games: games per point (at least 1).

    Raises:
        UnknownTaskError: a task that does not exist; ValueError: one for other rules or seats.
    """
    if curve_games < 1:
        raise ValueError(f"--curve-games must be at least 1, got {curve_games}")
    ids = [t.strip() for t in names.split(",") if t.strip()] or [f"{rules}/ffa{num_players}-threshold"]
    tasks = [get_task(name) for name in ids]
    for task in tasks:
        if task.kind != "field" or task.rules != rules or task.seats != num_players:
            raise ValueError(
                f"curve task {task.id} is a {task.seats}-seat {task.kind} task of {task.rules}; "
                f"the curve needs field tasks of {rules} with {num_players} seats"
            )
    return tasks


def curve_point(
    checkpoint: Path, out_dir: Path, rules: Rules, tasks: list[Any], games: int, *, seed: int = 0
) -> list[dict[str, Any]]:
    """Export ``checkpoint`` to ``out_dir`` and play the first ``games`` games of each task.

    Returns one row per task: the share of the pot with its 95% interval.
    """
    from greed_env.rllib.export import export_checkpoint  # ray and torch: imported when used

    exported = export_checkpoint(checkpoint, out_dir, rules, name="policy", check_positions=100, seed=seed)
    rows = []
    for task in tasks:
        short = dataclasses.replace(task, games=min(games, task.games))
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
