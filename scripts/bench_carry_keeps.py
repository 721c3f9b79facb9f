"""Time the keeps of one eight-dice dice state: the reference against the solver's tables.

A dice state of the carry-over solver (``greed_env.solver.carry._reachable``) needs the keep
options and ``has_scoring_keep`` of every roll of its dice against its carry-over: 1,287 rolls
for eight dice. This script times, per (rule set, carry-over), in the same run:

* ``reference``: ``keep_options`` and ``has_scoring_keep`` for every roll, their caches
  cleared first (the tap-order walk of every sub-multiset, per roll);
* ``tables``: a fresh :class:`greed_env.solver.keeps.CarryKeeps` for the carry-over, then its
  options for every roll (what a state with a carry-over not met before costs);
* ``rows``: the options for every roll from a table already built (a further state with the
  same carry-over),

checks that both give the same options, and prints the medians over ``--repeat`` runs and the
ratios. CPU seconds of this process (``time.process_time``) with the load average.

    nice -n 15 python scripts/bench_carry_keeps.py [--repeat 3] [--carries 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from greed_env.rules import preset, scoring
from greed_env.rules.config import Rules
from greed_env.rules.scoring import EMPTY_CARRY, Carry, has_scoring_keep, keep_options
from greed_env.solver.keeps import CarryKeeps
from greed_env.solver.model import roll_distribution

CASES: tuple[tuple[str, Carry], ...] = (
    ("progressive", EMPTY_CARRY),
    ("trippn", EMPTY_CARRY),
    ("trippn", Carry((3, 0, 0, 0, 0, 0), (), ())),
    ("trippn", Carry((0, 3, 0, 0, 3, 0), (6,), ())),
    ("trippn", Carry((0, 0, 0, 0, 0, 0), (), (1, 3, 4))),
    ("trippn", Carry((3, 3, 3, 0, 0, 3), (1,), ())),
)


def _clear_reference_caches() -> None:
    for fn in (scoring.keep_options, scoring._sub_readings, scoring._tap_readings, scoring._has_scoring,
               scoring._best_partition):
        fn.cache_clear()


def _reference(rules: Rules, carry: Carry, rolls: list[tuple[int, ...]]) -> tuple[float, list]:
    _clear_reference_caches()
    t0 = time.process_time()
    out = []
    for roll in rolls:
        opts = keep_options(rules, roll, carry, True)
        out.append(([(len(o.dice), o.score, o.carry) for o in opts], has_scoring_keep(rules, roll, carry)))
    return time.process_time() - t0, out


def _tables(rules: Rules, carry: Carry, rolls: list[tuple[int, ...]]) -> tuple[float, float, list]:
    _clear_reference_caches()
    t0 = time.process_time()
    keeps = CarryKeeps(rules, carry)
    for roll in rolls:
        keeps.roll(roll, True)
    fresh = time.process_time() - t0
    t0 = time.process_time()
    out = []
    for roll in rolls:
        opts, scoring_ = keeps.roll(roll, True)
        out.append(([(k, sc, c) for _s, k, sc, c in opts], scoring_))
    return fresh, time.process_time() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per case (medians printed)")
    ap.add_argument("--carries", type=int, default=len(CASES), help="how many of the cases to time")
    args = ap.parse_args()
    rolls = [roll for roll, _p in roll_distribution(8)]
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'rules':<12} {'carry-over':<56} {'reference':>10} {'tables':>8} {'rows':>7} {'ref/tables':>10} {'ref/rows':>9}")
    ratios = []
    for name, carry in CASES[: args.carries]:
        rules = preset(name)
        ref_t, tab_t, row_t = [], [], []
        for _ in range(max(1, args.repeat)):
            t, want = _reference(rules, carry, rolls)
            fresh, rows, got = _tables(rules, carry, rolls)
            if got != want:
                raise SystemExit(f"{name} {carry.describe()}: the tables disagree with keep_options")
            ref_t.append(t)
            tab_t.append(fresh)
            row_t.append(rows)
        r, f, w = statistics.median(ref_t), statistics.median(tab_t), statistics.median(row_t)
        ratios.append(r / f)
        print(f"{name:<12} {carry.describe():<56} {r:9.2f}s {f:7.3f}s {w:6.3f}s {r / f:9.0f}x {r / w:8.0f}x",
              flush=True)
    print(f"median ratio reference / fresh tables: {statistics.median(ratios):.0f}x; "
          f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
