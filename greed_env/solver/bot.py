"""The old name of :mod:`greed_env.solver.optimal_bot`, kept for one release: importing it
warns (``DeprecationWarning``) and gives the same names."""

from __future__ import annotations

import warnings

from greed_env.solver.optimal_bot import OptimalBot, TurnContext, turn_context

__all__ = ["OptimalBot", "TurnContext", "turn_context"]

warnings.warn(
    "greed_env.solver.bot is now greed_env.solver.optimal_bot (or import OptimalBot from "
    "greed_env.solver); the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
