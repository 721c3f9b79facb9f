"""Bots: the one runtime for playing any policy.

>>> import greed_env.bots as bots
>>> from greed_env.rules import preset
>>> bots.load("threshold-500", preset("ten_thousand")).bank_at
500

* :mod:`~greed_env.bots.base`: the :class:`Bot` protocol, :class:`RandomBot`, :class:`ThresholdBot`;
* :mod:`~greed_env.bots.spec` and :mod:`~greed_env.bots.loader`: the spec grammar and
  :func:`load`, used by the CLI, the environments' opponents, evaluation and tournaments;
* :mod:`~greed_env.bots.cards`: bot and training cards (read, check, build, summarise);
  :mod:`~greed_env.bots.errors`: the :class:`BotLoadError` family;
* backends: :mod:`~greed_env.bots.onnx_backend` (onnxruntime), :mod:`~greed_env.bots.numpy_backend`
  (numpy), :mod:`~greed_env.bots.sb3_backend` (torch), :mod:`~greed_env.bots.solver_backend`
  (the solver's tables);
* :mod:`~greed_env.bots.registry` (bot folders, listing), :mod:`~greed_env.bots.play` (game
  loop), :mod:`~greed_env.bots.tournament`, :mod:`~greed_env.bots.export`, :mod:`~greed_env.bots.hints`.

No module here imports torch, onnxruntime or the solver's numba kernels until a bot needs them.
"""

from __future__ import annotations

from greed_env.bots.base import Bot, ObservationBot, RandomBot, ThresholdBot
from greed_env.bots.errors import (
    BotLoadError,
    CatalogMismatchError,
    CorruptBotError,
    MissingDependencyError,
    ObsSpecMismatchError,
    RulesMismatchError,
    SeatCountError,
    UnknownBotError,
)
from greed_env.bots.export import export_model
from greed_env.bots.hints import hint_lines
from greed_env.bots.loader import check_seats, load
from greed_env.bots.numpy_backend import PolicyBot
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.bots.registry import BotInfo, list_bots
from greed_env.bots.sb3_backend import PPOBot
from greed_env.bots.spec import BotSpec, parse_spec
from greed_env.bots.tournament import run_tournament

__all__ = [
    "Bot",
    "BotInfo",
    "BotLoadError",
    "BotSpec",
    "CatalogMismatchError",
    "CorruptBotError",
    "MissingDependencyError",
    "ObsSpecMismatchError",
    "ObservationBot",
    "OnnxBot",
    "PPOBot",
    "PolicyBot",
    "RandomBot",
    "RulesMismatchError",
    "SeatCountError",
    "ThresholdBot",
    "UnknownBotError",
    "check_seats",
    "export_model",
    "hint_lines",
    "list_bots",
    "load",
    "parse_spec",
    "run_tournament",
]
