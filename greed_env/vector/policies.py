"""Bots inside the vector kernels: the threshold bot and the solver's duel policy as action ids
(the random opponent is :func:`greed_env.vector.game.random_legal`).
"""

from __future__ import annotations

from greed_env.vector.game import at_target, can_bank, can_reroll, in_rolloff
from greed_env.vector.jit import kernel
from greed_env.vector.layout import (
    B_ENTERED,
    B_SCORE,
    C_BAR,
    C_DICE,
    C_ENDGAME,
    C_PHASE,
    C_PLAYER,
    C_TOTAL,
    CFG_ACT_BANK,
    CFG_ACT_BUST,
    CFG_ACT_FIRST,
    CFG_ACT_FOR_NOTHING,
    CFG_ACT_REROLL,
    CFG_ACT_ROLL,
    CFG_ACT_SPLIT,
    CFG_ENTRY,
    CFG_HOT_DICE,
    CFG_NUM_DICE,
    CFG_VOLUNTARY_BUST,
    EP_OPT_DEFICIT,
    EP_OPT_TARGET,
    EP_OPT_UNIT,
    KEEP_FEWEST,
    KEEP_MOST,
    OPT_ACTION,
    OPT_SCORE,
    OPT_USED,
    PH_CONTINUE,
    PH_KEEP,
    PH_ORDER_CHOICE,
    PH_SPLIT,
    T_OFF_BEST,
)
from greed_env.vector.lookup import n_options, option_field, option_records, table_row


@kernel
def threshold_action(S, i, tab, bank_at, style, min_dice):
    """``ThresholdBot(bank_at, keep=style, min_dice).act`` of row ``i`` as an action id."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        row = table_row(S, i, tab)
        rec = option_records(tab, row)
        bar = S[i, C_BAR]
        best = -1
        k1 = 0
        k2 = 0
        for j in range(n_options(tab, row)):
            sc = option_field(tab, rec, j, OPT_SCORE)
            if bar >= 0 and sc <= bar:
                continue
            used = option_field(tab, rec, j, OPT_USED)
            if style == KEEP_MOST:
                a1 = used
                a2 = sc
            elif style == KEEP_FEWEST:
                a1 = -used
                a2 = sc
            else:
                a1 = sc
                a2 = -used
            if best < 0 or a1 > k1 or (a1 == k1 and a2 > k2):
                best = j
                k1 = a1
                k2 = a2
        if best >= 0:
            return option_field(tab, rec, best, OPT_ACTION)
        if tab[CFG_VOLUNTARY_BUST] != 0:
            return tab[CFG_ACT_BUST]
        return tab[CFG_ACT_REROLL]
    if ph == PH_CONTINUE:
        if in_rolloff(S, i):
            return tab[CFG_ACT_ROLL]
        if at_target(S, i, tab):
            return tab[CFG_ACT_FOR_NOTHING]
        p = S[i, C_PLAYER]
        if can_bank(S, i, tab):
            need = bank_at
            if S[i, B_ENTERED + p] == 0:
                need = max(need, tab[CFG_ENTRY])
            dice = S[i, C_DICE]
            if S[i, C_TOTAL] >= need or (dice > 0 and dice < min_dice):
                return tab[CFG_ACT_BANK]
        if S[i, C_DICE] > 0:
            return tab[CFG_ACT_ROLL]
        return tab[CFG_ACT_BANK]
    if ph == PH_SPLIT:
        return tab[CFG_ACT_SPLIT]
    if ph == PH_ORDER_CHOICE:
        return tab[CFG_ACT_FIRST]
    return -1


@kernel
def optimal_action(S, i, tab, ep, oidx, oval, oflag):
    """``OptimalBot(rules, "duel").act`` of row ``i`` (two seats) as an action id, from the
    arrays of :mod:`greed_env.vector.optimal` (ties: the first legal move, like the bot)."""
    ph = S[i, C_PHASE]
    if ph == PH_SPLIT:
        return tab[CFG_ACT_SPLIT]
    if ph == PH_ORDER_CHOICE:
        return tab[CFG_ACT_FIRST]
    if ph != PH_KEEP and ph != PH_CONTINUE:
        return -1
    unit = ep[EP_OPT_UNIT]
    tu = ep[EP_OPT_TARGET]
    p = S[i, C_PLAYER]
    a = S[i, B_SCORE + p] // unit
    b = S[i, B_SCORE + 1 - p] // unit
    t = S[i, C_TOTAL] // unit
    if S[i, C_ENDGAME] != 0:
        x = max(b - a, 1)
        dmax = ep[EP_OPT_DEFICIT]
        if x > dmax:
            t = max(t - (x - dmax), 0)
            x = dmax
        k = tu * tu + 2 * (x - 1) + (1 if S[i, B_ENTERED + p] != 0 else 0)
    else:
        k = min(max(a, 0), tu - 1) * tu + min(max(b, 0), tu - 1)
    off = oidx[k, 0]
    rows = oidx[k, 1]
    woff = oidx[k, 2]
    nd = tab[CFG_NUM_DICE]
    width = nd + 1
    if ph == PH_CONTINUE:
        dice = S[i, C_DICE]
        rolls_on = dice > 0 and oflag[off + min(t, rows - 1) * width + dice] != 0
        if can_bank(S, i, tab) and not rolls_on:
            return tab[CFG_ACT_BANK]
        if dice > 0:
            return tab[CFG_ACT_ROLL]
        return tab[CFG_ACT_BANK]
    row = table_row(S, i, tab)
    rec = option_records(tab, row)
    bar = S[i, C_BAR]
    dice = S[i, C_DICE]
    best = -1
    best_v = 0.0
    for j in range(n_options(tab, row)):
        sc = option_field(tab, rec, j, OPT_SCORE)
        if bar >= 0 and sc <= bar:
            continue
        left = dice - option_field(tab, rec, j, OPT_USED)
        if left == 0 and tab[CFG_HOT_DICE] != 0:
            left = nd
        v = oval[off + min(t + sc // unit, rows - 1) * width + left]
        if best < 0 or v > best_v:
            best = option_field(tab, rec, j, OPT_ACTION)
            best_v = v
    if not in_rolloff(S, i):
        if can_reroll(S, i, tab):
            v = oval[woff + min(t + tab[tab[T_OFF_BEST] + row] // unit, rows - 1)]
            if best < 0 or v > best_v:
                best = tab[CFG_ACT_REROLL]
                best_v = v
        if tab[CFG_VOLUNTARY_BUST] != 0:
            v = oval[woff + rows]
            if best < 0 or v > best_v:
                best = tab[CFG_ACT_BUST]
                best_v = v
    return best
