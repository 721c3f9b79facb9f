"""Numba kernels of the vector engine: the game, episodes, observations and masks in batch.

A batch of ``N`` games is one int64 array ``S`` of shape ``(N, N_COLS)``: one row per game,
one column per field of :class:`greed_env.rules.State` that order-free rules use (seat fields
in blocks of :data:`MAX_PLAYERS`). The transition functions below follow
:mod:`greed_env.rules.game` field by field, including the fields a transition leaves alone,
so that a row and a reference state stay equal after every move and roll (tested in
``tests/test_vector_equivalence.py``). All dice knowledge comes from the tables of
:mod:`greed_env.vector.tables`.

Every table is one flat int64 array ``tab`` (layout: the ``T_*`` header slots, filled by
:mod:`greed_env.vector.tables`). The kernels are compiled without numba's reference-counting
runtime (``_nrt=False``: they never allocate), since atomic reference counts on every array
argument of every call cost more than the game logic itself; only the thread-pool driver
:func:`step_parallel` uses the runtime.

Randomness: dice codes (uniform in ``[0, 6**num_dice)``) and uniforms in ``[0, 1)`` (the
random opponent's choice and the learner's seat) are read from per-game ring buffers that the
caller fills from its own ``numpy.random.Generator``. A game that runs out of either stops at
that point (status :data:`STARVED`) and is resumed after a refill, so results never depend on
thread scheduling or on how often the buffers are refilled.
"""

from __future__ import annotations

from numba import njit, prange

kernel = njit(cache=True, _nrt=False)
"""The decorator of every kernel but the thread-pool driver."""

# rules constants and non-keep action ids (the int64 ``cfg`` vector of the tables)
CFG_NUM_DICE = 0
CFG_TARGET = 1
CFG_ENTRY = 2
CFG_ENTRY_ROLL_SCOPE = 3
CFG_ENTRY_UNTIL_MADE = 4
CFG_MIN_BANK = 5
CFG_HOT_DICE = 6
CFG_REROLL_ALL = 7
CFG_MUST_BEAT = 8
CFG_FINAL_ROUND = 9
CFG_PENALTY_AFTER = 10
CFG_PENALTY = 11
CFG_HORIZON = 12
CFG_FIRST_ROLL = 13
CFG_ACT_BANK = 14
CFG_ACT_ROLL = 15
CFG_ACT_REROLL = 16
CFG_ACT_BUST = 17
CFG_N_ACTIONS = 18
CFG_VOLUNTARY_BUST = 19
CFG_STREAK_SCALE = 20
CFG_SIZE = 21

# layout of the flat table: sizes and offsets of the sub-tables
T_NROLLS = 21
T_MAXOPT = 22
T_OFF_OBS = 23
T_OFF_COUNTS = 24
T_OFF_DSTART = 25
T_OFF_DECODE = 26
T_OFF_NOPT = 27
T_OFF_BEST = 28
T_OFF_OPT = 29
T_HEADER = 30
OPT_ACTION = 0
OPT_SCORE = 1
OPT_USED = 2
OPT_WINS = 3
OPT_FIELDS = 4

MAX_PLAYERS = 8

C_PHASE = 0
C_PLAYER = 1
C_TOTAL = 2
C_DICE = 3
C_ROLL = 4
C_FRESH = 5
C_BAR = 6
C_ENTRY_MET = 7
C_ROUNDS = 8
C_ENDGAME = 9
C_WINNERS = 10
C_NPLAYERS = 11
C_CONTENDERS = 12
C_NORDER = 13
B_SCORE = 14
B_ENTERED = B_SCORE + MAX_PLAYERS
B_STREAK = B_ENTERED + MAX_PLAYERS
B_TURNS = B_STREAK + MAX_PLAYERS
B_OWED = B_TURNS + MAX_PLAYERS
B_ORDER = B_OWED + MAX_PLAYERS
N_COLS = B_ORDER + MAX_PLAYERS

PH_ORDER_ROLL = 0
PH_START = 1
PH_ROLL = 2
PH_KEEP = 3
PH_CONTINUE = 4
PH_OVER = 7

MODE_TURN = 0
MODE_RACE = 1
MODE_DUEL = 2

