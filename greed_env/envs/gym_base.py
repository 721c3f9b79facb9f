"""The Gymnasium base class shared by the Solitaire and Duel environments.

It owns what both have in common: rules resolution, the :class:`ActionCatalog` and its
``Discrete`` space, the observation ``Box``, the mask (``info["action_mask"]`` and
:meth:`GreedGymEnv.action_masks`), illegal-action handling and text rendering. Subclasses
decide how an episode starts, who else moves, and the reward.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.common import (
    action_index,
    check_illegal_mode,
    check_reward,
    env_rules,
    forfeit,
    render_text,
)
from greed_env.envs.observation import OBS_DIM, encode_observation, observation_bounds
from greed_env.rules import IllegalMove, Move, Rules, State, apply

__all__ = ["GreedGymEnv"]


class GreedGymEnv(gym.Env[np.ndarray, np.int64]):
    """Common machinery of the greed_env Gymnasium environments (not registered itself)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        rules: Rules | str | None = "ten_thousand",
        rules_overrides: Mapping[str, Any] | None = None,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got "
                f"{render_mode!r} (stable-baselines3's make_vec_env asks for 'rgb_array' unless "
                "env_kwargs gives render_mode=None)"
            )
        self.rules: Rules = env_rules(rules, rules_overrides)
        self.illegal_action = check_illegal_mode(illegal_action)
        self.illegal_reward = check_reward("illegal_reward", illegal_reward)
        self.render_mode = render_mode
        self.catalog = ActionCatalog(self.rules)
        self.action_space = spaces.Discrete(self.catalog.n)
        low, high = observation_bounds()
        self.observation_space = spaces.Box(low, high, shape=(OBS_DIM,), dtype=np.float32)
        self.state: State | None = None
        self._seat = 0
        self._mask = np.zeros(self.catalog.n, dtype=np.int8)
        self._moves: dict[int, Move] = {}
        self._events: list[str] = []
        self._done = True

    # ----------------------------------------------------------------------------------------
    # masks

    def action_masks(self) -> np.ndarray:
        """The int8 legal-action mask of the current position (all zeros once it is over)."""
        return self._mask.copy()

    def _refresh_mask(self, state: State, live: bool) -> None:
        if live:
            self._mask, self._moves = self.catalog.legal(state)
        else:
            self._mask, self._moves = np.zeros(self.catalog.n, dtype=np.int8), {}

    def _observe(self, state: State) -> np.ndarray:
        return encode_observation(self.rules, state, self._seat)

    # ----------------------------------------------------------------------------------------
    # playing the learner's action

    def _learner_move(self, state: State, action: Any) -> tuple[State, bool]:
        """Apply the learner's action; returns the new state and whether it was illegal."""
        if self._done or self.state is None:
            raise gym.error.ResetNeeded("the episode is over (or never started): call reset()")
        a = action_index(action, self.catalog.n)
        move = self._moves.get(a)
        if move is not None:
            return apply(self.rules, state, move), False
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

    def render(self) -> str | None:
        """``ansi``: the position as text; ``human``: the same text printed."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'human'."
            )
            return None
        if self.state is None:
            text = f"[{self.rules.name}] not started: call reset()"
        else:
            text = render_text(self.rules, self.state, self._seat, self._events)
        if self.render_mode == "human":
            print(text)
            return None
        return text
