"""MaskablePPO against the optimal duel bot: several seeds of the two-stage recipe, with spread.

Per seed, two ``greed train`` runs in subprocesses (up to ``--jobs`` seeds at once):

1. the turn stage: the turn recipe (:mod:`greed_env.train.recipes.turn`) (``Solitaire-v0``, objective ``turn``,
   2,000,000 steps), skipped when ``runs/bench_ppo`` already holds that seed's finished run
   (``--turn-tag`` names those runs, ``--turn-args`` adds options to them, e.g. a wider
   network: then pass the same option to the duel stage after ``--``);
2. the duel stage: ``Duel-v0`` against ``optimal-duel`` on the native vector engine (the
   optimal bot played in numba, :mod:`greed_env.vector.optimal`), starting from the turn
   stage's weights, half of its episodes starting at the learner's final-round turn
   (exploring starts, :mod:`greed_env.train.curriculum`; ``DUEL_RECIPE``; none for rules
   without a final round, :func:`duel_recipe`).

When all have finished, each seed's cards and ``eval.csv`` are read and one row per seed is
printed: CPU minutes of both stages, the final policy's seat-balanced win rate against
``optimal-duel`` over the card's final evaluation (100,000 games: 95% CI about +-0.3 points),
and the first periodic evaluation (40,000 games) at or above ``--goal`` with the CPU minutes
used by then (both stages). A last row gives mean, standard deviation and the worst seed. A
finished run is not trained again, so rerunning the command only re-collects the table.

With ``--fresh-seed S`` each final model is also played over ``--fresh-games`` games drawn
from evaluation seed S (``greed eval --seed S``), games no run has seen: the card's evaluation
uses the runs' ``--eval-seed`` (12,345), the same games for every run and every periodic
evaluation, so a model picked or a recipe tuned on it reads high there. The result is kept in
the run directory (``fresh_eval_S.json``), so rerunning the command only re-collects it.

With ``--regret-games N`` each final model also plays N games of evaluation seed
``--regret-seed`` (5) with the solver's regret of every one of its decisions measured, and the
row gets the estimate ``0.5 - mean regret per game`` (``greed eval --regret-episodes``). Against
``optimal-duel`` its expectation is the win rate's exactly (a game's expected result against
optimal play is the optimal value less what the policy's own decisions give away by the solver's
values), and its spread is far smaller than the games' own +-1 outcomes: 2,000 games give about
+-0.09 points, where 100,000 played games give +-0.31 (kept as ``regret_eval_S.json``).

With ``--after TAG`` the duel stage starts instead from the finished duel run of ``TAG`` (same
seed, same ``--runs-dir``), a further stage; its row counts the CPU of every stage before it
(followed through the cards' ``init_from``). ``--seed-offset N`` trains a seed's run with
training seed ``seed + N`` (the runs keep the seed in their names and ``--after`` chains):
branches of one stage from one model.

With ``--soup-of TAG [TAG ...]`` nothing is trained: each seed's run of ``--tag`` is the model
soup of those tags' finished runs of the same seed (``greed train soup``: their weights
averaged, :mod:`greed_env.train.soup`), played over the cards' 100,000 games of evaluation seed
12,345 in place of a card's final evaluation; its row counts the CPU of all its members and of
the stages before their common parent.

Usage (``python benchmarks/bench_ppo_duel.py`` takes the same arguments)::

    greed train recipe duel --seeds 1 2 3 --jobs 3
    greed train recipe duel --seeds 1 --tag plain -- --final-round-starts 0
    greed train recipe duel --seeds 1 2 3 --jobs 3 --tag margin --after ppo \
        --duel-steps 6000000 -- --features margin --final-round-near 0.5 --ent-coef 0.001
    greed train recipe duel --seeds 1 2 3 --tag soup --soup-of margin margin2 margin3

Arguments after ``--`` go to the duel stage's ``greed train duel`` unchanged.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from greed_env.files import atomic_write_text
from greed_env.train.recipes import turn
from greed_env.train.recipes.seeds import report, run_seeds, split_passthrough, spread

__all__ = ["CARD_GAMES", "DUEL_RECIPE", "collect", "duel_recipe", "earlier_cpu_min", "fresh_eval", "main", "make_soup", "run_seed", "table"]

DUEL_RECIPE = [
    "--opponent", "optimal",
    "--vector", "native",
    "--num-envs", "512",
    "--num-steps", "64",
    "--minibatch-size", "4096",
    "--update-epochs", "4",
    "--learning-rate", "1e-4",
    "--gae-lambda", "0.8",
    "--ent-coef", "0.003",
    "--vf-coef", "1.0",
    "--final-round-starts", "0.5",
    "--eval-every", "500000",
    "--eval-episodes", "40000",
    "--eval-regret-episodes", "0",
    "--final-eval-episodes", "100000",
    "--checkpoint-every", "500000",
    "--torch-threads", "1",
    "--no-progress",
]  # fmt: skip


def duel_recipe(rules: str) -> list[str]:
    """``DUEL_RECIPE`` for the rule book ``rules`` (a preset name or ``name:k=v,...``): without
    a final round (greed, farkle, farkle5) there is no final-round turn to start episodes at,
    and under an exact target (progressive: the last turn after the opponent lands must land
    too) :func:`~greed_env.train.curriculum.final_round_start` builds none, so those starts are
    off (``--final-round-starts 0``); arguments after ``--`` still win."""
    from greed_env.rules.config import resolve_rules

    r = resolve_rules(rules)
    if r.final_round and not r.exact_target:
        return list(DUEL_RECIPE)
    at = DUEL_RECIPE.index("--final-round-starts")
    return [*DUEL_RECIPE[:at], "--final-round-starts", "0", *DUEL_RECIPE[at + 2 :]]


def _duel_name(rules: str, seed: int, tag: str) -> str:
    return f"{rules}__duel__{tag}__{seed}"


CARD_GAMES = (12_345, 100_000)
"""Evaluation seed and games of a training card's final evaluation (``DUEL_RECIPE``)."""


