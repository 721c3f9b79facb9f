"""Checking a duel table by simulation: ``OptimalBot`` plays both seats in the engine.

>>> import numpy as np
>>> from greed_env.rules import preset
>>> from greed_env.solver import solve
>>> table = solve(preset("ten_thousand", rounds=1, target=1000, entry_threshold=300), "duel")
>>> check = simulate_duel(table, 200, np.random.default_rng(0))
>>> check.games, abs(check.z) < 4
(200, True)
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from greed_env.rules import apply, apply_roll, is_chance, is_over, new_game, sample_roll
from greed_env.solver.model import SolverError
from greed_env.solver.optimal_bot import OptimalBot
from greed_env.solver.table import SolverTable

__all__ = ["DuelCheck", "self_play_check", "simulate_duel"]


class DuelCheck(NamedTuple):
    """Seat 0's mean share of the pot over ``games`` games, its standard error, and the
    z-score of the difference from the table's headline."""

    games: int
    mean: float
    se: float
    z: float

    def summary(self) -> str:
        lo, hi = self.mean - 1.96 * self.se, self.mean + 1.96 * self.se
        return (
            f"simulated: {self.mean:.4f} (95% CI {lo:.4f}-{hi:.4f}) over {self.games} games, "
            f"z = {self.z:+.2f}"
        )


def simulate_duel(table: SolverTable, games: int, rng: np.random.Generator) -> DuelCheck:
    """Play ``games`` two-player games, seat 0 first, both seats by ``OptimalBot(table)``.

    Raises:
        SolverError: the table is not a duel table, or ``games`` is below 2.
    """
    if table.objective != "duel":
        raise SolverError(f"a simulation check needs a duel table, got {table.objective!r}")
    if not isinstance(games, int) or games < 2:
        raise SolverError(f"games must be an integer >= 2, got {games!r}")
    return self_play_check(table, OptimalBot(table.rules, "duel", table), 2, games, rng)


def self_play_check(
    table: SolverTable, bot: Any, players: int, games: int, rng: np.random.Generator
) -> DuelCheck:
    """Play ``games`` games of ``players`` seats, seat 0 first, every seat by ``bot``; seat 0's
    mean share of the pot against ``table``'s headline. ``games`` is checked by the caller."""
    rules = table.rules
    shares = np.empty(games)
    for i in range(games):
        s = new_game(rules, players, first_player=0)
        while not is_over(s):
            s = apply_roll(rules, s, sample_roll(rules, s, rng)) if is_chance(s) else apply(rules, s, bot.act(rules, s, rng))
        shares[i] = s.shares[0]
    mean = float(shares.mean())
    se = float(shares.std(ddof=1) / math.sqrt(games))
    z = (mean - table.headline) / se if se > 0 else 0.0
    return DuelCheck(games, mean, se, z)
