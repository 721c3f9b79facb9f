"""The bot protocol and the simple built-in bots.

A bot chooses a legal move for the player to act in a position::

    move = bot.act(rules, state, rng)

``rng`` is a ``numpy.random.Generator`` owned by the caller; a bot draws every random choice
from it, so a bot is deterministic given its generator. Bots that work from observations
(trained policies) implement :class:`ObservationBot` as well; the environments and the CLI
only need :meth:`Bot.act`. Whatever else a bot can do it declares
(:class:`~greed_env.abilities.Abilities`: the rules and seats it is made for, a batched policy,
the numba kernels' version of it), and every game checks the declaration before it seats the
bot (:func:`check_rules`, :func:`check_seats`) and each move it plays (:func:`checked_act`: a
bot that raises or returns no legal move ends the game with one
:class:`~greed_env.bots.errors.BotPlayError` naming the bot, the position and what it did).

>>> import numpy as np
>>> from greed_env.rules import preset, new_game, apply_roll
>>> r = preset("ten_thousand")
>>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
>>> str(ThresholdBot(bank_at=300).act(r, s, np.random.default_rng(0)))
'keep:1,1,1,5'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from greed_env.abilities import Abilities, NativePlay, abilities_of
from greed_env.bots.cards import rules_mismatch_message
from greed_env.bots.errors import BotLoadError, BotPlayError, RulesMismatchError, SeatCountError
from greed_env.rules.config import Rules
from greed_env.rules.game import (
    BANK,
    BUST,
    FRESH,
    REFUSE,
    ROLL,
    ROLL_FIRST,
    SPLIT,
    IllegalMove,
    Move,
    Phase,
    State,
    apply,
    current_keep_options,
    legal_moves,
)

__all__ = [
    "Bot",
    "KeepStyle",
    "ObservationBot",
    "RandomBot",
    "ThresholdBot",
    "check_rules",
    "check_seats",
    "checked_act",
    "position_text",
]


@runtime_checkable
class Bot(Protocol):
    """Anything that picks a legal move for ``state.player``."""

    name: str

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move: ...


def check_rules(bot: Bot, rules: Rules, label: str | None = None) -> None:
    """Refuse to let ``bot`` play ``rules`` when it declares other rules
    (:attr:`~greed_env.abilities.Abilities.rules`: a trained policy, a solved table).

    Raises:
        RulesMismatchError: naming the bot (``label``, default its name) and both rule sets.
    """
    made_for = abilities_of(bot).rules
    if made_for is not None and made_for.fingerprint != rules.fingerprint:
        raise RulesMismatchError(rules_mismatch_message(f"bot {label or bot.name}", made_for, rules))


_SEAT_WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}


def check_seats(bot: Bot, num_players: int, label: str | None = None) -> None:
    """Refuse to seat ``bot`` in a game of ``num_players`` outside the seats it declares
    (:attr:`~greed_env.abilities.Abilities.max_players`: the solver's duel bots play two).

    >>> check_seats(RandomBot(), 8) is None
    True

    Raises:
        SeatCountError: naming the bot (``label``, default its name), its seats and the count.
    """
    declared = abilities_of(bot)
    low, high = declared.min_players, declared.max_players
    if low <= num_players and (high is None or num_players <= high):
        return
    if low == high or high == 2:
        plays = f"{_SEAT_WORDS.get(high or low, str(high or low))}-player games only"
    elif high is not None and num_players > high:
        plays = f"games of at most {high} players"
    else:
        plays = f"games of at least {low} players"
    hint = "; leader-duel plays the duel policy against the leader in bigger games" if high == 2 else ""
    raise SeatCountError(f"bot {label or bot.name!r} plays {plays}, not a game of {num_players} players{hint}")


_DOING = {
    Phase.START: "to start the turn",
    Phase.KEEP: "to keep",
    Phase.CONTINUE: "to bank or roll",
    Phase.SPLIT: "to split the pot or refuse",
    Phase.ORDER_CHOICE: "to roll first or last",
}
_SHOWN_MOVES = 8


def position_text(state: State) -> str:
    """A decision position in one line: whose decision, the roll, the turn total, the scores.

    >>> from greed_env.rules import preset, new_game, apply_roll
    >>> r = preset("farkle")
    >>> position_text(apply_roll(r, new_game(r, 2, first_player=1), (1, 5, 2, 2, 3, 4)))
    'seat 1 to keep from the roll 1,2,2,3,4,5 (turn total 0; scores 0/0)'
    """
    doing = _DOING.get(Phase(state.phase), f"at {Phase(state.phase).name}")
    roll = f" from the roll {','.join(map(str, state.roll))}" if state.phase == Phase.KEEP else ""
    scores = "/".join(str(s) for s in state.scores)
    return f"seat {state.player} {doing}{roll} (turn total {state.turn_total}; scores {scores})"


def checked_act(bot: Bot, rules: Rules, state: State, rng: np.random.Generator) -> Move:
    """``bot.act(rules, state, rng)``, refused unless it is a legal move of ``state``: what
    every game loop asks of a bot it did not write, so that ``greed play``, ``eval``,
    ``benchmark`` and ``tournament`` end a broken bot with one line.

    A move listed by :func:`~greed_env.rules.legal_moves` passes at once; another (a keep in
    another tap order) passes when :func:`~greed_env.rules.apply` takes it. A load error the
    bot raises itself (a bot made for other rules) goes through unchanged.

    >>> from greed_env.rules import preset, new_game, apply_roll
    >>> r = preset("ten_thousand")
    >>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 5, 2, 3, 4))
    >>> class Lazy:
    ...     name = "lazy"
    ...     def act(self, rules, state, rng):
    ...         return None
    >>> checked_act(Lazy(), r, s, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    greed_env.bots.errors.BotPlayError: bot 'lazy' returned None at seat 0 to keep from the roll 1,1,2,3,4,5 (turn total 0; scores 0/0): not a Move; legal here: keep:5, keep:1, keep:1,5, keep:1,1, keep:1,1,5

    Raises:
        BotPlayError: ``act`` raised, or returned something that is not a legal move; the
            bot's exception is the ``__cause__``.
    """
    name = str(bot.name)
    try:
        move = bot.act(rules, state, rng)
    except BotLoadError:
        raise
    except Exception as exc:  # the bot's own code: any failure is the bot's
        said = " ".join(str(exc).split())
        raise BotPlayError(
            f"bot {name!r} raised {type(exc).__name__} at {position_text(state)}" + (f": {said}" if said else "")
        ) from exc
    legal = legal_moves(rules, state)
    if isinstance(move, Move) and move in legal:
        return move
    shown = ", ".join(str(m) for m in legal[:_SHOWN_MOVES]) + (", ..." if len(legal) > _SHOWN_MOVES else "")
    if not isinstance(move, Move):
        raise BotPlayError(
            f"bot {name!r} returned {_short(move)} at {position_text(state)}: not a Move; legal here: {shown}"
        )
    try:
        apply(rules, state, move)
    except IllegalMove as exc:
        raise BotPlayError(
            f"bot {name!r} returned {move} at {position_text(state)}: not a legal move ({exc}); legal here: {shown}"
        ) from None
    return move


def _short(value: object, keep: int = 60) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= keep else text[: keep - 3] + "..."


@runtime_checkable
class ObservationBot(Protocol):
    """A bot that acts from an encoded observation and the legal-action mask."""

    name: str

    def act_obs(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


@dataclass
class RandomBot:
    """Uniformly random legal move."""

    name: str = "random"

    def abilities(self) -> Abilities:
        """Any rules and seats; its move distribution (:meth:`move_probabilities`), and the
        numba kernels play it too (while :meth:`act` is this one: a subclass that plays
        otherwise declares its own)."""
        if type(self).act is not RandomBot.act:
            return Abilities()
        return Abilities(move_probabilities=self.move_probabilities, native=NativePlay("random"))

    def move_probabilities(self, rules: Rules, state: State) -> list[tuple[Move, float]]:
        """Every legal move with the same probability: what :meth:`act` draws from.

        >>> from greed_env.rules import preset, new_game, apply_roll
        >>> r = preset("ten_thousand")
        >>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 5, 2, 2, 3, 4))
        >>> [(str(m), round(p, 3)) for m, p in RandomBot().move_probabilities(r, s)]
        [('keep:5', 0.333), ('keep:1', 0.333), ('keep:1,5', 0.333)]
        """
        moves = _legal(rules, state)
        return [(m, 1.0 / len(moves)) for m in moves]

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        moves = _legal(rules, state)
        return moves[int(rng.integers(len(moves)))]


def _legal(rules: Rules, state: State) -> list[Move]:
    moves = legal_moves(rules, state)
    if not moves:
        raise ValueError("no legal moves: the position is a chance node or the game is over")
    return moves


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

    def abilities(self) -> Abilities:
        """Any rules and seats; the numba kernels play it too (while :meth:`act` is this one:
        a subclass that plays otherwise declares its own)."""
        if type(self).act is not ThresholdBot.act:
            return Abilities()
        return Abilities(native=NativePlay("threshold", self.bank_at, self.keep, self.min_dice))

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
