"""Enumerate the dice states of a carry-over rule set and report their size and cost.

Runs ``greed_env.solver.carry.carry_tables(rules, reduced)`` (the breadth-first search over
(dice, carry-over) with the tabulated keeps of ``greed_env.solver.keeps``), printing progress
every ``--every`` seconds (states expanded / found, CPU seconds, load average, memory), then
the totals: dice states by dice in hand, distinct carry-overs, roll groups, keeps, and the
dice states from which a turn can roll on for ever (``risk_free_states``).

    nice -n 15 python scripts/bench_carry_states.py --rules trippn [--full] [--every 60]
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time
from collections import Counter

from greed_env.progress import status
from greed_env.rules import preset
from greed_env.solver.carry import DEFAULT_MAX_STATES, carry_tables, risk_free_states


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", default="trippn", help="a carry-over preset (progressive, trippn)")
    ap.add_argument("--full", action="store_true", help="every distinct keep (race, duel) rather than "
                    "the best per next state (turn)")
    ap.add_argument("--every", type=float, default=60.0, help="seconds between progress lines")
    ap.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES)
    args = ap.parse_args()
    rules = preset(args.rules)
    t0, w0 = time.process_time(), time.perf_counter()
    loads = [os.getloadavg()[0]]
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(args.every):
            loads.append(os.getloadavg()[0])
            print(f"  {time.perf_counter() - w0:6.0f} s wall, {time.process_time() - t0:6.0f} CPU-s: "
                  f"{status()}, load {loads[-1]:.1f}, "
                  f"peak RSS {_rss_mb():.0f} MB", flush=True)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    ct = carry_tables(rules, not args.full, args.max_states)
    stop.set()
    thread.join()
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    loads.append(os.getloadavg()[0])
    by_dice = Counter(n for n, _c in ct.states)
    free = risk_free_states(ct)
    print(f"{rules.name} ({'every keep' if args.full else 'best keep per next state'}): "
          f"{ct.n_states} dice states, {len({c for _n, c in ct.states})} carry-overs, "
          f"{ct.gp.shape[0]} roll groups, {ct.osc.shape[0]} keeps, unit {ct.unit}, largest keep "
          f"{ct.max_keep * ct.unit}")
    print("dice states by dice in hand: " + ", ".join(f"{n}: {by_dice[n]}" for n in sorted(by_dice)))
    print(f"risk-free dice states (a turn can roll on for ever): {int(free.sum())}")
    print(f"{cpu:.0f} CPU-s, {wall:.0f} s wall, load average {min(loads):.1f}-{max(loads):.1f} "
          f"(mean {sum(loads) / len(loads):.1f}), peak RSS {_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
