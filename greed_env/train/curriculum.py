"""Exploring starts for duels: some training episodes begin at the learner's final-round turn.

In ``ten_thousand`` a player who banks the target gives every other player one last turn, and
that turn decides the game: the player must beat the new leader, so banking short of it loses
for certain. A learner meets that turn in about half its games and only once per game (some 2%
of its decisions), and a policy that comes from single-turn training banks there as usual.
Measured with ``benchmarks/duel_gap.py``: the turn policy gives away 2.1 points of win rate
against ``optimal-duel`` in the final round alone, and 1.3 were still lost after 3.7M steps of
plain duel training.

:class:`FinalRoundStarts` makes a share of the episodes start there: when an episode (re)starts
the game is replaced, with probability ``fraction``, by a position in which the opponent has
just banked past the target and the learner's last turn begins. The position is built by the
reference rules (the opponent's bank is played by :func:`greed_env.rules.apply`), so it is one
the game can reach: the opponent's score is drawn between the target and
``target + max_over``, the learner's between 0 and the target (0 or at least the entry
threshold), both in solver units. Nothing about the solver is used. The start-state
distribution is all that changes; the per-position returns, and so the optimal policy, are
those of the real game, and evaluations play real games. Episode statistics (``VecMonitor``
inside this wrapper) include the exploring-start episodes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from greed_env.rules import BANK, Phase, Rules, State, apply, new_game
from greed_env.vector import kernels as K

__all__ = ["FinalRoundStarts", "final_round_start"]


def final_round_start(rules: Rules, learner: int, rng: np.random.Generator, max_over: int = 3000) -> State:
    """A two-player position at the start of ``learner``'s final-round turn (see the module)."""
    if not rules.final_round or rules.exact_target:
        raise ValueError(f"rules {rules.name!r} have no final round to start from")
    unit = math.gcd(rules.target, rules.entry_threshold, max_over, 50)
    opp = 1 - learner
    target = rules.target
    entry = max(rules.entry_threshold, unit)
    banked = int(rng.integers(0, target // unit)) * unit  # opponent's score before its bank
    banked = max(banked, entry if rules.entry_threshold else 0)
    final = target + int(rng.integers(0, max_over // unit + 1)) * unit
    turn = max(final - banked, entry if banked == 0 else unit)
    low = entry // unit if rules.entry_threshold else 1
    mine = int(rng.integers(low - 1, target // unit))  # low - 1: not on the board yet
    mine = 0 if mine < low else mine * unit
    s = new_game(rules, 2, first_player=opp)
    scores = [0, 0]
    scores[opp], scores[learner] = banked, mine
    entered = [not rules.entry_threshold, not rules.entry_threshold]
    entered[opp] = entered[opp] or banked > 0
    entered[learner] = entered[learner] or mine > 0
    s = s._replace(
        phase=Phase.CONTINUE,
        scores=tuple(scores),
        entered=tuple(entered),
        turn_total=turn,
        dice=rules.num_dice,
        roll=(),
        fresh=False,
    )
    out = apply(rules, s, BANK)
    if not (out.endgame and out.player == learner):
        raise AssertionError(f"not a final-round start: {out}")
    return out


class FinalRoundStarts(VecEnvWrapper):
    """Starts ``fraction`` of the episodes of a native Duel-v0 at the learner's final turn.

    Args:
        venv: the native vector env (``--vector native``), possibly inside ``VecMonitor``.
        fraction: probability that a starting episode is replaced.
        seed: seed of the wrapper's own generator (which episodes, which scores).
    """

    def __init__(self, venv: VecEnv, fraction: float, seed: int) -> None:
        super().__init__(venv)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction}")
        inner: Any = venv
        while not hasattr(getattr(inner, "env", None), "batch"):
            if not hasattr(inner, "venv"):
                raise ValueError("final-round starts need the native vector env (--vector native)")
            inner = inner.venv
        self.batch = inner.env.batch
        if self.batch.mode != "duel" or int(self.batch._ep[K.EP_NPLAYERS]) != 2:
            raise ValueError("final-round starts need a two-seat Duel-v0")
        self.rules = self.batch.rules
        final_round_start(self.rules, 0, np.random.default_rng(0))  # refuses rules without one
        self.fraction = float(fraction)
        self.rng = np.random.default_rng(seed)

    def _restart(self, rows: np.ndarray, obs: np.ndarray) -> np.ndarray:
        pick = rows[self.rng.random(rows.size) < self.fraction]
        if pick.size:
            seats = self.batch.seat
            self.batch.restart_from(
                {int(i): final_round_start(self.rules, int(seats[i]), self.rng) for i in pick}
            )
            obs = np.array(obs, copy=True)
            obs[pick] = self.batch.obs[pick]
        return obs

    def reset(self) -> Any:
        obs = self.venv.reset()
        return self._restart(np.arange(self.num_envs), obs)

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        return self._restart(np.flatnonzero(dones), obs), rewards, dones, infos
