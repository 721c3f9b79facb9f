"""The Gymnasium spaces of the shared formats: the observation ``Box``, or the ``Dict`` that
also carries the legal-action mask under the keys of a ``mask_in_obs`` convention.

Every adapter builds its spaces here (the Gymnasium environments, their native vector
versions), so a ``mask_in_obs`` convention names the same keys everywhere.

>>> mask_obs_keys("rllib")
('observations', 'action_mask')
>>> observation_space(None, 136).shape
(106,)
>>> sorted(observation_space(mask_obs_keys(True), 136).spaces)
['action_mask', 'observation']
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from greed_env.spaces.observation import OBS_DIM, observation_bounds

__all__ = ["MASK_IN_OBS_KEYS", "mask_obs_keys", "observation_space"]

MASK_IN_OBS_KEYS: dict[str, tuple[str, str]] = {
    "pettingzoo": ("observation", "action_mask"),
    "rllib": ("observations", "action_mask"),
    "tianshou": ("obs", "mask"),
}
"""``mask_in_obs`` conventions: the ``Dict`` keys of the observation vector and of the mask.
``True`` means ``"pettingzoo"`` (also what TorchRL's ``ActionMask`` transform reads)."""


def mask_obs_keys(mask_in_obs: bool | str | None) -> tuple[str, str] | None:
    """The ``(observation, mask)`` keys of a ``mask_in_obs`` argument, None for False.

    Raises:
        ValueError: neither a bool nor a key of :data:`MASK_IN_OBS_KEYS`.
    """
    if mask_in_obs is False or mask_in_obs is None:
        return None
    if mask_in_obs is True:
        return MASK_IN_OBS_KEYS["pettingzoo"]
    if isinstance(mask_in_obs, str) and mask_in_obs in MASK_IN_OBS_KEYS:
        return MASK_IN_OBS_KEYS[mask_in_obs]
    raise ValueError(
        f"mask_in_obs must be False, True or one of {', '.join(map(repr, MASK_IN_OBS_KEYS))}, "
        f"got {mask_in_obs!r}"
    )


def observation_space(keys: tuple[str, str] | None, n_actions: int) -> spaces.Space[Any]:
    """The observation space: the ``Box`` vector, or with ``keys`` the ``Dict`` of the vector
    and the int8 action mask of ``n_actions`` entries (``mask_in_obs``)."""
    low, high = observation_bounds()
    vector = spaces.Box(low, high, shape=(OBS_DIM,), dtype=np.float32)
    if keys is None:
        return vector
    obs_key, mask_key = keys
    return spaces.Dict(
        {obs_key: vector, mask_key: spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8)}
    )
