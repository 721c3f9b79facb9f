"""``greed_v0``: the 10,000 dice-game family as a PettingZoo AEC environment.

``env(**kwargs)`` is :class:`raw_env` inside PettingZoo's standard wrappers
(``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``), as in PettingZoo's classic games.
Illegal actions are handled by the environment itself (see :class:`raw_env`), so no
``TerminateIllegalWrapper`` is needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from greed_env.envs.conventions import (
    advance_chance,
    check_illegal_mode,
    check_reward,
    env_rules,
    forfeit,
    render_text,
)
from greed_env.envs.docs import CATALOG_SIZES_DOC, OBS_TABLE_DOC
from greed_env.envs.render import TurnLog, table_picture
from greed_env.rules import IllegalMove, Move, Phase, Rules, State, apply, new_game, returns
from greed_env.spaces.catalog import ActionCatalog, action_index
from greed_env.spaces.observation import OBS_DIM, encode_observation, observation_bounds

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """:class:`raw_env` with PettingZoo's standard wrappers (same keyword arguments)."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


_DOC = """All players of one game of the 10,000 family, as a PettingZoo AEC environment.

## Description

``num_players`` agents ``player_0``, ``player_1``, ... play one game under ``rules``. Agents act
only at decisions (keep, bank or roll on, reroll all, bust, piggyback, split vote, roll-off
order); every roll of the dice, the who-starts roll included, is made inside :meth:`step` and
:meth:`reset` with the environment's own generator, seeded by ``reset(seed=...)``. The agent
selected next is always the player whose decision it is.

## Action Space

``Discrete(n)`` for every agent, the rules' fixed :class:`~greed_env.spaces.catalog.ActionCatalog`
(non-keep moves first, then keeps). ``n`` per preset, with its catalog version:

%CATALOG_SIZES%

## Observation Space

``Dict({"observation": Box(low, high, (106,), float32), "action_mask": Box(0, 1, (n,), int8)})``.
``action_mask`` is the exact legal mask for the agent to act and all zeros for the others.
``observation`` is seen from the observing agent's seat (slot 0 = that agent, slot ``k`` the
``k``-th seat after it), observation spec version 2:

%OBS_TABLE%

## Rewards

0 until the game ends; then every agent receives its pot share from
:func:`~greed_env.rules.returns`, ``num_players * share - 1``: zero-sum, +1/-1 between two
players, ties, splits and roll-offs included. An illegal action (masked id) under
``illegal_action="penalty"`` gives the offender ``illegal_reward`` (default -1.0; this one term
is not zero-sum), forfeits its turn as a bust (in the split vote or roll-off order choice the
first legal move is played instead) and sets ``infos[agent]["illegal_action"]``; under
``"raise"`` it raises :class:`~greed_env.rules.IllegalMove`.

## Starting State

Scores 0, nobody on the board, the who-starts roll made where the rules use one, and the first
player's first roll showing.

## Episode End

Every agent terminates when the game is over, including after the last of a fixed number of
rounds (``rules.rounds``: the highest score wins; ``round_progress`` shows the rounds left).
The rules' ``horizon_rounds`` ends every game (sharing the pot), so there is no truncation.

## Arguments

* ``rules``: preset name or :class:`~greed_env.rules.Rules` (default ``"ten_thousand"``).
* ``rules_overrides``: dict of rules fields applied on top of ``rules``.
* ``num_players``: agents, within the rules' ``min_players..max_players`` (default 2).
* ``illegal_action``: ``"penalty"`` (default) or ``"raise"``.
* ``illegal_reward``: the offender's reward under ``"penalty"`` (default -1.0).
* ``render_mode``: None, ``"ansi"`` (:meth:`render` returns text), ``"human"`` (the text
  printed after every step) or ``"rgb_array"`` (:meth:`render` returns a picture of the table,
  drawn with Pillow).

The environment pickles and deep-copies with its whole state (game, generator, masks): a copy
continues exactly as the original would.

## Version History

* v0: initial version (action catalog v1, observation spec v1); observation spec v2 adds
  the rounds left of a game of a fixed number of rounds (``round_progress``; v1 models
  still load for rules without one).

## Example

>>> import numpy as np
>>> from greed_env.pettingzoo import greed_v0
>>> env = greed_v0.env(rules="ten_thousand", num_players=2)
>>> env.reset(seed=42)
>>> rng = np.random.default_rng(0)
>>> for agent in env.agent_iter():
...     obs, reward, termination, truncation, info = env.last()
...     if termination or truncation:
...         action = None
...     else:
...         action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
...     env.step(action)
>>> sorted(env.unwrapped.final_returns().values())
[-1.0, 1.0]
"""


