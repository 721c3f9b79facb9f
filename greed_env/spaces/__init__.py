"""The shared formats: the fixed action catalog of a rule set and the observation vector.

Everything that turns a position into numbers a policy reads, or a policy's number back into a
move, reads these: the environments, the bots' backends, the vector engine, evaluation and the
RLlib adapter. They sit right above :mod:`greed_env.rules` and import nothing else of the
package, so a bot can encode observations without importing the environments.

* :mod:`~greed_env.spaces.catalog`: :class:`ActionCatalog` (one ``Discrete`` id per decision
  kind and keep, the exact int8 legal mask) and :func:`action_index`;
* :mod:`~greed_env.spaces.observation`: :func:`encode_observation`, the versioned
  :func:`observation_spec` and its index table;
* :mod:`~greed_env.spaces.gym_spaces`: the Gymnasium observation space, with the mask in it
  under the keys of a ``mask_in_obs`` convention.

>>> from greed_env.spaces import ActionCatalog, OBS_DIM
>>> ActionCatalog("ten_thousand").n, OBS_DIM
(136, 106)
"""

from __future__ import annotations

from greed_env.spaces.catalog import (
    ACTION_CATALOG_VERSION,
    ActionCatalog,
    ActionEntry,
    action_index,
    catalog_version,
)
from greed_env.spaces.gym_spaces import MASK_IN_OBS_KEYS, mask_obs_keys, observation_space
from greed_env.spaces.observation import (
    MAX_SEATS,
    OBS_DIM,
    OBS_INDEX,
    OBS_SPEC_VERSION,
    OBSERVATION_SPEC,
    check_observation,
    check_observation_spec,
    encode_observation,
    observation_bounds,
    observation_spec,
    spec_version_reads,
)

__all__ = [
    "ACTION_CATALOG_VERSION",
    "MASK_IN_OBS_KEYS",
    "MAX_SEATS",
    "OBSERVATION_SPEC",
    "OBS_DIM",
    "OBS_INDEX",
    "OBS_SPEC_VERSION",
    "ActionCatalog",
    "ActionEntry",
    "action_index",
    "catalog_version",
    "check_observation",
    "check_observation_spec",
    "encode_observation",
    "mask_obs_keys",
    "observation_bounds",
    "observation_space",
    "observation_spec",
    "spec_version_reads",
]
