"""Observation encoding and action masks of one row (the single env's encoding, in batch)."""

from __future__ import annotations

import numpy as np

from greed_env.vector.game import can_bank, in_rolloff, nth_action
from greed_env.vector.jit import inlined, kernel
from greed_env.vector.layout import (
    B_ENTERED,
    B_FIN,
    B_OWED,
    B_RSCORE,
    B_SCORE,
    B_STREAK,
    C_BAR,
    C_DICE,
    C_DSTATE,
    C_ENDGAME,
    C_ENTRY_MET,
    C_FRESH,
    C_NFIN,
    C_NPLAYERS,
    C_NRSCORES,
    C_PHASE,
    C_PLAYER,
    C_ROLL,
    C_ROUNDS,
    C_RROUND,
    C_TOTAL,
    C_VOTES,
    CARRY_FIELDS,
    CFG_CARRY,
    CFG_ENTRY,
    CFG_EXACT,
    CFG_HORIZON,
    CFG_MIN_BANK,
    CFG_NUM_DICE,
    CFG_ROLLOFF_HORIZON,
    CFG_ROUNDS,
    CFG_SCALE,
    CFG_STREAK_SCALE,
    MAX_PLAYERS,
    O_BAR,
    O_BAR_ACTIVE,
    O_CAN_BANK,
    O_ENTERED,
    O_ENTRY,
    O_ENTRY_MET,
    O_ENTRY_MISSING,
    O_EXACT,
    O_FINAL,
    O_FRESH,
    O_IN_HAND,
    O_IN_ROLLOFF,
    O_ME_OWED,
    O_MIN_BANK,
    O_MY_TURN,
    O_NUM_DICE,
    O_NUM_PLAYERS,
    O_OPEN_FILL,
    O_OWED,
    O_PHASE,
    O_PRESENT,
    O_PROGRESS,
    O_ROLLOFF_BEST,
    O_ROLLOFF_ROUND,
    O_SCORE,
    O_SHOWING,
    O_SPLIT_VOTES,
    O_STREAK,
    O_TO_TARGET,
    O_TO_TARGET_AFTER,
    O_TURN_TOTAL,
    O_WENT_OUT,
    O_WORKING_PAIRS,
    O_WORKING_SET,
    PH_CONTINUE,
    PH_KEEP,
    PH_OVER,
    PH_SPLIT,
    T_OFF_CARRY,
    T_OFF_COUNTS,
    T_OFF_OBS,
)


@kernel
def _clip(x, low, high):
    return min(max(x, low), high)


@inlined
def _at(tab, oi, slot):
    """Column of observation slot ``slot`` (``tab[oi + slot]``, ``oi`` the unsigned offset of
    the slots), unsigned: numba checks signed indices for negative (wraparound) values."""
    return np.uint64(tab[oi + np.uint64(slot)])


