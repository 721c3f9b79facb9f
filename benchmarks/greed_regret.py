"""Where a greed turn policy loses points: the solver's regret by kind of decision.

Plays ``--turns`` turns of a player already on the board (seed 1) and scores every decision
with ``optimal-turn``'s move values, grouped as: the first keep from six dice, keeps after a
reroll of all six (a bar to beat), later keeps, and bank-or-roll. Then enumerates the 462
first rolls of six dice and lists the costliest first keeps. docs/results.md ("Greed: why PPO
stops at 96-98%") reports its output.

Usage::

    python benchmarks/greed_regret.py greed/ppo-turn
    python benchmarks/greed_regret.py runs/bench_ppo/greed__turn__w2mebar__1/model.zip --turns 3000
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import Counter, defaultdict

import numpy as np

from greed_env.bots import load
from greed_env.rules import Phase, apply, apply_roll, is_chance, new_game, preset, sample_roll
from greed_env.solver import OptimalBot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bot", help="registry id or model file")
    ap.add_argument("--turns", type=int, default=3000)
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    rules = preset("greed")
    opt = OptimalBot(rules, "turn")
    bot = load(args.bot, rules=rules)
    rng = np.random.default_rng(1)
    start = new_game(rules, 2, first_player=0)._replace(entered=(True, False), scores=(1000, 0))
    regret: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for _ in range(args.turns):
        s = start
        first = True
        while s.player == 0 and s.phase != Phase.OVER:
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
                continue
            values = {str(m): v for m, v in opt.move_values(rules, s)}
            move = bot.act(rules, s, rng)
            if s.phase != Phase.KEEP:
                kind = "bank or roll"
            elif first:
                kind = "first keep"
            else:
                kind = "keep after a reroll" if s.bar >= 0 else "later keep"
            regret[kind] += max(values.values()) - values[str(move)]
            count[kind] += 1
            first = first and s.phase != Phase.KEEP
            s = apply(rules, s, move)
    for kind in regret:
        print(f"{kind:20s} decisions {count[kind]:6d}  regret per turn {regret[kind] / args.turns:6.2f}"
              f"  per decision {regret[kind] / count[kind]:6.2f}")
    total, rows = 0.0, []
    for roll in itertools.combinations_with_replacement(range(1, 7), 6):
        faces = Counter(roll)
        p = math.factorial(6) / math.prod(math.factorial(c) for c in faces.values()) / 6**6
        s = apply_roll(rules, start, roll)
        values = {str(m): v for m, v in opt.move_values(rules, s)}
        if not values:
            continue
        move = str(bot.act(rules, s, rng))
        best = max(values, key=lambda m: values[m])
        loss = values[best] - values[move]
        total += p * loss
        if loss > 1e-9:
            rows.append((p * loss, roll, move, best, loss))
    print(f"first keeps, all rolls: {total:.2f} points per turn")
    for weighted, roll, move, best, loss in sorted(rows, reverse=True)[: args.top]:
        print(f"  {roll}: plays {move}, best {best}, regret {loss:.1f} (x probability {weighted:.3f})")


if __name__ == "__main__":
    main()