OPP_RANDOM = 0
OPP_THRESHOLD = 1
KEEP_MAX_SCORE = 0
KEEP_MOST = 1
KEEP_FEWEST = 2

# episode int parameters (ep)
EP_MODE = 0
EP_NPLAYERS = 1
EP_FIXED_SEAT = 2
EP_MAX_STEPS = 3
EP_MAX_TURNS = 4
EP_OPPONENT = 5
EP_BANK_AT = 6
EP_KEEP_STYLE = 7
EP_MIN_DICE = 8
EP_AUTORESET = 9
EP_SIZE = 10
# episode float parameters (fp)
FP_REWARD_SCALE = 0
FP_ILLEGAL_REWARD = 1
FP_SIZE = 2

# per-game episode columns (E, int64)
E_STAGE = 0
E_SEAT = 1
E_STEPS = 2
E_TURNS_DONE = 3
E_CODE_READ = 4
E_CODE_WRITE = 5
E_U_READ = 6
E_U_WRITE = 7
E_DONE = 8
E_ILLEGAL = 9
E_TERMINATED = 10
E_TRUNCATED = 11
E_COLS = 12

STAGE_IDLE = 0
STAGE_ADVANCE = 1
STAGE_INIT = 2
STAGE_RESET_ADVANCE = 3
STAGE_OVER = 4

OK = 0
STARVED = 1

# observation slots (order of tables.OBS_SLOT_NAMES; positions at tab[T_OFF_OBS + O_*])
O_NUM_DICE = 0
O_NUM_PLAYERS = 1
O_EXACT = 2
O_ENTRY = 3
O_MIN_BANK = 4
O_SHOWING = 5
O_MY_TURN = 6
O_IN_HAND = 7
O_FRESH = 8
O_TURN_TOTAL = 9
O_CAN_BANK = 10
O_ENTRY_MET = 11
O_ENTRY_MISSING = 12
O_TO_TARGET = 13
O_TO_TARGET_AFTER = 14
O_PRESENT = 15
O_SCORE = 16
O_ENTERED = 17
O_STREAK = 18
O_OWED = 19
O_PHASE = 20
O_FINAL = 21
O_ME_OWED = 22
O_BAR_ACTIVE = 23
O_BAR = 24
O_PROGRESS = 25


# ------------------------------------------------------------------------------------------
# table access


@kernel
def _fresh_index(S, i, tab):
    if S[i, C_FRESH] != 0 and S[i, C_DICE] == tab[CFG_NUM_DICE]:
        return 1
    return 0


@kernel
def _row(tab, fi, r):
    return fi * tab[T_NROLLS] + r


@kernel
def _opt(tab, fi, r, j, field):
    return tab[tab[T_OFF_OPT] + ((fi * tab[T_NROLLS] + r) * tab[T_MAXOPT] + j) * OPT_FIELDS + field]


@kernel
def _n_options(tab, fi, r):
    return tab[tab[T_OFF_NOPT] + fi * tab[T_NROLLS] + r]


# ------------------------------------------------------------------------------------------
# the game (greed_env.rules.game, order-free rules)


@kernel
def _needs_entry(S, i, p, tab):
    if S[i, B_ENTERED + p] != 0 or tab[CFG_ENTRY] <= 0:
        return False
    return tab[CFG_ENTRY_UNTIL_MADE] != 0 or S[i, B_TURNS + p] <= 1


@kernel
def can_bank(S, i, tab):
    """``greed_env.rules.game.can_bank`` of row ``i``."""
    if S[i, C_PHASE] != PH_CONTINUE or S[i, C_TOTAL] <= 0 or S[i, C_BAR] >= 0:
        return False
    total = S[i, C_TOTAL]
    if total < tab[CFG_MIN_BANK]:
        return False
    if _needs_entry(S, i, S[i, C_PLAYER], tab):
        if tab[CFG_ENTRY_ROLL_SCOPE] != 0:
            if S[i, C_ENTRY_MET] == 0:
                return False
        elif total < tab[CFG_ENTRY]:
            return False
    return True


