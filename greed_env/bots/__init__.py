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
  (numpy), :mod:`~greed_env.bots.sb3_backend` (torch); :mod:`~greed_env.bots.optimal` (the solver);
* :mod:`~greed_env.bots.registry` (bot folders, listing), :mod:`~greed_env.bots.play` (game
  loop), :mod:`~greed_env.bots.tournament`, :mod:`~greed_env.bots.export`, :mod:`~greed_env.bots.hints`.

The loader is imported on first use of a name below, so that the environments, which import
:mod:`greed_env.bots.base` for the protocol, do not load the backends; no module here imports
torch, onnxruntime or the solver's numba kernels until a bot needs them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from greed_env.bots.base import Bot, ObservationBot, RandomBot, ThresholdBot
from greed_env.bots.errors import (
    BotLoadError,
    CatalogMismatchError,
    CorruptBotError,
    ObsSpecMismatchError,
    RulesMismatchError,
    UnknownBotError,
)
from greed_env.bots.spec import BotSpec, parse_spec

__all__ = [
    "Bot",
    "BotInfo",
    "BotLoadError",
    "BotSpec",
    "CatalogMismatchError",
    "CorruptBotError",
    "ObsSpecMismatchError",
    "ObservationBot",
    "OnnxBot",
    "PPOBot",
    "PolicyBot",
    "RandomBot",
    "RulesMismatchError",
    "ThresholdBot",
    "UnknownBotError",
    "export_model",
    "hint_lines",
    "list_bots",
    "load",
    "parse_spec",
    "run_tournament",
]

_LAZY = {
    "BotInfo": "greed_env.bots.registry",
    "list_bots": "greed_env.bots.registry",
    "load": "greed_env.bots.loader",
    "OnnxBot": "greed_env.bots.onnx_backend",
    "PPOBot": "greed_env.bots.sb3_backend",
    "PolicyBot": "greed_env.bots.numpy_backend",
    "export_model": "greed_env.bots.export",
    "hint_lines": "greed_env.bots.hints",
    "run_tournament": "greed_env.bots.tournament",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'greed_env.bots' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