def make_soup(ns: argparse.Namespace, seed: int) -> tuple[int, float]:
    """The soup of the ``--soup-of`` tags' runs of one seed, and its play over the cards' games."""
    t0 = time.perf_counter()
    duel_dir = Path(ns.runs_dir)
    run = duel_dir / _duel_name(ns.rules, seed, ns.tag)
    if not (run / "model.json").is_file():
        members = [duel_dir / _duel_name(ns.rules, seed, tag) / "model.zip" for tag in ns.soup_of]
        missing = [str(m.parent) for m in members if not m.with_suffix(".json").is_file()]
        if missing:
            print(f"--soup-of: {', '.join(missing)} not finished; run those tags first", file=sys.stderr)
            return 2, time.perf_counter() - t0
        cmd = [sys.executable, "-m", "greed_env.cli", "train", "soup", *map(str, members), "--out", str(run)]
        if subprocess.call(cmd):
            return 1, time.perf_counter() - t0
    fresh_eval(run, *CARD_GAMES)
    return 0, time.perf_counter() - t0


def run_seed(ns: argparse.Namespace, seed: int, extra: list[str]) -> tuple[int, float]:
    """Both stages of one seed; returns (exit code, wall seconds)."""
    if ns.soup_of:
        return make_soup(ns, seed)
    t0 = time.perf_counter()
    turn_dir = Path(ns.turn_runs_dir)
    rc, _ = turn.train(ns.rules, seed, ns.turn_steps, turn_dir, ns.turn_tag, shlex.split(ns.turn_args))
    if rc:
        return rc, time.perf_counter() - t0
    duel_dir = Path(ns.runs_dir)
    name = _duel_name(ns.rules, seed, ns.tag)
    if (duel_dir / name / "model.json").is_file():
        return 0, time.perf_counter() - t0
    init = turn_dir / turn.run_name(ns.rules, seed, ns.turn_tag) / "model.zip"
    if ns.after:
        init = duel_dir / _duel_name(ns.rules, seed, ns.after) / "model.zip"
        if not init.with_suffix(".json").is_file():
            print(f"--after {ns.after}: {init.parent} has not finished; run that tag first", file=sys.stderr)
            return 2, time.perf_counter() - t0
    resume = ["--resume"] if (duel_dir / name / "checkpoints" / "latest.json").is_file() else []
    cmd = [
        sys.executable, "-m", "greed_env.cli", "train", "duel",
        "--rules", ns.rules, "--seed", str(seed + ns.seed_offset), "--total-timesteps", str(ns.duel_steps),
        "--runs-dir", str(duel_dir), "--run-name", name, "--exp-name", ns.tag,
        "--init-from", str(init), *duel_recipe(ns.rules), *extra, *resume,
    ]  # fmt: skip
    log = duel_dir / f"{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as fh:
        rc = subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT)
    return rc, time.perf_counter() - t0


