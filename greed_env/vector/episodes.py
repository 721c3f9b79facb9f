"""Episodes of the vector envs (Solitaire turn and race, Duel): stepping, autoreset, opponents.

Randomness: dice codes (uniform in ``[0, 6**num_dice)``) and uniforms in ``[0, 1)`` (the
random opponent's choice and the learner's seat) are read from per-game ring buffers that the
caller fills from its own ``numpy.random.Generator``. A game that runs out of either stops at
that point (status ``STARVED``) and is resumed after a refill, so results never depend on
thread scheduling or on how often the buffers are refilled. Rewards: :mod:`greed_env.vector.rewards`.
"""

from __future__ import annotations

from greed_env.vector.game import apply_action, apply_roll, legal_action, new_game, random_legal
from greed_env.vector.jit import inlined, kernel
from greed_env.vector.layout import (
    B_ENTERED,
    B_TURNS,
    C_PHASE,
    C_PLAYER,
    E_CODE_READ,
    E_CODE_WRITE,
    E_DONE,
    E_ILLEGAL,
    E_SEAT,
    E_STAGE,
    E_STEPS,
    E_TERMINATED,
    E_TRUNCATED,
    E_TURNS_DONE,
    E_U_READ,
    E_U_WRITE,
    EP_AUTORESET,
    EP_BANK_AT,
    EP_FIXED_SEAT,
    EP_KEEP_STYLE,
    EP_MAX_TURNS,
    EP_MIN_DICE,
    EP_MODE,
    EP_NPLAYERS,
    EP_OPPONENT,
    FP_ILLEGAL_REWARD,
    MODE_DUEL,
    MODE_RACE,
    MODE_TURN,
    OK,
    OPP_OPTIMAL,
    OPP_RANDOM,
    PH_ORDER_ROLL,
    PH_OVER,
    PH_ROLL,
    STAGE_ADVANCE,
    STAGE_IDLE,
    STAGE_INIT,
    STAGE_OVER,
    STAGE_RESET_ADVANCE,
    STARVED,
)
from greed_env.vector.observe import encode_row, mask_and_list_row
from greed_env.vector.policies import optimal_action, threshold_action
from greed_env.vector.rewards import score_step, turns_played


@inlined
def _advance(S, E, i, tab, ep, oidx, oval, oflag, codes, unif):
    """Roll and let the opponents move until the learner decides or the episode stops."""
    mode = ep[EP_MODE]
    while True:
        ph = S[i, C_PHASE]
        if ph == PH_OVER:
            return OK
        if mode == MODE_TURN and S[i, B_TURNS] != 1:
            return OK
        if mode == MODE_RACE and turns_played(S, i) >= ep[EP_MAX_TURNS]:
            return OK
        if ph == PH_ROLL or ph == PH_ORDER_ROLL:  # noqa: SIM109 (numba-friendly)
            rd = E[i, E_CODE_READ]
            if rd == E[i, E_CODE_WRITE]:
                return STARVED
            if apply_roll(S, i, codes[i, rd % codes.shape[1]], tab) != OK:
                return STARVED  # resumed once the tables have the roll's row
            E[i, E_CODE_READ] = rd + 1
            continue
        if mode == MODE_DUEL and S[i, C_PLAYER] != E[i, E_SEAT]:
            if ep[EP_OPPONENT] == OPP_RANDOM:
                rd = E[i, E_U_READ]
                if rd == E[i, E_U_WRITE]:
                    return STARVED
                E[i, E_U_READ] = rd + 1
                a = random_legal(S, i, tab, unif[i, rd % unif.shape[1]])
            elif ep[EP_OPPONENT] == OPP_OPTIMAL:
                a = optimal_action(S, i, tab, ep, oidx, oval, oflag)
            else:
                a = threshold_action(S, i, tab, ep[EP_BANK_AT], ep[EP_KEEP_STYLE], ep[EP_MIN_DICE])
            apply_action(S, i, a, tab)
            continue
        return OK


@inlined
def _start_game(S, i, tab, ep):
    if ep[EP_MODE] == MODE_DUEL:
        new_game(S, i, ep[EP_NPLAYERS], -1, tab)
    else:
        new_game(S, i, 1, -1, tab)
        if ep[EP_MODE] == MODE_TURN:
            S[i, B_ENTERED] = 1


