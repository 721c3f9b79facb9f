"""Exact solutions of the dice games: optimal play as a yardstick and as a bot.

Four objectives (see ``docs/solver.md``):

* ``turn``: most expected points in one turn (long-run points per turn with a bust penalty);
* ``entry``: best probability of coming in within one turn;
* ``race``: fewest expected turns for one player to reach the target;
* ``duel``: best probability of winning a two-player game from every position (a game of a
  fixed number of rounds: by rounds left, :mod:`greed_env.solver.rounds`).

Tables hold values at the start of a turn; decisions inside a turn are recomputed on demand.
All transition tables are derived from the reference scoring
(:func:`greed_env.rules.scoring.keep_options`).

>>> from greed_env.rules import preset
>>> round(solve(preset("farkle5"), "entry").headline, 4)
0.2986
"""

from __future__ import annotations

from typing import Any

from greed_env.rules.config import Rules, resolve_rules
from greed_env.solver.bot import OptimalBot
from greed_env.solver.model import SolverError
from greed_env.solver.table import (
    OBJECTIVES,
    SolverTable,
    TableError,
    cache_dir,
    package_table_dir,
)

__all__ = [
    "OBJECTIVES",
    "OptimalBot",
    "SolverError",
    "SolverTable",
    "TableError",
    "load_table",
    "solve",
]


def solve(rules: Rules | str, objective: str, **opts: Any) -> SolverTable:
    """Solve ``objective`` under ``rules`` (a :class:`Rules` or a preset name).

    Options: ``tol`` (convergence tolerance, default 1e-12), ``cap`` (turn objective: points
    where the tail policy starts; chosen and checked automatically by default), ``floor``
    (race/duel with a bust penalty: lowest banked score modelled, in points). Carry-over rules
    take ``max_states`` (memory guard of the carry-over engine).

    Raises:
        SolverError: unknown objective, or a rule variant or size the solver does not handle.
    """
    rules = resolve_rules(rules)
    if objective not in OBJECTIVES:
        raise SolverError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")
    if rules.carry_over:
        from greed_env.solver import carry

        return carry.solve(rules, objective, **opts)
    if objective == "duel" and rules.rounds:
        from greed_env.solver import rounds

        return rounds.solve_rounds_duel(rules, **opts)
    from greed_env.solver import objectives

    fn = {
        "turn": objectives.solve_turn,
        "entry": objectives.solve_entry,
        "race": objectives.solve_race,
        "duel": objectives.solve_duel,
    }[objective]
    return fn(rules, **opts)


def table_paths(rules: Rules, objective: str) -> list[Any]:
    """Where :func:`load_table` looks, in order: package data, then the user cache."""
    name = SolverTable(rules, objective, {}).filename()
    return [package_table_dir() / name, cache_dir() / name]


def load_table(rules: Rules | str, objective: str, solve_if_missing: bool = True, **opts: Any) -> SolverTable:
    """The table of ``objective`` under ``rules``: shipped package data, then the user cache,
    else solved now and written to the cache (``solve_if_missing=False``: raise instead).

    Raises:
        TableError: a file exists but is corrupt or for other rules (never silently replaced),
            or no table exists and ``solve_if_missing`` is False.
    """
    rules = resolve_rules(rules)
    for path in table_paths(rules, objective):
        if path.exists():
            return SolverTable.load(path, rules, objective)
    if not solve_if_missing:
        raise TableError(
            f"no {objective} table for rules {rules.name!r} ({rules.fingerprint}); run "
            f"`greed solve --rules {rules.name} --objective {objective}`"
        )
    table = solve(rules, objective, **opts)
    table.save(cache_dir())
    return table
