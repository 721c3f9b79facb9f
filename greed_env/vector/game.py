"""Turn flow of the vector kernels: :mod:`greed_env.rules.game` on one row of a game array.

The transition functions follow the reference field by field, including the fields a
transition leaves alone, so that a row and a reference state stay equal after every move and
roll (tested in ``tests/vector/test_vector_equivalence.py`` and ``tests/vector/test_vector_progressive.py``).
Columns are the derived constants of :mod:`greed_env.vector.layout`.
"""

from __future__ import annotations

import numpy as np

from greed_env.vector.jit import kernel
from greed_env.vector.layout import (
    B_ENTERED,
    B_FIN,
    B_ORDER,
    B_OWED,
    B_ROLLOFF,
    B_RSCORE,
    B_SCORE,
    B_STREAK,
    B_TURNS,
    C_BAR,
    C_CONTENDERS,
    C_DICE,
    C_DSTATE,
    C_ENDGAME,
    C_ENTRY_MET,
    C_FOR_NOTHING,
    C_FRESH,
    C_NFIN,
    C_NORDER,
    C_NPLAYERS,
    C_NROLLOFF,
    C_NRSCORES,
    C_PHASE,
    C_PLAYER,
    C_ROLL,
    C_ROUNDS,
    C_RROUND,
    C_TOTAL,
    C_VOTES,
    C_WINNERS,
    CARRY_FIELDS,
    CFG_ACT_BANK,
    CFG_ACT_BUST,
    CFG_ACT_FIRST,
    CFG_ACT_FOR_NOTHING,
    CFG_ACT_LAST,
    CFG_ACT_REFUSE,
    CFG_ACT_REROLL,
    CFG_ACT_ROLL,
    CFG_ACT_SPLIT,
    CFG_CARRY,
    CFG_ENTRY,
    CFG_ENTRY_ROLL_SCOPE,
    CFG_ENTRY_UNTIL_MADE,
    CFG_EXACT,
    CFG_FINAL_ROUND,
    CFG_FIRST_ROLL,
    CFG_HORIZON,
    CFG_HOT_DICE,
    CFG_MIN_BANK,
    CFG_MUST_BEAT,
    CFG_NUM_DICE,
    CFG_PENALTY,
    CFG_PENALTY_AFTER,
    CFG_REROLL_ALL,
    CFG_ROLLOFF_HORIZON,
    CFG_ROUNDS,
    CFG_SIX_KIND,
    CFG_SPLIT_VOTE,
    CFG_TARGET,
    CFG_TRIPPN,
    CFG_VOLUNTARY_BUST,
    MAX_PLAYERS,
    MISSING,
    N_COLS,
    OK,
    OPT_ACTION,
    OPT_NEXT,
    OPT_SCORE,
    OPT_USED,
    PH_CONTINUE,
    PH_KEEP,
    PH_ORDER_CHOICE,
    PH_ORDER_ROLL,
    PH_OVER,
    PH_ROLL,
    PH_SPLIT,
    T_OFF_BEST,
    T_OFF_CARRY,
    T_OFF_COUNTS,
    T_OFF_SCORING,
)
from greed_env.vector.lookup import (
    ask_for_row,
    decode_roll,
    n_options,
    option_field,
    option_records,
    row_dice_state,
    row_of,
    table_row,
)


@kernel
def in_rolloff(S, i):
    return S[i, C_NROLLOFF] > 0 and S[i, C_PHASE] != PH_OVER


@kernel
def can_reroll(S, i, tab):
    """Reroll-all is legal: CFG_REROLL_ALL 2 after any roll, 1 on the turn's first roll only
    (no points yet, a full set rolled, no reroll made); never in a roll-off."""
    mode = tab[CFG_REROLL_ALL]
    if mode == 0 or in_rolloff(S, i):
        return False
    if mode == 2:
        return True
    return S[i, C_TOTAL] == 0 and S[i, C_BAR] < 0 and S[i, C_DICE] == tab[CFG_NUM_DICE]


@kernel
def at_target(S, i, tab):
    """Exact target, outside a roll-off: banked plus unbanked points equal the target."""
    if tab[CFG_EXACT] == 0 or in_rolloff(S, i):
        return False
    return S[i, B_SCORE + S[i, C_PLAYER]] + S[i, C_TOTAL] == tab[CFG_TARGET]


