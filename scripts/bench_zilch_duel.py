"""Zilch duel: policy iteration against the plain Gauss-Seidel sweeps, on a reduced target.

Prints, per method, the sweeps of in-turn passes, the sweeps of the linear systems between
them, the last change, CPU and wall seconds and the peak RSS, then the largest difference
between the two tables. The kernels are compiled first on a tiny target (untimed).

Usage::

    python scripts/bench_zilch_duel.py --target 3000 --floor -2000
    python scripts/bench_zilch_duel.py --target 800 --floor -500 --methods newton
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from greed_env.progress import counter
from greed_env.rules import preset
from greed_env.solver import kernels
from greed_env.solver.model import needs_full_tables, roll_tables
from greed_env.solver.objectives import _floor_units


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", type=int, default=3000)
    p.add_argument("--floor", type=int, default=-2000)
    p.add_argument("--methods", default="newton,plain", help="comma-separated: newton, plain")
    args = p.parse_args(argv)
    methods = args.methods.split(",")
    if not set(methods) <= {"newton", "plain"}:
        p.error(f"--methods {args.methods}: choose from newton, plain")
    rules = preset("zilch").replace(target=args.target)
    tb = roll_tables(rules, needs_full_tables(rules, "duel"))
    unit = tb.unit
    k, pen, mb = rules.bust_penalty_after, rules.bust_penalty // unit, -(-rules.min_bank // unit)
    for newton in (True, False):  # compile
        kernels.duel_penalty_solve(20, -4, k, pen, mb, tb.kernel_tables(), 0, 1e-12, 100, counter(), newton)
    lo = _floor_units(rules, unit, args.floor)
    tables = {}
    for method in methods:
        c0, t0 = time.process_time(), time.perf_counter()
        v, sweeps, change, linear = kernels.duel_penalty_solve(
            -(-args.target // unit), lo, k, pen, mb, tb.kernel_tables(), 0, 1e-12, 10_000, counter(), method == "newton"
        )
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{method}: sweeps={sweeps} linear={linear} change={change:.2e} "
              f"cpu={time.process_time() - c0:.1f}s wall={time.perf_counter() - t0:.1f}s peak_rss={rss:.0f}MiB", flush=True)
        tables[method] = v
    if len(tables) == 2:
        print(f"largest difference: {np.abs(tables['newton'] - tables['plain']).max():.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
