"""Cost of the three-player solver (objective ``3p``) at reduced targets, and the full-size estimate.

For each target: the three-player solve (in-turn rows run, CPU seconds over all threads, wall
seconds, seconds per level of score sum, cycles that needed a mixed equilibrium, peak memory)
and, as a baseline measured in the same run, the two-player duel of the same rules. The
estimate for a larger target (``--estimate``, default the preset's own) is its row count
(:func:`greed_env.solver.three.three_cost`, calibrated by the ratio of rows run to rows
estimated at the largest target measured) times the CPU seconds per row measured there, and
the same per level (:func:`greed_env.solver.three.level_cost`, the unit of work a cluster would
hand out: docs/three-player.md).

Usage::

    python benchmarks/bench_three_player.py --targets 1000 2000 5000 --json three.json
    python benchmarks/bench_three_player.py --rules farkle --targets 2000

Each solve runs in a fresh process (its own peak memory); the kernels are compiled first by an
untimed solve at a tiny target. The load average is printed beside every figure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import time
from typing import Any

from greed_env.files import atomic_write_text
from greed_env.rules import preset
from greed_env.solver.three import level_cost, solve_three, three_cost


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _run(name: str, target: int, objective: str, out: Any) -> None:
    from greed_env.solver import solve

    rules = preset(name, target=target)
    load0 = _load()
    c0 = time.process_time()
    t0 = time.perf_counter()
    table = solve_three(rules) if objective == "3p" else solve(rules, objective)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    meta = table.meta
    out.put({
        "rules": name, "target": target, "objective": objective, "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2), "load_before": load0, "load_after": _load(),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "headline": meta["headline"], "start_values": meta.get("start_values"),
        "rows": meta.get("rows"), "rows_estimated": three_cost(rules) if objective == "3p" else None,
        "mean_iterations": meta.get("mean_iterations"), "mixed_cycles": meta.get("mixed_cycles"),
        "mixed_turn_starts": meta.get("mixed_turn_starts"), "max_margin_points": meta.get("max_margin_points"),
        "level_seconds": meta.get("level_seconds"),
    })


def _in_process(name: str, target: int, objective: str) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_run, args=(name, target, objective, q))
    p.start()
    res = q.get()
    p.join()
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rules", default="ten_thousand")
    p.add_argument("--targets", nargs="+", type=int, default=[1000, 2000, 5000])
    p.add_argument("--estimate", type=int, help="target to estimate (default: the preset's own)")
    p.add_argument("--no-duel", action="store_true", help="leave out the duel baseline")
    p.add_argument("--json", help="write the measurements here")
    args = p.parse_args(argv)
    solve_three(preset(args.rules, target=max(1000, preset(args.rules).entry_threshold)))  # compile, untimed
    rows: list[dict[str, Any]] = []
    for target in args.targets:
        for objective in ("3p",) if args.no_duel else ("3p", "duel"):
            res = _in_process(args.rules, target, objective)
            rows.append(res)
            shown = {k: v for k, v in res.items() if k != "level_seconds"}
            print(json.dumps(shown), flush=True)
    print("\n| target | objective | rows | CPU s | wall s | CPU µs/row | mixed cycles | load | headline |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        per_row = 1e6 * r["cpu_s"] / r["rows"] if r.get("rows") else float("nan")
        print(f"| {r['target']:,} | {r['objective']} | {r['rows'] or 0:,.0f} | {r['cpu_s']} | {r['wall_s']} | "
              f"{per_row:.2f} | {r.get('mixed_cycles') or 0} | {r['load_before']}-{r['load_after']} | "
              f"{r['headline']:.6f} |")
    three = [r for r in rows if r["objective"] == "3p"]
    top = max(three, key=lambda r: r["target"])
    full = args.estimate or preset(args.rules).target
    calib = top["rows"] / top["rows_estimated"]
    rows_full = three_cost(preset(args.rules, target=full)) * calib
    per_row = top["cpu_s"] / top["rows"]
    per_level = level_cost(preset(args.rules, target=full)) * calib * per_row
    estimate = {
        "target": full, "rows": rows_full, "cpu_s": rows_full * per_row, "cpu_s_per_row": per_row,
        "from_target": top["target"], "load_at_measure": [top["load_before"], top["load_after"]],
        "level_cpu_s": [round(float(x), 3) for x in per_level],
        "largest_level_cpu_s": float(per_level.max()),
    }
    print(f"\nestimate at target {full:,}: {rows_full:.3g} rows x {1e6 * per_row:.2f} µs = "
          f"{rows_full * per_row / 3600:.1f} CPU-hours (from target {top['target']:,}, load "
          f"{top['load_before']}-{top['load_after']}); largest level {per_level.max():.0f} CPU-s")
    if args.json:
        atomic_write_text(args.json, json.dumps({"runs": rows, "estimate": estimate}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