@kernel
def _needs_entry(S, i, p, tab):
    if S[i, B_ENTERED + p] != 0 or tab[CFG_ENTRY] <= 0:
        return False
    return tab[CFG_ENTRY_UNTIL_MADE] != 0 or S[i, B_TURNS + p] <= 1


@kernel
def can_bank(S, i, tab):
    """``greed_env.rules.game.can_bank`` of row ``i``."""
    if S[i, C_PHASE] != PH_CONTINUE or in_rolloff(S, i):
        return False
    if S[i, C_TOTAL] <= 0 or S[i, C_BAR] >= 0:
        return False
    total = S[i, C_TOTAL]
    if total < tab[CFG_MIN_BANK]:
        return False
    p = S[i, C_PLAYER]
    if _needs_entry(S, i, p, tab):
        if tab[CFG_ENTRY_ROLL_SCOPE] != 0:
            if S[i, C_ENTRY_MET] == 0:
                return False
        elif total < tab[CFG_ENTRY]:
            return False
    return not (tab[CFG_EXACT] != 0 and S[i, B_SCORE + p] + total >= tab[CFG_TARGET])


@kernel
def _begin_turn(S, i, p, tab):
    if S[i, C_NROLLOFF] == 0:
        S[i, B_TURNS + p] += 1
    S[i, C_PHASE] = PH_ROLL
    S[i, C_PLAYER] = p
    S[i, C_TOTAL] = 0
    S[i, C_DICE] = tab[CFG_NUM_DICE]
    S[i, C_ROLL] = -1
    S[i, C_DSTATE] = 0
    S[i, C_FRESH] = 1
    S[i, C_BAR] = -1
    S[i, C_ENTRY_MET] = 0
    S[i, C_FOR_NOTHING] = 0


@kernel
def _finish(S, i, winners):
    S[i, C_PHASE] = PH_OVER
    S[i, C_WINNERS] = winners


@kernel
def new_game(S, i, n, first_player, tab):
    """``new_game(rules, n, first_player)`` into row ``i`` (``first_player < 0``: None)."""
    for c in range(N_COLS):
        S[i, c] = 0
    S[i, C_NPLAYERS] = n
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = 1
    S[i, C_BAR] = -1
    entered = 1 if tab[CFG_ENTRY] == 0 else 0
    for p in range(n):
        S[i, B_ENTERED + p] = entered
    if first_player >= 0:
        _begin_turn(S, i, first_player, tab)
    elif tab[CFG_FIRST_ROLL] == 0 or n == 1:
        _begin_turn(S, i, 0, tab)
    else:
        S[i, C_CONTENDERS] = (1 << n) - 1
        S[i, C_PLAYER] = 0


@kernel
def _finishers_mask(S, i):
    w = 0
    for k in range(S[i, C_NFIN]):
        w |= 1 << S[i, B_FIN + k]
    return w


@kernel
def _resolve_end(S, i, tab):
    n = S[i, C_NPLAYERS]
    if tab[CFG_EXACT] != 0:
        if S[i, C_NFIN] == 1 or tab[CFG_SPLIT_VOTE] == 0:
            _finish(S, i, _finishers_mask(S, i))
            return
        S[i, C_PHASE] = PH_SPLIT
        S[i, C_PLAYER] = S[i, B_FIN]
        S[i, C_VOTES] = 0
        return
    top = S[i, B_SCORE]
    for q in range(1, n):
        top = max(top, S[i, B_SCORE + q])
    winners = 0
    for q in range(n):
        if S[i, B_SCORE + q] == top:
            winners |= 1 << q
    _finish(S, i, winners)


@kernel
def _resolve_rounds(S, i, tab):
    """``_resolve_rounds``: the last round is over, the highest banked score wins."""
    if S[i, C_ENDGAME] != 0:
        _resolve_end(S, i, tab)
        return
    n = S[i, C_NPLAYERS]
    top = S[i, B_SCORE]
    for q in range(1, n):
        top = max(top, S[i, B_SCORE + q])
    tied = 0
    count = 0
    for q in range(n):
        if S[i, B_SCORE + q] == top:
            tied |= 1 << q
            count += 1
    if count == 1 or tab[CFG_SPLIT_VOTE] == 0:
        _finish(S, i, tied)
        return
    k = 0
    for q in range(n):
        if tied & (1 << q):
            S[i, B_FIN + k] = q
            k += 1
    S[i, C_NFIN] = k
    S[i, C_PHASE] = PH_SPLIT
    S[i, C_PLAYER] = S[i, B_FIN]
    S[i, C_VOTES] = 0


