"""Gymnasium environments.

Importing this package registers the environment ids with Gymnasium (lazy ``"module:Class"``
entry points: nothing heavy is imported until an environment is made):

* ``greed_env/Solitaire-v0``: :class:`greed_env.envs.solitaire.SolitaireEnv`
* ``greed_env/Duel-v0``: :class:`greed_env.envs.duel.DuelEnv`

The PettingZoo AEC environment is :mod:`greed_env.pettingzoo.greed_v0`. The action catalog
and the observation encoding the environments speak are the part :mod:`greed_env.spaces`.

>>> import greed_env
>>> sorted(i for i in ENV_IDS)
['greed_env/Duel-v0', 'greed_env/Solitaire-v0']
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "ENV_IDS",
    "DuelEnv",
    "SolitaireEnv",
    "register_envs",
]

ENV_IDS: dict[str, str] = {
    "greed_env/Solitaire-v0": "greed_env.envs.solitaire:SolitaireEnv",
    "greed_env/Duel-v0": "greed_env.envs.duel:DuelEnv",
}

VECTOR_ENTRY_POINTS: dict[str, str] = {
    "greed_env/Solitaire-v0": "greed_env.vector.gym_env:SolitaireVectorEnv",
    "greed_env/Duel-v0": "greed_env.vector.gym_env:DuelVectorEnv",
}
"""Native batched versions, for ``gymnasium.make_vec(id, n, vectorization_mode="vector_entry_point")``."""

_LAZY = {
    "SolitaireEnv": "greed_env.envs.solitaire",
    "DuelEnv": "greed_env.envs.duel",
}


def register_envs() -> None:
    """Register every id in :data:`ENV_IDS` with Gymnasium (idempotent)."""
    from gymnasium.envs.registration import register, registry

    for env_id, entry_point in ENV_IDS.items():
        if env_id not in registry:
            register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=VECTOR_ENTRY_POINTS[env_id],
            )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'greed_env.envs' has no attribute {name!r}")
    return getattr(import_module(module), name)


register_envs()
