"""A reference bot for three or more players: the optimal duel policy against the leader.

The exact duel table answers "how do I best beat one opponent?"; with more players no table
defines optimal play (the others' scores all matter, and so does how they play). A practical
and strong answer is to treat the game as a duel against the opponent who is most likely to
win it, the one with the highest banked score: each decision is the optimal-duel decision in
the two-player position made of the bot's own seat and that leader's. Banking with the leader
well ahead then means rolling on for more, and in the final round the bot plays to beat the
best score exactly as the duel table does.

:class:`LeaderDuelBot` does this for every rule set whose duel the solver plays without
carry-over (``ten_thousand``, ``greed``, ``farkle``, ``farkle5``, ``zilch`` and their variants).
With two players it is the optimal duel bot. docs/benchmark.md measures it against simpler
fields (fixed thresholds) in three-, four- and eight-player games.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from greed_env.abilities import Abilities, NativePlay
from greed_env.bots.errors import UnknownBotError
from greed_env.bots.solver_backend import optimal_bot
from greed_env.rules import Move, Rules, State, legal_moves
from greed_env.rules.config import resolve_rules
from greed_env.rules.game import FRESH, ROLL_FIRST, SPLIT, Phase

__all__ = ["LeaderDuelBot", "duel_view"]

_PER_PLAYER = ("scores", "entered", "streaks", "turns")


def duel_view(state: State) -> State:
    """The two-player position of ``state.player`` against the leading opponent.

    The leader is the other player with the highest banked score (the first after the player to
    move in turn order on ties). The view keeps the turn in progress (phase, dice, roll, turn
    total, entry) and the final round; the player to move is seat 0 and the leader seat 1.
    """
    n = state.num_players
    p = state.player
    if n == 2:
        return state
    others = [(p + k) % n for k in range(1, n)]
    lead = max(others, key=lambda q: (state.scores[q], -others.index(q)))
    changes: dict[str, Any] = {
        name: (getattr(state, name)[p], getattr(state, name)[lead]) for name in _PER_PLAYER
    }
    changes.update(
        player=0,
        final_left=(1,) if state.endgame and lead in state.final_left else (),
        finishers=tuple(0 if q == p else 1 for q in state.finishers if q in (p, lead)),
        contenders=(),
        order_rolls=(),
        winners=(),
        shares=(),
    )
    return state._replace(**changes)


class LeaderDuelBot:
    """Plays the optimal duel move of the two-player view against the leader (Bot protocol).

    Args:
        rules: the rules (a preset name or :class:`Rules`); the solver must play their duel
            without carry-over.
        bot: an optimal duel bot for ``rules`` to consult (default: the solver's shared one,
            :func:`greed_env.bots.solver_backend.optimal_bot`: its table loaded, or solved on first use).

    Raises:
        UnknownBotError: rules with carry-over (Progressive, Trippn), whose duel positions hold
            working sets that this view does not translate.
    """

    def __init__(self, rules: Rules | str, bot: Any = None) -> None:
        self.rules = resolve_rules(rules)
        if self.rules.carry_over:
            raise UnknownBotError(
                f"leader-duel plays rules without carry-over; {self.rules.name} carries working sets"
            )
        if bot is None:
            bot = optimal_bot(self.rules, "duel")
        self._duel = bot
        self.name = "leader-duel"
        self.description = "optimal duel policy against the leading opponent"

    @property
    def duel_bot(self) -> Any:
        """The optimal duel bot it consults (what it plays with two seats)."""
        return self._duel

    def abilities(self) -> Abilities:
        """Its rules only; with two seats it is the optimal duel bot, whose table the numba
        kernels play (:class:`~greed_env.abilities.NativePlay` ``optimal``)."""
        return Abilities(rules=self.rules, min_players=2, native=NativePlay("optimal", optimal=self._duel))

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        moves = legal_moves(rules, state)
        if not moves:
            raise ValueError("no legal moves: the position is a chance node or the game is over")
        if state.phase == Phase.START:
            return FRESH
        if state.phase == Phase.SPLIT:
            return SPLIT if SPLIT in moves else moves[0]
        if state.phase == Phase.ORDER_CHOICE:
            return ROLL_FIRST if ROLL_FIRST in moves else moves[0]
        if state.num_players == 2:
            return self._duel.act(rules, state, rng)
        if state.num_players < 2:
            raise ValueError("leader-duel plays games of two or more players; a one-player turn has no leader")
        values = dict(self._duel.move_values(rules, duel_view(state)))
        missing = [m for m in moves if m not in values]
        if missing:
            raise ValueError(f"the duel view has no value for the legal moves {missing} (state {state})")
        return max(moves, key=lambda m: (values[m], -moves.index(m)))
