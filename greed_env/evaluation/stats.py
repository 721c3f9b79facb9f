"""Statistics of evaluation runs: means with 95% confidence intervals, and how many duel games
a given precision needs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054



@dataclass(frozen=True)
class Estimate:
    """A sample mean with the half-width of its normal-approximation 95% interval."""

    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def scaled(self, factor: float, offset: float = 0.0) -> Estimate:
        """``offset + factor * X`` as an estimate."""
        return Estimate(offset + factor * self.mean, abs(factor) * self.half_width, self.n)

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def fmt(self, digits: int = 2) -> str:
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def mean_ci(values: Sequence[float] | np.ndarray) -> Estimate:
    """Mean and 95% half-width ``1.96 * s / sqrt(n)`` (0 for fewer than two values).

    >>> e = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> e.mean, round(e.half_width, 3)
    (2.5, 1.265)
    """
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return Estimate(float("nan"), float("nan"), 0)
    if n == 1:
        return Estimate(float(x[0]), 0.0, 1)
    return Estimate(float(x.mean()), float(Z95 * x.std(ddof=1) / math.sqrt(n)), n)


def default_duel_games(half_width: float = 0.005) -> int:
    """Games that bound the 95% half-width of a win rate near 50% by ``half_width``.

    >>> default_duel_games()
    38415
    """
    return math.ceil((Z95 * 0.5 / half_width) ** 2)