@kernel
def _next_turn(S, i, tab):
    n = S[i, C_NPLAYERS]
    p = S[i, C_PLAYER]
    S[i, C_ROUNDS] += 1
    if tab[CFG_ENTRY_UNTIL_MADE] == 0 and S[i, B_ENTERED + p] == 0:
        S[i, B_ENTERED + p] = 1
    S[i, C_TOTAL] = 0
    S[i, C_ROLL] = -1
    S[i, C_DSTATE] = 0
    past = S[i, C_ENDGAME] != 0 and tab[CFG_FINAL_ROUND] == 2  # final_round_past_rounds
    if tab[CFG_ROUNDS] != 0 and S[i, C_ROUNDS] >= tab[CFG_ROUNDS] * n and not past:
        for q in range(n):
            S[i, B_OWED + q] = 0
        _resolve_rounds(S, i, tab)
        return
    if S[i, C_ENDGAME] != 0:
        S[i, B_OWED + p] = 0
        for k in range(1, n + 1):
            q = (p + k) % n
            if S[i, B_OWED + q] != 0:
                _begin_turn(S, i, q, tab)
                return
        _resolve_end(S, i, tab)
        return
    if S[i, C_ROUNDS] >= tab[CFG_HORIZON] * n:
        _finish(S, i, (1 << n) - 1)
        return
    _begin_turn(S, i, (p + 1) % n, tab)


@kernel
def _rolloff_turn_done(S, i, tab):
    """``_rolloff_turn_done``: a roll-off turn ended (always by a bust) with its points."""
    k = S[i, C_NRSCORES]
    S[i, B_RSCORE + k] = S[i, C_TOTAL]
    k += 1
    S[i, C_NRSCORES] = k
    m = S[i, C_NROLLOFF]
    if k < m:
        _begin_turn(S, i, S[i, B_ROLLOFF + k], tab)
        return
    top = S[i, B_RSCORE]
    for j in range(1, m):
        top = max(top, S[i, B_RSCORE + j])
    tied = 0
    count = 0
    for j in range(m):
        if S[i, B_RSCORE + j] == top:
            tied |= 1 << S[i, B_ROLLOFF + j]
            count += 1
    if count == 1 or S[i, C_RROUND] >= tab[CFG_ROLLOFF_HORIZON]:
        _finish(S, i, tied)
        return
    w = 0
    for j in range(m):
        if S[i, B_RSCORE + j] == top:
            S[i, B_ROLLOFF + w] = S[i, B_ROLLOFF + j]
            w += 1
    for j in range(MAX_PLAYERS):
        S[i, B_RSCORE + j] = 0
        if j >= w:
            S[i, B_ROLLOFF + j] = 0
    S[i, C_NROLLOFF] = w
    S[i, C_NRSCORES] = 0
    S[i, C_RROUND] += 1
    _begin_turn(S, i, S[i, B_ROLLOFF], tab)


@kernel
def end_turn(S, i, bust, tab):
    """``_end_turn``: the turn ends without banking (a bust counts toward penalties)."""
    if in_rolloff(S, i):
        _rolloff_turn_done(S, i, tab)
        return
    p = S[i, C_PLAYER]
    if bust:
        streak = S[i, B_STREAK + p] + 1
        after = tab[CFG_PENALTY_AFTER]
        if after != 0 and streak >= after:
            S[i, B_SCORE + p] -= tab[CFG_PENALTY]
            streak = 0
        S[i, B_STREAK + p] = streak
    _next_turn(S, i, tab)


@kernel
def _owe_final_round(S, i, p):
    S[i, C_ENDGAME] = 1
    for q in range(S[i, C_NPLAYERS]):
        S[i, B_OWED + q] = 0 if q == p else 1


@kernel
def _bank(S, i, tab):
    p = S[i, C_PLAYER]
    n = S[i, C_NPLAYERS]
    S[i, B_SCORE + p] += S[i, C_TOTAL]
    S[i, B_ENTERED + p] = 1
    S[i, B_STREAK + p] = 0
    reached = tab[CFG_TARGET] > 0 and S[i, B_SCORE + p] >= tab[CFG_TARGET]
    if tab[CFG_EXACT] == 0 and reached and S[i, C_ENDGAME] == 0:
        if tab[CFG_FINAL_ROUND] == 0 or n == 1:
            _finish(S, i, 1 << p)
            return
        _owe_final_round(S, i, p)
    _next_turn(S, i, tab)