@kernel
def _begin_turn(S, i, p, tab):
    S[i, B_TURNS + p] += 1
    S[i, C_PHASE] = PH_ROLL
    S[i, C_PLAYER] = p
    S[i, C_TOTAL] = 0
    S[i, C_DICE] = tab[CFG_NUM_DICE]
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = 1
    S[i, C_BAR] = -1
    S[i, C_ENTRY_MET] = 0


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
def _next_turn(S, i, tab):
    n = S[i, C_NPLAYERS]
    p = S[i, C_PLAYER]
    S[i, C_ROUNDS] += 1
    if tab[CFG_ENTRY_UNTIL_MADE] == 0 and S[i, B_ENTERED + p] == 0:
        S[i, B_ENTERED + p] = 1
    S[i, C_TOTAL] = 0
    S[i, C_ROLL] = -1
    if S[i, C_ENDGAME] != 0:
        S[i, B_OWED + p] = 0
        for k in range(1, n + 1):
            q = (p + k) % n
            if S[i, B_OWED + q] != 0:
                _begin_turn(S, i, q, tab)
                return
        top = S[i, B_SCORE]
        for q in range(1, n):
            top = max(top, S[i, B_SCORE + q])
        winners = 0
        for q in range(n):
            if S[i, B_SCORE + q] == top:
                winners |= 1 << q
        S[i, C_PHASE] = PH_OVER
        S[i, C_WINNERS] = winners
        return
    if S[i, C_ROUNDS] >= tab[CFG_HORIZON] * n:
        S[i, C_PHASE] = PH_OVER
        S[i, C_WINNERS] = (1 << n) - 1
        return
    _begin_turn(S, i, (p + 1) % n, tab)


@kernel
def end_turn(S, i, bust, tab):
    """``_end_turn``: the turn ends without banking (a bust counts toward penalties)."""
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
def _bank(S, i, tab):
    p = S[i, C_PLAYER]
    n = S[i, C_NPLAYERS]
    S[i, B_SCORE + p] += S[i, C_TOTAL]
    S[i, B_ENTERED + p] = 1
    S[i, B_STREAK + p] = 0
    if S[i, B_SCORE + p] >= tab[CFG_TARGET] and S[i, C_ENDGAME] == 0:
        if tab[CFG_FINAL_ROUND] == 0 or n == 1:
            S[i, C_PHASE] = PH_OVER
            S[i, C_WINNERS] = 1 << p
            return
        S[i, C_ENDGAME] = 1
        for q in range(n):
            S[i, B_OWED + q] = 0 if q == p else 1
    _next_turn(S, i, tab)


@kernel
def _keep(S, i, score, used, wins, tab):
    p = S[i, C_PLAYER]
    total = S[i, C_TOTAL] + score
    if wins != 0:
        S[i, C_TOTAL] = total
        S[i, C_PHASE] = PH_OVER
        S[i, C_WINNERS] = 1 << p
        return
    dice = S[i, C_DICE] - used
    fresh = 0
    if dice == 0 and tab[CFG_HOT_DICE] != 0:
        dice = tab[CFG_NUM_DICE]
        fresh = 1
    if score >= tab[CFG_ENTRY]:
        S[i, C_ENTRY_MET] = 1
    S[i, C_PHASE] = PH_CONTINUE
    S[i, C_TOTAL] = total
    S[i, C_DICE] = dice
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = fresh
    S[i, C_BAR] = -1
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
def apply_roll(S, i, code, tab):
    """``apply_roll`` of the roll that ``code`` decodes to (one die at the who-starts roll)."""
    dstart = tab[T_OFF_DSTART]
    decode = tab[T_OFF_DECODE]
    if S[i, C_PHASE] == PH_ORDER_ROLL:
        r = tab[decode + tab[dstart + 1] + code % 6]
        counts = tab[T_OFF_COUNTS] + 6 * r
        face = 1
        for f in range(6):
            if tab[counts + f] != 0:
                face = f + 1
        _order_roll(S, i, face, tab)
        return
    k = S[i, C_DICE]
    r = tab[decode + tab[dstart + k] + code % (6**k)]
    S[i, C_ROLL] = r
    S[i, C_PHASE] = PH_KEEP
    fi = _fresh_index(S, i, tab)
    bar = S[i, C_BAR]
    cnt = _n_options(tab, fi, r)
    if bar < 0:
        if cnt > 0:
            return
    else:
        for j in range(cnt):
            if _opt(tab, fi, r, j, OPT_SCORE) > bar:
                return
    end_turn(S, i, True, tab)


