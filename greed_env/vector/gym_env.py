"""Gymnasium ``VectorEnv`` versions of ``greed_env/Solitaire-v0`` and ``greed_env/Duel-v0``.

Each sub-environment is the single environment of the same name, with the same arguments,
action catalog, observation vector, rewards and episode ends (the equivalence is tested on
shared dice); the whole batch is stepped by numba kernels instead of a Python loop.

**Autoreset mode**: ``AutoresetMode.SAME_STEP`` by default (``metadata["autoreset_mode"]``).
The step that ends an episode returns the first observation of the next episode; the last
observation of the ended one is in ``infos["final_obs"][i]`` (``infos["_final_obs"][i]``
True) and its info in ``infos["final_info"]``. So every row of every step is a live decision
with a non-empty mask, which is what masked policy-gradient training wants. Pass
``autoreset_mode=AutoresetMode.NEXT_STEP`` for Gymnasium's default convention instead (the
step after an ending resets that row, ignoring its action, and returns reward 0).

**Masks**: :meth:`GreedVectorEnv.action_masks` returns the ``(num_envs, n)`` int8 mask of the
current positions, also in ``infos["action_mask"]``.

**Arrays returned**: the observations and ``infos["action_mask"]`` are written by the kernels
straight into arrays that nothing outside the env references when the step starts
(:class:`~greed_env.vector.engine.EpisodeBatch`), and are returned without a copy: an array a
caller keeps is never written again, so ``copy=True`` (Gymnasium's default) costs nothing and
``copy=False`` returns the same. Every other array of a step's results is new. A row whose episode has just ended (the
next-step mode's terminal row, and ``infos["final_info"]["action_mask"]`` in same-step mode)
carries the terminal mask, all ones, as the single environments do: no row is ever all zeros.
``infos["final_info"]["action_mask"]`` (and, with ``mask_in_obs``, the mask of each
``infos["final_obs"]`` entry) is one read-only view of a single all-ones row, allocated once.
With ``mask_in_obs`` the observations are a dict of the batched vector and the batched mask,
keyed as in the single environments (:data:`~greed_env.spaces.gym_spaces.MASK_IN_OBS_KEYS`).

**Randomness**: one ``numpy.random.Generator`` per vector env, seeded by ``reset(seed=...)``;
sub-environments draw from it in a fixed order, independent of thread scheduling. Streams
differ from ``num_envs`` copies of the single environment seeded alike.

>>> import numpy as np
>>> envs = SolitaireVectorEnv(4, rules="ten_thousand", objective="turn")
>>> obs, infos = envs.reset(seed=0)
>>> obs.shape, envs.action_masks().shape, envs.metadata["autoreset_mode"].name
((4, 106), (4, 136), 'SAME_STEP')
>>> rng = np.random.default_rng(0)
>>> obs, rewards, terminated, truncated, infos = envs.step(envs.sample_legal_actions(rng))
>>> rewards.dtype, bool(infos["illegal_action"].any())
(dtype('float64'), False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from greed_env.bots.base import Bot
from greed_env.envs.conventions import check_illegal_mode, env_rules
from greed_env.rules import IllegalMove, Rules
from greed_env.spaces.gym_spaces import mask_obs_keys, observation_space
from greed_env.vector import kernels as K
from greed_env.vector.engine import EpisodeBatch

__all__ = [
    "VECTOR_ENV_IDS",
    "DuelVectorEnv",
    "GreedVectorEnv",
    "SolitaireVectorEnv",
    "make_vector_env",
]


class GreedVectorEnv(VectorEnv):
    """Common machinery of the vector environments (not made directly)."""

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def _setup(
        self,
        batch: EpisodeBatch,
        illegal_action: str,
        autoreset_mode: AutoresetMode | str,
        copy: bool,
        mask_in_obs: bool | str = False,
    ) -> None:
        self._obs_keys = mask_obs_keys(mask_in_obs)
        self.mask_in_obs = mask_in_obs
        self.batch = batch
        self.rules: Rules = batch.rules
        self.catalog = batch.tables.catalog
        self.num_envs = batch.num_envs
        self.illegal_action = check_illegal_mode(illegal_action)
        self.copy = copy
        self.render_mode = None
        self.single_observation_space: spaces.Space[Any] = observation_space(
            self._obs_keys, self.catalog.n
        )
        self.single_action_space = spaces.Discrete(self.catalog.n)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {**type(self).metadata, "autoreset_mode": AutoresetMode(autoreset_mode)}
        self._started = False
        terminal = np.ones(self.catalog.n, dtype=np.int8)
        terminal.flags.writeable = False
        self._terminal_masks = np.broadcast_to(terminal, (self.num_envs, self.catalog.n))
        """The terminal mask (all ones) of every row, read-only and allocated once."""

    @property
    def autoreset_mode(self) -> AutoresetMode:
        return self.metadata["autoreset_mode"]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-environment (or those in ``options["reset_mask"]``).

        ``seed`` must be an int or None (one generator serves the whole batch).
        """
        if seed is not None and not isinstance(seed, int | np.integer):
            raise TypeError(
                f"seed must be an int or None for a {type(self).__name__}, got {seed!r}"
            )
        rows = None if options is None else options.get("reset_mask")
        if seed is not None:
            self._np_random_seed = int(seed)
        self.batch.reset(seed=None if seed is None else int(seed), rows=rows)
        self._started = True
        return self._obs(), self._infos(None, 0)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-environment with its action (see the module doc for autoreset)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            if acts.shape == (self.num_envs,) and np.all(np.mod(acts, 1) == 0):
                acts = acts.astype(np.int64)
            else:
                raise ValueError(
                    f"actions must be {self.num_envs} integer ids, got shape {acts.shape} {acts.dtype}"
                )
        n = self.catalog.n
        if acts.min() < 0 or acts.max() >= n:
            raise ValueError(f"actions must lie in 0..{n - 1}")
        if self.illegal_action == "raise":
            live = self.batch.E[:, K.E_STAGE] == K.STAGE_IDLE
            bad = live & (self.batch.mask[np.arange(self.num_envs), acts] == 0)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise IllegalMove(
                    f"sub-environment {i}: action {int(acts[i])} ({self.catalog.labels[int(acts[i])]}) "
                    "is not legal here",
                    rule="masked-action",
                )
        self.batch.step(acts)
        flags, done = self.batch.flags()
        infos = self._infos(flags, done)
        return self._obs(), self.batch.rewards.copy(), flags[0], flags[1], infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n)`` int8 legal-action masks of the current positions."""
        return self.batch.mask.copy()

    def sample_legal_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per sub-environment, drawn from ``rng``."""
        return self.batch.random_actions(rng)

    def _obs(self) -> Any:
        # the batch's own arrays, never written again while anything outside it holds them
        vector = self.batch.obs
        if self._obs_keys is None:
            return vector
        obs_key, mask_key = self._obs_keys
        return {obs_key: vector, mask_key: self.batch.mask}

    def _infos(self, flags: np.ndarray | None, ended_rows: int) -> dict[str, Any]:
        """The infos of a reset (``flags`` None) or of a step (``flags``: :meth:`EpisodeBatch.flags`'s
        rows terminated, truncated, done, illegal; ``ended_rows``: how many are done)."""
        b = self.batch
        n = self.num_envs
        everywhere = np.ones(n, dtype=np.bool_)
        infos: dict[str, Any] = {
            "action_mask": b.mask,
            "_action_mask": everywhere,
            "illegal_action": np.zeros(n, dtype=np.bool_) if flags is None else flags[3],
            "_illegal_action": everywhere,
        }
        self._extra_infos(infos, everywhere)
        if flags is not None and ended_rows and self.autoreset_mode == AutoresetMode.SAME_STEP:
            done = flags[2]
            final_obs = np.empty(n, dtype=object)
            rows = np.flatnonzero(done)
            # one copy of the finished rows; each entry is a row of it (no per-row copy)
            ended = list(b.final_obs[rows])
            if self._obs_keys is not None:
                obs_key, mask_key = self._obs_keys
                ended = [{obs_key: o, mask_key: self._terminal_masks[0]} for o in ended]
            for i, entry in zip(rows.tolist(), ended, strict=True):
                final_obs[i] = entry  # (a fancy-index assignment would broadcast the arrays)
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            final_info: dict[str, Any] = {
                "action_mask": self._terminal_masks,
                "_action_mask": done,
                "illegal_action": flags[3] & done,
                "_illegal_action": done,
            }
            infos["final_info"] = final_info
            infos["_final_info"] = done
        return infos

    def _extra_infos(self, infos: dict[str, Any], everywhere: np.ndarray) -> None:
        return None

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""


