"""The old name of :mod:`greed_env.train.network`, kept for one release.

Model zips saved before the rename name their policy classes by this module
(``greed_env.train.features.GreedActorCriticPolicy``, ``GreedFeatures``): they load through it,
with a DeprecationWarning. Import the classes from :mod:`greed_env.train.network`.
"""

from __future__ import annotations

import warnings

from greed_env.train.network import (
    GreedActorCriticPolicy,
    GreedFeatures,
    LeanMaskableCategorical,
    LeanMaskableCategoricalDistribution,
    StructuredActionHead,
)

__all__ = [
    "GreedActorCriticPolicy",
    "GreedFeatures",
    "LeanMaskableCategorical",
    "LeanMaskableCategoricalDistribution",
    "StructuredActionHead",
]

warnings.warn(
    "greed_env.train.features is now greed_env.train.network (a model saved before loads through "
    "the old name); the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
