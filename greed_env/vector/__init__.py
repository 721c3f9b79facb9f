"""The vector engine: many games stepped in lockstep by numba kernels.

* :class:`SolitaireVectorEnv`, :class:`DuelVectorEnv`: Gymnasium ``VectorEnv`` versions of
  ``greed_env/Solitaire-v0`` and ``greed_env/Duel-v0`` (same-step autoreset);
* :func:`greed_env.vector.sb3.make_sb3_vec_env`: the same as a Stable-Baselines3 ``VecEnv``
  with ``action_masks()`` for sb3-contrib's MaskablePPO (imports torch, so it is not
  imported here);
* :class:`~greed_env.vector.engine.BatchGame`: games at the level of the rules engine;
* :mod:`greed_env.vector.tables`: the tables derived from the reference scoring;
* :mod:`greed_env.vector.kernels`: the numba kernels in one namespace (defined by concern in
  ``layout``, ``lookup``, ``game``, ``policies``, ``observe``, ``rewards``, ``episodes``,
  ``batch``; the row layout is derived from ``greed_env.rules.State``).

Every preset but Trippn (and no piggyback): see
:func:`~greed_env.vector.tables.check_vector_supported`.
"""

from greed_env.vector.engine import BatchGame, EpisodeBatch
from greed_env.vector.gym_env import (
    VECTOR_ENV_IDS,
    DuelVectorEnv,
    GreedVectorEnv,
    SolitaireVectorEnv,
    make_vector_env,
)
from greed_env.vector.tables import (
    VectorUnsupportedError,
    check_vector_supported,
    vector_tables,
)

__all__ = [
    "VECTOR_ENV_IDS",
    "BatchGame",
    "DuelVectorEnv",
    "EpisodeBatch",
    "GreedVectorEnv",
    "SolitaireVectorEnv",
    "VectorUnsupportedError",
    "check_vector_supported",
    "make_vector_env",
    "vector_tables",
]
