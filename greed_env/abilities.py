"""What a bot declares it can do besides ``act``: the one record every consumer asks.

A bot is ``name`` + ``act(rules, state, rng)`` (:class:`greed_env.bots.Bot`). The fast paths
of the package (batched play, the numba duel of an evaluation, the vector engine's opponents)
and the checks made before a game (the rules a bot was made for, the seats it plays) need to
know more, and they learn it from the bot's declaration, never by probing its attributes: a
bot that can do more implements :meth:`DeclaresAbilities.abilities`, as OpenSpiel's bots
declare ``ProvidesPolicy``. A bot that declares nothing plays any rules and any number of
seats, one position at a time.

The record lives below the solver, so that the solver's own bots declare theirs too.

>>> from greed_env.rules import preset
>>> class Cautious:
...     name = "cautious"
...     def act(self, rules, state, rng): ...
...     def abilities(self):
...         return Abilities(rules=preset("farkle"), max_players=2)
>>> abilities_of(Cautious()).max_players, abilities_of(object()) == Abilities()
(2, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from greed_env.rules.config import Rules
from greed_env.rules.game import Move, State

if TYPE_CHECKING:
    from greed_env.spaces.catalog import ActionCatalog

__all__ = [
    "Abilities",
    "DeclaresAbilities",
    "MoveProbabilities",
    "NativePlay",
    "ObservationPolicy",
    "abilities_of",
]

MoveProbabilities = Callable[[Rules, State], Sequence[tuple[Move, float]]]
"""``move_probabilities(rules, state)``: the legal moves a sampling bot may play in ``state``
with the probability of each (summing to 1), the distribution its ``act`` draws from."""


@dataclass(frozen=True)
class ObservationPolicy:
    """A deterministic policy over the shared formats (:mod:`greed_env.spaces`).

    Attributes:
        act_ids: ``act_ids(observations, masks)``: the action ids of a batch, an int64 array
            ``(n,)``, for float32 observations ``(n, OBS_DIM)`` (each from the acting seat) and
            their int8 legal masks ``(n, catalog.n)``; every id unmasked in its row.
        catalog: the action catalog the ids index (that of the rules the policy plays).
    """

    act_ids: Callable[[np.ndarray, np.ndarray], np.ndarray]
    catalog: ActionCatalog


@dataclass(frozen=True)
class NativePlay:
    """A way of playing that the package's numba kernels implement themselves, so a batch
    engine can play the bot without calling it (tested move for move against the bot).

    Attributes:
        kind: ``random`` (a uniformly random legal move), ``threshold`` (the threshold
            heuristic) or ``optimal`` (the moves of a solved table).
        bank_at, keep, min_dice: the threshold heuristic's bank-at points, keep style (one of
            :data:`greed_env.bots.spec.KEEP_STYLES`) and fewest dice it rolls.
        optimal: for ``optimal``, the solver's bot (:class:`greed_env.solver.OptimalBot`) whose
            table is played: its ``rules``, ``objective`` and ``table``.
    """

    kind: str
    bank_at: int = 0
    keep: str = "max-score"
    min_dice: int = 0
    optimal: Any = None

    def is_optimal_duel(self, rules: Rules) -> bool:
        """Whether this is the optimal duel policy solved for ``rules`` (same fingerprint)."""
        return (
            self.kind == "optimal"
            and self.optimal.objective == "duel"
            and self.optimal.rules.fingerprint == rules.fingerprint
        )


@dataclass(frozen=True)
class Abilities:
    """A bot's declaration (defaults: the bot declares nothing).

    Attributes:
        rules: the only rules the bot plays (a trained policy, a solved table), or None for
            any rules; a game of other rules refuses it before the first move.
        min_players, max_players: the seats of the games it plays (``max_players`` None: any
            number); a game of another size refuses it before the first move.
        policy: its moves as a batched observation policy, when it has one and plays it
            deterministically (a greedy network); None: asked one position at a time.
        move_probabilities: for a bot that draws its moves from the generator (the random
            bot, a network sampling at a temperature, a ladder rung), the distribution it
            draws from in a position (:data:`MoveProbabilities`); what an exact evaluation
            weights each move by. None: the bot's move does not depend on the generator, or
            it does not say (an exact evaluation then checks).
        native: the numba kernels' version of the bot, when they have one.
        card: the card it was made from, when it has one (an exported bot's card, a trained
            model's training card): its rules, objective, training run and measured strength.
    """

    rules: Rules | None = None
    min_players: int = 1
    max_players: int | None = None
    policy: ObservationPolicy | None = None
    move_probabilities: MoveProbabilities | None = None
    native: NativePlay | None = None
    card: Mapping[str, Any] | None = None


@runtime_checkable
class DeclaresAbilities(Protocol):
    """A bot that declares what it can do besides ``act``."""

    def abilities(self) -> Abilities: ...


_NOTHING = Abilities()


def abilities_of(bot: object) -> Abilities:
    """What ``bot`` declares (:meth:`DeclaresAbilities.abilities`), or the empty declaration of
    a bot that only acts."""
    return bot.abilities() if isinstance(bot, DeclaresAbilities) else _NOTHING
