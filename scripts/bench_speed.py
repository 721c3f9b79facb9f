"""Every speed figure of docs/scale.md's speed table in one run, each as a ratio to its reference.

* the rules engine: random play through ``legal_moves`` / ``apply`` (``bench_rules.py``'s
  loop), ten_thousand and progressive, against OpenSpiel's C++ ``pig`` in the same loop when
  ``open_spiel`` is installed (else against the loop's Python Pig floor), by CPU time;
* the single Gymnasium env loop (``greed_env/Solitaire-v0``, random legal play), by CPU time;
* the vector engine: ``SolitaireVectorEnv`` at batch 4,096, one thread and two threads, their
  repeats interleaved (``bench_vector.py --threads``), against PettingZoo's ``connect_four_v3``
  played at random (wall time; skipped without pettingzoo's classic envs);
* the duel tables: ``greed solve --rules progressive --objective duel`` (and with ``--zilch``
  Zilch's, about four minutes more) in a fresh process, wall time against the time published
  before (:data:`PUBLISHED_SOLVE_SECONDS`) and the goal.

    python scripts/bench_speed.py                 # about four minutes on two quiet cores
    python scripts/bench_speed.py --zilch --repeats 5

``--set target=1000`` solves the tables at another target (a quick check of the script: the
published times are then no reference, and none is printed).

The load average is printed at the start and the end: on a shared machine, time the figures
with nothing else running and say the load beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_rules
import bench_vector

PUBLISHED_SOLVE_SECONDS = {"progressive": 95.0, "zilch": 420.0}
"""Wall seconds of ``greed solve --rules NAME --objective duel`` on two quiet cores as published
before the lean passes and the start without the penalty (docs/solver-timings.md)."""

GOAL_SOLVE_SECONDS = {"progressive": 60.0, "zilch": 300.0}


def _rules_rates(name: str, games: int, repeats: int) -> float:
    bench_rules.play_random(name, 5, seed=999)
    runs = [bench_rules.play_random(name, games, seed=k) for k in range(repeats)]
    return statistics.median(d / t for d, t in runs)


def _rules_reference(games: int, repeats: int) -> tuple[str, float]:
    spiel = [bench_rules.play_openspiel_pig(games * 5, seed=k) for k in range(repeats)]
    if all(r is not None for r in spiel):
        return "OpenSpiel pig", statistics.median(d / t for d, t in spiel if t > 0)  # type: ignore[misc]
    pig = [bench_rules.play_pig(games * 5, seed=k) for k in range(repeats)]
    return "Python Pig floor (open_spiel not installed)", statistics.median(d / t for d, t in pig)


def _solve_seconds(name: str, overrides: list[str]) -> tuple[float, str]:
    """Wall seconds of ``greed solve`` of ``name``'s duel table in a fresh process (the
    kernels from numba's disk cache, as a user's second solve), and its headline."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}-duel.npz"
        cmd = [sys.executable, "-m", "greed_env.cli", "solve", "--rules", name, "--objective", "duel",
               "--out", str(out)]
        for field in overrides:
            cmd += ["--set", field]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
    return seconds, done.stdout.strip().splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--games", type=int, default=200, help="rules engine: games per repeat")
    ap.add_argument("--decisions", type=int, default=3_000_000, help="vector: decisions per repeat")
    ap.add_argument("--zilch", action="store_true", help="also solve Zilch's duel table")
    ap.add_argument("--single-decisions", type=int, default=20_000,
                    help="single env loop: steps per repeat")
    ap.add_argument("--no-tables", action="store_true", help="skip the duel tables")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="a rules override of the tables (no published reference then)")
    args = ap.parse_args()
    r = args.repeats
    load0 = os.getloadavg()[0]
    rows: list[tuple[str, str, str, str]] = []

    ref_name, ref = _rules_reference(args.games, r)
    for name in ("ten_thousand", "progressive"):
        rate = _rules_rates(name, args.games, r)
        rows.append((f"rules engine, {name} (decisions/CPU-s)", f"{rate:,.0f}",
                     f"{ref_name} {ref:,.0f}", f"{rate / ref:.2f}x"))
    try:
        c4_wall, c4_cpu = bench_vector.bench_connect_four(args.single_decisions, r)
    except ImportError:  # pettingzoo's classic envs need the bench extra
        c4_wall = c4_cpu = float("nan")
    single = bench_vector.bench_single("ten_thousand", args.single_decisions, r)[1]
    rows.append(("single Gymnasium env loop, ten_thousand (steps/CPU-s)", f"{single:,.0f}",
                 f"connect_four_v3 {c4_cpu:,.0f} steps/CPU-s", f"{single / c4_cpu:.1f}x"))

    threads = 2
    one, many, ratios, floor = bench_vector.bench_threads("ten_thousand", 4096, args.decisions, r, threads)
    rows.append(("vector engine, batch 4,096, one thread (decisions/s)", f"{one[0]:,.0f}",
                 f"connect_four_v3 {c4_wall:,.0f} steps/s", f"{one[0] / c4_wall:.1f}x"))
    rows.append(("vector engine, batch 4,096, two threads (decisions/s)", f"{many[0]:,.0f}",
                 "one thread, each repeat", ", ".join(f"{x:.2f}" for x in ratios)))
    rows.append(("  noise floor (one thread after / before)", "", "", ", ".join(f"{x:.2f}" for x in floor)))

    if not args.no_tables:
        for name in ("progressive", "zilch") if args.zilch else ("progressive",):
            seconds, headline = _solve_seconds(name, args.set)
            figure = f"greed solve --rules {name} --objective duel (wall s)"
            if args.set:
                rows.append((f"{figure}, {' '.join(args.set)}", f"{seconds:.1f}", "",
                             f"headline {headline}"))
                continue
            rows.append((figure, f"{seconds:.1f}",
                         f"published {PUBLISHED_SOLVE_SECONDS[name]:.0f}, goal {GOAL_SOLVE_SECONDS[name]:.0f}",
                         f"{PUBLISHED_SOLVE_SECONDS[name] / seconds:.2f}x faster; headline {headline}"))

    print(f"load average {load0:.2f} -> {os.getloadavg()[0]:.2f}; {os.cpu_count()} cpus; medians of {r}")
    width = max(len(row[0]) for row in rows)
    for figure, value, reference, ratio in rows:
        print(f"{figure:<{width}}  {value:>12}  {reference:<42} {ratio}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
