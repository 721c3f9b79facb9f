"""MaskablePPO against the exact solver: several seeds of one recipe, with their spread.

Each seed is one ``greed train solo`` run (a subprocess, so its CPU time is its own; up to
``--jobs`` at once). When all have finished, every run's card and ``eval.csv`` are read and
one row per seed is printed: training steps and CPU minutes, the final policy's **exact**
expected turn score (:mod:`greed_env.policy_value`: every roll the greedy policy can meet is
enumerated, so there is no sampling error) as a share of the solver's optimum, the first
evaluation at which the policy reached ``--goal`` of the optimum and the CPU minutes it had
used by then, and the simulated mean with its 95% CI as a cross-check. A last row gives the
mean, standard deviation and worst seed. A run directory that is already complete is not
trained again, so rerunning the command only re-collects the table.

Usage (``python benchmarks/bench_ppo.py`` takes the same arguments)::

    greed train recipe turn --rules ten_thousand --seeds 1 2 3 --jobs 3
    greed train recipe turn --rules farkle --seeds 1 --total-timesteps 1000000
    greed train recipe turn --rules progressive --seeds 1 -- --net-width 64

Arguments after ``--`` go to ``greed train solo`` unchanged (they override the recipe below).
The recipe (``RECIPE``) is the one ``docs/results.md`` reports.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from greed_env.evaluation import resolve_bot
from greed_env.policy_value import EnumerationLimit, turn_value
from greed_env.rules import Rules
from greed_env.train.recipes.seeds import report, run_seeds, split_passthrough

__all__ = ["RECIPE", "collect", "main", "run_name", "table", "train"]

RECIPE = [
    "--objective", "turn",
    "--num-envs", "256",
    "--vector", "native",
    "--num-steps", "64",
    "--minibatch-size", "2048",
    "--update-epochs", "4",
    "--eval-every", "500000",
    "--eval-episodes", "1000",
    "--eval-regret-episodes", "0",
    "--final-eval-episodes", "5000",
    "--torch-threads", "1",
    "--no-progress",
]  # fmt: skip


def run_name(rules: str, seed: int, tag: str) -> str:
    return f"{rules}__turn__{tag}__{seed}"


def train(rules: str, seed: int, steps: int, runs_dir: Path, tag: str, extra: list[str]) -> tuple[int, float]:
    """One training run in a subprocess; returns (exit code, wall seconds). A finished run
    (its card exists) is not run again."""
    if (runs_dir / run_name(rules, seed, tag) / "model.json").is_file():
        return 0, 0.0
    cmd = [
        sys.executable, "-m", "greed_env.cli", "train", "solo",
        "--rules", rules, "--seed", str(seed), "--total-timesteps", str(steps),
        "--runs-dir", str(runs_dir), "--run-name", run_name(rules, seed, tag), "--exp-name", tag,
        *RECIPE, *extra,
    ]  # fmt: skip
    log = runs_dir / f"{run_name(rules, seed, tag)}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with log.open("w") as fh:
        rc = subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT)
    return rc, time.perf_counter() - t0


def collect(run_dir: Path, goal: float) -> dict[str, Any]:
    """One seed's row from its card and evaluation log."""
    card = json.loads((run_dir / "model.json").read_text())
    ev = dict(card["evaluation"])
    for key in ("optimal", "exact", "exact_ratio"):  # model.json writes a missing figure as null
        if key in ev and ev[key] is None:
            ev[key] = math.nan
    with (run_dir / "eval.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("exact_ratio")]
    reached = next((r for r in rows if float(r["exact_ratio"]) >= goal), None)
    if "exact" not in ev:  # the training evaluation skipped it (position limit): compute it
        rules = Rules.from_dict(dict(card["rules"]))
        try:
            value = turn_value(resolve_bot(str(run_dir / "model.zip"), rules, "turn"), rules).value
        except EnumerationLimit:  # eight dice with carry-over: too many positions to list
            value = math.nan
        ev = {**ev, "exact": value, "exact_ratio": value / ev["optimal"]}
    return {
        "run": run_dir.name,
        "seed": card["args"]["seed"],
        "steps": card["steps"],
        "cpu_min": card["cpu_time_s"] / 60,
        "wall_min": card["wall_time_s"] / 60,
        "optimal": ev["optimal"],
        "exact": ev.get("exact", math.nan),
        "exact_ratio": ev.get("exact_ratio", math.nan),
        "sim_mean": ev["mean"],
        "sim_ci95": ev["ci95"],
        "goal_step": int(float(reached["step"])) if reached else None,
        "goal_cpu_min": float(reached["cpu_s"]) / 60 if reached else None,
        "exact_evals": len(rows),
    }


def table(rows: list[dict[str, Any]], goal: float) -> str:
    head = (
        "| seed | steps | train CPU min | exact points/turn | % of optimal | "
        f"first eval >= {100 * goal:.1f}% (step, CPU min) | simulated (95% CI) |"
    )
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        when = f"{r['goal_step']:,}, {r['goal_cpu_min']:.1f}" if r["goal_step"] is not None else "not reached"
        if not r["exact_evals"]:
            when = "no exact evaluation logged"
        lines.append(
            f"| {r['seed']} | {r['steps']:,} | {r['cpu_min']:.1f} | {r['exact']:.2f} | "
            f"{100 * r['exact_ratio']:.2f}% | {when} | {r['sim_mean']:.1f} ± {r['sim_ci95']:.1f} |"
        )
    ratios = [100 * r["exact_ratio"] for r in rows]
    sd = statistics.stdev(ratios) if len(ratios) > 1 else 0.0
    lines.append(
        f"| all ({len(rows)}) | | {statistics.median(r['cpu_min'] for r in rows):.1f} (median) | "
        f"{statistics.mean(r['exact'] for r in rows):.2f} (optimal {rows[0]['optimal']:.2f}) | "
        f"{statistics.mean(ratios):.2f}% ± {sd:.2f} (sd), worst {min(ratios):.2f}% | | |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str = "greed train recipe turn") -> int:
    argv, extra = split_passthrough(argv)
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--total-timesteps", type=int, default=2_000_000)
    ap.add_argument("--jobs", type=int, default=2, help="training runs at once")
    ap.add_argument("--runs-dir", default="runs/bench_ppo")
    ap.add_argument("--tag", default="ppo", help="experiment name in the run names")
    ap.add_argument("--goal", type=float, default=0.995, help="share of the optimum to time")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ns = ap.parse_args(argv)
    runs_dir = Path(ns.runs_dir)
    rc = run_seeds(
        ns.seeds, ns.jobs, lambda seed: train(ns.rules, seed, ns.total_timesteps, runs_dir, ns.tag, extra)
    )
    if rc:
        return rc
    rows = [collect(runs_dir / run_name(ns.rules, s, ns.tag), ns.goal) for s in ns.seeds]
    heading = f"`{ns.rules}` turn, {ns.total_timesteps:,} steps per seed, recipe: {' '.join(RECIPE + extra)}"
    report(heading, table(rows, ns.goal), rows, ns.json)
    return 0