@kernel
def legal_action(S, i, tab, nth):
    """The ``nth`` legal action of row ``i`` in ``legal_moves`` order (``nth < 0``: the count
    of legal actions is returned instead)."""
    ph = S[i, C_PHASE]
    m = 0
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, tab)
        bar = S[i, C_BAR]
        for j in range(_n_options(tab, fi, r)):
            if bar < 0 or _opt(tab, fi, r, j, OPT_SCORE) > bar:
                if m == nth:
                    return _opt(tab, fi, r, j, OPT_ACTION)
                m += 1
        if tab[CFG_REROLL_ALL] != 0:
            if m == nth:
                return tab[CFG_ACT_REROLL]
            m += 1
        if tab[CFG_VOLUNTARY_BUST] != 0:
            if m == nth:
                return tab[CFG_ACT_BUST]
            m += 1
    elif ph == PH_CONTINUE:
        if can_bank(S, i, tab):
            if m == nth:
                return tab[CFG_ACT_BANK]
            m += 1
        if S[i, C_DICE] > 0:
            if m == nth:
                return tab[CFG_ACT_ROLL]
            m += 1
    return m if nth < 0 else -1


@kernel
def random_legal(S, i, tab, u):
    """The legal action that the uniform ``u`` picks: ``moves[int(u * len(moves))]``."""
    m = legal_action(S, i, tab, -1)
    if m == 0:
        return -1
    return legal_action(S, i, tab, int(u * m))


@kernel
def apply_action(S, i, a, tab):
    """Play catalog action ``a`` in row ``i``; an illegal one forfeits the turn as a bust
    (``greed_env.rules.forfeit_turn``). Returns True if the action was illegal."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, tab)
        bar = S[i, C_BAR]
        for j in range(_n_options(tab, fi, r)):
            if _opt(tab, fi, r, j, OPT_ACTION) == a:
                score = _opt(tab, fi, r, j, OPT_SCORE)
                if bar < 0 or score > bar:
                    _keep(
                        S,
                        i,
                        score,
                        _opt(tab, fi, r, j, OPT_USED),
                        _opt(tab, fi, r, j, OPT_WINS),
                        tab,
                    )
                    return False
        if a == tab[CFG_ACT_REROLL] and tab[CFG_REROLL_ALL] != 0:
            given_up = S[i, C_TOTAL] + tab[tab[T_OFF_BEST] + _row(tab, fi, r)]
            S[i, C_PHASE] = PH_ROLL
            S[i, C_TOTAL] = 0
            S[i, C_DICE] = tab[CFG_NUM_DICE]
            S[i, C_ROLL] = -1
            S[i, C_FRESH] = 1
            S[i, C_BAR] = given_up if tab[CFG_MUST_BEAT] != 0 else -1
            S[i, C_ENTRY_MET] = 0
            return False
        if a == tab[CFG_ACT_BUST] and tab[CFG_VOLUNTARY_BUST] != 0:
            end_turn(S, i, True, tab)
            return False
        end_turn(S, i, True, tab)
        return True
    if ph == PH_CONTINUE:
        if a == tab[CFG_ACT_BANK] and can_bank(S, i, tab):
            _bank(S, i, tab)
            return False
        if a == tab[CFG_ACT_ROLL] and S[i, C_DICE] > 0:
            S[i, C_PHASE] = PH_ROLL
            S[i, C_ROLL] = -1
            return False
        end_turn(S, i, True, tab)
        return True
    return True


@kernel
def threshold_action(S, i, tab, bank_at, style, min_dice):
    """``ThresholdBot(bank_at, keep=style, min_dice).act`` of row ``i`` as an action id."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, tab)
        bar = S[i, C_BAR]
        best = -1
        k1 = 0
        k2 = 0
        for j in range(_n_options(tab, fi, r)):
            sc = _opt(tab, fi, r, j, OPT_SCORE)
            if bar >= 0 and sc <= bar:
                continue
            used = _opt(tab, fi, r, j, OPT_USED)
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
            return _opt(tab, fi, r, best, OPT_ACTION)
        if tab[CFG_VOLUNTARY_BUST] != 0:
            return tab[CFG_ACT_BUST]
        return tab[CFG_ACT_REROLL]
    if ph == PH_CONTINUE:
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
    return -1


