"""``greed_env/Duel-v0``: the learner against an opponent bot, a whole game per episode."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, SupportsFloat

import numpy as np

from greed_env.bots.base import Bot, checked_act
from greed_env.bots.loader import as_bot, check_seats
from greed_env.envs.docs import CATALOG_SIZES_DOC, OBS_TABLE_DOC
from greed_env.envs.gym_base import GreedGymEnv
from greed_env.rules import Move, Phase, Rules, State, new_game, returns
from greed_env.rules.play import play_out

__all__ = ["DuelEnv"]

_MAX_RESTARTS = 1000

_DOC = """The learner plays a whole game against an opponent bot (or several seats of it).

## Description

A game of the 10,000 family for ``num_players`` seats (default 2). The learner's seat is drawn
at every reset from ``np_random`` (or fixed with ``seat=``); every other seat is played by the
``opponent`` bot. Inside :meth:`step` the learner's move is applied, then the opponents' moves
and every roll of the dice (the who-starts roll included) are played until it is the learner's
turn to decide again or the game is over. The bot and the dice both draw from the
environment's ``np_random``, so an episode is reproducible from its seed.

## Action Space

``Discrete(n)``, the rules' fixed :class:`~greed_env.spaces.catalog.ActionCatalog` (non-keep
moves first, then keeps). ``n`` per preset, with its catalog version:

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
version 2). Per-seat groups are rotated so that slot 0 is the learner, slot ``k`` the ``k``-th
seat after it:

%OBS_TABLE%

## Rewards

0 until the game ends, then the learner's pot share from
:func:`~greed_env.rules.returns`: ``num_players * share - 1`` (two players: +1 win, -1 loss,
0 shared; ties, splits and roll-offs included). An illegal action (masked id) under
``illegal_action="penalty"`` adds ``illegal_reward`` (default -1.0) and forfeits the turn as a
bust (in a split vote or roll-off order choice, where there is no turn, the first legal move is
played); ``info["illegal_action"]`` is True.

## Starting State

Scores 0, nobody on the board, the who-starts roll made (when the rules use one), opponents'
turns played up to the learner's first decision. A game that ends before the learner ever
decides (an opponent's instant win) is replaced by a new one.

## Episode End

Terminated when the game is over (target reached and final round played, everyone out, the
split vote or roll-off decided, the last of a fixed number of rounds played (``rules.rounds``:
the highest score wins), or the rules' ``horizon_rounds`` reached, which shares the pot). The
rules' horizon ends every game, so there is no truncation.

## Arguments

* ``rules``: preset name or :class:`~greed_env.rules.Rules` (default ``"ten_thousand"``).
* ``rules_overrides``: dict of rules fields applied on top of ``rules``.
* ``opponent``: a bot (``act(rules, state, rng) -> Move``) or any bot spec
  :func:`greed_env.bots.load` reads: ``"random"``, ``"threshold"``, ``"threshold-400"``,
  ``"optimal"`` (the solver's duel bot), registry ids, files (default ``"threshold"``).
* ``num_players``: seats, 2..8 within the rules' limits (default 2); an opponent made for
  two-player games (``"optimal"``, a ladder rung) is refused with more (``SeatCountError``).
* ``seat``: the learner's fixed seat, or None (default) to draw it at each reset.
* ``illegal_action``: ``"penalty"`` (default; never raises) or ``"raise"``.
* ``illegal_reward``: reward of an illegal action under ``"penalty"`` (default -1.0).
* ``render_mode``: None, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (see Solitaire-v0).
* ``mask_in_obs``: False (default), True / ``"pettingzoo"``, ``"rllib"`` or ``"tianshou"``.

The environment pickles and deep-copies with its state, generator and opponent: a copy
continues exactly as the original would.

## Version History

* v0: initial version (action catalog v1, observation spec v1); observation spec v2 adds
  the rounds left of a game of a fixed number of rounds (``round_progress``; v1 models
  still load for rules without one).

## Example

>>> import gymnasium as gym
>>> import numpy as np
>>> import greed_env
>>> env = gym.make("greed_env/Duel-v0", rules="farkle", opponent="random")
>>> obs, info = env.reset(seed=1)
>>> rng = np.random.default_rng(1)
>>> terminated = False
>>> while not terminated:
...     action = rng.choice(np.flatnonzero(env.unwrapped.action_masks()))
...     obs, reward, terminated, truncated, info = env.step(action)
>>> reward in (-1.0, 0.0, 1.0)
True
"""


class DuelEnv(GreedGymEnv):
    __doc__ = _DOC.replace("%CATALOG_SIZES%", CATALOG_SIZES_DOC).replace(
        "%OBS_TABLE%", OBS_TABLE_DOC
    )

    def __init__(
        self,
        rules: Rules | str | None = "ten_thousand",
        opponent: Bot | str | None = "threshold",
        num_players: int = 2,
        seat: int | None = None,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        rules_overrides: Mapping[str, Any] | None = None,
        mask_in_obs: bool | str = False,
    ) -> None:
        super().__init__(
            rules, rules_overrides, illegal_action, illegal_reward, render_mode, mask_in_obs
        )
        low, high = max(2, self.rules.min_players), self.rules.max_players
        if not isinstance(num_players, int) or not low <= num_players <= high:
            raise ValueError(
                f"num_players must be an integer in {low}..{high} for {self.rules.name}, got {num_players!r}"
            )
        if seat is not None and (not isinstance(seat, int) or not 0 <= seat < num_players):
            raise ValueError(f"seat must be None or a seat 0..{num_players - 1}, got {seat!r}")
        self.num_players = num_players
        self.fixed_seat = seat
        self.opponent: Bot = as_bot(opponent, self.rules)
        check_seats(self.opponent, num_players)  # a two-player bot in a bigger game: refused now

    def _num_seats(self) -> int:
        return self.num_players

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode."""
        return self._seat

    def _advance(self, s: State) -> State:
        """Roll and play the opponents' moves (:func:`~greed_env.rules.play.play_out`) until
        the learner decides or the game is over."""
        seat, events = self._seat, self._events

        def seen(before: State, event: tuple[int, ...] | Move, after: State) -> None:
            if isinstance(event, Move):
                self._played(before, event, after)
            if after.event:
                events.append(after.event)

        act = partial(checked_act, self.opponent)
        return play_out(
            self.rules, s, [act] * s.num_players, self.np_random, on_step=seen, stop=lambda st: st.player == seat
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._log.clear()
        n = self.num_players
        self._seat = int(self.np_random.integers(n)) if self.fixed_seat is None else self.fixed_seat
        for _ in range(_MAX_RESTARTS):
            self._events = []
            s = self._advance(new_game(self.rules, n))
            if s.phase != Phase.OVER:
                break
        else:
            raise RuntimeError(
                f"{_MAX_RESTARTS} games in a row ended before the learner could move"
            )
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
        s = self._advance(s)
        reward = self.illegal_reward if illegal else 0.0
        terminated = s.phase == Phase.OVER
        if terminated:
            reward += returns(s)[self._seat]
        return self._finish_step(s, reward, terminated, False, illegal)

    def _info(self, illegal: bool = False) -> dict[str, Any]:
        info = super()._info(illegal)
        info["seat"] = self._seat
        return info