@kernel
def _go_out(S, i, tab):
    """``_go_out``: the roll for nothing scored nothing; the player is on the target."""
    p = S[i, C_PLAYER]
    S[i, B_SCORE + p] = tab[CFG_TARGET]
    S[i, B_FIN + S[i, C_NFIN]] = p
    S[i, C_NFIN] += 1
    S[i, B_STREAK + p] = 0
    if S[i, C_ENDGAME] == 0:
        if tab[CFG_FINAL_ROUND] == 0 or S[i, C_NPLAYERS] == 1:
            _finish(S, i, 1 << p)
            return
        _owe_final_round(S, i, p)
    _next_turn(S, i, tab)


@kernel
def _locked_in(S, i, tab):
    """Trippn roll-off: sets of 2s, 3s, 4s and 6s all working."""
    c = tab[T_OFF_CARRY] + S[i, C_DSTATE] * CARRY_FIELDS
    return tab[c + 1] != 0 and tab[c + 2] != 0 and tab[c + 3] != 0 and tab[c + 5] != 0


@kernel
def _keep(S, i, row, j, tab):
    """``_apply_keep`` of option ``j`` of table row ``row``."""
    rec = option_records(tab, row)
    p = S[i, C_PLAYER]
    score = option_field(tab, rec, j, OPT_SCORE)
    total = S[i, C_TOTAL] + score
    dice = S[i, C_DICE] - option_field(tab, rec, j, OPT_USED)
    fresh = 0
    if dice == 0 and tab[CFG_HOT_DICE] != 0:
        dice = tab[CFG_NUM_DICE]
        fresh = 1
    if tab[CFG_CARRY] != 0:
        S[i, C_DSTATE] = option_field(tab, rec, j, OPT_NEXT)
    if score >= tab[CFG_ENTRY]:
        S[i, C_ENTRY_MET] = 1
    S[i, C_PHASE] = PH_CONTINUE
    S[i, C_TOTAL] = total
    S[i, C_DICE] = dice
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = fresh
    S[i, C_BAR] = -1
    if in_rolloff(S, i):
        if tab[CFG_TRIPPN] != 0 and _locked_in(S, i, tab):
            _finish(S, i, 1 << p)
        return
    if tab[CFG_EXACT] != 0 and S[i, B_SCORE + p] + total > tab[CFG_TARGET]:
        end_turn(S, i, True, tab)
        return
    if dice == 0 and not can_bank(S, i, tab):
        end_turn(S, i, False, tab)


@kernel
def _order_roll(S, i, face, tab):
    n = S[i, C_NPLAYERS]
    cont = S[i, C_CONTENDERS]
    k = S[i, C_NORDER]
    seen = 0
    for q in range(n):
        if cont & (1 << q):
            if seen == k:
                S[i, B_ORDER + q] = face
            seen += 1
    k += 1
    S[i, C_NORDER] = k
    if k < seen:
        seen = 0
        for q in range(n):
            if cont & (1 << q):
                if seen == k:
                    S[i, C_PLAYER] = q
                seen += 1
        return
    top = 0
    for q in range(n):
        if cont & (1 << q):
            top = max(top, S[i, B_ORDER + q])
    tied = 0
    first = -1
    count = 0
    for q in range(n):
        if cont & (1 << q) and S[i, B_ORDER + q] == top:
            tied |= 1 << q
            count += 1
            if first < 0:
                first = q
    for q in range(n):
        S[i, B_ORDER + q] = 0
    S[i, C_NORDER] = 0
    if count == 1:
        S[i, C_CONTENDERS] = 0
        _begin_turn(S, i, first, tab)
    else:
        S[i, C_CONTENDERS] = tied
        S[i, C_PLAYER] = first


@kernel
def _six_of_a_kind(tab, r):
    """Whether roll ``r`` shows six (or more) dice of one face."""
    counts = tab[T_OFF_COUNTS] + 6 * r
    most = 0
    for f in range(6):
        most = max(most, tab[counts + f])
    return most >= 6