class raw_env(AECEnv):
    __doc__ = _DOC.replace("%CATALOG_SIZES%", CATALOG_SIZES_DOC).replace(
        "%OBS_TABLE%", OBS_TABLE_DOC
    )

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "greed_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | str | None = "ten_thousand",
        num_players: int = 2,
        render_mode: str | None = None,
        rules_overrides: Mapping[str, Any] | None = None,
        illegal_action: str = "penalty",
        illegal_reward: float = -1.0,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.rules: Rules = env_rules(rules, rules_overrides)
        r = self.rules
        if not isinstance(num_players, int) or not r.min_players <= num_players <= r.max_players:
            raise ValueError(
                f"num_players must be an integer in {r.min_players}..{r.max_players} for {r.name}, "
                f"got {num_players!r}"
            )
        self.render_mode = render_mode
        self.illegal_action = check_illegal_mode(illegal_action)
        self.illegal_reward = check_reward("illegal_reward", illegal_reward)
        self.num_players = num_players
        self.catalog = ActionCatalog(r)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agents = self.possible_agents[:]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        low, high = observation_bounds()
        n = self.catalog.n
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, shape=(OBS_DIM,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._rng: np.random.Generator | None = None
        self.game: State | None = None
        self._mask = np.zeros(n, dtype=np.int8)
        self._moves: dict[int, Move] = {}
        self._events: list[str] = []
        self._log = TurnLog()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ----------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng, _ = seeding.np_random(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._events = []
        self._log.clear()
        s = advance_chance(
            self.rules, new_game(self.rules, self.num_players), self._rng, self._events
        )
        self._set_state(s)
        if self.render_mode == "human":
            self.render()

    def _set_state(self, s: State) -> None:
        self.game = s
        if s.phase == Phase.OVER:
            self._mask, self._moves = np.zeros(self.catalog.n, dtype=np.int8), {}
        else:
            self._mask, self._moves = self.catalog.legal(s)
            self.agent_selection = self.possible_agents[s.player]

    def step(self, action: Any) -> None:
        if self.game is not None and not self.agents:
            raise RuntimeError(
                "the game is over and every agent is done: call reset() before step() "
                "(PettingZoo's env() wrapper warns and ignores such a step instead)"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        s = self.game
        if s is None:
            raise RuntimeError("call reset() before step()")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.infos[agent] = {}
        a = action_index(action, self.catalog.n)
        self._events = []
        move = self._moves.get(a)
        if move is not None:
            after = apply(self.rules, s, move)
            if self.render_mode is not None:
                self._log.note(self.rules, s, move, after)
            s = after
        elif self.illegal_action == "raise":
            self.catalog.action_to_move(s, a)
            raise IllegalMove(f"action {a} is not legal here", rule="masked-action")
        else:
            s = forfeit(self.rules, s)
            self.rewards[agent] += self.illegal_reward
            self.infos[agent] = {"illegal_action": True}
        if s.event:
            self._events.append(s.event)
        s = advance_chance(self.rules, s, self._rng, self._events)
        self._set_state(s)
        if s.phase == Phase.OVER:
            for i, value in enumerate(returns(s)):
                self.rewards[self.possible_agents[i]] += value
            self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        s = self.game
        if s is None:
            raise RuntimeError("call reset() before observe()")
        seat = self._index[agent]
        live = s.phase != Phase.OVER and s.player == seat
        mask = self._mask.copy() if live else np.zeros(self.catalog.n, dtype=np.int8)
        return {"observation": encode_observation(self.rules, s, seat), "action_mask": mask}

    def final_returns(self) -> dict[str, float]:
        """Each agent's pot share ``returns()`` of the current game (zeros before the end)."""
        if self.game is None:
            raise RuntimeError("call reset() first")
        return dict(zip(self.possible_agents, returns(self.game), strict=True))

    # ----------------------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the position as text; ``human``: the same text printed; ``rgb_array``: a
        picture of the table (:func:`~greed_env.envs.render.table_picture`, Pillow)."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi', 'human' or "
                "'rgb_array'."
            )
            return None
        keeps = self._log.keeps_of(self.game) if self.game is not None else []
        if self.render_mode == "rgb_array":
            return table_picture(
                self.rules, self.game, None, self._events, keeps, self.num_players
            )
        if self.game is None:
            text = f"[{self.rules.name}] not started: call reset()"
        else:
            text = render_text(self.rules, self.game, None, self._events, keeps)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release (no window is opened)."""