class SolitaireVectorEnv(GreedVectorEnv):
    """``num_envs`` copies of ``greed_env/Solitaire-v0`` (objective ``turn`` or ``race``).

    Arguments after ``num_envs`` are those of
    :class:`~greed_env.envs.solitaire.SolitaireEnv` (``render_mode`` excepted), plus
    ``autoreset_mode``, ``copy`` (Gymnasium's flag; the observations returned are never
    written again either way: see the module doc),
    ``mask_in_obs`` (as in the single environment),
    ``buffer_size`` (dice codes buffered per sub-environment) and ``parallel`` (step on
    numba's thread pool; off by default, see :class:`~greed_env.vector.engine.EpisodeBatch`).
    Every preset but Trippn (:func:`~greed_env.vector.tables.check_vector_supported`).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = "ten_thousand",
        objective: str = "turn",
        illegal_action: str = "penalty",
        rules_overrides: Mapping[str, Any] | None = None,
        reward_scale: float = 1e-3,
        illegal_reward: float = -1.0,
        max_steps: int = 1000,
        max_turns: int = 200,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        copy: bool = True,
        buffer_size: int = 64,
        parallel: bool = False,
        mask_in_obs: bool | str = False,
    ) -> None:
        resolved = env_rules(rules, rules_overrides)
        if objective not in ("turn", "race"):
            raise ValueError(f"objective must be 'turn' or 'race', got {objective!r}")
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        if not isinstance(max_turns, int) or not 1 <= max_turns <= resolved.horizon_rounds:
            raise ValueError(
                f"max_turns must be an integer in 1..rules.horizon_rounds "
                f"({resolved.horizon_rounds}), got {max_turns!r}"
            )
        self.objective = objective
        batch = EpisodeBatch(
            resolved,
            num_envs,
            mode=objective,
            max_steps=max_steps,
            max_turns=max_turns,
            reward_scale=float(reward_scale),
            illegal_reward=float(illegal_reward),
            same_step=AutoresetMode(autoreset_mode) == AutoresetMode.SAME_STEP,
            buffer_size=buffer_size,
            parallel=parallel,
        )
        self._setup(batch, illegal_action, autoreset_mode, copy, mask_in_obs)


class DuelVectorEnv(GreedVectorEnv):
    """``num_envs`` copies of ``greed_env/Duel-v0``: the learner against a bot.

    Arguments after ``num_envs`` are those of :class:`~greed_env.envs.duel.DuelEnv`
    (``render_mode`` excepted) plus ``autoreset_mode``, ``copy``, ``buffer_size`` and
    ``parallel`` as in :class:`SolitaireVectorEnv`. The opponent must be ``"random"``,
    ``"threshold"``, ``"threshold:N"`` or a ``RandomBot`` / ``ThresholdBot`` instance: it is
    played inside the kernels. ``infos["seat"]`` holds each learner's seat.
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = "ten_thousand",
        opponent: Bot | str | None = "threshold",
        num_players: int = 2,
        seat: int | None = None,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
        rules_overrides: Mapping[str, Any] | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        copy: bool = True,
        buffer_size: int = 64,
        parallel: bool = False,
        mask_in_obs: bool | str = False,
    ) -> None:
        resolved = env_rules(rules, rules_overrides)
        low, high = max(2, resolved.min_players), resolved.max_players
        if not isinstance(num_players, int) or not low <= num_players <= high:
            raise ValueError(
                f"num_players must be an integer in {low}..{high} for {resolved.name}, got {num_players!r}"
            )
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < num_players):
            raise ValueError(f"seat must be None or a seat 0..{num_players - 1}, got {seat!r}")
        self.num_players = num_players
        batch = EpisodeBatch(
            resolved,
            num_envs,
            mode="duel",
            num_players=num_players,
            seat=seat,
            opponent=opponent,
            illegal_reward=float(illegal_reward),
            same_step=AutoresetMode(autoreset_mode) == AutoresetMode.SAME_STEP,
            buffer_size=buffer_size,
            parallel=parallel,
        )
        self._setup(batch, illegal_action, autoreset_mode, copy, mask_in_obs)

    def _extra_infos(self, infos: dict[str, Any], everywhere: np.ndarray) -> None:
        infos["seat"] = self.batch.seat.copy()
        infos["_seat"] = everywhere


VECTOR_ENV_IDS: dict[str, type[GreedVectorEnv]] = {
    "greed_env/Solitaire-v0": SolitaireVectorEnv,
    "greed_env/Duel-v0": DuelVectorEnv,
}
"""The single environment ids that have a vector version, and that version."""


def make_vector_env(env_id: str, num_envs: int, **kwargs: Any) -> GreedVectorEnv:
    """The vector version of ``env_id`` (``greed_env/Solitaire-v0`` or ``greed_env/Duel-v0``,
    or the short names ``"solitaire"`` / ``"duel"``) with the single environment's keyword
    arguments.

    >>> make_vector_env("greed_env/Duel-v0", 2, rules="farkle", opponent="random").num_envs
    2

    Raises:
        ValueError: an id without a vector version.
    """
    short = {"solitaire": "greed_env/Solitaire-v0", "duel": "greed_env/Duel-v0"}
    cls = VECTOR_ENV_IDS.get(short.get(env_id.lower(), env_id))
    if cls is None:
        raise ValueError(f"no vector version of {env_id!r}; available: {', '.join(VECTOR_ENV_IDS)}")
    return cls(num_envs, **kwargs)