@inlined
def _run(S, E, i, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, final_obs):
    """Carry game ``i`` through its pending stages; returns STARVED if it must wait for draws."""
    mode = ep[EP_MODE]
    if E[i, E_STAGE] == STAGE_ADVANCE:
        if _advance(S, E, i, tab, ep, oidx, oval, oflag, codes, unif) == STARVED:
            return STARVED
        score_step(S, E, i, ep, fp, rewards, pending)
        if E[i, E_TERMINATED] == 0 and E[i, E_TRUNCATED] == 0:
            E[i, E_STAGE] = STAGE_IDLE
            return OK
        E[i, E_DONE] = 1
        encode_row(S, i, E[i, E_SEAT], tab, final_obs, i)
        if ep[EP_AUTORESET] == 0:
            E[i, E_STAGE] = STAGE_OVER
            return OK
        E[i, E_STAGE] = STAGE_INIT
    if E[i, E_STAGE] == STAGE_INIT:
        seat = 0
        if mode == MODE_DUEL:
            seat = ep[EP_FIXED_SEAT]
            if seat < 0:
                rd = E[i, E_U_READ]
                if rd == E[i, E_U_WRITE]:
                    return STARVED
                E[i, E_U_READ] = rd + 1
                seat = int(unif[i, rd % unif.shape[1]] * ep[EP_NPLAYERS])
        E[i, E_SEAT] = seat
        E[i, E_STEPS] = 0
        E[i, E_TURNS_DONE] = 0
        pending[i] = 0.0
        _start_game(S, i, tab, ep)
        E[i, E_STAGE] = STAGE_RESET_ADVANCE
    if E[i, E_STAGE] == STAGE_RESET_ADVANCE:
        while True:
            if _advance(S, E, i, tab, ep, oidx, oval, oflag, codes, unif) == STARVED:
                return STARVED
            if mode == MODE_TURN:
                if S[i, C_PHASE] != PH_OVER and S[i, B_TURNS] == 1:
                    break
                _start_game(S, i, tab, ep)
            elif mode == MODE_DUEL:
                if S[i, C_PHASE] != PH_OVER:
                    break
                _start_game(S, i, tab, ep)
            else:
                played = turns_played(S, i)
                E[i, E_TURNS_DONE] = played
                pending[i] = -float(played)
                break
        E[i, E_STAGE] = STAGE_IDLE
    return OK


@inlined
def _publish(S, E, i, tab, obs, mask, legal):
    encode_row(S, i, E[i, E_SEAT], tab, obs, i)
    if E[i, E_STAGE] == STAGE_OVER:  # next-step autoreset: the terminal mask is all ones
        for c in range(mask.shape[1]):
            mask[i, c] = 1
        legal[i, 0] = 0  # the game is over: nothing to choose
    else:
        mask_and_list_row(S, i, tab, mask, legal)


@kernel
def step_range(
    lo,
    hi,
    S,
    E,
    actions,
    tab,
    ep,
    fp,
    oidx,
    oval,
    oflag,
    codes,
    unif,
    rewards,
    pending,
    obs,
    mask,
    final_obs,
    legal,
):
    """Apply ``actions`` to games ``lo .. hi - 1``, then roll and let opponents move up to the
    learner's next decision (autoreset per ``ep``). Returns how many games ran out of draws
    (continue them with :func:`resume_range` after a refill)."""
    starved = 0
    for i in range(lo, hi):
        rewards[i] = 0.0
        E[i, E_DONE] = 0
        E[i, E_ILLEGAL] = 0
        E[i, E_TERMINATED] = 0
        E[i, E_TRUNCATED] = 0
        st = E[i, E_STAGE]
        if st == STAGE_IDLE:
            if apply_action(S, i, actions[i], tab):
                E[i, E_ILLEGAL] = 1
                rewards[i] += fp[FP_ILLEGAL_REWARD]
            E[i, E_STEPS] += 1
            E[i, E_STAGE] = STAGE_ADVANCE
        elif st == STAGE_OVER:
            E[i, E_STAGE] = STAGE_INIT
        if (
            _run(S, E, i, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, final_obs)
            == STARVED
        ):
            starved += 1
        else:
            _publish(S, E, i, tab, obs, mask, legal)
    return starved


@kernel
def resume_range(
    lo,
    hi,
    S,
    E,
    tab,
    ep,
    fp,
    oidx,
    oval,
    oflag,
    codes,
    unif,
    rewards,
    pending,
    obs,
    mask,
    final_obs,
    legal,
):
    """Continue games ``lo .. hi - 1`` that have a pending stage (after a refill)."""
    starved = 0
    for i in range(lo, hi):
        st = E[i, E_STAGE]
        if st == STAGE_IDLE or st == STAGE_OVER:  # noqa: SIM109 (numba-friendly)
            continue
        if (
            _run(S, E, i, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, final_obs)
            == STARVED
        ):
            starved += 1
        else:
            _publish(S, E, i, tab, obs, mask, legal)
    return starved


@kernel
def start_rows(E, reset_rows):
    """Mark the rows flagged in ``reset_rows`` for a new episode (run them with resume)."""
    for i in range(E.shape[0]):
        if reset_rows[i]:
            E[i, E_STAGE] = STAGE_INIT
            E[i, E_DONE] = 0
            E[i, E_TERMINATED] = 0
            E[i, E_TRUNCATED] = 0
            E[i, E_ILLEGAL] = 0


@kernel
def pick_listed(S, tab, legal, unif01, out):
    """:func:`random_actions` of every row from the legal actions that the last step listed
    (``legal[i]``: their count, then the actions in ``legal_moves`` order); a row with more
    than the list holds walks its actions instead."""
    room = legal.shape[1] - 1
    for i in range(out.shape[0]):
        m = legal[i, 0]
        if m == 0:
            out[i] = 0
            continue
        k = int(unif01[i] * m)
        out[i] = legal[i, 1 + k] if k < room else legal_action(S, i, tab, k)


@kernel
def random_actions(lo, hi, S, unif01, tab, out):
    """A uniformly random legal action of rows ``lo .. hi - 1`` (``legal_moves`` order, like
    RandomBot); 0 where nothing is legal. Returns 0 (a row-range kernel of the thread pool)."""
    for i in range(lo, hi):
        a = random_legal(S, i, tab, unif01[i])
        out[i] = a if a >= 0 else 0
    return 0


# ------------------------------------------------------------------------------------------
