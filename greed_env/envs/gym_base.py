"""The Gymnasium base class shared by the Solitaire and Duel environments.

It owns what both have in common: rules resolution, the :class:`ActionCatalog` and its
``Discrete`` space, the observation ``Box`` (or, with ``mask_in_obs``, a ``Dict`` that also
carries the mask: :mod:`greed_env.spaces.gym_spaces`), the mask (``info["action_mask"]``
and :meth:`GreedGymEnv.action_masks`), the terminal mask convention, illegal-action handling
and rendering (text and pictures).
Subclasses decide how an episode starts, who else moves, and the reward.

**Terminal mask**: once an episode has ended (terminated or truncated), the mask returned with
the last observation is *all ones* (the convention of Pgx and of Tianshou's PettingZoo
adapter): no sampler ever meets an empty mask, and no action of it is played, since the
episode must be reset (Gymnasium's next-step autoreset ignores that row's action).
``catalog.mask(state)`` stays the exact legal mask (all zeros at the end).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from greed_env.envs.conventions import (
    check_illegal_mode,
    check_reward,
    env_rules,
    forfeit,
    render_text,
    terminal_mask,
)
from greed_env.envs.render import TurnLog, table_picture
from greed_env.rules import IllegalMove, Move, Rules, State, apply
from greed_env.spaces.catalog import ActionCatalog, action_index
from greed_env.spaces.gym_spaces import MASK_IN_OBS_KEYS, mask_obs_keys, observation_space
from greed_env.spaces.observation import encode_observation

__all__ = ["MASK_IN_OBS_KEYS", "GreedGymEnv"]


class GreedGymEnv(gym.Env[Any, np.int64]):
    """Common machinery of the greed_env Gymnasium environments (not registered itself)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | str | None = "ten_thousand",
        rules_overrides: Mapping[str, Any] | None = None,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        mask_in_obs: bool | str = False,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got "
                f"{render_mode!r}"
            )
        self._obs_keys = mask_obs_keys(mask_in_obs)
        self.mask_in_obs = mask_in_obs
        self.rules: Rules = env_rules(rules, rules_overrides)
        self.illegal_action = check_illegal_mode(illegal_action)
        self.illegal_reward = check_reward("illegal_reward", illegal_reward)
        self.render_mode = render_mode
        self.catalog = ActionCatalog(self.rules)
        self.action_space = spaces.Discrete(self.catalog.n)
        self.observation_space: spaces.Space[Any] = observation_space(
            self._obs_keys, self.catalog.n
        )
        self.state: State | None = None
        self._log = TurnLog()
        self._seat = 0
        self._mask = np.zeros(self.catalog.n, dtype=np.int8)
        self._moves: dict[int, Move] = {}
        self._events: list[str] = []
        self._done = True

    # ----------------------------------------------------------------------------------------
    # masks

    def action_masks(self) -> np.ndarray:
        """The int8 legal-action mask of the current position (all ones once it is over: see
        the terminal mask in the module doc)."""
        return self._mask.copy()

    def _refresh_mask(self, state: State, live: bool) -> None:
        if live:
            self._mask, self._moves = self.catalog.legal(state)
        else:
            self._mask, self._moves = terminal_mask(self.catalog.n), {}

    def _observe(self, state: State) -> Any:
        vector = encode_observation(self.rules, state, self._seat)
        if self._obs_keys is None:
            return vector
        obs_key, mask_key = self._obs_keys
        return {obs_key: vector, mask_key: self._mask.copy()}

    def _played(self, before: State, move: Move, after: State) -> State:
        """Note a move for the renders (only when rendering); returns ``after``."""
        if self.render_mode is not None:
            self._log.note(self.rules, before, move, after)
        return after

    # ----------------------------------------------------------------------------------------
    # playing the learner's action

    def _learner_move(self, state: State, action: Any) -> tuple[State, bool]:
        """Apply the learner's action; returns the new state and whether it was illegal."""
        if self._done or self.state is None:
            raise gym.error.ResetNeeded("the episode is over (or never started): call reset()")
        a = action_index(action, self.catalog.n)
        move = self._moves.get(a)
        if move is not None:
            return self._played(state, move, apply(self.rules, state, move)), False
        if self.illegal_action == "raise":
            self.catalog.action_to_move(state, a)
            raise IllegalMove(f"action {a} is not legal here", rule="masked-action")
        return forfeit(self.rules, state), True

    def _info(self, illegal: bool = False) -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "illegal_action": illegal}

    def _finish_step(
        self, state: State, reward: float, terminated: bool, truncated: bool, illegal: bool
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        self.state = state
        self._done = terminated or truncated
        self._refresh_mask(state, not self._done)
        obs = self._observe(state)
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, self._info(illegal)

    # ----------------------------------------------------------------------------------------
    # rendering

    def _num_seats(self) -> int:
        return 1

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the position as text; ``human``: the same text printed (a terminal is the
        display); ``rgb_array``: a picture of the table, an ``(H, W, 3)`` uint8 array of a
        fixed size per environment (:func:`~greed_env.envs.render.table_picture`, Pillow)."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or "
                "'rgb_array'."
            )
            return None
        keeps = self._log.keeps_of(self.state) if self.state is not None else []
        if self.render_mode == "rgb_array":
            return table_picture(
                self.rules, self.state, self._seat, self._events, keeps, self._num_seats()
            )
        if self.state is None:
            text = f"[{self.rules.name}] not started: call reset()"
        else:
            text = render_text(self.rules, self.state, self._seat, self._events, keeps)
        if self.render_mode == "human":
            print(text)
            return None
        return text
