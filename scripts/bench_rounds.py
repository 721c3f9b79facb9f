"""The first player's win probability in games of a fixed number of rounds, solved and simulated.

For each number of rounds the two-player game (``greed_env.solver.rounds``) is solved exactly,
and ``OptimalBot`` plays both seats of ``--games`` games in the engine (seat 0 starts) to check
the headline by simulation: mean share of the pot won by seat 0 with its 95% confidence interval
and the z-score of the difference. Games are split over ``--jobs`` processes, each with its own
stream of a ``numpy.random.SeedSequence`` spawned from ``--seed``.

Usage::

    python scripts/bench_rounds.py --rules ten_thousand --rounds 5 10 20 --games 5000 --jobs 2

The markdown table printed at the end is what ``docs/results.md`` ("Games of a fixed number of
rounds") shows.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from typing import Any


def _play(args: tuple[str, int, int, Any]) -> list[float]:
    """Seat 0's share of the pot in ``n`` games of ``rounds`` rounds (one worker's part)."""
    import numpy as np

    from greed_env.rules import apply, apply_roll, is_chance, is_over, new_game, preset, sample_roll
    from greed_env.solver import OptimalBot, load_table

    name, rounds, n, seed_seq = args
    rules = preset(name, rounds=rounds)
    bot = OptimalBot(rules, "duel", load_table(rules, "duel", solve_if_missing=False))
    rng = np.random.default_rng(seed_seq)
    shares = []
    for _ in range(n):
        s = new_game(rules, 2, first_player=0)
        while not is_over(s):
            s = apply_roll(rules, s, sample_roll(rules, s, rng)) if is_chance(s) else apply(rules, s, bot.act(rules, s, rng))
        shares.append(s.shares[0])
    return shares


def run(name: str, rounds: int, games: int, jobs: int, seed: int) -> dict[str, Any]:
    import numpy as np

    from greed_env.rules import preset
    from greed_env.solver import solve
    from greed_env.solver.table import cache_dir

    rules = preset(name, rounds=rounds)
    t0 = time.perf_counter()
    table = solve(rules, "duel")
    solve_s = time.perf_counter() - t0
    table.save(cache_dir())
    seqs = np.random.SeedSequence([seed, rounds]).spawn(jobs)
    parts = [games // jobs + (1 if i < games % jobs else 0) for i in range(jobs)]
    t1 = time.perf_counter()
    with mp.get_context("spawn").Pool(jobs) as pool:
        results = pool.map(_play, [(name, rounds, parts[i], seqs[i]) for i in range(jobs)])
    x = np.array([v for part in results for v in part])
    mean = float(x.mean())
    se = float(x.std(ddof=1) / math.sqrt(len(x)))
    return {
        "rules": name,
        "rounds": rounds,
        "headline": table.headline,
        "solve_s": solve_s,
        "games": len(x),
        "simulate_s": time.perf_counter() - t1,
        "mean": mean,
        "se": se,
        "ci95": (mean - 1.96 * se, mean + 1.96 * se),
        "z": (mean - table.headline) / se,
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| rules | rounds | first player's win probability (exact) | solve (s) | simulated (95% CI) | games | z |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lo, hi = r["ci95"]
        lines.append(
            f"| {r['rules']} | {r['rounds']} | {r['headline']:.6f} | {r['solve_s']:.0f} | "
            f"{r['mean']:.4f} ({lo:.4f}-{hi:.4f}) | {r['games']} | {r['z']:+.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rules", default="ten_thousand", help="preset name")
    p.add_argument("--rounds", type=int, nargs="+", default=[5, 10, 20])
    p.add_argument("--games", type=int, default=5000, help="simulated games per number of rounds")
    p.add_argument("--jobs", type=int, default=2, help="simulation processes")
    p.add_argument("--seed", type=int, default=2027)
    args = p.parse_args(argv)
    if args.games < 2 or args.jobs < 1 or any(n < 1 for n in args.rounds):
        p.error("--games must be >= 2, --jobs >= 1 and every --rounds >= 1")
    rows = []
    for n in args.rounds:
        row = run(args.rules, n, args.games, args.jobs, args.seed)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
