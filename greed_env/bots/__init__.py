"""Bots: the protocol, built-in bots, the registry of optimal and trained bots, tournaments.

>>> import greed_env.bots as bots
>>> bots.load("ten_thousand/threshold-500").bank_at
500

The registry, the policy bots and the tournament runner are imported on first use, so
importing this package (as the environments do for the bot protocol) stays light and never
imports torch or onnxruntime.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from greed_env.bots.base import Bot, ObservationBot, RandomBot, ThresholdBot

__all__ = [
    "Bot",
    "BotInfo",
    "BotLoadError",
    "CatalogMismatchError",
    "CorruptBotError",
    "ObsSpecMismatchError",
    "ObservationBot",
    "OnnxBot",
    "PPOBot",
    "RandomBot",
    "RulesMismatchError",
    "ThresholdBot",
    "UnknownBotError",
    "export_model",
    "hint_lines",
    "list_bots",
    "load",
    "run_tournament",
]

_LAZY = {
    "BotInfo": "greed_env.bots.registry",
    "UnknownBotError": "greed_env.bots.registry",
    "list_bots": "greed_env.bots.registry",
    "load": "greed_env.bots.registry",
    "BotLoadError": "greed_env.bots.policy_bots",
    "CatalogMismatchError": "greed_env.bots.policy_bots",
    "CorruptBotError": "greed_env.bots.policy_bots",
    "ObsSpecMismatchError": "greed_env.bots.policy_bots",
    "OnnxBot": "greed_env.bots.policy_bots",
    "PPOBot": "greed_env.bots.sb3_backend",
    "RulesMismatchError": "greed_env.bots.policy_bots",
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
