"""Numba kernels of the vector engine: the game, episodes, observations and masks in batch.

A batch of ``N`` games is one int64 array ``S`` of shape ``(N, N_COLS)``: one row per game,
one column per field of :class:`greed_env.rules.State` (seat fields and the ordered
finishers, roll-off order and roll-off scores in blocks of :data:`MAX_PLAYERS`; the
carry-over as a dice-state id; not the piggyback offer). The transition functions below
follow :mod:`greed_env.rules.game` field by field, including the fields a transition leaves
alone, so that a row and a reference state stay equal after every move and roll (tested in
``tests/test_vector_equivalence.py`` and ``tests/test_vector_progressive.py``). All dice
knowledge comes from the tables of :mod:`greed_env.vector.tables`: the kernels look up keep
options, never score dice.

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
CFG_EXACT = 21
CFG_CARRY = 22
CFG_SPLIT_VOTE = 23
CFG_ROLLOFF_HORIZON = 24
CFG_ACT_FOR_NOTHING = 25
CFG_ACT_SPLIT = 26
CFG_ACT_REFUSE = 27
CFG_ACT_FIRST = 28
CFG_ACT_LAST = 29
CFG_TRIPPN = 30
CFG_ROUNDS = 31  # a fixed number of rounds (0: none)
CFG_SIX_KIND = 32  # a roll showing six of a kind wins at once
CFG_SCALE = 33  # points scale of the observation (the target, or a nominal one without)
CFG_SIZE = 34

# layout of the flat table: sizes and offsets of the sub-tables
T_NROLLS = 34
T_NDS = 35
T_OFF_OBS = 36
T_OFF_COUNTS = 37
T_OFF_RSTART = 38
T_OFF_MC = 39
T_OFF_SBASE = 40  # per dice state: start of its block in the row index (-1: none yet)
T_OFF_OSTART = 41
T_OFF_SCORING = 42
T_OFF_BEST = 43
T_OFF_OPT = 44
T_OFF_CARRY = 45
T_OFF_DSDICE = 46
T_OFF_RINDEX = 47  # (dice state, roll) -> option row, -1 where not built (Trippn)
T_OFF_REQ = 48  # (dice state, roll id) pairs of missing rows the kernels asked for
T_NREQ = 49
T_CAPREQ = 50
T_OFF_FOUR = 51  # face counts (4 bits per face) of every 4-digit base-6 code
T_OFF_POW6 = 52
T_HEADER = 53
OPT_ACTION = 0
OPT_SCORE = 1
OPT_USED = 2
OPT_WINS = 3
OPT_NEXT = 4
OPT_FIELDS = 5
CARRY_FIELDS = 18  # working set size of each face, open fill flags, working pair flags

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
C_DSTATE = 14  # carry-over rules: dice state (dice, carry-over); 0: nothing working
C_FOR_NOTHING = 15
C_NFIN = 16  # finishers so far (exact target), in order at B_FIN
C_VOTES = 17
C_NROLLOFF = 18  # roll-off order length at B_ROLLOFF (0: no roll-off)
C_NRSCORES = 19  # roll-off scores of this round so far, at B_RSCORE
C_RROUND = 20
B_SCORE = 21
B_ENTERED = B_SCORE + MAX_PLAYERS
B_STREAK = B_ENTERED + MAX_PLAYERS
B_TURNS = B_STREAK + MAX_PLAYERS
B_OWED = B_TURNS + MAX_PLAYERS
B_ORDER = B_OWED + MAX_PLAYERS
B_FIN = B_ORDER + MAX_PLAYERS
B_ROLLOFF = B_FIN + MAX_PLAYERS
B_RSCORE = B_ROLLOFF + MAX_PLAYERS
N_COLS = B_RSCORE + MAX_PLAYERS

PH_ORDER_ROLL = 0
PH_START = 1
PH_ROLL = 2
PH_KEEP = 3
PH_CONTINUE = 4
PH_SPLIT = 5
PH_ORDER_CHOICE = 6
PH_OVER = 7

MODE_TURN = 0
MODE_RACE = 1
MODE_DUEL = 2

OPP_RANDOM = 0
OPP_THRESHOLD = 1
OPP_OPTIMAL = 2  # the solver's duel policy from greed_env.vector.optimal arrays
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
EP_OPT_UNIT = 10  # OPP_OPTIMAL: solver unit (points), target in units, deepest deficit
EP_OPT_TARGET = 11
EP_OPT_DEFICIT = 12
EP_SIZE = 13
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
MISSING = 2  # apply_roll: the roll's option row is not built yet (asked for in the table)

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
O_WENT_OUT = 26
O_WORKING_SET = 27
O_OPEN_FILL = 28
O_WORKING_PAIRS = 29
O_IN_ROLLOFF = 30
O_ROLLOFF_BEST = 31
O_ROLLOFF_ROUND = 32
O_SPLIT_VOTES = 33


# ------------------------------------------------------------------------------------------
# table access


@kernel
def _fresh_index(S, i, tab):
    if S[i, C_FRESH] != 0 and S[i, C_DICE] == tab[CFG_NUM_DICE]:
        return 1
    return 0


@kernel
def _dice_state(S, i, tab):
    return S[i, C_DSTATE] if tab[CFG_CARRY] != 0 else _fresh_index(S, i, tab)


@kernel
def _row_of(tab, d, r):
    """The option row of roll ``r`` in dice state ``d`` (-1: not built)."""
    base = tab[tab[T_OFF_SBASE] + d]
    if base < 0:
        return -1
    if tab[CFG_CARRY] != 0:
        r -= tab[tab[T_OFF_RSTART] + tab[tab[T_OFF_DSDICE] + d]]
    return tab[tab[T_OFF_RINDEX] + base + r]


@kernel
def _table_row(S, i, tab):
    """The option row of the roll showing in row ``i`` (its dice state and roll id)."""
    return _row_of(tab, _dice_state(S, i, tab), S[i, C_ROLL])


@kernel
def _ask_for_row(tab, d, r):
    """Ask the caller to build row (``d``, ``r``); a request lost to a full list or to a race
    between threads is asked again when the game resumes."""
    k = tab[T_NREQ]
    if k < tab[T_CAPREQ]:
        tab[tab[T_OFF_REQ] + 2 * k] = d
        tab[tab[T_OFF_REQ] + 2 * k + 1] = r
        tab[T_NREQ] = k + 1


@kernel
def _n_options(tab, row):
    ost = tab[T_OFF_OSTART]
    return tab[ost + row + 1] - tab[ost + row]


@kernel
def _records(tab, row):
    """Position in ``tab`` of the first option record of table row ``row``."""
    return tab[T_OFF_OPT] + tab[tab[T_OFF_OSTART] + row] * OPT_FIELDS


@kernel
def _field(tab, rec, j, field):
    """``field`` of option ``j`` of the row whose records start at ``rec``."""
    return tab[rec + j * OPT_FIELDS + field]


@kernel
def decode_roll(code, k, tab):
    """Roll id of dice code ``code`` thrown with ``k`` dice: the base-6 digits of
    ``code % 6**k`` are the faces (``greed_env.rules.sample_roll``), ranked among the sorted
    rolls of ``k`` dice in ``combinations_with_replacement`` order.

    The face counts (4 bits per face) of four digits at a time come from the 1,296-entry
    table of 4-digit codes, whose missing leading digits count as 1s and are taken off again.
    A sorted roll is preceded by the rolls that, with the same dice of every lower face, hold
    more dice of face ``f``: multisets of the ``m - c - 1`` other dice over faces ``f..6``."""
    c = code
    high = tab[tab[T_OFF_POW6] + k]
    if c >= high:
        c %= high
    four = tab[T_OFF_FOUR]
    if k <= 4:
        packed = tab[four + c] - (4 - k)
    else:
        packed = tab[four + c % 1296] + tab[four + c // 1296] - (8 - k)
    mc = tab[T_OFF_MC]
    rank = 0
    m = k
    for f in range(6):
        n = (packed >> (4 * f)) & 15
        if m > n:
            rank += tab[mc + (6 - f) * 9 + (m - n - 1)]
        m -= n
    return tab[tab[T_OFF_RSTART] + k] + rank


# ------------------------------------------------------------------------------------------
# the game (greed_env.rules.game)


@kernel
def _in_rolloff(S, i):
    return S[i, C_NROLLOFF] > 0 and S[i, C_PHASE] != PH_OVER


@kernel
def _can_reroll(S, i, tab):
    """Reroll-all is legal: CFG_REROLL_ALL 2 after any roll, 1 on the turn's first roll only
    (no points yet, a full set rolled, no reroll made); never in a roll-off."""
    mode = tab[CFG_REROLL_ALL]
    if mode == 0 or _in_rolloff(S, i):
        return False
    if mode == 2:
        return True
    return S[i, C_TOTAL] == 0 and S[i, C_BAR] < 0 and S[i, C_DICE] == tab[CFG_NUM_DICE]


@kernel
def _at_target(S, i, tab):
    """Exact target, outside a roll-off: banked plus unbanked points equal the target."""
    if tab[CFG_EXACT] == 0 or _in_rolloff(S, i):
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
    if S[i, C_PHASE] != PH_CONTINUE or _in_rolloff(S, i):
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
    if tab[CFG_ROUNDS] != 0 and S[i, C_ROUNDS] >= tab[CFG_ROUNDS] * n:
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
    if _in_rolloff(S, i):
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
    rec = _records(tab, row)
    p = S[i, C_PLAYER]
    score = _field(tab, rec, j, OPT_SCORE)
    total = S[i, C_TOTAL] + score
    dice = S[i, C_DICE] - _field(tab, rec, j, OPT_USED)
    fresh = 0
    if dice == 0 and tab[CFG_HOT_DICE] != 0:
        dice = tab[CFG_NUM_DICE]
        fresh = 1
    if tab[CFG_CARRY] != 0:
        S[i, C_DSTATE] = _field(tab, rec, j, OPT_NEXT)
    if score >= tab[CFG_ENTRY]:
        S[i, C_ENTRY_MET] = 1
    S[i, C_PHASE] = PH_CONTINUE
    S[i, C_TOTAL] = total
    S[i, C_DICE] = dice
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = fresh
    S[i, C_BAR] = -1
    if _in_rolloff(S, i):
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
    d = _dice_state(S, i, tab)
    row = _row_of(tab, d, r)
    if row < 0:
        _ask_for_row(tab, d, r)
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
    cnt = _n_options(tab, row)
    rec = _records(tab, row)
    if bar < 0:
        if cnt > 0:
            return OK
    else:
        for j in range(cnt):
            if _field(tab, rec, j, OPT_SCORE) > bar:
                return OK
    end_turn(S, i, True, tab)
    return OK


@kernel
def _nth_action(S, i, tab, nth, ids):
    """Walk the legal actions of row ``i`` in ``legal_moves`` order: with ``ids`` None the
    ``nth`` one is returned (-1 if none; ``nth < 0``: the count), else each is flagged in
    ``ids[i]`` (the mask)."""
    ph = S[i, C_PHASE]
    m = 0
    if ph == PH_KEEP:
        row = _table_row(S, i, tab)
        rec = _records(tab, row)
        bar = S[i, C_BAR]
        for j in range(_n_options(tab, row)):
            if bar < 0 or _field(tab, rec, j, OPT_SCORE) > bar:
                a = _field(tab, rec, j, OPT_ACTION)
                if ids is not None:
                    ids[i, a] = 1
                elif m == nth:
                    return a
                m += 1
        if not _in_rolloff(S, i):
            for flag, a in (
                (CFG_REROLL_ALL, tab[CFG_ACT_REROLL]),
                (CFG_VOLUNTARY_BUST, tab[CFG_ACT_BUST]),
            ):
                if tab[flag] != 0 and (flag != CFG_REROLL_ALL or _can_reroll(S, i, tab)):
                    if ids is not None:
                        ids[i, a] = 1
                    elif m == nth:
                        return a
                    m += 1
        return m if nth < 0 else -1
    first = -1
    second = -1
    if ph == PH_CONTINUE:
        if _in_rolloff(S, i):
            first = tab[CFG_ACT_ROLL]
        elif _at_target(S, i, tab):
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
            ids[i, first] = 1
        elif nth == 0:
            return first
        m += 1
    if second >= 0:
        if ids is not None:
            ids[i, second] = 1
        elif nth == 1:
            return second
        m += 1
    return m if nth < 0 else -1


@kernel
def legal_action(S, i, tab, nth):
    """The ``nth`` legal action of row ``i`` in ``legal_moves`` order (``nth < 0``: the count
    of legal actions is returned instead)."""
    return _nth_action(S, i, tab, nth, None)


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
    (``greed_env.envs.common.forfeit``: in the split vote and the roll-off order choice the
    first legal move is played instead). Returns True if the action was illegal."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        row = _table_row(S, i, tab)
        rec = _records(tab, row)
        bar = S[i, C_BAR]
        for j in range(_n_options(tab, row)):
            if _field(tab, rec, j, OPT_ACTION) == a and (bar < 0 or _field(tab, rec, j, OPT_SCORE) > bar):
                _keep(S, i, row, j, tab)
                return False
        rolloff = _in_rolloff(S, i)
        if a == tab[CFG_ACT_REROLL] and _can_reroll(S, i, tab):
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
        if _in_rolloff(S, i):
            legal = a == tab[CFG_ACT_ROLL]
        elif _at_target(S, i, tab):
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


@kernel
def threshold_action(S, i, tab, bank_at, style, min_dice):
    """``ThresholdBot(bank_at, keep=style, min_dice).act`` of row ``i`` as an action id."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        row = _table_row(S, i, tab)
        rec = _records(tab, row)
        bar = S[i, C_BAR]
        best = -1
        k1 = 0
        k2 = 0
        for j in range(_n_options(tab, row)):
            sc = _field(tab, rec, j, OPT_SCORE)
            if bar >= 0 and sc <= bar:
                continue
            used = _field(tab, rec, j, OPT_USED)
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
            return _field(tab, rec, best, OPT_ACTION)
        if tab[CFG_VOLUNTARY_BUST] != 0:
            return tab[CFG_ACT_BUST]
        return tab[CFG_ACT_REROLL]
    if ph == PH_CONTINUE:
        if _in_rolloff(S, i):
            return tab[CFG_ACT_ROLL]
        if _at_target(S, i, tab):
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
    row = _table_row(S, i, tab)
    rec = _records(tab, row)
    bar = S[i, C_BAR]
    dice = S[i, C_DICE]
    best = -1
    best_v = 0.0
    for j in range(_n_options(tab, row)):
        sc = _field(tab, rec, j, OPT_SCORE)
        if bar >= 0 and sc <= bar:
            continue
        left = dice - _field(tab, rec, j, OPT_USED)
        if left == 0 and tab[CFG_HOT_DICE] != 0:
            left = nd
        v = oval[off + min(t + sc // unit, rows - 1) * width + left]
        if best < 0 or v > best_v:
            best = _field(tab, rec, j, OPT_ACTION)
            best_v = v
    if not _in_rolloff(S, i):
        if _can_reroll(S, i, tab):
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
    target = float(tab[CFG_SCALE])
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
    span = tab[CFG_ROUNDS] if tab[CFG_ROUNDS] != 0 else tab[CFG_HORIZON]
    out[o, tab[oi + O_PROGRESS]] = _clip(S[i, C_ROUNDS] / (span * n), 0.0, 1.0)
    if tab[CFG_EXACT] != 0:
        out[o, tab[oi + O_EXACT]] = 1.0
        went_out = tab[oi + O_WENT_OUT]
        for k in range(S[i, C_NFIN]):
            out[o, went_out + (S[i, B_FIN + k] - me) % n] = 1.0
    if tab[CFG_CARRY] != 0:
        c = tab[T_OFF_CARRY] + S[i, C_DSTATE] * CARRY_FIELDS
        for f in range(6):
            if tab[c + f] != 0:
                out[o, tab[oi + O_WORKING_SET] + f] = _clip(tab[c + f] / nd, 0.0, 1.0)
            if tab[c + 6 + f] != 0:
                out[o, tab[oi + O_OPEN_FILL] + f] = 1.0
            if tab[c + 12 + f] != 0:
                out[o, tab[oi + O_WORKING_PAIRS] + f] = 1.0
    if _in_rolloff(S, i):
        out[o, tab[oi + O_IN_ROLLOFF]] = 1.0
        out[o, tab[oi + O_ROLLOFF_ROUND]] = _clip(
            S[i, C_RROUND] / tab[CFG_ROLLOFF_HORIZON], 0.0, 1.0
        )
    if S[i, C_NRSCORES] > 0:
        best = S[i, B_RSCORE]
        for k in range(1, S[i, C_NRSCORES]):
            best = max(best, S[i, B_RSCORE + k])
        out[o, tab[oi + O_ROLLOFF_BEST]] = _clip(best / target, 0.0, 2.0)
    if phase == PH_SPLIT:
        out[o, tab[oi + O_SPLIT_VOTES]] = S[i, C_VOTES] / n


@kernel
def mask_row(S, i, tab, mask):
    """The catalog mask of row ``i`` into ``mask[i]`` (all zeros at chance and terminal rows)."""
    for c in range(mask.shape[1]):
        mask[i, c] = 0
    _nth_action(S, i, tab, -1, mask)


# ------------------------------------------------------------------------------------------
# episodes: Solitaire (turn, race) and Duel


@kernel
def _played(S, i):
    if S[i, C_PHASE] == PH_OVER:
        return S[i, B_TURNS]
    return S[i, B_TURNS] - 1


@kernel
def _advance(S, E, i, tab, ep, oidx, oval, oflag, codes, unif):
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
def _run(S, E, i, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, final_obs):
    """Carry game ``i`` through its pending stages; returns STARVED if it must wait for draws."""
    mode = ep[EP_MODE]
    if E[i, E_STAGE] == STAGE_ADVANCE:
        if _advance(S, E, i, tab, ep, oidx, oval, oflag, codes, unif) == STARVED:
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
                played = _played(S, i)
                E[i, E_TURNS_DONE] = played
                pending[i] = -float(played)
                break
        E[i, E_STAGE] = STAGE_IDLE
    return OK


@kernel
def _publish(S, E, i, tab, obs, mask):
    encode_row(S, i, E[i, E_SEAT], tab, obs, i)
    if E[i, E_STAGE] == STAGE_OVER:  # next-step autoreset: the terminal mask is all ones
        for c in range(mask.shape[1]):
            mask[i, c] = 1
    else:
        mask_row(S, i, tab, mask)


@kernel
def step_range(
    lo, hi, S, E, actions, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, obs, mask, final_obs
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
        if _run(S, E, i, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, final_obs) == STARVED:
            starved += 1
        else:
            _publish(S, E, i, tab, obs, mask)
    return starved


@kernel
def resume_range(lo, hi, S, E, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, obs, mask, final_obs):
    """Continue games ``lo .. hi - 1`` that have a pending stage (after a refill)."""
    starved = 0
    for i in range(lo, hi):
        st = E[i, E_STAGE]
        if st == STAGE_IDLE or st == STAGE_OVER:  # noqa: SIM109 (numba-friendly)
            continue
        if _run(S, E, i, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, final_obs) == STARVED:
            starved += 1
        else:
            _publish(S, E, i, tab, obs, mask)
    return starved


@njit(cache=True, parallel=True)
def step_parallel(
    chunk, S, E, actions, tab, ep, fp, oidx, oval, oflag, codes, unif, rewards, pending, obs, mask, final_obs
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
def batch_optimal_actions(S, tab, ep, oidx, oval, oflag, out):
    """:func:`optimal_action` of every row (-1 where nothing is to decide)."""
    for i in range(S.shape[0]):
        out[i] = optimal_action(S, i, tab, ep, oidx, oval, oflag)



@kernel
def batch_new_games(S, rows, n, first_player, tab):
    """``new_game`` into every row flagged in ``rows``."""
    for i in range(S.shape[0]):
        if rows[i]:
            new_game(S, i, n, first_player, tab)


@kernel
def batch_apply_rolls(S, rows, codes, tab):
    """``apply_roll`` of ``codes[i]`` to every flagged row (each must be at a chance node);
    rows whose option row is missing stay flagged and untouched, the others are unflagged.
    Returns how many stay flagged."""
    missing = 0
    for i in range(S.shape[0]):
        if rows[i]:
            if apply_roll(S, i, codes[i], tab) == OK:
                rows[i] = False
            else:
                missing += 1
    return missing


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


@kernel
def batch_decode(codes, k, tab, out):
    """Roll ids of the dice codes ``codes`` thrown with ``k`` dice (tests)."""
    for j in range(codes.shape[0]):
        out[j] = decode_roll(codes[j], k, tab)


@kernel
def batch_threshold_actions(S, rows, bank_at, style, min_dice, tab, out):
    """``threshold_action`` of every flagged row (-1 elsewhere; tests, tools)."""
    for i in range(S.shape[0]):
        out[i] = threshold_action(S, i, tab, bank_at, style, min_dice) if rows[i] else -1
