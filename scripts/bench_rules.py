"""Random-play speed of the rules engine, per preset, single-threaded.

Prints decisions/s and full games/s (median of --repeats runs) for every preset, next to a
baseline measured in the same process: the same random-play loop over a minimal dice game
(Pig: one die, roll or hold, first to 100), which shows how close the engine runs to the
floor set by the Python loop and the generator itself. Rates use process CPU time, not wall
time, so other load on a shared machine does not count against them.

    python scripts/bench_rules.py --games 200 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from greed_env.rules import (
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
    preset_names,
    sample_roll,
)


def play_random(name: str, games: int, seed: int, players: int = 2) -> tuple[int, float]:
    rules = preset(name)
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.process_time()
    for _ in range(games):
        s = new_game(rules, players)
        while not is_over(s):
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
            else:
                moves = legal_moves(rules, s)
                decisions += 1
                s = apply(rules, s, moves[int(rng.integers(len(moves)))])
    return decisions, time.process_time() - start


def play_pig(games: int, seed: int) -> tuple[int, float]:
    """Baseline: random play of Pig (one die; a 1 loses the turn; hold or roll; 100 wins)."""
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.process_time()
    for _ in range(games):
        scores = [0, 0]
        player, total = 0, 0
        while max(scores) < 100:
            die = int(rng.integers(6)) + 1
            if die == 1:
                player, total = 1 - player, 0
                continue
            total += die
            decisions += 1
            if int(rng.integers(2)) == 0:
                scores[player] += total
                player, total = 1 - player, 0
    return decisions, time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="games per repeat and preset")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--presets", default=",".join(preset_names()))
    args = ap.parse_args()

    base = [play_pig(args.games * 5, seed=k) for k in range(args.repeats)]
    base_rate = statistics.median(d / t for d, t in base)
    print(f"baseline (Pig random play): {base_rate:,.0f} decisions/s (median of {args.repeats})")
    print(f"{'preset':<14}{'decisions/s':>14}{'games/s':>10}{'vs Pig':>9}{'decisions/game':>16}")
    for name in args.presets.split(","):
        play_random(name, 5, seed=999)  # warm the move tables
        runs = [play_random(name, args.games, seed=k) for k in range(args.repeats)]
        rate = statistics.median(d / t for d, t in runs)
        gps = statistics.median(args.games / t for _, t in runs)
        per_game = statistics.median(d / args.games for d, _ in runs)
        print(f"{name:<14}{rate:>14,.0f}{gps:>10,.1f}{rate / base_rate:>9.2f}{per_game:>16,.0f}")


if __name__ == "__main__":
    main()