@kernel
def encode_row(S, i, me, tab, out, o):
    """``encode_observation(rules, state, me)`` of row ``i`` into ``out[o]``."""
    for c in range(out.shape[1]):
        out[o, c] = 0.0
    oi = np.uint64(tab[T_OFF_OBS])
    n = S[i, C_NPLAYERS]
    target = float(tab[CFG_SCALE])
    nd = float(tab[CFG_NUM_DICE])
    entry = tab[CFG_ENTRY]
    out[o, _at(tab, oi, O_NUM_DICE)] = nd / 8.0
    out[o, _at(tab, oi, O_NUM_PLAYERS)] = n / 8.0
    out[o, _at(tab, oi, O_ENTRY)] = _clip(entry / target, 0.0, 1.0)
    out[o, _at(tab, oi, O_MIN_BANK)] = _clip(tab[CFG_MIN_BANK] / target, 0.0, 1.0)
    phase = S[i, C_PHASE]
    if phase == PH_KEEP:
        counts = np.uint64(tab[T_OFF_COUNTS] + 6 * S[i, C_ROLL])
        step = 1.0 / nd
        showing = _at(tab, oi, O_SHOWING)
        for f in range(6):
            x = 0.0
            for _ in range(tab[counts + np.uint64(f)]):
                x += step
            out[o, showing + np.uint64(f)] = x
    acting = S[i, C_PLAYER] == me and phase != PH_OVER
    total = S[i, C_TOTAL]
    if acting:
        out[o, _at(tab, oi, O_MY_TURN)] = 1.0
    out[o, _at(tab, oi, O_IN_HAND)] = S[i, C_DICE] / nd
    out[o, _at(tab, oi, O_FRESH)] = float(S[i, C_FRESH])
    out[o, _at(tab, oi, O_TURN_TOTAL)] = _clip(total / target, 0.0, 2.0)
    if acting and phase == PH_CONTINUE and can_bank(S, i, tab):
        out[o, _at(tab, oi, O_CAN_BANK)] = 1.0
    out[o, _at(tab, oi, O_ENTRY_MET)] = float(S[i, C_ENTRY_MET])
    if acting and S[i, B_ENTERED + me] == 0 and entry > 0:
        out[o, _at(tab, oi, O_ENTRY_MISSING)] = _clip((entry - total) / target, 0.0, 1.0)
    my_score = S[i, B_SCORE + me]
    out[o, _at(tab, oi, O_TO_TARGET)] = _clip((target - my_score) / target, -1.0, 2.0)
    unbanked = total if acting else 0
    out[o, _at(tab, oi, O_TO_TARGET_AFTER)] = _clip(
        (target - my_score - unbanked) / target, -1.0, 2.0
    )
    streak_scale = float(tab[CFG_STREAK_SCALE])
    present = _at(tab, oi, O_PRESENT)
    score = _at(tab, oi, O_SCORE)
    entered = _at(tab, oi, O_ENTERED)
    streak = _at(tab, oi, O_STREAK)
    owed = _at(tab, oi, O_OWED)
    for k in range(min(n, MAX_PLAYERS)):
        p = (me + k) % n
        uk = np.uint64(k)
        out[o, present + uk] = 1.0
        out[o, score + uk] = _clip(S[i, B_SCORE + p] / target, -1.0, 2.0)
        if S[i, B_ENTERED + p] != 0:
            out[o, entered + uk] = 1.0
        if S[i, B_STREAK + p] != 0:
            out[o, streak + uk] = _clip(S[i, B_STREAK + p] / streak_scale, 0.0, 1.0)
        if S[i, B_OWED + p] != 0:
            out[o, owed + uk] = 1.0
    out[o, _at(tab, oi, O_PHASE) + np.uint64(phase)] = 1.0
    out[o, _at(tab, oi, O_FINAL)] = float(S[i, C_ENDGAME])
    if S[i, B_OWED + me] != 0:
        out[o, _at(tab, oi, O_ME_OWED)] = 1.0
    bar = S[i, C_BAR]
    if bar >= 0:
        out[o, _at(tab, oi, O_BAR_ACTIVE)] = 1.0
        out[o, _at(tab, oi, O_BAR)] = _clip(bar / target, 0.0, 2.0)
    span = tab[CFG_ROUNDS] if tab[CFG_ROUNDS] != 0 else tab[CFG_HORIZON]
    out[o, _at(tab, oi, O_PROGRESS)] = _clip(S[i, C_ROUNDS] / (span * n), 0.0, 1.0)
    if tab[CFG_EXACT] != 0:
        out[o, _at(tab, oi, O_EXACT)] = 1.0
        went_out = _at(tab, oi, O_WENT_OUT)
        for k in range(S[i, C_NFIN]):
            out[o, went_out + np.uint64((S[i, B_FIN + k] - me) % n)] = 1.0
    if tab[CFG_CARRY] != 0:
        c = tab[T_OFF_CARRY] + S[i, C_DSTATE] * CARRY_FIELDS
        for f in range(6):
            if tab[c + f] != 0:
                out[o, _at(tab, oi, O_WORKING_SET) + np.uint64(f)] = _clip(
                    tab[c + f] / nd, 0.0, 1.0
                )
            if tab[c + 6 + f] != 0:
                out[o, _at(tab, oi, O_OPEN_FILL) + np.uint64(f)] = 1.0
            if tab[c + 12 + f] != 0:
                out[o, _at(tab, oi, O_WORKING_PAIRS) + np.uint64(f)] = 1.0
    if in_rolloff(S, i):
        out[o, _at(tab, oi, O_IN_ROLLOFF)] = 1.0
        out[o, _at(tab, oi, O_ROLLOFF_ROUND)] = _clip(
            S[i, C_RROUND] / tab[CFG_ROLLOFF_HORIZON], 0.0, 1.0
        )
    if S[i, C_NRSCORES] > 0:
        best = S[i, B_RSCORE]
        for k in range(1, S[i, C_NRSCORES]):
            best = max(best, S[i, B_RSCORE + k])
        out[o, _at(tab, oi, O_ROLLOFF_BEST)] = _clip(best / target, 0.0, 2.0)
    if phase == PH_SPLIT:
        out[o, _at(tab, oi, O_SPLIT_VOTES)] = S[i, C_VOTES] / n


@kernel
def mask_row(S, i, tab, mask):
    """The catalog mask of row ``i`` into ``mask[i]`` (all zeros at chance and terminal rows)."""
    for c in range(mask.shape[1]):
        mask[i, c] = 0
    nth_action(S, i, tab, -1, mask)


@kernel
def mask_and_list_row(S, i, tab, mask, listed):
    """:func:`mask_row`, and the legal actions of row ``i`` in ``legal_moves`` order into
    ``listed[i]``: their count first, then as many as the row has room for."""
    for c in range(mask.shape[1]):
        mask[i, c] = 0
    nth_action(S, i, tab, -1, mask, listed)
