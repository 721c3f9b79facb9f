"""Solve Trippn's turn under its exact target (one turn from 0, as ``Solitaire-v0`` plays it).

The solver refuses Trippn on demand: its dice states take about an hour of CPU and 17 GB of memory to enumerate
(``greed_env.solver.carry``, docs/solver.md). This script runs that enumeration once, with
progress lines (states expanded / found, CPU seconds, peak memory), solves the turn with
:func:`greed_env.solver.carry.solve_exact_turn` and writes the table (a few hundred bytes:
the headline and its metadata) where :func:`greed_env.solver.load_table` finds it, so an
evaluation of a Trippn turn bot reports its fraction of the optimum. It also prints what the
race and the duel would cost at the measured speed of the pass (the reason they stay
unsolved).

    python scripts/trippn_turn.py [--out greed_env/data/tables] [--every 120]
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time
from pathlib import Path

from greed_env.progress import status
from greed_env.rules import preset
from greed_env.solver.carry import DEFAULT_MAX_STATES, carry_tables, solve_exact_turn

PACKAGE_TABLES = Path(__file__).resolve().parents[1] / "greed_env" / "data" / "tables"
# Progressive's duel at full size (docs/results.md, Solver): rows of in-turn passes it runs and
# the keeps per row, for scaling the Trippn estimates.
DUEL_ROWS = 200 * 20_100 * 2.6
RACE_ROWS = 200 * 201 / 2 * 3.0


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=PACKAGE_TABLES, help="folder the table is written to")
    ap.add_argument("--every", type=float, default=120.0, help="seconds between progress lines")
    ap.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES)
    ap.add_argument("--rules", default="trippn", help="a carry-over preset with an exact target (progressive: a quick check)")
    args = ap.parse_args(argv)
    rules = preset(args.rules)
    c0, w0 = time.process_time(), time.perf_counter()
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(args.every):
            print(f"  {time.perf_counter() - w0:6.0f} s wall, {time.process_time() - c0:6.0f} CPU-s: "
                  f"{status()}, load {os.getloadavg()[0]:.1f}, peak RSS {_rss_mb():.0f} MB", flush=True)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    ct = carry_tables(rules, False, args.max_states)
    c1, w1 = time.process_time(), time.perf_counter()
    table = solve_exact_turn(rules, args.max_states)
    c2, w2 = time.process_time(), time.perf_counter()
    stop.set()
    thread.join()
    meta = table.meta
    rows = rules.target // ct.unit
    ns_per_keep = (c2 - c1) / (rows * ct.osc.shape[0]) * 1e9
    print(f"{rules.name}: {ct.n_states} dice states, {ct.gp.shape[0]} roll groups, {ct.osc.shape[0]} keeps "
          f"(unit {ct.unit}, largest keep {ct.max_keep * ct.unit}), {meta['risk_free_states']} risk-free")
    print(f"enumeration {c1 - c0:.0f} CPU-s / {w1 - w0:.0f} s wall; turn pass {c2 - c1:.1f} CPU-s / "
          f"{w2 - w1:.1f} s wall ({ns_per_keep:.2f} ns per keep and turn total); peak RSS {_rss_mb():.0f} MB")
    print(f"turn from 0 under the exact target {rules.target}: {table.headline:.6f} points")
    if meta["points_per_turn_target_ignored"] is not None:  # the turn time includes that solve
        print(f"target ignored: {meta['points_per_turn_target_ignored']:.6f} points (no estimates: the "
              "pass time above includes this solve)")
        ns_per_keep = float("nan")
    for name, n_rows in (("race", RACE_ROWS), ("duel", DUEL_ROWS)):
        cpu = n_rows * ct.osc.shape[0] * ns_per_keep * 1e-9
        print(f"{name}: ~{n_rows:.3g} rows of passes (as Progressive's) x {ct.osc.shape[0]} keeps "
              f"~ {cpu / 3600:.1f} CPU-hours at this pass's speed (one position per pass; the duel's lane passes "
              "cost about 0.35 of this per position at Progressive's size)")
    args.out.mkdir(parents=True, exist_ok=True)
    path = table.save(args.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
