"""Random-play speed of the rules engine, per preset, single-threaded.

Prints decisions/s and full games/s (median of --repeats runs) for every preset, next to
baselines measured in the same process: the same random-play loop over a minimal dice game
(Pig: one die, roll or hold, first to 100), written in Python, which shows how close the
engine runs to the floor set by the Python loop and the generator itself, and, when
``open_spiel`` is installed (``pip install open_spiel``; the package never needs it), the same
loop over OpenSpiel's C++ ``pig`` through its Python bindings (``legal_actions`` /
``apply_action``, chance through ``chance_outcomes``, draws from the same kind of generator).
Rates use process CPU time, not wall time, so other load on a shared machine does not count
against them.

    python scripts/bench_rules.py --games 200 --repeats 3
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


def play_openspiel_pig(games: int, seed: int) -> tuple[int, float] | None:
    """OpenSpiel's C++ Pig (two players, to 100) played at random in the loop above: the
    generator picks each chance outcome (a fair die) and each legal action. None without
    ``open_spiel``."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("pig")
    rng = np.random.default_rng(seed)
    decisions = 0
    start = time.process_time()
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                actions = s.legal_actions()
                decisions += 1
                s.apply_action(actions[int(rng.integers(len(actions)))])
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
    spiel_runs = [play_openspiel_pig(args.games * 5, seed=k) for k in range(args.repeats)]
    spiel_rate = None
    if all(r is not None for r in spiel_runs):
        spiel_rate = statistics.median(d / t for d, t in spiel_runs if t > 0)  # type: ignore[misc]
        print(f"OpenSpiel pig (C++, random play): {spiel_rate:,.0f} decisions/s (median of {args.repeats})")
    else:
        print("OpenSpiel pig: open_spiel is not installed (pip install open_spiel to measure it)")
    spiel_head = f"{'vs OpenSpiel':>14}" if spiel_rate else ""
    print(f"{'preset':<14}{'decisions/s':>14}{'games/s':>10}{'vs Pig':>9}{spiel_head}{'decisions/game':>16}")
    for name in args.presets.split(","):
        play_random(name, 5, seed=999)  # warm the move tables
        runs = [play_random(name, args.games, seed=k) for k in range(args.repeats)]
        rate = statistics.median(d / t for d, t in runs)
        gps = statistics.median(args.games / t for _, t in runs)
        per_game = statistics.median(d / args.games for d, _ in runs)
        spiel = f"{rate / spiel_rate:>14.2f}" if spiel_rate else ""
        print(f"{name:<14}{rate:>14,.0f}{gps:>10,.1f}{rate / base_rate:>9.2f}{spiel}{per_game:>16,.0f}")


if __name__ == "__main__":
    main()