# ------------------------------------------------------------------------------------------
# observations and masks


@kernel
def _clip(x, low, high):
    return min(max(x, low), high)


@kernel
def encode_row(S, i, me, tab, out, o):
    """``encode_observation(rules, state, me)`` of row ``i`` into ``out[o]``."""
    for c in range(out.shape[1]):
        out[o, c] = 0.0
    oi = tab[T_OFF_OBS]
    n = S[i, C_NPLAYERS]
    target = float(tab[CFG_TARGET])
    nd = float(tab[CFG_NUM_DICE])
    entry = tab[CFG_ENTRY]
    out[o, tab[oi + O_NUM_DICE]] = nd / 8.0
    out[o, tab[oi + O_NUM_PLAYERS]] = n / 8.0
    out[o, tab[oi + O_ENTRY]] = _clip(entry / target, 0.0, 1.0)
    out[o, tab[oi + O_MIN_BANK]] = _clip(tab[CFG_MIN_BANK] / target, 0.0, 1.0)
    phase = S[i, C_PHASE]
    if phase == PH_KEEP:
        counts = tab[T_OFF_COUNTS] + 6 * S[i, C_ROLL]
        step = 1.0 / nd
        showing = tab[oi + O_SHOWING]
        for f in range(6):
            x = 0.0
            for _ in range(tab[counts + f]):
                x += step
            out[o, showing + f] = x
    acting = S[i, C_PLAYER] == me and phase != PH_OVER
    total = S[i, C_TOTAL]
    if acting:
        out[o, tab[oi + O_MY_TURN]] = 1.0
    out[o, tab[oi + O_IN_HAND]] = S[i, C_DICE] / nd
    out[o, tab[oi + O_FRESH]] = float(S[i, C_FRESH])
    out[o, tab[oi + O_TURN_TOTAL]] = _clip(total / target, 0.0, 2.0)
    if acting and phase == PH_CONTINUE and can_bank(S, i, tab):
        out[o, tab[oi + O_CAN_BANK]] = 1.0
    out[o, tab[oi + O_ENTRY_MET]] = float(S[i, C_ENTRY_MET])
    if acting and S[i, B_ENTERED + me] == 0 and entry > 0:
        out[o, tab[oi + O_ENTRY_MISSING]] = _clip((entry - total) / target, 0.0, 1.0)
    my_score = S[i, B_SCORE + me]
    out[o, tab[oi + O_TO_TARGET]] = _clip((target - my_score) / target, -1.0, 2.0)
    unbanked = total if acting else 0
    out[o, tab[oi + O_TO_TARGET_AFTER]] = _clip((target - my_score - unbanked) / target, -1.0, 2.0)
    streak_scale = float(tab[CFG_STREAK_SCALE])
    present = tab[oi + O_PRESENT]
    score = tab[oi + O_SCORE]
    entered = tab[oi + O_ENTERED]
    streak = tab[oi + O_STREAK]
    owed = tab[oi + O_OWED]
    for k in range(min(n, MAX_PLAYERS)):
        p = (me + k) % n
        out[o, present + k] = 1.0
        out[o, score + k] = _clip(S[i, B_SCORE + p] / target, -1.0, 2.0)
        if S[i, B_ENTERED + p] != 0:
            out[o, entered + k] = 1.0
        if S[i, B_STREAK + p] != 0:
            out[o, streak + k] = _clip(S[i, B_STREAK + p] / streak_scale, 0.0, 1.0)
        if S[i, B_OWED + p] != 0:
            out[o, owed + k] = 1.0
    out[o, tab[oi + O_PHASE] + phase] = 1.0
    out[o, tab[oi + O_FINAL]] = float(S[i, C_ENDGAME])
    if S[i, B_OWED + me] != 0:
        out[o, tab[oi + O_ME_OWED]] = 1.0
    bar = S[i, C_BAR]
    if bar >= 0:
        out[o, tab[oi + O_BAR_ACTIVE]] = 1.0
        out[o, tab[oi + O_BAR]] = _clip(bar / target, 0.0, 2.0)
    out[o, tab[oi + O_PROGRESS]] = _clip(S[i, C_ROUNDS] / (tab[CFG_HORIZON] * n), 0.0, 1.0)


