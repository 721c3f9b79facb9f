"""``greed_env/Solitaire-v0``: one player, one turn or a race to the target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import numpy as np

from greed_env.envs.conventions import advance_chance, check_reward
from greed_env.envs.docs import CATALOG_SIZES_DOC, OBS_TABLE_DOC
from greed_env.envs.gym_base import GreedGymEnv
from greed_env.rules import Phase, Rules, State, new_game

__all__ = ["OBJECTIVES", "SolitaireEnv"]

OBJECTIVES = ("turn", "race")
"""The episode goals this environment plays (two of the solver's objectives, :data:`greed_env.solver.OBJECTIVES`)."""
_MAX_SKIPPED_TURNS = 10_000

_DOC = """One player plays one turn, or races to the target, under a rule set of the 10,000 family.

## Description

With ``objective="turn"`` an episode is a single turn of a player who is already on the
board: which scoring dice to keep after each roll, and when to stop and bank, is the classic
push-your-luck decision. With ``objective="race"`` the player starts at 0 (not yet on the
board where the rules require coming in) and plays turn after turn until the target is
reached (exactly, under ``exact_target`` rules such as ``progressive``); the task is to get
there in as few turns as possible. Dice are rolled inside :meth:`step` with the environment's
``np_random``; the rules themselves live in :mod:`greed_env.rules`.

## Action Space

``Discrete(n)``, the rules' fixed :class:`~greed_env.spaces.catalog.ActionCatalog`: the non-keep
moves the rules can produce (``bank``, ``roll``, ...) first, then every keep (a multiset of
faces; under tap-order rules a multiset with the combination it locks first, and three
alternate keeps that fill a straight). ``n`` per preset, with its catalog version:

%CATALOG_SIZES%

Only actions unmasked in ``info["action_mask"]`` (int8) and :meth:`action_masks` are legal.
The mask returned with the last observation of an episode is all ones (the terminal mask,
as in Pgx): no sampler meets an empty mask, and no action is played from it (the episode must
be reset; Gymnasium's next-step autoreset ignores that action).

## Observation Space

With ``mask_in_obs=True`` the observation is the ``Dict`` of PettingZoo's env,
``{"observation": Box, "action_mask": Box(0, 1, (n,), int8)}`` (``"rllib"``: keys
``observations`` / ``action_mask``; ``"tianshou"``: ``obs`` / ``mask``), so Tianshou, TorchRL
and RLlib read the mask with no wrapper. By default it is
``Box(low, high, (106,), float32)``, the same for every rules configuration (observation spec
version 2, :func:`~greed_env.spaces.observation.observation_spec`). Per-seat groups start with
the observing player (here the only seat, padded to 8):

%OBS_TABLE%

## Rewards

* ``turn``: the points banked when the turn ends, times ``reward_scale`` (default 0.001: a
  500-point bank is +0.5); a bust scores 0. An instant win (six-of-a-kind variant) counts as
  banking the turn total.
* ``race``: -1 for every turn played, so the episode return is minus the number of turns.
* An illegal action (masked id) under ``illegal_action="penalty"`` adds ``illegal_reward``
  (default -1.0) and forfeits the turn as a bust; ``info["illegal_action"]`` is True.

## Starting State

``turn``: banked score 0, on the board, the turn's first roll showing. A first roll with no
legal keep offers no decision at all; such turns are skipped, so the mean return is the value
of a turn *given* that its first roll scores. ``race``: score 0, not yet on the board where
the rules require coming in, at the first decision; turns that bust before any decision are
counted, and their -1 rewards arrive with the next step.

## Episode End

Terminated: ``turn`` when the turn ends (bank, bust, forfeit, instant win); ``race`` when the
target is reached, or the last of a fixed number of rounds (``rules.rounds``) is played. Truncated: ``turn`` after ``max_steps`` decisions (default 1000); ``race``
after ``max_turns`` turns (default 200; at most ``rules.horizon_rounds``).

## Arguments

* ``rules``: preset name or :class:`~greed_env.rules.Rules` (default ``"ten_thousand"``).
* ``rules_overrides``: dict of rules fields applied on top of ``rules``.
* ``objective``: ``"turn"`` (default) or ``"race"``.
* ``illegal_action``: ``"penalty"`` (default: never raises, so Gymnasium's ``check_env``, which
  samples unmasked actions, passes) or ``"raise"`` (:class:`~greed_env.rules.IllegalMove`).
* ``illegal_reward``: reward of an illegal action under ``"penalty"`` (default -1.0).
* ``reward_scale``: points-to-reward factor of ``turn`` (default 0.001).
* ``max_steps`` / ``max_turns``: truncation limits of ``turn`` / ``race``.
* ``render_mode``: None, ``"ansi"`` (:meth:`render` returns text), ``"human"`` (the text
  printed every step) or ``"rgb_array"`` (a picture of the table, drawn with Pillow: the roll,
  the turn's keeps in tap order with their reading, working sets, turn total, scores).
* ``mask_in_obs``: False (default), True / ``"pettingzoo"``, ``"rllib"`` or ``"tianshou"``.

The environment pickles and deep-copies with its state and generator: a copy continues exactly
as the original would.

## Version History

* v0: initial version (action catalog v1, observation spec v1); observation spec v2 adds
  the rounds left of a game of a fixed number of rounds (``round_progress``; v1 models
  still load for rules without one).

## Example

>>> import gymnasium as gym
>>> import numpy as np
>>> import greed_env
>>> env = gym.make("greed_env/Solitaire-v0", rules="ten_thousand", objective="turn")
>>> obs, info = env.reset(seed=3)
>>> obs.shape, obs.dtype, info["action_mask"].dtype
((106,), dtype('float32'), dtype('int8'))
>>> rng = np.random.default_rng(0)
>>> done = False
>>> while not done:
...     action = rng.choice(np.flatnonzero(info["action_mask"]))
...     obs, reward, terminated, truncated, info = env.step(action)
...     done = terminated or truncated
>>> reward >= 0.0
True
>>> _ = env.reset(seed=3)
>>> _, reward, terminated, _, info = env.step(env.action_space.n - 1)
>>> info["illegal_action"], reward, terminated
(True, -1.0, True)
"""


class SolitaireEnv(GreedGymEnv):
    __doc__ = _DOC.replace("%CATALOG_SIZES%", CATALOG_SIZES_DOC).replace(
        "%OBS_TABLE%", OBS_TABLE_DOC
    )

    def __init__(
        self,
        rules: Rules | str | None = "ten_thousand",
        objective: str = "turn",
        illegal_action: str = "penalty",
        render_mode: str | None = None,
        rules_overrides: Mapping[str, Any] | None = None,
        mask_in_obs: bool | str = False,
        reward_scale: float = 1e-3,
        illegal_reward: float = -1.0,
        max_steps: int = 1000,
        max_turns: int = 200,
    ) -> None:
        super().__init__(
            rules, rules_overrides, illegal_action, illegal_reward, render_mode, mask_in_obs
        )
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be 'turn' or 'race', got {objective!r}")
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        if not isinstance(max_turns, int) or not 1 <= max_turns <= self.rules.horizon_rounds:
            raise ValueError(
                f"max_turns must be an integer in 1..rules.horizon_rounds "
                f"({self.rules.horizon_rounds}), got {max_turns!r}"
            )
        if objective == "race" and self.rules.target <= 0:
            raise ValueError("the race objective needs a target; these rules have none (target=0)")
        self.objective = objective
        self.reward_scale = check_reward("reward_scale", reward_scale)
        self.max_steps = max_steps
        self.max_turns = max_turns
        self._solo_rules = (
            self.rules if self.rules.min_players <= 1 else self.rules.replace(min_players=1)
        )
        self._start_turn = 1
        self._start_score = 0
        self._steps = 0
        self._turns_done = 0
        self._pending = 0.0

    # ----------------------------------------------------------------------------------------

    def _turn_over(self, s: State) -> bool:
        return s.phase == Phase.OVER or s.turns[0] != self._start_turn

    @staticmethod
    def _turns_played(s: State) -> int:
        return s.turns[0] if s.phase == Phase.OVER else s.turns[0] - 1

    def _race_stop(self, s: State) -> bool:
        return self._turns_played(s) >= self.max_turns

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._log.clear()
        self._events = []
        self._steps = 0
        self._pending = 0.0
        self._turns_done = 0
        rules = self.rules
        if self.objective == "turn":
            for _ in range(_MAX_SKIPPED_TURNS):
                s = new_game(self._solo_rules, 1)
                s = s._replace(entered=(True,))
                self._start_turn, self._start_score = s.turns[0], s.scores[0]
                s = advance_chance(rules, s, self.np_random, self._events, self._turn_over)
                if not self._turn_over(s):
                    break
            else:
                raise RuntimeError(f"{_MAX_SKIPPED_TURNS} turns in a row offered no decision")
        else:
            s = new_game(self._solo_rules, 1)
            s = advance_chance(rules, s, self.np_random, self._events, self._race_stop)
            self._turns_done = self._turns_played(s)
            self._pending = -float(self._turns_done)
        self.state = s
        self._done = False
        self._refresh_mask(s, True)
        if self.render_mode == "human":
            self.render()
        return self._observe(s), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        self._events = []
        s, illegal = self._learner_move(self.state, action)  # type: ignore[arg-type]
        if s.event:
            self._events.append(s.event)
        self._steps += 1
        reward = self.illegal_reward if illegal else 0.0
        rules = self.rules
        if self.objective == "turn":
            s = advance_chance(rules, s, self.np_random, self._events, self._turn_over)
            terminated = self._turn_over(s)
            if terminated:
                if s.phase == Phase.OVER and s.scores[0] == self._start_score:
                    reward += s.turn_total * self.reward_scale
                else:
                    reward += (s.scores[0] - self._start_score) * self.reward_scale
            truncated = not terminated and self._steps >= self.max_steps
        else:
            s = advance_chance(rules, s, self.np_random, self._events, self._race_stop)
            played = self._turns_played(s)
            reward += self._pending - (played - self._turns_done)
            self._pending = 0.0
            self._turns_done = played
            terminated = s.phase == Phase.OVER
            truncated = not terminated and played >= self.max_turns
        return self._finish_step(s, reward, terminated, truncated, illegal)
