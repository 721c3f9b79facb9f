"""What an evaluation found: :class:`EvalResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from greed_env.evaluation.stats import Estimate
from greed_env.rules import Rules


@dataclass
class EvalResult:
    """What :func:`evaluate` measured.

    Attributes:
        bot: how the bot was named.
        rules: the rules played.
        objective: ``turn``, ``race`` or ``duel``.
        opponent: the duel opponent's name (empty otherwise).
        episodes: turns, races or games played.
        seed: master seed of the episode seeds.
        score: the measured value with its 95% CI: mean turn score (per turn, first-roll busts
            included), mean turns to target, or win rate.
        optimal: the solver's value in the same units (0.5 for a seat-balanced duel; NaN
            where the solver has no table for the rules, e.g. Trippn, and then no regret).
        regret_estimate: the value estimated as ``optimal -/+ mean regret per episode`` over the
            regret episodes (None without them, or against a non-optimal duel opponent).
        decisions: decisions whose regret was measured.
        mean_regret, worst_regret: per decision, in the table's units.
        optimal_share: share of measured decisions whose regret is zero.
        wall_s: seconds of the evaluation.
        units: the unit of ``score`` in words.
        decisions_table: per-decision arrays ``regret``, ``phase``, ``dice``, ``turn_total``,
            ``lead`` (the decider's banked score less the best other banked score; 0 alone)
            and ``final`` (1 in a final round).
        exact: ``turn`` with ``exact=True``: the bot's exact expected turn score
            (:func:`greed_env.evaluation.policy_value.turn_value`, no sampling error), else None.
        exact_p_cap: the probability mass valued at the enumeration's turn-total cap.
    """

    bot: str
    rules: Rules
    objective: str
    opponent: str
    episodes: int
    seed: int
    score: Estimate
    optimal: float
    regret_estimate: Estimate | None
    decisions: int
    mean_regret: float
    worst_regret: float
    optimal_share: float
    wall_s: float
    units: str
    decisions_table: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    exact: float | None = None
    exact_p_cap: float | None = None

    @property
    def exact_ratio(self) -> float | None:
        """Exact value / optimal value, when the exact value was computed."""
        return None if self.exact is None else self.exact / self.optimal

    @property
    def ratio(self) -> float:
        """Measured value / optimal value (turn, duel) or optimal / measured (race)."""
        if self.objective == "race":
            return self.optimal / self.score.mean
        return self.score.mean / self.optimal

    def summary(self) -> dict[str, Any]:
        """JSON-able digest (for model cards and logs)."""
        out: dict[str, Any] = {
            "bot": self.bot,
            "rules": self.rules.name,
            "objective": self.objective,
            "opponent": self.opponent,
            "episodes": self.episodes,
            "seed": self.seed,
            "units": self.units,
            "mean": self.score.mean,
            "ci95": self.score.half_width,
            "optimal": self.optimal,
            "ratio": self.ratio,
            "decisions": self.decisions,
            "mean_regret": self.mean_regret,
            "worst_regret": self.worst_regret,
            "optimal_share": self.optimal_share,
            "wall_s": self.wall_s,
        }
        if self.regret_estimate is not None:
            out["regret_estimate"] = self.regret_estimate.mean
            out["regret_estimate_ci95"] = self.regret_estimate.half_width
        if self.exact is not None:
            out["exact"] = self.exact
            out["exact_ratio"] = self.exact_ratio
            out["exact_p_cap"] = self.exact_p_cap
        return out
