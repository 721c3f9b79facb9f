"""The environments of the training scripts: one-environment factories and the vector switch
``--vector subproc|dummy|native``.

The factories (:func:`make_solitaire`, :func:`make_duel`) are module-level functions, so the
``subproc`` backend's worker processes import them by name; a script hands ``num_envs`` of them,
``functools.partial``-bound, to :func:`make_vec_env`. :data:`VECTOR_BACKENDS` is the one place a
new backend is added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from greed_env.evaluation import resolve_bot
from greed_env.rules import Rules

__all__ = ["VECTOR_BACKENDS", "EnvFn", "make_duel", "make_solitaire", "make_vec_env"]

EnvFn = Callable[[], gym.Env]


def make_solitaire(rules: Rules, objective: str, reward_scale: float = 1e-3) -> gym.Env:
    """One ``greed_env/Solitaire-v0`` (objective ``turn`` or ``race``)."""
    return gym.make("greed_env/Solitaire-v0", rules=rules, objective=objective, reward_scale=reward_scale)


def make_duel(rules: Rules, opponent: str) -> gym.Env:
    """One ``greed_env/Duel-v0`` against the bot spec ``opponent`` (built in the calling process)."""
    return gym.make("greed_env/Duel-v0", rules=rules, opponent=resolve_bot(opponent, rules, "duel"))


def _subproc(env_fns: Sequence[EnvFn]) -> VecEnv:
    return SubprocVecEnv(list(env_fns), start_method="spawn")


def _dummy(env_fns: Sequence[EnvFn]) -> VecEnv:
    return DummyVecEnv(list(env_fns))


def _native(env_fns: Sequence[EnvFn]) -> VecEnv:
    from greed_env.vector.sb3 import sb3_vec_env_from_env_fns  # numba: imported when used

    return sb3_vec_env_from_env_fns(env_fns)


VECTOR_BACKENDS: dict[str, Callable[[Sequence[EnvFn]], VecEnv]] = {
    "subproc": _subproc,
    "dummy": _dummy,
    "native": _native,
}
"""Vector-environment builders by ``--vector`` name: each takes the per-environment factories
and returns a stable-baselines3 ``VecEnv`` with an ``action_masks`` env method. ``native`` is
the batched engine of :mod:`greed_env.vector` (``Solitaire-v0`` and ``Duel-v0`` only; it
reads the ids and keyword arguments of the ``gym.make`` factories)."""


def make_vec_env(env_fns: Sequence[EnvFn], backend: str, seed: int) -> VecEnv:
    """Vector environment of ``env_fns`` with episode statistics, seeded ``seed, seed+1, ...``.

    Raises:
        ValueError: unknown backend.
    """
    try:
        build = VECTOR_BACKENDS[backend]
    except KeyError:
        raise ValueError(f"unknown --vector {backend!r}; available: {', '.join(VECTOR_BACKENDS)}") from None
    venv = VecMonitor(build(env_fns))
    venv.seed(seed)
    return venv