def earlier_cpu_min(run: Path) -> float:
    """CPU minutes of every run that ``run`` started from, following the cards' ``init_from``
    back to a run trained from scratch (the turn stage)."""
    total, seen = 0.0, {run.resolve()}
    init = json.loads((run / "model.json").read_text())["args"].get("init_from")
    while init:
        prev = Path(init).parent
        if prev.resolve() in seen or not (prev / "model.json").is_file():
            raise SystemExit(f"{run}: cannot follow --init-from {init} to a finished run")
        seen.add(prev.resolve())
        card = json.loads((prev / "model.json").read_text())
        total += card["cpu_time_s"] / 60
        init = card["args"].get("init_from")
    return total


def fresh_eval(duel_run: Path, seed: int, games: int, regret: bool = False) -> dict[str, Any]:
    """The final model's win rate over ``games`` games of evaluation seed ``seed`` (``greed eval
    --json``), with ``regret`` also the regret estimate over all of them; computed once and kept
    in the run directory."""
    path = duel_run / f"{'regret' if regret else 'fresh'}_eval_{seed}.json"
    if path.is_file():
        data = json.loads(path.read_text())
        if data.get("episodes") == games and (not regret or "regret_estimate" in data):
            return data
    cmd = [
        sys.executable, "-m", "greed_env.cli", "eval", str(duel_run / "model.zip"), "--objective", "duel",
        "--episodes", str(games), "--seed", str(seed), "--regret-episodes", str(games if regret else 0),
        "--json", "--no-progress",
    ]  # fmt: skip
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    atomic_write_text(path, json.dumps(data, indent=1))
    return data


