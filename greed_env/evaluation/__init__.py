"""Evaluate any bot against the exact solver: value with a 95% CI, regret, report and plots.

A bot is any spec :func:`greed_env.bots.load` reads (``random``, ``threshold-400``, registry
ids, ``optimal-turn``, files: ``.json`` / ``.onnx`` exported bots, ``.zip`` SB3 models and
``.npz`` snapshots, both played by the numpy policy) or a bot object. ``optimal`` is
``optimal-duel`` here as everywhere; ``optimal-OBJ`` for the objective measured plays the
yardstick table (:func:`yardstick_rules`).

Objectives, each played in the environment the agents are trained in so that the numbers mean
the same thing:

* ``turn`` (``Solitaire-v0``): mean points of one turn, beside the solver's optimal expected
  turn score. The environment skips turns whose first roll has no scoring keep (no decision
  is possible); the mean is reported per turn *including* those, i.e. the conditional mean
  times ``1 - p_first_bust``, which is what the solver table states.
* ``race`` (``Solitaire-v0``): mean number of turns to reach the target, beside the optimal
  expected number of turns.
* ``duel`` (``Duel-v0``): win rate (a shared pot counts one half) against an opponent (default
  the optimal bot), seats balanced (game ``i`` seats the bot at ``i % num_players``).

Decision quality: at every decision of the evaluated bot in the first ``regret_episodes``
episodes, :meth:`OptimalBot.move_values` gives the optimal value of every legal move; the
regret of the move played is the gap to the best one, in the table's units (points, turns, win
probability). Regret also gives a second, far less noisy estimate of the bot's value (the
performance-difference identity: the value of a policy is the optimal value less the expected
sum of its regrets along its own trajectories, exact when the opponent plays optimally); both
estimates are reported.

Episodes are independent of how they are spread over processes: episode ``i`` is seeded from
``SeedSequence(seed, spawn_key=(i,))``, and worker processes receive explicit episode ranges.
Importing this package does not import torch, and nothing here imports the training code
(``greed_env.train``); loading a ``.zip`` model imports torch once, in the calling process:
workers receive the numpy weights.

The parts: :mod:`~greed_env.evaluation.stats` (confidence intervals),
:mod:`~greed_env.evaluation.yardstick` (the solver's values), :mod:`~greed_env.evaluation.resolve`
(the bots), :mod:`~greed_env.evaluation.runner` (episodes, processes, :func:`evaluate`),
:mod:`~greed_env.evaluation.duel` (the numba duel path),
:mod:`~greed_env.evaluation.policy_value` (a deterministic bot's exact turn value, by
enumeration), :mod:`~greed_env.evaluation.regret`,
:mod:`~greed_env.evaluation.result` and :mod:`~greed_env.evaluation.report` (report, plots,
learning curves).

>>> from greed_env.rules import preset
>>> res = evaluate("threshold-300", preset("ten_thousand"), "turn", episodes=200, seed=1,
...                regret_episodes=0)
>>> res.score.n, res.objective
(200, 'turn')
"""

from __future__ import annotations

from greed_env.bots.solver_backend import optimal_bot
from greed_env.evaluation.duel import (
    VECTOR_DUEL_BATCH,
    VECTOR_DUEL_MIN_PER_ROW,
    vector_duel_act,
    vector_duel_supported,
    vector_duel_values,
)
from greed_env.evaluation.policy_value import (
    EnumerationLimit,
    SamplingBotError,
    TurnValue,
    turn_value,
)
from greed_env.evaluation.regret import LEAD_BUCKETS, TURN_BUCKETS, regret_by_situation
from greed_env.evaluation.report import learning_curve, plot_learning_curves, write_report
from greed_env.evaluation.resolve import BotSource, resolve_bot
from greed_env.evaluation.result import EvalResult
from greed_env.evaluation.runner import MAX_EPISODES, OBJECTIVES, evaluate
from greed_env.evaluation.stats import Z95, Estimate, default_duel_games, mean_ci
from greed_env.evaluation.yardstick import (
    first_roll_bust_probability,
    optimal_value,
    yardstick_rules,
)

__all__ = [
    "LEAD_BUCKETS",
    "MAX_EPISODES",
    "OBJECTIVES",
    "TURN_BUCKETS",
    "VECTOR_DUEL_BATCH",
    "VECTOR_DUEL_MIN_PER_ROW",
    "Z95",
    "BotSource",
    "EnumerationLimit",
    "Estimate",
    "EvalResult",
    "SamplingBotError",
    "TurnValue",
    "default_duel_games",
    "evaluate",
    "first_roll_bust_probability",
    "learning_curve",
    "mean_ci",
    "optimal_bot",
    "optimal_value",
    "plot_learning_curves",
    "regret_by_situation",
    "resolve_bot",
    "turn_value",
    "vector_duel_act",
    "vector_duel_supported",
    "vector_duel_values",
    "write_report",
    "yardstick_rules",
]