@kernel
def apply_roll(S, i, code, tab):
    """``apply_roll`` of the roll that ``code`` decodes to (one die at the who-starts roll).
    Returns :data:`MISSING`, leaving the row untouched, if that roll's option row is not built
    yet (it is asked for); else :data:`OK`."""
    if S[i, C_PHASE] == PH_ORDER_ROLL:
        counts = tab[T_OFF_COUNTS] + 6 * decode_roll(code, 1, tab)
        face = 1
        for f in range(6):
            if tab[counts + f] != 0:
                face = f + 1
        _order_roll(S, i, face, tab)
        return OK
    r = decode_roll(code, S[i, C_DICE], tab)
    d = row_dice_state(S, i, tab)
    row = row_of(tab, d, r)
    if row < 0:
        ask_for_row(tab, d, r)
        return MISSING
    S[i, C_ROLL] = r
    if tab[CFG_SIX_KIND] != 0 and _six_of_a_kind(tab, r):
        S[i, C_PHASE] = PH_KEEP
        S[i, C_FOR_NOTHING] = 0
        _finish(S, i, 1 << S[i, C_PLAYER])
        return OK
    if S[i, C_FOR_NOTHING] != 0:
        S[i, C_FOR_NOTHING] = 0
        if tab[tab[T_OFF_SCORING] + row] != 0:
            end_turn(S, i, True, tab)
        else:
            _go_out(S, i, tab)
        return OK
    S[i, C_PHASE] = PH_KEEP
    bar = S[i, C_BAR]
    cnt = n_options(tab, row)
    rec = option_records(tab, row)
    if bar < 0:
        if cnt > 0:
            return OK
    else:
        for j in range(cnt):
            if option_field(tab, rec, j, OPT_SCORE) > bar:
                return OK
    end_turn(S, i, True, tab)
    return OK


@kernel
def nth_action(S, i, tab, nth, ids, listed=None):
    """Walk the legal actions of row ``i`` in ``legal_moves`` order: with ``ids`` None the
    ``nth`` one is returned (-1 if none; ``nth < 0``: the count), else each is flagged in
    ``ids[i]`` (the mask), and, with ``listed`` given, the first ``listed.shape[1] - 1`` are
    written in order to ``listed[i, 1:]`` and their count to ``listed[i, 0]`` (the count is
    returned as well)."""
    ph = S[i, C_PHASE]
    m = 0
    if ph == PH_KEEP:
        row = table_row(S, i, tab)
        rec = option_records(tab, row)
        bar = S[i, C_BAR]
        for j in range(n_options(tab, row)):
            if bar < 0 or option_field(tab, rec, j, OPT_SCORE) > bar:
                a = option_field(tab, rec, j, OPT_ACTION)
                if ids is not None:
                    ids[i, np.uint64(a)] = 1
                    if listed is not None and m + 1 < listed.shape[1]:
                        listed[i, np.uint64(m + 1)] = a
                elif m == nth:
                    return a
                m += 1
        if not in_rolloff(S, i):
            for flag, a in (
                (CFG_REROLL_ALL, tab[CFG_ACT_REROLL]),
                (CFG_VOLUNTARY_BUST, tab[CFG_ACT_BUST]),
            ):
                if tab[flag] != 0 and (flag != CFG_REROLL_ALL or can_reroll(S, i, tab)):
                    if ids is not None:
                        ids[i, np.uint64(a)] = 1
                        if listed is not None and m + 1 < listed.shape[1]:
                            listed[i, np.uint64(m + 1)] = a
                    elif m == nth:
                        return a
                    m += 1
        if listed is not None:
            listed[i, 0] = m
        return m if nth < 0 else -1
    first = -1
    second = -1
    if ph == PH_CONTINUE:
        if in_rolloff(S, i):
            first = tab[CFG_ACT_ROLL]
        elif at_target(S, i, tab):
            first = tab[CFG_ACT_FOR_NOTHING]
        else:
            if can_bank(S, i, tab):
                first = tab[CFG_ACT_BANK]
            if S[i, C_DICE] > 0:
                if first < 0:
                    first = tab[CFG_ACT_ROLL]
                else:
                    second = tab[CFG_ACT_ROLL]
    elif ph == PH_SPLIT:
        first = tab[CFG_ACT_SPLIT]
        second = tab[CFG_ACT_REFUSE]
    elif ph == PH_ORDER_CHOICE:
        first = tab[CFG_ACT_FIRST]
        second = tab[CFG_ACT_LAST]
    if first >= 0:
        if ids is not None:
            ids[i, np.uint64(first)] = 1
            if listed is not None and listed.shape[1] > 1:
                listed[i, 1] = first
        elif nth == 0:
            return first
        m += 1
    if second >= 0:
        if ids is not None:
            ids[i, np.uint64(second)] = 1
            if listed is not None and listed.shape[1] > 2:
                listed[i, 2] = second
        elif nth == 1:
            return second
        m += 1
    if listed is not None:
        listed[i, 0] = m
    return m if nth < 0 else -1


