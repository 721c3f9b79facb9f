"""Where a turn policy loses points, for any preset with a turn table: regret by kind of decision.

Plays ``--turns`` turns of a player already on the board (seed 1) and scores every decision
with ``optimal-turn``'s move values. Decisions are grouped as: keeps from a full hand of fresh
dice (the first roll or hot dice), keeps while working sets or an open straight are carried
(carry-over rules), other keeps, and bank-or-roll. A keep that loses points is also classed by
how it differs from the best keep: a different number of dice kept, or the same number of other
dice. The Greed-only version with its first-roll enumeration is ``greed_regret.py``.

Usage::

    python scripts/turn_regret.py progressive/ppo-turn --rules progressive --turns 300
    python scripts/turn_regret.py runs/bench_ppo/progressive__turn__ppo__1/model.zip --rules progressive
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

from greed_env.bots import load
from greed_env.rules import Phase, apply, apply_roll, is_chance, new_game, preset, sample_roll
from greed_env.solver import OptimalBot


def keep_size(move: object) -> int:
    dice = getattr(move, "dice", None)
    return len(dice) if dice is not None else -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bot", help="registry id or model file")
    ap.add_argument("--rules", default="progressive")
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rules = preset(args.rules)
    opt = OptimalBot(rules, "turn")
    bot = load(args.bot, rules=rules)
    rng = np.random.default_rng(args.seed)
    start = new_game(rules, 2, first_player=0)._replace(entered=(True, False), scores=(1000, 0))
    regret: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    wrong: dict[str, int] = defaultdict(int)
    for _ in range(args.turns):
        s = start
        while s.player == 0 and s.phase != Phase.OVER:
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
                continue
            pairs = opt.move_values(rules, s)
            values = {str(m): v for m, v in pairs}
            move = bot.act(rules, s, rng)
            if s.phase != Phase.KEEP:
                kind = "bank or roll"
            elif s.dice == rules.num_dice:
                kind = "keep, full hand"
            elif rules.carry_over and not s.carry.is_empty():
                kind = "keep, sets carried"
            else:
                kind = "keep, other"
            best_move, best = max(pairs, key=lambda mv: mv[1])
            loss = best - values[str(move)]
            regret[kind] += loss
            count[kind] += 1
            if loss > 1e-6:
                wrong[kind] += 1
                if s.phase == Phase.KEEP:
                    how = "size" if keep_size(move) != keep_size(best_move) else "faces"
                    regret[f"  of which: other {how}"] += loss
                    count[f"  of which: other {how}"] += 1
                    wrong[f"  of which: other {how}"] += 1
            s = apply(rules, s, move)
    total = sum(v for k, v in regret.items() if not k.startswith(" "))
    print(f"{args.bot} on {args.rules}: regret {total / args.turns:.2f} points per turn over {args.turns} turns")
    for kind in sorted(regret):
        print(
            f"{kind:24s} decisions {count[kind]:6d}  suboptimal {wrong[kind]:6d}  "
            f"regret per turn {regret[kind] / args.turns:7.2f}  per decision {regret[kind] / count[kind]:7.2f}"
        )


if __name__ == "__main__":
    main()
