"""Self-play on the native batched engine as one RLlib ``MultiAgentEnv``: many games, one env.

RLlib 2.60 vectorises multi-agent environments only one way: ``MultiAgentEnvRunner`` builds a
``SyncVectorMultiAgentEnv`` that steps ``num_envs_per_env_runner`` separate ``MultiAgentEnv``
objects one after the other in Python (``ray.rllib.env.vector.registration.make_vec`` refuses
any other ``gym_env_vectorize_mode`` for multi-agent envs), and its single-agent
``vector_entry_point`` path has no place for several policies' seats. So the native engine
enters the runners the other way round: :class:`NativeSelfPlayEnv` is *one* multi-agent
environment holding ``num_games`` games of :class:`~greed_env.vector.BatchGame`, whose
agents are the seats of all its games (``"g<game>_p<seat>"``, every one mapped to the shared
policy). One ``step`` applies the actions of every game's player to act in one kernel call,
rolls the dice of all games in kernel calls, and returns the next decision of every game
still running; RLlib then runs the policy on all of them in one forward pass.

Importing this module imports ray (``greed_env.rllib`` loads it on first use).

The rules, the observations, the masks and the rewards are those of ``greed_v0`` (the vector
engine is tested field by field against the reference rules): each seat receives
``num_players * share - 1`` when its game ends, an illegal action forfeits the turn with
``illegal_reward``. Games that end wait until every game of the env has ended; then the env
episode ends (``"__all__"``) and the next ``reset`` deals ``num_games`` new games. The dice
come from the env's own generator, seeded by ``reset(seed=...)``.

>>> env = NativeSelfPlayEnv({"rules": "ten_thousand", "num_players": 3, "num_games": 4})
>>> obs, _ = env.reset(seed=0)
>>> len(obs), sorted(obs[next(iter(obs))])
(4, ['action_mask', 'observations'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from greed_env.rules import Phase, resolve_rules
from greed_env.spaces.observation import OBS_DIM, observation_bounds
from greed_env.vector import BatchGame
from greed_env.vector import kernels as K

__all__ = ["NATIVE_ENV_NAME", "NativeSelfPlayEnv", "agent_id", "register_native_env"]

NATIVE_ENV_NAME = "greed_env_native_selfplay"
"""The name :func:`register_native_env` registers with ``ray.tune``."""

NATIVE_CONFIG_KEYS = ("rules", "num_players", "num_games", "illegal_reward", "seed")
"""``env_config`` keys of :class:`NativeSelfPlayEnv`."""


def agent_id(game: int, seat: int) -> str:
    """The agent id of ``seat`` in game ``game``."""
    return f"g{game}_p{seat}"


class NativeSelfPlayEnv(MultiAgentEnv):
    """``num_games`` games of ``num_players`` seats on the native engine, as one multi-agent env.

    Args (``env_config``):
        rules: a preset name or :class:`~greed_env.rules.Rules` (the vector engine's rules).
        num_players: seats per game (2 to 8).
        num_games: games stepped together (default 64).
        illegal_reward: reward of an illegal (masked) action, which forfeits the turn (-1.0).
        seed: seed of the first ``reset`` without one (default 0; RLlib passes its own).

    Raises:
        ValueError: unknown keys or out-of-range sizes; VectorUnsupportedError: rules the
            vector engine does not model.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        MultiAgentEnv.__init__(self)
        cfg = dict(config or {})
        unknown = sorted(set(cfg) - set(NATIVE_CONFIG_KEYS))
        if unknown:
            raise ValueError(
                f"unknown env_config keys {unknown}; known: {', '.join(NATIVE_CONFIG_KEYS)}"
            )
        rules = resolve_rules(cfg.get("rules", "ten_thousand"))
        n_players = int(cfg.get("num_players", 2))
        n_games = int(cfg.get("num_games", 64))
        if not 2 <= n_players <= K.MAX_PLAYERS:
            raise ValueError(f"num_players must be 2..{K.MAX_PLAYERS}, got {n_players}")
        if n_games < 1:
            raise ValueError(f"num_games must be at least 1, got {n_games}")
        self.game = BatchGame(rules, n_games, n_players)
        self.rules = self.game.rules
        self.num_games = n_games
        self.num_players = n_players
        self.illegal_reward = float(cfg.get("illegal_reward", -1.0))
        self._code_high = 6**self.rules.num_dice
        self._rng = np.random.default_rng(int(cfg.get("seed", 0)))
        self._ids = [[agent_id(g, p) for p in range(n_players)] for g in range(n_games)]
        n_actions = self.game.tables.n_actions
        low, high = observation_bounds()
        agent_space = spaces.Dict({
            "observations": spaces.Box(low, high, shape=(OBS_DIM,), dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, shape=(n_actions,), dtype=np.float32),
        })
        self.possible_agents = [a for row in self._ids for a in row]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: agent_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n_actions) for a in self.possible_agents}
        self._over = np.zeros(n_games, dtype=bool)

    def _roll_until_decision(self) -> None:
        while True:
            chance = self.game.chance_rows()
            if not chance.any():
                return
            codes = self._rng.integers(0, self._code_high, size=self.num_games, dtype=np.int64)
            self.game.apply_rolls(codes, chance)

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        live = np.flatnonzero(self.game.decision_rows())
        obs = self.game.observations()
        masks = self.game.masks().astype(np.float32)
        seats = self.game.S[:, K.C_PLAYER]
        return {
            self._ids[g][int(seats[g])]: {"observations": obs[g], "action_mask": masks[g]}
            for g in live
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game.new_games()
        self._over[:] = False
        self._roll_until_decision()
        return self._observe(), {}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[
        dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]
    ]:
        acting = self.game.decision_rows()
        seats = self.game.S[:, K.C_PLAYER].copy()
        actions = np.zeros(self.num_games, dtype=np.int64)
        for g in np.flatnonzero(acting):
            actions[g] = int(action_dict[self._ids[g][int(seats[g])]])
        illegal = self.game.apply_actions(actions, acting)
        self._roll_until_decision()
        obs = self._observe()
        rewards = dict.fromkeys(obs, 0.0)
        for g in np.flatnonzero(acting):
            aid = self._ids[g][int(seats[g])]
            rewards[aid] = self.illegal_reward if illegal[g] else 0.0
        terminateds: dict[str, bool] = {}
        ended = (self.game.phase == Phase.OVER) & ~self._over
        for g in np.flatnonzero(ended):
            winners = int(self.game.S[g, K.C_WINNERS])
            count = bin(winners).count("1")
            for p, aid in enumerate(self._ids[g]):
                share = 1.0 / count if (winners >> p) & 1 else 0.0
                rewards[aid] = rewards.get(aid, 0.0) + self.num_players * share - 1.0
                terminateds[aid] = True
        self._over |= ended
        terminateds["__all__"] = bool(self._over.all())
        return obs, rewards, terminateds, {"__all__": False}, {}


def make_native_env(config: Mapping[str, Any] | None = None) -> Any:
    """:class:`NativeSelfPlayEnv` from an RLlib ``env_config`` (imports ray)."""
    return NativeSelfPlayEnv(config)


def register_native_env(name: str = NATIVE_ENV_NAME) -> str:
    """Register :func:`make_native_env` with ``ray.tune`` under ``name``; returns the name."""
    from ray.tune.registry import register_env

    register_env(name, make_native_env)
    return name
