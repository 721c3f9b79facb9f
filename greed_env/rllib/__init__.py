"""Ray RLlib: multi-agent PPO self-play on the PettingZoo game, and export to a greed_env bot.

* :mod:`greed_env.rllib.env`: ``greed_v0`` as an RLlib ``MultiAgentEnv`` with the
  ``{"observations", "action_mask"}`` observations RLlib's masking module reads;
* :mod:`greed_env.rllib.native`: ``NativeSelfPlayEnv``, many games of the native batched
  engine as one ``MultiAgentEnv`` (RLlib's multi-agent runners vectorise only by a Python
  loop over separate envs);
* :mod:`greed_env.rllib.module`: the action-masking PPO ``RLModule``;
* :mod:`greed_env.rllib.config`: the self-play ``PPOConfig`` (one shared policy);
* :mod:`greed_env.rllib.export`: checkpoint -> shared module -> ONNX logits + bot card.

Importing ``greed_env`` or this package never imports ray or torch; the names below are
loaded on first use. Install with ``pip install greed-env[ray]``. The training script is
``training/rllib_selfplay.py`` (``greed train rllib_selfplay``); scaling out to a cluster is described in ``docs/scale.md``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "ENV_NAME",
    "SHARED_MODULE",
    "MaskedPPOTorchRLModule",
    "NativeSelfPlayEnv",
    "RLlibObservations",
    "export_checkpoint",
    "load_policy_module",
    "make_rllib_env",
    "register_native_env",
    "register_rllib_env",
    "selfplay_config",
]

_LAZY = {
    "ENV_NAME": "greed_env.rllib.env",
    "RLlibObservations": "greed_env.rllib.env",
    "make_rllib_env": "greed_env.rllib.env",
    "register_rllib_env": "greed_env.rllib.env",
    "MaskedPPOTorchRLModule": "greed_env.rllib.module",
    "NativeSelfPlayEnv": "greed_env.rllib.native",
    "register_native_env": "greed_env.rllib.native",
    "SHARED_MODULE": "greed_env.rllib.config",
    "selfplay_config": "greed_env.rllib.config",
    "export_checkpoint": "greed_env.rllib.export",
    "load_policy_module": "greed_env.rllib.export",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'greed_env.rllib' has no attribute {name!r}")
    return getattr(import_module(module), name)
