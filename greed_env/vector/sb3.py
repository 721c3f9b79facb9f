"""The vector environments as a Stable-Baselines3 ``VecEnv`` that MaskablePPO trains on directly.

sb3-contrib finds masks on a ``VecEnv`` through ``env_method("action_masks")`` (stacked into
``(num_envs, n)``) after checking ``has_attr("action_masks")``; :class:`GreedSB3VecEnv`
answers both from the one batched mask, and also offers :meth:`GreedSB3VecEnv.action_masks`.
Autoreset follows SB3's convention, which is Gymnasium's same-step mode: the observation of an
ended episode is ``infos[i]["terminal_observation"]`` and ``infos[i]["TimeLimit.truncated"]``
tells truncation from termination. Importing this module imports stable-baselines3 (and
torch); ``import greed_env.vector`` does not.

>>> venv = make_sb3_vec_env("greed_env/Solitaire-v0", 8, seed=0, rules="ten_thousand")
>>> obs = venv.reset()
>>> from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
>>> is_masking_supported(venv), get_action_masks(venv).shape
(True, (8, 136))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from greed_env.vector.gym_env import VECTOR_ENV_IDS, GreedVectorEnv, make_vector_env

__all__ = ["GreedSB3VecEnv", "make_sb3_vec_env", "sb3_vec_env_from_env_fns"]


class GreedSB3VecEnv(VecEnv):
    """A :class:`~greed_env.vector.gym_env.GreedVectorEnv` behind SB3's ``VecEnv`` interface.

    ``seed(s)`` then ``reset()`` seeds the batch's single generator with ``s``; attributes and
    methods asked of "every environment" are the vector environment's own (one shared value
    per index).

    Raises:
        ValueError: a vector environment not in same-step autoreset mode.
    """

    def __init__(self, env: GreedVectorEnv) -> None:
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError("GreedSB3VecEnv needs a vector env with AutoresetMode.SAME_STEP")
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> VecEnvObs:
        seed = next((s for s in self._seeds if s is not None), None)
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rewards, terminated, truncated, infos = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            out[i]["terminal_observation"] = infos["final_obs"][i]
            out[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        for i in np.flatnonzero(infos["illegal_action"]):
            out[i]["illegal_action"] = True
        return obs, rewards.astype(np.float32), dones, out

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n)`` int8 legal-action masks."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in idx]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self.env, attr_name)


def make_sb3_vec_env(
    env_id: str, num_envs: int, seed: int | None = None, **env_kwargs: Any
) -> GreedSB3VecEnv:
    """``num_envs`` sub-environments of ``env_id`` (see
    :func:`~greed_env.vector.gym_env.make_vector_env`) as an SB3 ``VecEnv``; ``seed`` is used
    by the next ``reset()``."""
    venv = GreedSB3VecEnv(make_vector_env(env_id, num_envs, **env_kwargs))
    if seed is not None:
        venv.seed(seed)
    return venv


def sb3_vec_env_from_env_fns(
    env_fns: Sequence[Callable[[], gym.Env]], num_envs: int | None = None
) -> GreedSB3VecEnv:
    """The native vector version of the environments ``env_fns`` would build.

    The first factory is called once to read its ``spec`` (id and keyword arguments, as set
    by ``gym.make``); the result has ``num_envs`` (default ``len(env_fns)``) sub-environments.
    This is the signature of a ``--vector`` backend in ``greed_env.train.backends``.

    Raises:
        ValueError: the environment was not made by ``gym.make`` from an id with a vector
            version, or uses an argument the vector version lacks (``render_mode``).
    """
    probe = env_fns[0]()
    spec = probe.spec
    probe.close()
    if spec is None or spec.id not in VECTOR_ENV_IDS:
        have = "no gym.make spec" if spec is None else f"id {spec.id!r}"
        raise ValueError(
            f"the native vector env needs gym.make ids {', '.join(VECTOR_ENV_IDS)}; got {have}"
        )
    kwargs = {k: v for k, v in dict(spec.kwargs).items() if k != "render_mode" or v is None}
    kwargs.pop("render_mode", None)
    return GreedSB3VecEnv(make_vector_env(spec.id, num_envs or len(env_fns), **kwargs))
