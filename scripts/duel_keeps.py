"""Where a duel policy's keeps lose, beside the solver's turn-optimal keeps at the same positions.

A bot (model file, registry id or bot spec) plays ``--games`` games against ``optimal-duel``
(seats alternating, game ``g`` seeded ``seed + g``). At every keep it makes, the duel solver's
move values give its regret in win probability, and the regret the solver's **turn** objective
keep (``optimal:turn``: the most expected points this turn, banking only once on the board)
would have had at the same position. Both are summed per game by situation:

* ``entry``: the decider is not yet on the board;
* ``final round``: the decider's last turn after another seat passed the target;
* ``opponent near``: the best other banked score is within ``--near`` of the target;
* ``me near``: the decider's banked score is;
* ``other``: the rest.

So ``turn-optimal`` is what a policy whose keeps were exactly the turn stage's objective would
give away on the positions this bot met (0.010 per game is one point of win rate), and the
difference between the columns is what the duel stages gained or lost on the turn objective's
keeps. ``docs/results.md`` reports the committed duel bot and the turn policy it started from.

Usage::

    python scripts/duel_keeps.py ten_thousand/ppo-duel --games 600
    python scripts/duel_keeps.py runs/bench_ppo/ten_thousand__turn__ppo__1/model.zip
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

import numpy as np

from greed_env.envs.duel import DuelEnv
from greed_env.evaluation import optimal_bot, resolve_bot, yardstick_rules
from greed_env.rules import Phase, Rules, State, preset
from greed_env.spaces.catalog import ActionCatalog

SITUATIONS = ("entry", "final round", "opponent near", "me near", "other")


@dataclass
class KeepRegret:
    """Keep regret in win probability, summed over ``games`` games, by situation."""

    games: int = 0
    keeps: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SITUATIONS, 0))
    bot: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SITUATIONS, 0.0))
    turn_optimal: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SITUATIONS, 0.0))
    wrong: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SITUATIONS, 0))

    def per_game(self, column: dict[str, float]) -> dict[str, float]:
        return {k: v / self.games for k, v in column.items()}


def situation(rules: Rules, s: State, near: int) -> str:
    """The group of a keep decision (first match in ``SITUATIONS`` order)."""
    p = s.player
    if rules.entry_threshold and not s.entered[p]:
        return "entry"
    if s.endgame:
        return "final round"
    others = [v for i, v in enumerate(s.scores) if i != p]
    if others and max(others) >= rules.target - near:
        return "opponent near"
    if s.scores[p] >= rules.target - near:
        return "me near"
    return "other"


def measure(bot_spec: str, rules: Rules, games: int, seed: int, near: int = 2000) -> KeepRegret:
    """Play ``games`` games of ``bot_spec`` against the optimal duel bot and sum keep regrets."""
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    bot = resolve_bot(bot_spec, rules, "duel")
    yard = yardstick_rules(rules, "duel")
    duel = optimal_bot(yard, "duel")
    turn = optimal_bot(yardstick_rules(rules, "turn"), "turn")
    catalog = ActionCatalog(rules)
    env = DuelEnv(rules, opponent=duel, seat=0)  # the same cached instance either way
    out = KeepRegret(games=games)
    for g in range(games):
        env.fixed_seat = g % 2
        env.reset(seed=seed + g)
        rng = np.random.default_rng(seed + g + 1)
        done = False
        while not done:
            s = env.state
            move = bot.act(rules, s, rng)
            if s.phase == Phase.KEEP:
                values = {catalog.index_of(m, s): float(v) for m, v in duel.move_values(yard, s)}
                best = max(values.values())
                where = situation(rules, s, near)
                regret = best - values[catalog.index_of(move, s)]
                out.keeps[where] += 1
                out.bot[where] += regret
                out.wrong[where] += regret > 1e-12
                out.turn_optimal[where] += best - values[catalog.index_of(turn.act(rules, s, rng), s)]
            _, _, terminated, truncated, _ = env.step(catalog.index_of(move, s))
            done = terminated or truncated
    return out


def table(res: KeepRegret) -> str:
    bot, turn = res.per_game(res.bot), res.per_game(res.turn_optimal)
    lines = [
        "| keeps by situation | keeps per game | not optimal | bot: regret per game | turn-optimal keeps there |",
        "|---|---|---|---|---|",
    ]
    for k in SITUATIONS:
        share = res.wrong[k] / res.keeps[k] if res.keeps[k] else 0.0
        lines.append(f"| {k} | {res.keeps[k] / res.games:.1f} | {share:.1%} | {bot[k]:.5f} | {turn[k]:.5f} |")
    total = sum(res.keeps.values())
    wrong = sum(res.wrong.values()) / total if total else 0.0
    lines.append(
        f"| all | {total / res.games:.1f} | {wrong:.1%} | {sum(bot.values()):.5f} | {sum(turn.values()):.5f} |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bot", help="model file (.zip / .npz), registry id or bot spec")
    ap.add_argument("--rules", default="ten_thousand")
    ap.add_argument("--games", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1000, help="game g is seeded seed + g")
    ap.add_argument("--near", type=int, default=2000, help="points below the target that count as near it")
    ns = ap.parse_args(argv)
    res = measure(ns.bot, preset(ns.rules), ns.games, ns.seed, ns.near)
    print(f"`{ns.bot}` against optimal-duel, {ns.games:,} games (seed {ns.seed}); keep regret in win probability\n")
    print(table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
