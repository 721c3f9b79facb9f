"""Gymnasium environments.

Importing this package registers the environment ids with Gymnasium (lazy ``"module:Class"``
entry points: nothing heavy is imported until an environment is made):

* ``greed_env/Solitaire-v0``: :class:`greed_env.envs.solitaire.SolitaireEnv`
* ``greed_env/Duel-v0``: :class:`greed_env.envs.duel.DuelEnv`

The PettingZoo AEC environment is :mod:`greed_env.pettingzoo.greed_v0`. The action catalog
and the observation encoding the environments speak are the part :mod:`greed_env.spaces`;
``greed_env.envs.catalog`` and ``greed_env.envs.observation`` still import, as the same
modules (:data:`MOVED_MODULES`).

>>> import greed_env
>>> sorted(i for i in ENV_IDS)
['greed_env/Duel-v0', 'greed_env/Solitaire-v0']
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any

from greed_env.spaces import catalog, observation
from greed_env.spaces.catalog import ACTION_CATALOG_VERSION, ActionCatalog
from greed_env.spaces.observation import (
    OBS_DIM,
    OBS_SPEC_VERSION,
    encode_observation,
    observation_spec,
)

__all__ = [
    "ACTION_CATALOG_VERSION",
    "ENV_IDS",
    "MOVED_MODULES",
    "OBS_DIM",
    "OBS_SPEC_VERSION",
    "ActionCatalog",
    "DuelEnv",
    "SolitaireEnv",
    "encode_observation",
    "observation_spec",
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

MOVED_MODULES = {f"{__name__}.catalog": catalog, f"{__name__}.observation": observation}
"""Old module names of the shared formats, bound to the modules of :mod:`greed_env.spaces`
(the same module objects, so ``greed_env.envs.catalog.ActionCatalog is
greed_env.spaces.ActionCatalog``)."""
sys.modules.update(MOVED_MODULES)

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
