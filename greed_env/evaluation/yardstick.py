"""The solver side of an evaluation: the optimal bot, the yardstick rules and values an
objective is measured against."""

from __future__ import annotations

from typing import Any

from greed_env.rules import Phase, Rules, apply_roll, chance_outcomes, new_game


def solver_module() -> Any:
    """:mod:`greed_env.solver`, imported on first use (it compiles numba kernels)."""
    import greed_env.solver as solver

    return solver


def yardstick_rules(rules: Rules, objective: str) -> Rules:
    """The rules whose solver table measures ``objective`` as the environments play it.

    ``Solitaire-v0``'s ``turn`` episode is one turn from no busts in a row, where a bust
    penalty (Zilch: the third bust in a row) can never fall; its optimum is the single-turn
    optimum of the rules without the penalty, not the solver's long-run average per turn
    with the penalty (620.85 points for Zilch, against 623.02 for one turn).
    """
    if objective == "turn" and rules.bust_penalty:
        return rules.replace(bust_penalty=0)
    return rules


def optimal_value(rules: Rules, objective: str) -> float:
    """The solver's headline value: optimal expected turn score (``turn``), expected turns to
    the target (``race``), or the first player's win probability (``duel``)."""
    table = solver_module().load_table(rules, objective)
    return float(table.headline)


def first_roll_bust_probability(rules: Rules) -> float:
    """Probability that the first full roll of a turn has no scoring keep.

    >>> from greed_env.rules import preset
    >>> round(first_roll_bust_probability(preset("ten_thousand")), 6)
    0.023148
    """
    solo = rules if rules.min_players <= 1 else rules.replace(min_players=1)
    s = new_game(solo, 1)
    return sum(p for roll, p in chance_outcomes(solo, s) if apply_roll(solo, s, roll).phase != Phase.KEEP)