@kernel
def mask_row(S, i, tab, mask):
    """The catalog mask of row ``i`` into ``mask[i]`` (all zeros at chance and terminal rows)."""
    for c in range(mask.shape[1]):
        mask[i, c] = 0
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, tab)
        bar = S[i, C_BAR]
        for j in range(_n_options(tab, fi, r)):
            if bar < 0 or _opt(tab, fi, r, j, OPT_SCORE) > bar:
                mask[i, _opt(tab, fi, r, j, OPT_ACTION)] = 1
        if tab[CFG_REROLL_ALL] != 0:
            mask[i, tab[CFG_ACT_REROLL]] = 1
        if tab[CFG_VOLUNTARY_BUST] != 0:
            mask[i, tab[CFG_ACT_BUST]] = 1
    elif ph == PH_CONTINUE:
        if can_bank(S, i, tab):
            mask[i, tab[CFG_ACT_BANK]] = 1
        if S[i, C_DICE] > 0:
            mask[i, tab[CFG_ACT_ROLL]] = 1


# ------------------------------------------------------------------------------------------
# episodes: Solitaire (turn, race) and Duel


@kernel
def _played(S, i):
    if S[i, C_PHASE] == PH_OVER:
        return S[i, B_TURNS]
    return S[i, B_TURNS] - 1


@kernel
def _advance(S, E, i, tab, ep, codes, unif):
    """Roll and let the opponents move until the learner decides or the episode stops."""
    mode = ep[EP_MODE]
    while True:
        ph = S[i, C_PHASE]
        if ph == PH_OVER:
            return OK
        if mode == MODE_TURN and S[i, B_TURNS] != 1:
            return OK
        if mode == MODE_RACE and _played(S, i) >= ep[EP_MAX_TURNS]:
            return OK
        if ph == PH_ROLL or ph == PH_ORDER_ROLL:  # noqa: SIM109 (numba-friendly)
            rd = E[i, E_CODE_READ]
            if rd == E[i, E_CODE_WRITE]:
                return STARVED
            E[i, E_CODE_READ] = rd + 1
            apply_roll(S, i, codes[i, rd % codes.shape[1]], tab)
            continue
        if mode == MODE_DUEL and S[i, C_PLAYER] != E[i, E_SEAT]:
            if ep[EP_OPPONENT] == OPP_RANDOM:
                rd = E[i, E_U_READ]
                if rd == E[i, E_U_WRITE]:
                    return STARVED
                E[i, E_U_READ] = rd + 1
                a = random_legal(S, i, tab, unif[i, rd % unif.shape[1]])
            else:
                a = threshold_action(S, i, tab, ep[EP_BANK_AT], ep[EP_KEEP_STYLE], ep[EP_MIN_DICE])
            apply_action(S, i, a, tab)
            continue
        return OK


@kernel
def _start_game(S, i, tab, ep):
    if ep[EP_MODE] == MODE_DUEL:
        new_game(S, i, ep[EP_NPLAYERS], -1, tab)
    else:
        new_game(S, i, 1, -1, tab)
        if ep[EP_MODE] == MODE_TURN:
            S[i, B_ENTERED] = 1


@kernel
def _score_step(S, E, i, ep, fp, rewards, pending):
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
        played = _played(S, i)
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


@kernel
def _run(S, E, i, tab, ep, fp, codes, unif, rewards, pending, final_obs):
    """Carry game ``i`` through its pending stages; returns STARVED if it must wait for draws."""
    mode = ep[EP_MODE]
    if E[i, E_STAGE] == STAGE_ADVANCE:
        if _advance(S, E, i, tab, ep, codes, unif) == STARVED:
            return STARVED
        _score_step(S, E, i, ep, fp, rewards, pending)
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
            if _advance(S, E, i, tab, ep, codes, unif) == STARVED:
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
                played = _played(S, i)
                E[i, E_TURNS_DONE] = played
                pending[i] = -float(played)
                break
        E[i, E_STAGE] = STAGE_IDLE
    return OK


