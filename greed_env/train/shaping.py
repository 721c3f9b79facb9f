"""Potential-based reward shaping for duels, with the solver's win probability as potential.

Duel-v0 pays +1 / -1 at the end of a game of some 80 learner decisions, so the advantage of
one banking decision is a difference of about a hundredth of a win buried in the noise of the
whole game. Shaping (Ng, Harada and Russell, *Policy invariance under reward
transformations*, ICML 1999) adds ``F = phi(s') - phi(s)`` to every reward, with
``phi(terminal) = 0``. With ``gamma = 1`` the shaped return of an episode is its true return
minus ``phi`` of its first state, so the ranking of policies, and the optimal policy, are
unchanged; what changes is that each turn's reward now carries the change in win chances
that the turn made.

The potential here is the solver's: ``phi = 2 P - 1`` where ``P`` is the learner's probability
of winning under optimal play from the start of its current turn (the duel table's ``win``
entry for the banked scores; in the final round, the start value of the learner's last turn
from :mod:`greed_env.vector.optimal`). The turn total does not enter ``phi``, so within a turn
``F = 0`` and the learner is credited when its turn and the opponent's reply are over.

Against another opponent (a threshold bot) the same potential serves where the duel table
values every position itself: rules without a final round, and an exact target as in
Progressive (which the vector engine's optimal bot does not play), whose last turn after the
opponent lands is worth the table's chance to land too times the tie's value. It is then not
the learner's true chance against that opponent, but any function of the state keeps the shaping policy-invariant, and the table's
win probability is a dense, well-scaled signal of progress towards landing on the target.

**This puts the exact solution into the training signal.** It is an option
(``greed train ppo_duel --shaping solver``), off by default, and runs trained with it are reported
apart from runs without it (``docs/results.md``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from greed_env.vector import kernels as K

__all__ = ["SolverPotentialShaping", "solver_potential"]


def solver_potential(batch: Any, win: np.ndarray, table: Any = None) -> np.ndarray:
    """``phi`` of every row of a native duel :class:`~greed_env.vector.EpisodeBatch`: ``2 P - 1``
    for the learner's seat, ``win`` being the duel table's ``win`` array and ``P`` its entry for
    the banked scores. Against the optimal duel bot its arrays give the unit and the final
    round's values; against any other opponent pass the duel ``table`` (its unit, and under an
    exact target the last turn's chance to go out exactly: a learner whose opponent has landed
    on the target ties by landing too, worth ``1 - tie_value_first_finisher``).

    Raises:
        ValueError: another opponent without ``table``, or a final round the table cannot value.
    """
    optimal = int(batch._ep[K.EP_OPPONENT]) == K.OPP_OPTIMAL
    if optimal:
        unit, tu, dmax = (int(x) for x in batch._ep[[K.EP_OPT_UNIT, K.EP_OPT_TARGET, K.EP_OPT_DEFICIT]])
    elif table is None:
        raise ValueError("solver_potential: against this opponent pass the duel table")
    else:
        unit, tu, dmax = int(table.meta["unit"]), int(win.shape[0]), 0
    S = batch.S
    seat = batch.E[:, K.E_SEAT]
    rows = np.arange(S.shape[0])
    a = S[rows, K.B_SCORE + seat] // unit
    b = S[rows, K.B_SCORE + 1 - seat] // unit
    p = win[np.clip(a, 0, tu - 1), np.clip(b, 0, tu - 1)].astype(np.float64)
    end = S[:, K.C_ENDGAME] != 0
    if end.any() and optimal:
        oidx, oval, _ = batch._opt
        x = np.clip(b[end] - a[end], 1, max(dmax, 1))
        entered = S[end, K.B_ENTERED + seat[end]] != 0
        k = tu * tu + 2 * (x - 1) + entered
        nd = int(batch.tables.num_dice)
        p[end] = oval[oidx[k, 0] + nd]  # c[0, all dice]: rolling a full set from nothing
    elif end.any():
        if "last_turn_out" not in table.arrays:
            raise ValueError("solver_potential: a final round is valued only against the optimal duel bot "
                             "or under an exact target")
        q = table.arrays["last_turn_out"]
        tie = float(table.meta["tie_value_first_finisher"])
        p[end] = q[np.clip(a[end], 0, tu - 1)] * (1.0 - tie)
    over = S[:, K.C_PHASE] == K.PH_OVER
    return np.where(over, 0.0, 2.0 * p - 1.0)


class SolverPotentialShaping(VecEnvWrapper):
    """Adds ``phi(s') - phi(s)`` to the rewards of a native duel ``VecEnv`` (see the module).

    The true (unshaped) reward of each step is kept in ``infos[i]["true_reward"]``. Put it
    outside ``VecMonitor`` to log shaped episode returns, inside to log true ones.

    Raises:
        ValueError: not a native Duel-v0, or another opponent than the optimal duel bot where
            the rules can play a final round.
    """

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        inner: Any = venv
        while not hasattr(inner, "env") or not hasattr(getattr(inner, "env", None), "batch"):
            if not hasattr(inner, "venv"):
                raise ValueError("solver shaping needs the native vector env (--vector native)")
            inner = inner.venv
        self.batch = inner.env.batch
        rules = self.batch.rules
        if self.batch.mode != "duel":
            raise ValueError("solver shaping needs Duel-v0")
        optimal = int(self.batch._ep[K.EP_OPPONENT]) == K.OPP_OPTIMAL
        if not optimal and rules.final_round and not rules.exact_target:
            raise ValueError("solver shaping against another opponent than the optimal duel bot needs "
                             "rules without a final round, or an exact target (the optimal bot's arrays "
                             "value the final round of the others)")
        from greed_env.solver import load_table

        table = load_table(rules, "duel")
        self.win = table.arrays["win"]
        if self.win.ndim != 2:
            raise ValueError("solver shaping needs a two-score duel table (no bust penalty)")
        self.table = None if optimal else table
        self._phi = np.zeros(self.num_envs)

    def reset(self) -> Any:
        obs = self.venv.reset()
        self._phi = solver_potential(self.batch, self.win, self.table)
        return obs

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        phi = solver_potential(self.batch, self.win, self.table)
        shaped = rewards + np.where(dones, 0.0, phi) - self._phi
        for i, info in enumerate(infos):
            info["true_reward"] = float(rewards[i])
        self._phi = phi
        return obs, shaped.astype(np.float32), dones, infos
