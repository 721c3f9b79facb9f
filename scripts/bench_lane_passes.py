"""The carry-over duel with lane passes against the per-pair solver it replaced, in one run.

Solves Progressive's duel at a reduced target both ways (``carry_duel_solve_lanes``, the
default, and ``carry_duel_solve``, one in-turn pass per position), ``--repeat`` times each in
alternation, and prints wall and CPU seconds (medians), the ratio, the Newton steps per pair
and whether the two tables are bitwise equal. Kernels are compiled first (untimed).

    python scripts/bench_lane_passes.py [--target 3000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from greed_env.progress import counter
from greed_env.rules import preset
from greed_env.solver import carry_kernels as ck
from greed_env.solver.carry import carry_tables, rolloff_value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", type=int, default=3000, help="points (a multiple of 50)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rules = preset("progressive").replace(target=args.target)
    ct = carry_tables(rules, False)
    n = args.target // ct.unit
    q = ck.last_turn_out(n, ct.kernel_tables(), ct.max_keep)
    rho, _ = rolloff_value(rules, ct, 1e-12)
    tie = max(rho, 1.0 - rho)

    def call(fn: object, size: int) -> tuple[np.ndarray, np.ndarray]:
        return fn(size, ct.kernel_tables(), ct.max_keep, rules.voluntary_bust, q[:size], tie, 1e-12, 60, counter())  # type: ignore[operator]

    solvers = {"per pair": ck.carry_duel_solve, "lanes": ck.carry_duel_solve_lanes}
    for fn in solvers.values():
        call(fn, 4)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in solvers}
    tables: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for _ in range(args.repeat):
        for name, fn in solvers.items():
            w0, c0 = time.perf_counter(), time.process_time()
            tables[name] = call(fn, n)
            times[name].append((time.perf_counter() - w0, time.process_time() - c0))
    print(f"progressive duel, target {args.target} ({n} x {n} pairs), {args.repeat} runs each, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    for name, (w, c) in med.items():
        print(f"  {name:9s} wall {w:7.1f} s  CPU {c:7.1f} s  Newton steps/pair {tables[name][1].mean():.3f}")
    (wb, cb), (wl, cl) = med["per pair"], med["lanes"]
    print(f"  speed-up: wall {wb / wl:.2f}x, CPU {cb / cl:.2f}x; tables bitwise equal: "
          f"{np.array_equal(tables['per pair'][0], tables['lanes'][0])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
