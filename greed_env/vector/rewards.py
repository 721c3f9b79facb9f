"""Rewards and episode ends of the vector envs: the race's turn penalty, the turn's banked points,
the duel's share of the pot (what :mod:`greed_env.envs` pays, in batch).
"""

from __future__ import annotations

from greed_env.vector.jit import inlined
from greed_env.vector.layout import (
    B_SCORE,
    B_TURNS,
    C_NPLAYERS,
    C_PHASE,
    C_TOTAL,
    C_WINNERS,
    E_SEAT,
    E_STEPS,
    E_TERMINATED,
    E_TRUNCATED,
    E_TURNS_DONE,
    EP_MAX_STEPS,
    EP_MAX_TURNS,
    EP_MODE,
    FP_REWARD_SCALE,
    MODE_RACE,
    MODE_TURN,
    PH_OVER,
)


@inlined
def turns_played(S, i):
    if S[i, C_PHASE] == PH_OVER:
        return S[i, B_TURNS]
    return S[i, B_TURNS] - 1


@inlined
def score_step(S, E, i, ep, fp, rewards, pending):
    """Reward and episode end after the learner's move and what followed it."""
    mode = ep[EP_MODE]
    terminated = False
    truncated = False
    if mode == MODE_TURN:
        terminated = S[i, C_PHASE] == PH_OVER or S[i, B_TURNS] != 1
        if terminated:
            if S[i, C_PHASE] == PH_OVER and S[i, B_SCORE] == 0:
                rewards[i] += S[i, C_TOTAL] * fp[FP_REWARD_SCALE]
            else:
                rewards[i] += S[i, B_SCORE] * fp[FP_REWARD_SCALE]
        truncated = (not terminated) and E[i, E_STEPS] >= ep[EP_MAX_STEPS]
    elif mode == MODE_RACE:
        played = turns_played(S, i)
        rewards[i] += pending[i] - (played - E[i, E_TURNS_DONE])
        pending[i] = 0.0
        E[i, E_TURNS_DONE] = played
        terminated = S[i, C_PHASE] == PH_OVER
        truncated = (not terminated) and played >= ep[EP_MAX_TURNS]
    else:
        terminated = S[i, C_PHASE] == PH_OVER
        if terminated:
            n = S[i, C_NPLAYERS]
            w = S[i, C_WINNERS]
            count = 0
            for p in range(n):
                if w & (1 << p):
                    count += 1
            share = 1.0 / count if (w >> E[i, E_SEAT]) & 1 else 0.0
            rewards[i] += n * share - 1.0
    E[i, E_TERMINATED] = 1 if terminated else 0
    E[i, E_TRUNCATED] = 1 if truncated else 0
