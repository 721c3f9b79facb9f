"""Play against a registered bot without a terminal: a scripted "human" against a bot.

The human seat reads its moves from a list of typed lines (as ``greed play`` would read them);
a line that does not parse or that the rules refuse is answered with the rule's message and
the next line is read, just as the real prompt re-asks. When the list runs out the stub banks
when it may and otherwise keeps the highest-scoring dice. The other seat is any registry bot.

    python examples/play_against_bot.py
    python examples/play_against_bot.py --bot ten_thousand/optimal-duel --seed 3

Interactive play is ``greed play --rules ten_thousand --players human,bot:ten_thousand/ppo-turn``.
"""

from __future__ import annotations

import argparse
from collections import deque
from collections.abc import Iterable

import numpy as np

from greed_env.bots import load
from greed_env.rules import (
    BANK,
    IllegalMove,
    Move,
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    current_keep_options,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    parse_move,
    preset,
    sample_roll,
)

DEFAULT_BOT = "ten_thousand/ppo-turn"
TYPED = ["1 1 1", "r", "bank please", "5", "b", "keep:2,2,2", "r", "b"]
ALIASES = {"b": "bank", "r": "roll"}


class ScriptedHuman:
    """A stand-in for a person at the prompt: moves come from ``lines``, in order."""

    name = "scripted human"

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = deque(lines)

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        legal = legal_moves(rules, state)
        while self.lines:
            text = self.lines.popleft().strip().lower()
            try:
                move = parse_move(ALIASES.get(text, text))
                apply(rules, state, move)
            except IllegalMove as exc:
                print(f"    human typed {text!r}: refused ({exc.rule}): {exc}")
                continue
            print(f"    human typed {text!r}")
            return move
        if BANK in legal:
            return BANK
        if state.phase == Phase.KEEP:
            best = max(current_keep_options(rules, state), key=lambda o: o.score)
            return Move("keep", best.taps)
        return legal[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default=DEFAULT_BOT, help="registry id of the opponent")
    parser.add_argument("--seed", type=int, default=7, help="dice seed")
    parser.add_argument("--turns", type=int, default=12, help="stop after this many turns")
    args = parser.parse_args()

    rules = preset(args.bot.split("/")[0] if "/" in args.bot else "ten_thousand")
    seats = [ScriptedHuman(TYPED), load(args.bot, rules=rules)]
    dice = np.random.default_rng(args.seed)
    rngs = [np.random.default_rng([args.seed, 1]), np.random.default_rng([args.seed, 2])]
    print(f"{rules.name}: seat 0 = {seats[0].name}, seat 1 = {seats[1].name}, seed {args.seed}")
    s = new_game(rules, 2, first_player=0)
    shown = -1
    while not is_over(s) and sum(s.turns) < args.turns:
        if is_chance(s):
            s = apply_roll(rules, s, sample_roll(rules, s, dice))
            if s.phase != Phase.KEEP and s.event:
                print(f"  {s.event}")
            continue
        who = s.player
        if sum(s.turns) != shown:
            shown = sum(s.turns)
            print(f"turn {shown + 1}: seat {who} to play; scores {s.scores}")
        if s.phase == Phase.KEEP:
            print(f"  roll {' '.join(map(str, s.roll))}")
        move = seats[who].act(rules, s, rngs[who])
        s = apply(rules, s, move)
        print(f"  seat {who}: {move} -> {s.event}")
    print(f"after {sum(s.turns)} turns: scores {s.scores}" + (f", winners {s.winners}" if is_over(s) else ""))


if __name__ == "__main__":
    main()
