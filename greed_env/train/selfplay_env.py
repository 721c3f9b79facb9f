"""One seat of the PettingZoo ``greed_v0`` game as a Gymnasium environment, for self-play.

:class:`SelfPlayEnv` wraps the AEC environment: at every reset the learner gets a seat drawn
from ``np_random`` and every other seat gets a policy drawn from a :class:`SnapshotPool` (past
snapshots of the learner, saved as ``.npz`` files by the training script); those seats act
inside :meth:`SelfPlayEnv.step` until it is the learner's decision again or the game is over.
The learner sees its own ``observation`` and acts under its ``action_mask`` (also offered by
:meth:`SelfPlayEnv.action_masks` for MaskablePPO); the reward is its pot share at the end
(``num_players * share - 1``). Snapshot opponents sample from their masked softmax with the
environment's generator; with an empty pool they play uniformly random legal moves.

>>> env = SelfPlayEnv("ten_thousand", num_players=3)
>>> obs, info = env.reset(seed=0)
>>> obs.shape == env.observation_space.shape, int(info["action_mask"].sum()) > 0
(True, True)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from greed_env.bots.errors import BotLoadError
from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.pettingzoo import greed_v0
from greed_env.rules import Rules, resolve_rules
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM, observation_bounds

__all__ = ["SNAPSHOT_PATTERN", "SelfPlayEnv", "SnapshotPool", "snapshot_name"]

SNAPSHOT_PATTERN = re.compile(r"^snap_(\d+)\.npz$")


def snapshot_name(step: int) -> str:
    """File name of the snapshot taken at ``step``."""
    return f"snap_{step:012d}.npz"


class SnapshotPool:
    """The newest ``size`` snapshots of a directory, reloaded when files appear or go.

    Files are read once and cached; a file that cannot be read (being replaced) is skipped
    until the next refresh.
    """

    def __init__(self, directory: str | Path | None, size: int = 10) -> None:
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.directory = Path(directory) if directory is not None else None
        self.size = size
        self._cache: dict[str, NumpyPolicy] = {}
        self.policies: list[NumpyPolicy] = []

    def refresh(self) -> None:
        """Re-list the directory and keep the newest ``size`` snapshots, oldest first."""
        if self.directory is None or not self.directory.is_dir():
            return
        names = sorted(p.name for p in self.directory.iterdir() if SNAPSHOT_PATTERN.match(p.name))
        names = names[-self.size :]
        policies = []
        for name in names:
            pol = self._cache.get(name)
            if pol is None:
                try:
                    pol = NumpyPolicy.load(self.directory / name)
                except BotLoadError:
                    continue
                self._cache[name] = pol
            policies.append(pol)
        self._cache = {k: v for k, v in self._cache.items() if k in names}
        self.policies = policies

    def sample(self, rng: np.random.Generator, latest_prob: float) -> NumpyPolicy | None:
        """The newest snapshot with probability ``latest_prob``, else a uniform pick (None
        when the pool is empty)."""
        if not self.policies:
            return None
        if rng.random() < latest_prob:
            return self.policies[-1]
        return self.policies[int(rng.integers(len(self.policies)))]


class SelfPlayEnv(gym.Env[np.ndarray, np.int64]):
    """The learner's seat of ``greed_v0``; the other seats are played by pool snapshots.

    Args:
        rules: preset name or :class:`~greed_env.rules.Rules`.
        num_players: seats (within the rules' limits).
        pool_dir: directory of ``snap_<step>.npz`` snapshots (None: random opponents).
        pool_size: newest snapshots kept in play.
        latest_prob: probability that an opponent seat plays the newest snapshot.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        rules: Rules | str = "ten_thousand",
        num_players: int = 2,
        pool_dir: str | Path | None = None,
        pool_size: int = 10,
        latest_prob: float = 0.5,
    ) -> None:
        self.rules = resolve_rules(rules)
        self.aec = greed_v0.env(rules=self.rules, num_players=num_players)
        self.num_players = num_players
        self.catalog = ActionCatalog(self.rules)
        self.action_space = spaces.Discrete(self.catalog.n)
        low, high = observation_bounds()
        self.observation_space = spaces.Box(low, high, shape=(OBS_DIM,), dtype=np.float32)
        self.pool = SnapshotPool(pool_dir, pool_size)
        self.latest_prob = float(latest_prob)
        self.learner = "player_0"
        self.opponents: dict[str, NumpyPolicy | None] = {}
        self._mask = np.zeros(self.catalog.n, dtype=np.int8)

    def action_masks(self) -> np.ndarray:
        """The learner's int8 legal-action mask (all zeros once the game is over)."""
        return self._mask.copy()

    def _over(self) -> bool:
        return bool(self.aec.terminations.get(self.learner, False))

    def _opponent_action(self, agent: str) -> int:
        obs = self.aec.observe(agent)
        legal = np.flatnonzero(obs["action_mask"])
        policy = self.opponents.get(agent)
        if policy is None:
            return int(legal[self.np_random.integers(len(legal))])
        logits = policy.logits(obs["observation"][None])[0][legal].astype(np.float64)
        p = np.exp(logits - logits.max())
        return int(legal[self.np_random.choice(len(legal), p=p / p.sum())])

    def _advance(self) -> float:
        """Play the other seats until the learner decides or the game ends; their rewards."""
        reward = 0.0
        while not self._over() and self.aec.agent_selection != self.learner:
            self.aec.step(self._opponent_action(self.aec.agent_selection))
            reward += float(self.aec.rewards[self.learner])
        return reward

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        obs = self.aec.observe(self.learner)
        self._mask = np.zeros_like(obs["action_mask"]) if self._over() else obs["action_mask"].copy()
        return obs["observation"], {"action_mask": self._mask.copy(), "seat": int(self.learner[7:])}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.pool.refresh()
        rng = self.np_random
        agents = self.aec.possible_agents
        self.learner = agents[int(rng.integers(self.num_players))]
        self.opponents = {a: self.pool.sample(rng, self.latest_prob) for a in agents if a != self.learner}
        while True:
            self.aec.reset(seed=int(rng.integers(2**31)))
            self._advance()
            if not self._over():
                break
        return self._observe()

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._over():
            raise gym.error.ResetNeeded("the game is over: call reset()")
        self.aec.step(int(action))
        reward = float(self.aec.rewards[self.learner]) + self._advance()
        obs, info = self._observe()
        return obs, reward, self._over(), False, info
