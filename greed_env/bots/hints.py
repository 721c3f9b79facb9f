"""Move hints from the exact solver, for ``greed play --hints``.

:func:`hint_lines` lists every legal move of a decision position with its value under the
solver's optimal play afterwards (:meth:`greed_env.solver.OptimalBot.move_values`), best first:
the win probability for two players (objective ``duel``), expected turns to the target for
other player counts (``race``), or the expected points of the turn (``turn``). When the solver
does not model the rules, or the position is a chance node or the end, it says so in one line
instead of raising, so a game never stops for a hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from greed_env.bots.solver_backend import solver_bot
from greed_env.rules import Move, Rules, State, is_chance, is_over

__all__ = ["default_objective", "format_hints", "hint_lines", "move_values"]

_UNITS = {
    "duel": ("win", True),
    "turn": ("points", True),
    "race": ("turns", False),
    "entry": ("come in", True),
}


def default_objective(rules: Rules, state: State) -> str:
    """``duel`` for two players, ``race`` for more, ``turn`` for one."""
    n = state.num_players
    if n == 2:
        return "duel"
    return "race" if n > 2 else "turn"


@lru_cache(maxsize=8)
def _oracle(rules: Rules, objective: str) -> Any:
    return solver_bot(rules, objective, f"optimal-{objective}")


def move_values(rules: Rules, state: State, objective: str | None = None) -> list[tuple[Move, float]]:
    """``(move, value)`` of every legal move, best first (the solver's optimal continuation).

    Raises:
        LookupError: the solver has no bot for these rules and objective.
        ValueError: the position is a chance node or the game is over.
    """
    if is_chance(state) or is_over(state):
        raise ValueError("no decision here: a chance node or the end of the game")
    objective = objective or default_objective(rules, state)
    raw = _oracle(rules, objective).move_values(rules, state)
    pairs = list(raw.items()) if isinstance(raw, dict) else list(raw)
    higher_better = _UNITS.get(objective, ("", True))[1]
    return sorted(((m, float(v)) for m, v in pairs), key=lambda mv: -mv[1] if higher_better else mv[1])


def _fmt(objective: str, value: float) -> str:
    if objective in ("duel", "entry"):
        return f"{100 * value:.1f}%"
    if objective == "race":
        return f"{value:.2f} turns"
    return f"{value:.0f} pts"


def _gap(objective: str, best: float, value: float) -> str:
    d = abs(best - value)
    if d == 0:
        return "best"
    if objective in ("duel", "entry"):
        return f"-{100 * d:.1f} pp"
    if objective == "race":
        return f"+{d:.2f} turns"
    return f"-{d:.0f} pts"


def hint_lines(rules: Rules, state: State, objective: str | None = None, limit: int = 12) -> list[str]:
    """Printable lines, one per legal move (at most ``limit``), best first, with the gap to the best.

    >>> from greed_env.rules import preset, new_game
    >>> hint_lines(preset("ten_thousand"), new_game(preset("ten_thousand"), 2))
    ['hints: no decision here (dice to roll or game over)']
    """
    if is_chance(state) or is_over(state):
        return ["hints: no decision here (dice to roll or game over)"]
    objective = objective or default_objective(rules, state)
    try:
        values = move_values(rules, state, objective)
    except (LookupError, ValueError) as exc:
        return [f"hints unavailable: {exc}"]
    return format_hints(objective, values, limit)


def format_hints(
    objective: str, values: Sequence[tuple[Move, float]], limit: int = 12, title: str = "hints"
) -> list[str]:
    """The lines of :func:`hint_lines` for already computed, best-first ``values`` (``greed
    advise`` prints the same table under its own ``title``).

    >>> from greed_env.rules import BANK, ROLL
    >>> format_hints("duel", [(ROLL, 0.612), (BANK, 0.55)])
    ['hints (duel: chance to win with best play after):', '* roll          61.2%  best', '  bank          55.0%  -6.2 pp']
    """
    label = {"duel": "chance to win", "race": "expected turns to the target", "turn": "expected turn points", "entry": "chance to come in"}.get(objective, objective)
    lines = [f"{title} ({objective}: {label} with best play after):"]
    if not values:
        return [*lines, "  (no legal move)"]
    best = values[0][1]
    width = max(12, *(len(str(m)) for m, _ in values[:limit]))
    for m, v in values[:limit]:
        mark = "*" if v == best else " "
        lines.append(f"{mark} {m!s:<{width}}  {_fmt(objective, v)}  {_gap(objective, best, v)}")
    if len(values) > limit:
        lines.append(f"  ... {len(values) - limit} more")
    return lines

