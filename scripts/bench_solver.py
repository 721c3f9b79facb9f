"""Solve every preset and objective at full size: headline, time, CPU time, peak memory, checks.

Each solve runs in a fresh process, so its peak resident memory (``resource.getrusage``,
including the ~150 MiB of numpy/numba/LLVM every process pays) and the peak of numpy
allocations seen by ``tracemalloc`` are its own; compiled kernels come from numba's on-disk
cache (a first, untimed solve of a tiny target compiles them). *CPU s* is the process's CPU
time over all its threads, which a shared machine disturbs less than the wall time; with
``--repeat N`` both are medians of ``N`` solves. The load average is recorded before and after
each solve. ``--baseline FILE`` (the ``--json`` of an earlier run, e.g. of another commit)
adds the ratios of its wall and CPU times to this run's. Optionally each table is checked by
simulation: ``OptimalBot`` played in the engine must reproduce the headline within 3
standard errors, and ``--compare-shipped`` reports the largest difference from the shipped
table of the same rules.

Usage::

    python scripts/bench_solver.py                      # every tractable pair
    python scripts/bench_solver.py --presets ten_thousand --objectives duel --simulate 20000
    python scripts/bench_solver.py --objectives duel --repeat 3 --json new.json --baseline old.json
    python scripts/bench_solver.py --write-tables       # also save tables (package data
                                                           # when < 2 MB, else the user cache)
    NUMBA_NUM_THREADS=1 python scripts/bench_solver.py --json one.json
    python scripts/bench_solver.py --json all.json
    python scripts/bench_solver.py --threads-table one.json all.json   # docs/solver-timings.md

The markdown table printed at the end is what ``docs/results.md`` ("Solver") shows;
``--threads-table`` puts a one-thread and an all-thread run side by side
(``docs/solver-timings.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from greed_env.rules import PRESETS, Rules
from greed_env.solver import OBJECTIVES

PACKAGE_LIMIT = 2 * 1024 * 1024


def _clear_caches() -> None:
    from greed_env.solver import carry, model, objectives

    for fn in (carry.carry_tables, carry._reachable, model.roll_tables, objectives.tail_gain):
        fn.cache_clear()


def warmup_rules(rules: Rules) -> Rules:
    """``rules`` at a target of at most 500 (the untimed solve that compiles the kernels), with
    the entry threshold lowered below it where it would not fit (ten_thousand's 1,000)."""
    if not rules.target:
        return rules
    target = min(rules.target, 500)
    return rules.replace(target=target, entry_threshold=min(rules.entry_threshold, target // 2))


def _solve_job(args: tuple[str, str, bool, int, int, int, bool]) -> dict[str, Any]:
    name, objective, write, simulate, seed, repeat, compare = args
    import numpy as np

    from greed_env.rules import preset
    from greed_env.solver import SolverError, solve
    from greed_env.solver.table import SolverTable, cache_dir, package_table_dir

    rules = preset(name)
    with contextlib.suppress(SolverError):  # compile the kernels (numba's disk cache) untimed
        solve(warmup_rules(rules), objective)
    load_before = os.getloadavg()[0]
    tracemalloc.start()
    walls: list[float] = []
    cpus: list[float] = []
    table = None
    for _ in range(max(1, repeat)):
        _clear_caches()  # every solve builds its roll / dice-state tables, as a fresh one does
        t0 = time.perf_counter()
        c0 = time.process_time()
        try:
            table = solve(rules, objective)
        except SolverError as exc:
            return {"preset": name, "objective": objective, "error": str(exc)}
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert table is not None
    out: dict[str, Any] = {
        "preset": name,
        "objective": objective,
        "headline": table.headline,
        "label": table.meta.get("headline_label", ""),
        "seconds": statistics.median(walls),
        "cpu_seconds": statistics.median(cpus),
        "repeat": len(walls),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "peak_traced_mib": traced / 2**20,
        "meta": {k: v for k, v in table.meta.items() if isinstance(v, int | float | str | bool)},
    }
    if compare:
        path = package_table_dir() / table.filename()
        if path.exists():
            old = SolverTable.load(path, rules, objective)
            out["max_diff_shipped"] = max(
                float(
                    np.max(
                        np.abs(
                            np.asarray(table.arrays[k], float) - np.asarray(old.arrays[k], float)
                        )
                    )
                )
                for k in table.arrays
                if k in old.arrays and old.arrays[k].shape == table.arrays[k].shape
            )
    if write:
        tmp = table.save(cache_dir())
        size = tmp.stat().st_size
        out["bytes"] = size
        if size < PACKAGE_LIMIT:
            out["path"] = str(table.save(package_table_dir()).name)
            out["shipped"] = True
        else:
            out["path"] = str(tmp)
            out["shipped"] = False
    if simulate:
        try:
            out["simulation"] = simulate_headline(table, simulate, seed)
        except SolverError as exc:
            out["simulation_error"] = str(exc)
    return out


def simulate_headline(table: Any, n: int, seed: int) -> dict[str, float]:
    """Play ``n`` episodes with OptimalBot in the engine; mean and standard error."""
    import numpy as np

    from greed_env.rules import apply, apply_roll, is_chance, is_over, new_game, sample_roll
    from greed_env.solver import OptimalBot

    rules = table.rules
    obj = table.objective
    if obj != "duel":
        rules = rules.replace(min_players=1, horizon_rounds=10**7)
        if obj == "turn":
            rules = rules.replace(target=10**9)
    bot = OptimalBot(table.rules, obj, table)
    rng = np.random.default_rng(seed)
    vals = np.empty(n)
    if obj == "turn" and rules.bust_penalty:
        s = new_game(rules, 1)
        for i in range(n):
            before, turn = s.scores[0], s.turns[0]
            while s.turns[0] == turn:
                s = (
                    apply_roll(rules, s, sample_roll(rules, s, rng))
                    if is_chance(s)
                    else apply(rules, s, bot.act(rules, s, rng))
                )
            vals[i] = s.scores[0] - before
        batches = vals[: n - n % 50].reshape(50, -1).mean(axis=1)
        mean = float(vals.mean())
        se = float(batches.std(ddof=1) / np.sqrt(len(batches)))
        return {"n": n, "mean": mean, "se": se, "z": (mean - table.headline) / se}
    for i in range(n):
        s = new_game(rules, 2 if obj == "duel" else 1, first_player=0)
        if obj == "turn":
            s = s._replace(entered=(True,))
        while not is_over(s):
            if obj in ("turn", "entry") and (s.turns[0] > 1):
                break
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
            else:
                s = apply(rules, s, bot.act(rules, s, rng))
        if obj == "duel":
            vals[i] = s.shares[0]
        elif obj == "race":
            vals[i] = s.turns[0]
        elif obj == "entry":
            vals[i] = float(s.scores[0] > 0)
        else:
            vals[i] = s.scores[0]
    mean = float(vals.mean())
    se = float(vals.std(ddof=1) / np.sqrt(n))
    return {"n": n, "mean": mean, "se": se, "z": (mean - table.headline) / se if se > 0 else 0.0}


def work(meta: dict[str, Any]) -> str:
    """The solver's own count of its work: sweeps of in-turn passes (and of the linear systems
    between them, Zilch's duel), or in-turn passes per score pair / score (Newton steps)."""
    if "sweeps" in meta:
        lin = meta.get("linear_sweeps")
        return f"{meta['sweeps']} sweeps" + (f" + {lin} linear" if lin else "")
    if "mean_iterations" in meta:
        return f"{meta['mean_iterations']:.2f} passes/pair"
    if "max_iterations" in meta:
        return f"<= {meta['max_iterations']} passes/score"
    return ""


def markdown(
    rows: list[dict[str, Any]], baseline: dict[tuple[str, str], dict[str, Any]] | None = None
) -> str:
    base = baseline or {}
    head = "| preset | objective | headline | what | wall (s) | CPU (s) | load | work | peak RSS (MiB) | numpy peak (MiB) |"
    rule = "|---|---|---|---|---:|---:|---:|---|---:|---:|"
    if base:
        head += " before: wall / CPU (s) | speed-up (CPU) |"
        rule += "---:|---:|"
    head += " simulation (mean ± SE, z) |"
    rule += "---|"
    lines = [head, rule]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['preset']} | {r['objective']} | — | not solved: {r['error']} |"
                + " |" * (head.count("|") - 5)
            )
            continue
        sim = r.get("simulation")
        sim_txt = (
            f"{sim['mean']:.4f} ± {sim['se']:.4f} (n={sim['n']}, z={sim['z']:+.2f})" if sim else ""
        )
        line = (
            f"| {r['preset']} | {r['objective']} | {r['headline']:.6f} | {r['label']} | "
            f"{r['seconds']:.1f} | {r.get('cpu_seconds', float('nan')):.1f} | "
            f"{r.get('load_before', float('nan')):.1f}–{r.get('load_after', float('nan')):.1f} | "
            f"{work(r.get('meta', {}))} | {r['peak_rss_mib']:.0f} | {r['peak_traced_mib']:.1f} |"
        )
        if base:
            b = base.get((r["preset"], r["objective"]))
            if b and "seconds" in b:
                bc = b.get("cpu_seconds", b["seconds"])
                line += f" {b['seconds']:.1f} / {bc:.1f} | {bc / max(r.get('cpu_seconds', r['seconds']), 1e-9):.2f}x |"
            else:
                line += " | |"
        lines.append(line + f" {sim_txt} |")
    return "\n".join(lines)


def threads_markdown(one: list[dict[str, Any]], many: list[dict[str, Any]]) -> str:
    """One row per preset and objective: the one-thread run's times and peak memory beside the
    all-thread run's (rows of ``--json`` files; a pair missing from one side is left blank). The
    wall speed-up is left out where either solve took under 5 s (start-up and noise)."""
    by_many = {(r["preset"], r["objective"]): r for r in many if "error" not in r}
    head = (
        "| preset | objective | headline | work | 1 thread: wall (s) | CPU (s) | peak RSS (MiB) | load "
        "| all threads: wall (s) | CPU (s) | peak RSS (MiB) | load | wall speed-up |"
    )
    lines = [head, "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    seen = set()
    for r in [
        *one,
        *(
            r
            for r in many
            if (r["preset"], r["objective"]) not in {(o["preset"], o["objective"]) for o in one}
        ),
    ]:
        key = (r["preset"], r["objective"])
        if key in seen or "error" in r:
            continue
        seen.add(key)
        a = r if r in one else None
        b = by_many.get(key)

        def cells(x: dict[str, Any] | None) -> str:
            if x is None:
                return " | | | |"
            load = (
                f"{x.get('load_before', float('nan')):.1f}–{x.get('load_after', float('nan')):.1f}"
            )
            return f" {x['seconds']:.1f} | {x.get('cpu_seconds', float('nan')):.1f} | {x['peak_rss_mib']:.0f} | {load} |"

        ref = a or b
        assert ref is not None
        timed = a and b and min(a["seconds"], b["seconds"]) >= 5.0
        speed = f" {a['seconds'] / b['seconds']:.2f}x |" if timed else " |"
        lines.append(
            f"| {r['preset']} | {r['objective']} | {ref['headline']:.6f} | {work(ref.get('meta', {}))} |"
            + cells(a)
            + cells(b)
            + speed
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--presets", nargs="*", default=list(PRESETS))
    p.add_argument("--objectives", nargs="*", default=list(OBJECTIVES))
    p.add_argument("--skip", nargs="*", default=[], help="preset:objective pairs to leave out")
    p.add_argument("--write-tables", action="store_true")
    p.add_argument("--simulate", type=int, default=0, help="episodes per table (0: none)")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--json", help="write the rows as JSON here")
    p.add_argument("--repeat", type=int, default=1, help="solves per pair; times are medians")
    p.add_argument(
        "--baseline", help="JSON rows of an earlier run: report its times and the speed-up"
    )
    p.add_argument(
        "--compare-shipped", action="store_true", help="largest difference from the shipped table"
    )
    p.add_argument(
        "--threads-table",
        nargs=2,
        metavar=("ONE", "ALL"),
        help="print one table from the --json rows of a one-thread run and of an all-thread run, and exit",
    )
    args = p.parse_args(argv)
    if args.threads_table:
        try:
            one, many = (json.loads(Path(f).read_text()) for f in args.threads_table)
        except (OSError, ValueError) as exc:
            p.error(f"--threads-table: {exc}")
        print(threads_markdown(one, many))
        return 0
    baseline = None
    if args.baseline:
        try:
            baseline = {
                (r["preset"], r["objective"]): r
                for r in json.loads(Path(args.baseline).read_text())
            }
        except (OSError, ValueError, KeyError, TypeError) as exc:
            p.error(f"--baseline {args.baseline}: not the JSON rows of an earlier run ({exc})")
    pairs = [
        (name, obj)
        for name in args.presets
        for obj in args.objectives
        if f"{name}:{obj}" not in args.skip
    ]
    jobs = [
        (
            name,
            obj,
            args.write_tables,
            args.simulate,
            args.seed + i,
            args.repeat,
            args.compare_shipped,
        )
        for i, (name, obj) in enumerate(pairs)
    ]
    ctx = mp.get_context("spawn")
    rows = []
    for job in jobs:
        with ctx.Pool(1) as pool:
            row = pool.apply(_solve_job, (job,))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    print(
        f"command: python scripts/bench_solver.py {' '.join(sys.argv[1:] if argv is None else argv)}"
    )
    print(
        f"cores: {os.cpu_count()}, NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'default')}"
    )
    print(markdown(rows, baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
