"""The solver backend of the bot runtime: which objectives the solver offers for a rule set,
and :class:`SolverBot`, the solver's :class:`~greed_env.solver.OptimalBot` bound to the rules
it was solved for (what the specs ``optimal-OBJ`` load), as :mod:`~greed_env.bots.onnx_backend`
binds an ONNX file.

The solver is imported when first asked (it compiles numba kernels); everything else here is
plain. One :class:`OptimalBot` is built per rules and objective in a process and shared, so
its table is read once.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from greed_env.abilities import Abilities, NativePlay
from greed_env.bots.cards import rules_mismatch_message
from greed_env.bots.errors import RulesMismatchError, UnknownBotError
from greed_env.rules import Move, Rules, State

__all__ = [
    "OPTIMAL_DESCRIPTIONS",
    "SolverBot",
    "objectives",
    "optimal_available",
    "optimal_bot",
    "solver_bot",
    "table_note",
    "unavailable_reason",
]

TABLE_SEATS = {"duel": 2, "3p": 3}
"""The seats of the games an objective's table holds (the others: one player's turns)."""

OPTIMAL_DESCRIPTIONS = {
    "turn": "exact solver: most expected points per turn",
    "entry": "exact solver: best chance to come in this turn",
    "race": "exact solver: fewest expected turns to the target",
    "duel": "exact solver: highest chance to win a two-player game",
    "3p": "exact solver: each of three players maximises their own chance to win",
}


def objectives() -> tuple[str, ...]:
    """The solver's objectives (the one list: :data:`greed_env.solver.OBJECTIVES`)."""
    from greed_env.solver import OBJECTIVES

    return tuple(OBJECTIVES)


def unavailable_reason(rules: Rules, objective: str) -> str:
    """Why the solver offers no ``objective`` bot for ``rules``, or ``""`` when it does
    (cheap: nothing is solved)."""
    from greed_env.solver.model import check_supported

    if objective not in objectives():
        return f"the solver has no objective {objective!r} (it has {', '.join(objectives())})"
    try:
        check_supported(rules)
        check_supported(rules, objective)
    except ValueError as exc:
        return str(exc)
    if objective == "3p":
        from greed_env.solver.three import three_unavailable

        return three_unavailable(rules)
    if objective == "duel" and not rules.min_players <= 2 <= rules.max_players:
        return f"{rules.name} is not played by two players ({rules.min_players}-{rules.max_players})"
    return ""


def optimal_available(rules: Rules, objective: str) -> bool:
    """Whether the exact solver offers ``objective`` for ``rules``."""
    return not unavailable_reason(rules, objective)


@functools.lru_cache(maxsize=8)
def optimal_bot(rules: Rules, objective: str) -> Any:
    """The solver's :class:`~greed_env.solver.OptimalBot` (table loaded, or solved and cached,
    on first use; one shared instance per rules and objective in a process)."""
    if objective == "3p":
        from greed_env.solver.three_bot import ThreePlayerBot

        return ThreePlayerBot(rules)
    from greed_env.solver import OptimalBot

    return OptimalBot(rules, objective)


def table_note(rules: Rules, objective: str) -> str:
    """``" (solved on first use)"`` when no table of ``objective`` for ``rules`` is on disk."""
    from greed_env.solver import table_paths

    try:
        found = [p for p in table_paths(rules, objective) if p.exists()]
    except (OSError, ValueError):
        return ""
    return "" if found else " (solved on first use)"


class SolverBot:
    """The solver's bot for one rule set and objective, refusing to play other rules.

    Args:
        rules: the rules it plays.
        objective: its objective.
        name: the spec it was loaded by.
        table_rules: the rules whose table it plays, when not ``rules``: an evaluation's
            yardstick (:func:`greed_env.evaluation.yardstick_rules`), the same rules but for what
            a one-turn episode cannot meet (Zilch's turn without its bust penalty).

    Attributes:
        inner: the :class:`~greed_env.solver.OptimalBot` (shared, see :func:`optimal_bot`).
        rules, objective, name: as given.

    Raises:
        UnknownBotError: the solver has no such objective or does not model the rules.
    """

    def __init__(self, rules: Rules, objective: str, name: str, table_rules: Rules | None = None) -> None:
        solved = rules if table_rules is None else table_rules
        reason = unavailable_reason(solved, objective)
        if reason:
            raise UnknownBotError(f"bot {name!r}: no optimal bot for {solved.name}: {reason}")
        self.inner = optimal_bot(solved, objective)
        self.rules = rules
        self.objective = objective
        self.name = name
        self.description = OPTIMAL_DESCRIPTIONS.get(objective, f"exact solver: objective {objective}")

    def abilities(self) -> Abilities:
        """Its rules only; the seats of its table's games (two for the duel, three for ``3p``,
        any number for the one-player objectives); the numba kernels play the duel's table
        (:class:`~greed_env.abilities.NativePlay` ``optimal``)."""
        seats = TABLE_SEATS.get(self.objective)
        duel = self.objective == "duel"
        return Abilities(
            rules=self.rules,
            min_players=seats or 1,
            max_players=seats,
            native=NativePlay("optimal", optimal=self.inner) if duel else None,
        )

    def check_rules(self, rules: Rules) -> None:
        """Raise :class:`RulesMismatchError` unless ``rules`` are the bot's rules."""
        if rules.fingerprint != self.rules.fingerprint:
            raise RulesMismatchError(rules_mismatch_message(f"bot {self.name}", self.rules, rules))

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """The solver's best move, after checking ``rules`` are the bot's rules.

        Raises:
            RulesMismatchError: ``rules`` differ from the rules the bot was solved for.
        """
        self.check_rules(rules)
        return self.inner.act(rules, state, rng)

    def move_values(self, rules: Rules, state: State) -> Any:
        """The solver's value of every legal move (see :class:`greed_env.solver.OptimalBot`)."""
        self.check_rules(rules)
        return self.inner.move_values(rules, state)

    def __repr__(self) -> str:
        return f"SolverBot({self.name!r}, rules={self.rules.name!r})"


def solver_bot(rules: Rules, objective: str, name: str, table_rules: Rules | None = None) -> SolverBot:
    """:class:`SolverBot` for ``rules`` and ``objective``, played under the name ``name``
    (with ``table_rules``: the table of those rules, played under ``rules``).

    Raises:
        UnknownBotError: the solver has no such objective or does not model the rules.
    """
    return SolverBot(rules, objective, name, table_rules)
