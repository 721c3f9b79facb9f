"""The bot protocol and the simple built-in bots.

A bot chooses a legal move for the player to act in a position::

    move = bot.act(rules, state, rng)

``rng`` is a ``numpy.random.Generator`` owned by the caller; a bot draws every random choice
from it, so a bot is deterministic given its generator. Bots that work from observations
(trained policies) implement :class:`ObservationBot` as well; the environments and the CLI
only need :meth:`Bot.act`. A bot made for games of a few seats only declares it with a
``max_players`` attribute (the solver's duel bots: 2; see :func:`seat_limit`), and every game
that seats it checks it first (:func:`greed_env.bots.loader.check_seats`).

>>> import numpy as np
>>> from greed_env.rules import preset, new_game, apply_roll
>>> r = preset("ten_thousand")
>>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
>>> str(ThresholdBot(bank_at=300).act(r, s, np.random.default_rng(0)))
'keep:1,1,1,5'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from greed_env.rules.config import Rules
from greed_env.rules.game import (
    BANK,
    BUST,
    FRESH,
    REFUSE,
    ROLL,
    ROLL_FIRST,
    SPLIT,
    Move,
    Phase,
    State,
    current_keep_options,
    legal_moves,
)

__all__ = ["Bot", "KeepStyle", "ObservationBot", "RandomBot", "ThresholdBot", "seat_limit"]


@runtime_checkable
class Bot(Protocol):
    """Anything that picks a legal move for ``state.player``."""

    name: str

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move: ...


def seat_minimum(bot: object) -> int | None:
    """The fewest seats ``bot`` plays: the ``min_players`` it declares (the solver's
    three-player bot plays three-player games only), or None for any number.

    >>> seat_minimum(RandomBot()) is None
    True
    """
    least = getattr(bot, "min_players", None)
    return None if least is None else int(least)


def seat_limit(bot: object) -> int | None:
    """The most seats ``bot`` plays: the ``max_players`` it declares (an optional part of the
    protocol, for bots made for two-player games), or None for any number.

    >>> seat_limit(RandomBot()) is None
    True
    """
    limit = getattr(bot, "max_players", None)
    return None if limit is None else int(limit)


@runtime_checkable
class ObservationBot(Protocol):
    """A bot that acts from an encoded observation and the legal-action mask."""

    name: str

    def act_obs(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


@dataclass
class RandomBot:
    """Uniformly random legal move."""

    name: str = "random"

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        moves = legal_moves(rules, state)
        if not moves:
            raise ValueError("no legal moves: the position is a chance node or the game is over")
        return moves[int(rng.integers(len(moves)))]


KeepStyle = str  # "max-score" | "keep-most" | "keep-fewest"


@dataclass
class ThresholdBot:
    """Bank once the turn total reaches ``bank_at`` (or the come-in threshold, if higher).

    Keeps: ``max-score`` keeps the highest-scoring keep (fewest dice on ties);
    ``keep-most`` keeps the keep with the most dice (highest score on ties);
    ``keep-fewest`` keeps the best single scoring die or smallest combination (highest score
    among the fewest dice). Banks when fewer than ``min_dice`` dice would be rolled and banking
    is allowed. Never rerolls all, never busts on purpose, never piggybacks, always agrees to
    split, and rolls first in a roll-off.
    """

    bank_at: int = 300
    keep: KeepStyle = "max-score"
    min_dice: int = 0
    name: str = "threshold"

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        moves = legal_moves(rules, state)
        if not moves:
            raise ValueError("no legal moves: the position is a chance node or the game is over")
        ph = state.phase
        if ph == Phase.KEEP:
            opts = current_keep_options(rules, state)
            if not opts:
                return BUST if BUST in moves else moves[0]
            if self.keep == "keep-most":
                best = max(opts, key=lambda o: (len(o.dice), o.score))
            elif self.keep == "keep-fewest":
                best = max(opts, key=lambda o: (-len(o.dice), o.score))
            else:
                best = max(opts, key=lambda o: (o.score, -len(o.dice)))
            return Move("keep", best.taps)
        if ph == Phase.CONTINUE:
            if BANK in moves:
                need = max(self.bank_at, rules.entry_threshold if not state.entered[state.player] else 0)
                if state.turn_total >= need or (0 < state.dice < self.min_dice):
                    return BANK
            return ROLL if ROLL in moves else moves[0]
        if ph == Phase.START:
            return FRESH
        if ph == Phase.SPLIT:
            return SPLIT if SPLIT in moves else REFUSE
        if ph == Phase.ORDER_CHOICE:
            return ROLL_FIRST
        return moves[0]


def describe(bot: Any) -> str:
    """One-line description of a bot for listings."""
    return getattr(bot, "description", None) or getattr(bot, "name", type(bot).__name__)