@kernel
def _publish(S, E, i, tab, obs, mask):
    encode_row(S, i, E[i, E_SEAT], tab, obs, i)
    if E[i, E_STAGE] == STAGE_OVER:
        for c in range(mask.shape[1]):
            mask[i, c] = 0
    else:
        mask_row(S, i, tab, mask)


@kernel
def step_range(
    lo, hi, S, E, actions, tab, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs
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
        if _run(S, E, i, tab, ep, fp, codes, unif, rewards, pending, final_obs) == STARVED:
            starved += 1
        else:
            _publish(S, E, i, tab, obs, mask)
    return starved


@kernel
def resume_range(lo, hi, S, E, tab, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs):
    """Continue games ``lo .. hi - 1`` that have a pending stage (after a refill)."""
    starved = 0
    for i in range(lo, hi):
        st = E[i, E_STAGE]
        if st == STAGE_IDLE or st == STAGE_OVER:  # noqa: SIM109 (numba-friendly)
            continue
        if _run(S, E, i, tab, ep, fp, codes, unif, rewards, pending, final_obs) == STARVED:
            starved += 1
        else:
            _publish(S, E, i, tab, obs, mask)
    return starved


@njit(cache=True, parallel=True)
def step_parallel(
    chunk, S, E, actions, tab, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs
):
    """:func:`step_range` over numba's thread pool, ``chunk`` games per task."""
    n = S.shape[0]
    tasks = (n + chunk - 1) // chunk
    starved = 0
    for t in prange(tasks):
        starved += step_range(
            t * chunk,
            min(n, (t + 1) * chunk),
            S,
            E,
            actions,
            tab,
            ep,
            fp,
            codes,
            unif,
            rewards,
            pending,
            obs,
            mask,
            final_obs,
        )
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
def random_actions(S, unif01, tab, out):
    """A uniformly random legal action of every row (``legal_moves`` order, like RandomBot);
    0 where nothing is legal."""
    for i in range(S.shape[0]):
        a = random_legal(S, i, tab, unif01[i])
        out[i] = a if a >= 0 else 0


# ------------------------------------------------------------------------------------------
# game-level batch operations (tests, tools)


@kernel
def batch_new_games(S, rows, n, first_player, tab):
    """``new_game`` into every row flagged in ``rows``."""
    for i in range(S.shape[0]):
        if rows[i]:
            new_game(S, i, n, first_player, tab)


@kernel
def batch_apply_rolls(S, rows, codes, tab):
    """``apply_roll`` of ``codes[i]`` to every flagged row (each must be at a chance node)."""
    for i in range(S.shape[0]):
        if rows[i]:
            apply_roll(S, i, codes[i], tab)


@kernel
def batch_apply_actions(S, rows, actions, illegal, tab):
    """Play ``actions[i]`` in every flagged row; ``illegal[i]`` says whether it forfeited."""
    for i in range(S.shape[0]):
        if rows[i]:
            illegal[i] = apply_action(S, i, actions[i], tab)


@kernel
def batch_masks(S, mask, tab):
    """Catalog masks of every row."""
    for i in range(S.shape[0]):
        mask_row(S, i, tab, mask)


@kernel
def batch_observations(S, seats, tab, obs):
    """Observations of every row from ``seats[i]``."""
    for i in range(S.shape[0]):
        encode_row(S, i, seats[i], tab, obs, i)


@kernel
def scatter_draws(E, read_col, write_col, buf, draws):
    """Append ``draws`` to the ring buffers, filling each row up to its capacity in row order."""
    n = buf.shape[0]
    size = buf.shape[1]
    k = 0
    for i in range(n):
        w = E[i, write_col]
        need = size - (w - E[i, read_col])
        for _ in range(need):
            buf[i, w % size] = draws[k]
            w += 1
            k += 1
        E[i, write_col] = w
    return k


@kernel
def free_slots(E, read_col, write_col, size):
    """Total free ring slots and the fewest draws left in any row."""
    total = 0
    low = size
    for i in range(E.shape[0]):
        left = E[i, write_col] - E[i, read_col]
        total += size - left
        low = min(low, left)
    return total, low