@kernel
def legal_action(S, i, tab, nth):
    """The ``nth`` legal action of row ``i`` in ``legal_moves`` order (``nth < 0``: the count
    of legal actions is returned instead)."""
    return nth_action(S, i, tab, nth, None)


@kernel
def random_legal(S, i, tab, u):
    """The legal action that the uniform ``u`` picks: ``moves[int(u * len(moves))]``."""
    m = legal_action(S, i, tab, -1)
    if m == 0:
        return -1
    return legal_action(S, i, tab, int(u * m))


@kernel
def _split_vote(S, i):
    votes = S[i, C_VOTES] + 1
    if votes == S[i, C_NFIN]:
        _finish(S, i, _finishers_mask(S, i))
        return
    S[i, C_VOTES] = votes
    S[i, C_PLAYER] = S[i, B_FIN + votes]


@kernel
def _start_rolloff(S, i, last, tab):
    """The first finisher rolls first (or last) in the roll-off of the finishers."""
    nf = S[i, C_NFIN]
    for k in range(nf):
        src = k
        if last:
            src = (k + 1) % nf
        S[i, B_ROLLOFF + k] = S[i, B_FIN + src]
    S[i, C_NROLLOFF] = nf
    S[i, C_NRSCORES] = 0
    S[i, C_RROUND] = 1
    _begin_turn(S, i, S[i, B_ROLLOFF], tab)


@kernel
def apply_action(S, i, a, tab):
    """Play catalog action ``a`` in row ``i``; an illegal one forfeits the turn as a bust
    (``greed_env.envs.conventions.forfeit``: in the split vote and the roll-off order choice the
    first legal move is played instead). Returns True if the action was illegal."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        row = table_row(S, i, tab)
        rec = option_records(tab, row)
        bar = S[i, C_BAR]
        for j in range(n_options(tab, row)):
            if option_field(tab, rec, j, OPT_ACTION) == a and (
                bar < 0 or option_field(tab, rec, j, OPT_SCORE) > bar
            ):
                _keep(S, i, row, j, tab)
                return False
        rolloff = in_rolloff(S, i)
        if a == tab[CFG_ACT_REROLL] and can_reroll(S, i, tab):
            given_up = S[i, C_TOTAL] + tab[tab[T_OFF_BEST] + row]
            S[i, C_PHASE] = PH_ROLL
            S[i, C_TOTAL] = 0
            S[i, C_DICE] = tab[CFG_NUM_DICE]
            S[i, C_ROLL] = -1
            S[i, C_DSTATE] = 0
            S[i, C_FRESH] = 1
            S[i, C_BAR] = given_up if tab[CFG_MUST_BEAT] != 0 else -1
            S[i, C_ENTRY_MET] = 0
            return False
        if a == tab[CFG_ACT_BUST] and tab[CFG_VOLUNTARY_BUST] != 0 and not rolloff:
            end_turn(S, i, True, tab)
            return False
        end_turn(S, i, True, tab)
        return True
    if ph == PH_CONTINUE:
        if in_rolloff(S, i):
            legal = a == tab[CFG_ACT_ROLL]
        elif at_target(S, i, tab):
            if a == tab[CFG_ACT_FOR_NOTHING]:
                S[i, C_PHASE] = PH_ROLL
                S[i, C_ROLL] = -1
                S[i, C_FOR_NOTHING] = 1
                return False
            legal = False
        else:
            if a == tab[CFG_ACT_BANK] and can_bank(S, i, tab):
                _bank(S, i, tab)
                return False
            legal = a == tab[CFG_ACT_ROLL] and S[i, C_DICE] > 0
        if legal:
            S[i, C_PHASE] = PH_ROLL
            S[i, C_ROLL] = -1
            return False
        end_turn(S, i, True, tab)
        return True
    if ph == PH_SPLIT:
        if a == tab[CFG_ACT_REFUSE]:
            S[i, C_PHASE] = PH_ORDER_CHOICE
            S[i, C_PLAYER] = S[i, B_FIN]
            return False
        _split_vote(S, i)
        return a != tab[CFG_ACT_SPLIT]
    if ph == PH_ORDER_CHOICE:
        _start_rolloff(S, i, a == tab[CFG_ACT_LAST], tab)
        return a != tab[CFG_ACT_FIRST] and a != tab[CFG_ACT_LAST]
    return True