def collect(
    duel_run: Path,
    goal: float,
    fresh: tuple[int, int] | None = None,
    regret: tuple[int, int] | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """One seed's row from the cards of the duel run and the runs it started from (their CPU
    time is counted, however many stages), and the duel run's evaluation log; with ``fresh``
    (seed, games), also the final model's win rate on those held-out games; with ``regret``
    (seed, games), its regret estimate over those. ``seed`` labels the row (default: the
    card's training seed). A soup (no evaluation of its own, no log) reads its play over the
    cards' games."""
    duel = json.loads((duel_run / "model.json").read_text())
    ev = duel["evaluation"] or fresh_eval(duel_run, *CARD_GAMES)
    turn_cpu = earlier_cpu_min(duel_run)
    rows = []
    if (duel_run / "eval.csv").is_file():
        with (duel_run / "eval.csv").open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    reached = next((r for r in rows if float(r["value"]) >= goal), None)
    held_out = fresh_eval(duel_run, *fresh) if fresh else None
    by_regret = fresh_eval(duel_run, *regret, regret=True) if regret else None
    return {
        "regret_win": by_regret["regret_estimate"] if by_regret else None,
        "regret_ci95": by_regret["regret_estimate_ci95"] if by_regret else None,
        "regret_games": by_regret["episodes"] if by_regret else None,
        "fresh_win": held_out["mean"] if held_out else None,
        "fresh_ci95": held_out["ci95"] if held_out else None,
        "seed": duel["args"]["seed"] if seed is None else seed,
        "turn_cpu_min": turn_cpu,
        "duel_steps": duel["steps"],
        "duel_cpu_min": duel["cpu_time_s"] / 60,
        "total_cpu_min": turn_cpu + duel["cpu_time_s"] / 60,
        "win": ev["mean"],
        "ci95": ev["ci95"],
        "games": ev["episodes"],
        "start": float(rows[0]["value"]) if rows else float("nan"),
        "goal_step": int(float(reached["step"])) if reached else None,
        "goal_cpu_min": turn_cpu + float(reached["cpu_s"]) / 60 if reached else None,
    }


def table(
    rows: list[dict[str, Any]], goal: float, fresh_seed: int | None = None, regret_seed: int | None = None
) -> str:
    fresh = fresh_seed is not None
    regret = regret_seed is not None
    head = (
        "| seed | earlier stages CPU min | duel steps | duel CPU min | total CPU min | "
        f"win rate vs optimal-duel (95% CI) | first eval >= {100 * goal:.1f}% (duel step, total CPU min) |"
    )
    if fresh:
        head += f" held-out games, evaluation seed {fresh_seed} (95% CI) |"
    if regret:
        head += f" 0.5 - regret per game, evaluation seed {regret_seed} (95% CI) |"
    lines = [head, "|---|---|---|---|---|---|---|" + ("---|" if fresh else "") + ("---|" if regret else "")]
    for r in rows:
        when = f"{r['goal_step']:,}, {r['goal_cpu_min']:.1f}" if r["goal_step"] is not None else "not reached"
        line = (
            f"| {r['seed']} | {r['turn_cpu_min']:.1f} | {r['duel_steps']:,} | {r['duel_cpu_min']:.1f} | "
            f"{r['total_cpu_min']:.1f} | {100 * r['win']:.2f}% ± {100 * r['ci95']:.2f} "
            f"({r['games']:,} games) | {when} |"
        )
        if fresh:
            line += f" {100 * r['fresh_win']:.2f}% ± {100 * r['fresh_ci95']:.2f} |"
        if regret:
            line += f" {100 * r['regret_win']:.2f}% ± {100 * r['regret_ci95']:.2f} ({r['regret_games']:,} games) |"
        lines.append(line)
    last = (
        f"| all ({len(rows)}) | | | | {statistics.median(r['total_cpu_min'] for r in rows):.1f} (median) | "
        f"{spread([100 * r['win'] for r in rows])} | |"
    )
    if fresh:
        last += f" {spread([100 * r['fresh_win'] for r in rows])} |"
    if regret:
        last += f" {spread([100 * r['regret_win'] for r in rows])} |"
    lines.append(last)
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str = "greed train recipe duel") -> int:
    argv, extra = split_passthrough(argv)
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--turn-steps", type=int, default=2_000_000)
    ap.add_argument("--duel-steps", type=int, default=8_000_000)
    ap.add_argument("--jobs", type=int, default=3, help="seeds trained at once")
    ap.add_argument("--turn-runs-dir", default="runs/bench_ppo")
    ap.add_argument("--turn-tag", default="ppo", help="experiment name of the turn stage's runs")
    ap.add_argument(
        "--turn-args", default="", help="extra `greed train solo` arguments of the turn stage, e.g. '--net-width 256'"
    )
    ap.add_argument("--runs-dir", default="runs/bench_ppo_duel")
    ap.add_argument("--tag", default="ppo", help="experiment name in the duel run names")
    ap.add_argument("--after", default=None, help="start from this tag's finished duel runs")
    ap.add_argument("--seed-offset", type=int, default=0, help="train each seed's run with training seed seed + N")
    ap.add_argument(
        "--soup-of", nargs="+", default=None, metavar="TAG", help="make each seed's run the soup of these tags' runs"
    )
    ap.add_argument("--goal", type=float, default=0.495, help="win rate to time")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--fresh-seed", type=int, default=None, help="also play each final model on this evaluation seed")
    ap.add_argument("--fresh-games", type=int, default=100_000, help="games of the --fresh-seed evaluation")
    ap.add_argument(
        "--regret-games", type=int, default=0, help="also estimate each final model's win rate from its regret here"
    )
    ap.add_argument("--regret-seed", type=int, default=5, help="evaluation seed of the --regret-games games")
    ns = ap.parse_args(argv)
    rc = run_seeds(ns.seeds, ns.jobs, lambda seed: run_seed(ns, seed, extra))
    if rc:
        return rc
    fresh = (ns.fresh_seed, ns.fresh_games) if ns.fresh_seed is not None else None
    by_regret = (ns.regret_seed, ns.regret_games) if ns.regret_games else None
    rows = [
        collect(Path(ns.runs_dir) / _duel_name(ns.rules, s, ns.tag), ns.goal, fresh, by_regret, s) for s in ns.seeds
    ]
    after = f" and the duel runs tagged {ns.after}" if ns.after else ""
    if ns.seed_offset:
        after += f", training seeds offset by {ns.seed_offset}"
    turn = f" (tag {ns.turn_tag}: {ns.turn_args})" if ns.turn_args or ns.turn_tag != "ppo" else ""
    heading = (
        f"`{ns.rules}` duel against optimal-duel, {ns.duel_steps:,} duel steps per seed after "
        f"{ns.turn_steps:,} turn steps{turn}{after}; duel recipe: {' '.join(duel_recipe(ns.rules) + extra)}"
    )
    if ns.soup_of:
        heading = f"`{ns.rules}` duel against optimal-duel: the soups of the runs tagged {' '.join(ns.soup_of)}"
    regret_seed = ns.regret_seed if by_regret else None
    report(heading, table(rows, ns.goal, ns.fresh_seed, regret_seed), rows, ns.json)
    return 0

