"""The PettingZoo ``greed_v0`` game as an RLlib multi-agent environment with action masks.

RLlib's action-masking PPO module reads the observation dict keys ``"observations"`` and
``"action_mask"`` (a float mask), while PettingZoo's convention, kept by ``greed_v0``, is
``"observation"`` and an int8 ``"action_mask"``. :class:`RLlibObservations` is the small
PettingZoo wrapper that renames the key and casts the mask; :func:`make_rllib_env` wraps the
result in RLlib's ``PettingZooEnv`` (AEC to ``MultiAgentEnv``: every agent acts at its own
decisions, several in a row within a turn, and each gets its pot share when the game ends).

Nothing here imports ray until :func:`make_rllib_env` or :func:`register_rllib_env` runs.

>>> env = RLlibObservations(make_pettingzoo_env({"rules": "farkle"}))
>>> env.reset(seed=0)
>>> obs = env.observe(env.agent_selection)
>>> sorted(obs), obs["action_mask"].dtype, env.observation_space("player_0")["observations"].shape
(['action_mask', 'observations'], dtype('float32'), (106,))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from greed_env.pettingzoo import greed_v0

__all__ = [
    "ENV_NAME",
    "RLlibObservations",
    "make_pettingzoo_env",
    "make_rllib_env",
    "register_rllib_env",
]

ENV_NAME = "greed_env_greed_v0"
"""The name :func:`register_rllib_env` registers with ``ray.tune``."""

ENV_CONFIG_KEYS = ("rules", "rules_overrides", "num_players", "illegal_action", "illegal_reward")
"""``env_config`` keys passed on to ``greed_v0.env``."""


class RLlibObservations(BaseWrapper):
    """``{"observation", "action_mask"(int8)}`` -> ``{"observations", "action_mask"(float32)}``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._spaces: dict[str, spaces.Dict] = {}
        for agent in self.possible_agents:
            inner = env.observation_space(agent)
            self._spaces[agent] = spaces.Dict(
                {
                    "observations": inner["observation"],
                    "action_mask": spaces.Box(
                        0.0, 1.0, shape=inner["action_mask"].shape, dtype=np.float32
                    ),
                }
            )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        obs = super().observe(agent)
        if obs is None:
            return None
        return {
            "observations": obs["observation"],
            "action_mask": obs["action_mask"].astype(np.float32),
        }


def make_pettingzoo_env(config: Mapping[str, Any] | None = None) -> Any:
    """``greed_v0.env(**config)`` with only the keys in :data:`ENV_CONFIG_KEYS`.

    Raises:
        ValueError: an unknown key (a typo would otherwise be silently ignored).
    """
    cfg = dict(config or {})
    unknown = sorted(set(cfg) - set(ENV_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"unknown env_config keys {unknown}; known: {', '.join(ENV_CONFIG_KEYS)}")
    return greed_v0.env(**cfg)


def make_rllib_env(config: Mapping[str, Any] | None = None) -> Any:
    """RLlib ``PettingZooEnv`` over :class:`RLlibObservations` of ``greed_v0`` (imports ray)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibObservations(make_pettingzoo_env(config)))


def register_rllib_env(name: str = ENV_NAME) -> str:
    """Register :func:`make_rllib_env` with ``ray.tune`` under ``name``; returns the name.

    Every machine of a Ray cluster imports this function by reference, so greed_env must be
    installed on each of them.
    """
    from ray.tune.registry import register_env

    register_env(name, make_rllib_env)
    return name
