"""Numba kernels of the vector engine: the game, episodes, observations and masks in batch.

A batch of ``N`` games is one int64 array ``S`` of shape ``(N, N_COLS)``: one row per game,
one column per field of :class:`greed_env.rules.State` that order-free rules use (seat fields
in blocks of :data:`MAX_PLAYERS`). The transition functions below follow
:mod:`greed_env.rules.game` field by field, including the fields a transition leaves alone,
so that a row and a reference state stay equal after every move and roll (tested in
``tests/test_vector_equivalence.py``). All dice knowledge comes from the tables of
:mod:`greed_env.vector.tables`.

Randomness: dice codes (uniform in ``[0, 6**num_dice)``) and uniforms in ``[0, 1)`` (the
random opponent's choice and the learner's seat) are read from per-game ring buffers that the
caller fills from its own ``numpy.random.Generator``. A game that runs out of either stops at
that point (status :data:`STARVED`) and is resumed after a refill, so results never depend on
thread scheduling or on how often the buffers are refilled.
"""

from __future__ import annotations

from numba import njit, prange

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

# observation slots (order of tables.OBS_SLOT_NAMES)
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
# the game (greed_env.rules.game, order-free rules)


@njit(cache=True)
def _fresh_index(S, i, cfg):
    if S[i, C_FRESH] != 0 and S[i, C_DICE] == cfg[CFG_NUM_DICE]:
        return 1
    return 0


@njit(cache=True)
def _needs_entry(S, i, p, cfg):
    if S[i, B_ENTERED + p] != 0 or cfg[CFG_ENTRY] <= 0:
        return False
    return cfg[CFG_ENTRY_UNTIL_MADE] != 0 or S[i, B_TURNS + p] <= 1


@njit(cache=True)
def can_bank(S, i, cfg):
    """``greed_env.rules.game.can_bank`` of row ``i``."""
    if S[i, C_PHASE] != PH_CONTINUE or S[i, C_TOTAL] <= 0 or S[i, C_BAR] >= 0:
        return False
    total = S[i, C_TOTAL]
    if total < cfg[CFG_MIN_BANK]:
        return False
    if _needs_entry(S, i, S[i, C_PLAYER], cfg):
        if cfg[CFG_ENTRY_ROLL_SCOPE] != 0:
            if S[i, C_ENTRY_MET] == 0:
                return False
        elif total < cfg[CFG_ENTRY]:
            return False
    return True


@njit(cache=True)
def _finish(S, i, winners):
    S[i, C_PHASE] = PH_OVER
    S[i, C_WINNERS] = winners


@njit(cache=True)
def _begin_turn(S, i, p, cfg):
    S[i, B_TURNS + p] += 1
    S[i, C_PHASE] = PH_ROLL
    S[i, C_PLAYER] = p
    S[i, C_TOTAL] = 0
    S[i, C_DICE] = cfg[CFG_NUM_DICE]
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = 1
    S[i, C_BAR] = -1
    S[i, C_ENTRY_MET] = 0


@njit(cache=True)
def new_game(S, i, n, first_player, cfg):
    """``new_game(rules, n, first_player)`` into row ``i`` (``first_player < 0``: None)."""
    for c in range(N_COLS):
        S[i, c] = 0
    S[i, C_NPLAYERS] = n
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = 1
    S[i, C_BAR] = -1
    entered = 1 if cfg[CFG_ENTRY] == 0 else 0
    for p in range(n):
        S[i, B_ENTERED + p] = entered
    if first_player >= 0:
        _begin_turn(S, i, first_player, cfg)
    elif cfg[CFG_FIRST_ROLL] == 0 or n == 1:
        _begin_turn(S, i, 0, cfg)
    else:
        S[i, C_CONTENDERS] = (1 << n) - 1
        S[i, C_PLAYER] = 0


@njit(cache=True)
def _resolve_end(S, i):
    n = S[i, C_NPLAYERS]
    top = S[i, B_SCORE]
    for p in range(1, n):
        if S[i, B_SCORE + p] > top:
            top = S[i, B_SCORE + p]
    winners = 0
    for p in range(n):
        if S[i, B_SCORE + p] == top:
            winners |= 1 << p
    _finish(S, i, winners)


@njit(cache=True)
def _next_turn(S, i, cfg):
    n = S[i, C_NPLAYERS]
    p = S[i, C_PLAYER]
    S[i, C_ROUNDS] += 1
    if cfg[CFG_ENTRY_UNTIL_MADE] == 0 and S[i, B_ENTERED + p] == 0:
        S[i, B_ENTERED + p] = 1
    S[i, C_TOTAL] = 0
    S[i, C_ROLL] = -1
    if S[i, C_ENDGAME] != 0:
        S[i, B_OWED + p] = 0
        for k in range(1, n + 1):
            q = (p + k) % n
            if S[i, B_OWED + q] != 0:
                _begin_turn(S, i, q, cfg)
                return
        _resolve_end(S, i)
        return
    if S[i, C_ROUNDS] >= cfg[CFG_HORIZON] * n:
        _finish(S, i, (1 << n) - 1)
        return
    _begin_turn(S, i, (p + 1) % n, cfg)


@njit(cache=True)
def end_turn(S, i, bust, cfg):
    """``_end_turn``: the turn ends without banking (a bust counts toward penalties)."""
    p = S[i, C_PLAYER]
    if bust:
        streak = S[i, B_STREAK + p] + 1
        after = cfg[CFG_PENALTY_AFTER]
        if after != 0 and streak >= after:
            S[i, B_SCORE + p] -= cfg[CFG_PENALTY]
            streak = 0
        S[i, B_STREAK + p] = streak
    _next_turn(S, i, cfg)


@njit(cache=True)
def _bank(S, i, cfg):
    p = S[i, C_PLAYER]
    n = S[i, C_NPLAYERS]
    S[i, B_SCORE + p] += S[i, C_TOTAL]
    S[i, B_ENTERED + p] = 1
    S[i, B_STREAK + p] = 0
    if S[i, B_SCORE + p] >= cfg[CFG_TARGET] and S[i, C_ENDGAME] == 0:
        if cfg[CFG_FINAL_ROUND] == 0 or n == 1:
            _finish(S, i, 1 << p)
            return
        S[i, C_ENDGAME] = 1
        for q in range(n):
            S[i, B_OWED + q] = 0 if q == p else 1
    _next_turn(S, i, cfg)


@njit(cache=True)
def _keep(S, i, score, used, wins, cfg):
    p = S[i, C_PLAYER]
    total = S[i, C_TOTAL] + score
    if wins != 0:
        S[i, C_TOTAL] = total
        _finish(S, i, 1 << p)
        return
    nd = cfg[CFG_NUM_DICE]
    dice = S[i, C_DICE] - used
    fresh = 0
    if dice == 0 and cfg[CFG_HOT_DICE] != 0:
        dice = nd
        fresh = 1
    if score >= cfg[CFG_ENTRY]:
        S[i, C_ENTRY_MET] = 1
    S[i, C_PHASE] = PH_CONTINUE
    S[i, C_TOTAL] = total
    S[i, C_DICE] = dice
    S[i, C_ROLL] = -1
    S[i, C_FRESH] = fresh
    S[i, C_BAR] = -1
    if dice == 0 and not can_bank(S, i, cfg):
        end_turn(S, i, False, cfg)


@njit(cache=True)
def apply_roll(S, i, code, cfg, roll_size, decode_start, decode, roll_counts, opt_count, opt_score):
    """``apply_roll`` of the roll that ``code`` decodes to (one die at the who-starts roll)."""
    ph = S[i, C_PHASE]
    if ph == PH_ORDER_ROLL:
        r = decode[decode_start[1] + code % 6]
        face = 1
        for f in range(6):
            if roll_counts[r, f] != 0:
                face = f + 1
        n = S[i, C_NPLAYERS]
        cont = S[i, C_CONTENDERS]
        k = S[i, C_NORDER]
        seat = -1
        seen = 0
        for q in range(n):
            if cont & (1 << q):
                if seen == k:
                    seat = q
                seen += 1
        S[i, B_ORDER + seat] = face
        k += 1
        S[i, C_NORDER] = k
        if k < seen:
            seen2 = 0
            for q in range(n):
                if cont & (1 << q):
                    if seen2 == k:
                        S[i, C_PLAYER] = q
                    seen2 += 1
            return
        top = 0
        for q in range(n):
            if cont & (1 << q) and S[i, B_ORDER + q] > top:
                top = S[i, B_ORDER + q]
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
            _begin_turn(S, i, first, cfg)
        else:
            S[i, C_CONTENDERS] = tied
            S[i, C_PLAYER] = first
        return
    k = S[i, C_DICE]
    r = decode[decode_start[k] + code % (6**k)]
    S[i, C_ROLL] = r
    S[i, C_PHASE] = PH_KEEP
    fi = _fresh_index(S, i, cfg)
    bar = S[i, C_BAR]
    cnt = opt_count[fi, r]
    if bar < 0:
        if cnt > 0:
            return
    else:
        for j in range(cnt):
            if opt_score[fi, r, j] > bar:
                return
    end_turn(S, i, True, cfg)


@njit(cache=True)
def legal_actions(S, i, cfg, opt_count, opt_action, opt_score, out):
    """Legal action ids of row ``i`` in ``legal_moves`` order into ``out``; returns the count."""
    ph = S[i, C_PHASE]
    m = 0
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, cfg)
        bar = S[i, C_BAR]
        for j in range(opt_count[fi, r]):
            if bar < 0 or opt_score[fi, r, j] > bar:
                out[m] = opt_action[fi, r, j]
                m += 1
        if cfg[CFG_REROLL_ALL] != 0:
            out[m] = cfg[CFG_ACT_REROLL]
            m += 1
        if cfg[CFG_VOLUNTARY_BUST] != 0:
            out[m] = cfg[CFG_ACT_BUST]
            m += 1
    elif ph == PH_CONTINUE:
        if can_bank(S, i, cfg):
            out[m] = cfg[CFG_ACT_BANK]
            m += 1
        if S[i, C_DICE] > 0:
            out[m] = cfg[CFG_ACT_ROLL]
            m += 1
    return m


@njit(cache=True)
def apply_action(S, i, a, cfg, opt_count, opt_action, opt_score, opt_used, opt_wins, opt_best):
    """Play catalog action ``a`` in row ``i``; an illegal one forfeits the turn as a bust
    (``greed_env.envs.common.forfeit``). Returns True if the action was illegal."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, cfg)
        bar = S[i, C_BAR]
        for j in range(opt_count[fi, r]):
            if opt_action[fi, r, j] == a and (bar < 0 or opt_score[fi, r, j] > bar):
                _keep(S, i, opt_score[fi, r, j], opt_used[fi, r, j], opt_wins[fi, r, j], cfg)
                return False
        if a == cfg[CFG_ACT_REROLL] and cfg[CFG_REROLL_ALL] != 0:
            given_up = S[i, C_TOTAL] + opt_best[fi, r]
            S[i, C_PHASE] = PH_ROLL
            S[i, C_TOTAL] = 0
            S[i, C_DICE] = cfg[CFG_NUM_DICE]
            S[i, C_ROLL] = -1
            S[i, C_FRESH] = 1
            S[i, C_BAR] = given_up if cfg[CFG_MUST_BEAT] != 0 else -1
            S[i, C_ENTRY_MET] = 0
            return False
        if a == cfg[CFG_ACT_BUST] and cfg[CFG_VOLUNTARY_BUST] != 0:
            end_turn(S, i, True, cfg)
            return False
        end_turn(S, i, True, cfg)
        return True
    if ph == PH_CONTINUE:
        if a == cfg[CFG_ACT_BANK] and can_bank(S, i, cfg):
            _bank(S, i, cfg)
            return False
        if a == cfg[CFG_ACT_ROLL] and S[i, C_DICE] > 0:
            S[i, C_PHASE] = PH_ROLL
            S[i, C_ROLL] = -1
            return False
        end_turn(S, i, True, cfg)
        return True
    return True


@njit(cache=True)
def threshold_action(
    S, i, bank_at, style, min_dice, cfg, opt_count, opt_action, opt_score, opt_used
):
    """``ThresholdBot(bank_at, keep=style, min_dice).act`` of row ``i`` as an action id."""
    ph = S[i, C_PHASE]
    if ph == PH_KEEP:
        r = S[i, C_ROLL]
        fi = _fresh_index(S, i, cfg)
        bar = S[i, C_BAR]
        best = -1
        k1 = 0
        k2 = 0
        for j in range(opt_count[fi, r]):
            sc = opt_score[fi, r, j]
            if bar >= 0 and sc <= bar:
                continue
            used = opt_used[fi, r, j]
            if style == KEEP_MOST:
                a1, a2 = used, sc
            elif style == KEEP_FEWEST:
                a1, a2 = -used, sc
            else:
                a1, a2 = sc, -used
            if best < 0 or a1 > k1 or (a1 == k1 and a2 > k2):
                best = j
                k1 = a1
                k2 = a2
        if best >= 0:
            return opt_action[fi, r, best]
        if cfg[CFG_VOLUNTARY_BUST] != 0:
            return cfg[CFG_ACT_BUST]
        return cfg[CFG_ACT_REROLL]
    if ph == PH_CONTINUE:
        p = S[i, C_PLAYER]
        if can_bank(S, i, cfg):
            need = bank_at
            if S[i, B_ENTERED + p] == 0 and cfg[CFG_ENTRY] > need:
                need = cfg[CFG_ENTRY]
            dice = S[i, C_DICE]
            if S[i, C_TOTAL] >= need or (dice > 0 and dice < min_dice):
                return cfg[CFG_ACT_BANK]
        if S[i, C_DICE] > 0:
            return cfg[CFG_ACT_ROLL]
        return cfg[CFG_ACT_BANK]
    return -1


# ------------------------------------------------------------------------------------------
# observations and masks


@njit(cache=True)
def _clip(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


@njit(cache=True)
def encode_row(S, i, me, cfg, oi, roll_counts, out, o):
    """``encode_observation(rules, state, me)`` of row ``i`` into ``out[o]``."""
    for c in range(out.shape[1]):
        out[o, c] = 0.0
    n = S[i, C_NPLAYERS]
    target = float(cfg[CFG_TARGET])
    nd = float(cfg[CFG_NUM_DICE])
    entry = cfg[CFG_ENTRY]
    out[o, oi[O_NUM_DICE]] = nd / 8.0
    out[o, oi[O_NUM_PLAYERS]] = n / 8.0
    out[o, oi[O_ENTRY]] = _clip(entry / target, 0.0, 1.0)
    out[o, oi[O_MIN_BANK]] = _clip(cfg[CFG_MIN_BANK] / target, 0.0, 1.0)
    phase = S[i, C_PHASE]
    if phase == PH_KEEP:
        r = S[i, C_ROLL]
        step = 1.0 / nd
        for f in range(6):
            x = 0.0
            for _ in range(roll_counts[r, f]):
                x += step
            out[o, oi[O_SHOWING] + f] = x
    acting = S[i, C_PLAYER] == me and phase != PH_OVER
    total = S[i, C_TOTAL]
    out[o, oi[O_MY_TURN]] = 1.0 if acting else 0.0
    out[o, oi[O_IN_HAND]] = S[i, C_DICE] / nd
    out[o, oi[O_FRESH]] = float(S[i, C_FRESH])
    out[o, oi[O_TURN_TOTAL]] = _clip(total / target, 0.0, 2.0)
    if acting and phase == PH_CONTINUE and can_bank(S, i, cfg):
        out[o, oi[O_CAN_BANK]] = 1.0
    out[o, oi[O_ENTRY_MET]] = float(S[i, C_ENTRY_MET])
    if acting and S[i, B_ENTERED + me] == 0 and entry > 0:
        out[o, oi[O_ENTRY_MISSING]] = _clip((entry - total) / target, 0.0, 1.0)
    my_score = S[i, B_SCORE + me]
    out[o, oi[O_TO_TARGET]] = _clip((target - my_score) / target, -1.0, 2.0)
    unbanked = total if acting else 0
    out[o, oi[O_TO_TARGET_AFTER]] = _clip((target - my_score - unbanked) / target, -1.0, 2.0)
    streak_scale = float(cfg[CFG_STREAK_SCALE])
    for k in range(min(n, MAX_PLAYERS)):
        p = (me + k) % n
        out[o, oi[O_PRESENT] + k] = 1.0
        out[o, oi[O_SCORE] + k] = _clip(S[i, B_SCORE + p] / target, -1.0, 2.0)
        if S[i, B_ENTERED + p] != 0:
            out[o, oi[O_ENTERED] + k] = 1.0
        if S[i, B_STREAK + p] != 0:
            out[o, oi[O_STREAK] + k] = _clip(S[i, B_STREAK + p] / streak_scale, 0.0, 1.0)
        if S[i, B_OWED + p] != 0:
            out[o, oi[O_OWED] + k] = 1.0
    out[o, oi[O_PHASE] + phase] = 1.0
    out[o, oi[O_FINAL]] = float(S[i, C_ENDGAME])
    if S[i, B_OWED + me] != 0:
        out[o, oi[O_ME_OWED]] = 1.0
    bar = S[i, C_BAR]
    if bar >= 0:
        out[o, oi[O_BAR_ACTIVE]] = 1.0
        out[o, oi[O_BAR]] = _clip(bar / target, 0.0, 2.0)
    out[o, oi[O_PROGRESS]] = _clip(S[i, C_ROUNDS] / (cfg[CFG_HORIZON] * n), 0.0, 1.0)


@njit(cache=True)
def mask_row(S, i, cfg, opt_count, opt_action, opt_score, mask, scratch):
    """The catalog mask of row ``i`` into ``mask[i]`` (all zeros at chance and terminal rows)."""
    for c in range(mask.shape[1]):
        mask[i, c] = 0
    m = legal_actions(S, i, cfg, opt_count, opt_action, opt_score, scratch)
    for j in range(m):
        mask[i, scratch[j]] = 1


# ------------------------------------------------------------------------------------------
# episodes: Solitaire (turn, race) and Duel


@njit(cache=True)
def _played(S, i):
    if S[i, C_PHASE] == PH_OVER:
        return S[i, B_TURNS]
    return S[i, B_TURNS] - 1


@njit(cache=True)
def _advance(S, E, i, ep, codes, unif, scratch, T):
    """Roll and let the opponents move until the learner decides or the episode stops."""
    (
        cfg,
        roll_size,
        roll_counts,
        decode_start,
        decode,
        opt_count,
        opt_action,
        opt_score,
        opt_used,
        opt_wins,
        opt_best,
    ) = T
    mode = ep[EP_MODE]
    bsize = codes.shape[1]
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
            apply_roll(
                S,
                i,
                codes[i, rd % bsize],
                cfg,
                roll_size,
                decode_start,
                decode,
                roll_counts,
                opt_count,
                opt_score,
            )
            continue
        if mode == MODE_DUEL and S[i, C_PLAYER] != E[i, E_SEAT]:
            if ep[EP_OPPONENT] == OPP_RANDOM:
                rd = E[i, E_U_READ]
                if rd == E[i, E_U_WRITE]:
                    return STARVED
                E[i, E_U_READ] = rd + 1
                m = legal_actions(S, i, cfg, opt_count, opt_action, opt_score, scratch)
                a = scratch[int(unif[i, rd % unif.shape[1]] * m)]
            else:
                a = threshold_action(
                    S,
                    i,
                    ep[EP_BANK_AT],
                    ep[EP_KEEP_STYLE],
                    ep[EP_MIN_DICE],
                    cfg,
                    opt_count,
                    opt_action,
                    opt_score,
                    opt_used,
                )
            apply_action(
                S, i, a, cfg, opt_count, opt_action, opt_score, opt_used, opt_wins, opt_best
            )
            continue
        return OK


@njit(cache=True)
def _init_episode(S, E, i, ep, unif):
    mode = ep[EP_MODE]
    if mode == MODE_DUEL:
        seat = ep[EP_FIXED_SEAT]
        if seat < 0:
            rd = E[i, E_U_READ]
            if rd == E[i, E_U_WRITE]:
                return STARVED
            E[i, E_U_READ] = rd + 1
            seat = int(unif[i, rd % unif.shape[1]] * ep[EP_NPLAYERS])
        E[i, E_SEAT] = seat
        return OK
    E[i, E_SEAT] = 0
    return OK


@njit(cache=True)
def _start_game(S, E, i, ep, cfg):
    mode = ep[EP_MODE]
    if mode == MODE_DUEL:
        new_game(S, i, ep[EP_NPLAYERS], -1, cfg)
    else:
        new_game(S, i, 1, -1, cfg)
        if mode == MODE_TURN:
            S[i, B_ENTERED] = 1


@njit(cache=True)
def _run(S, E, i, ep, fp, codes, unif, scratch, rewards, pending, final_obs, oi, T):
    """Carry game ``i`` through its pending stages; returns STARVED if it must wait for draws."""
    cfg = T[0]
    roll_counts = T[2]
    mode = ep[EP_MODE]
    if E[i, E_STAGE] == STAGE_ADVANCE:
        if _advance(S, E, i, ep, codes, unif, scratch, T) == STARVED:
            return STARVED
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
        if not (terminated or truncated):
            E[i, E_STAGE] = STAGE_IDLE
            return OK
        E[i, E_DONE] = 1
        encode_row(S, i, E[i, E_SEAT], cfg, oi, roll_counts, final_obs, i)
        if ep[EP_AUTORESET] == 0:
            E[i, E_STAGE] = STAGE_OVER
            return OK
        E[i, E_STAGE] = STAGE_INIT
    if E[i, E_STAGE] == STAGE_INIT:
        if _init_episode(S, E, i, ep, unif) == STARVED:
            return STARVED
        E[i, E_STEPS] = 0
        E[i, E_TURNS_DONE] = 0
        pending[i] = 0.0
        _start_game(S, E, i, ep, cfg)
        E[i, E_STAGE] = STAGE_RESET_ADVANCE
    if E[i, E_STAGE] == STAGE_RESET_ADVANCE:
        while True:
            if _advance(S, E, i, ep, codes, unif, scratch, T) == STARVED:
                return STARVED
            if mode == MODE_TURN:
                if S[i, C_PHASE] != PH_OVER and S[i, B_TURNS] == 1:
                    break
                _start_game(S, E, i, ep, cfg)
            elif mode == MODE_DUEL:
                if S[i, C_PHASE] != PH_OVER:
                    break
                _start_game(S, E, i, ep, cfg)
            else:
                played = _played(S, i)
                E[i, E_TURNS_DONE] = played
                pending[i] = -float(played)
                break
        E[i, E_STAGE] = STAGE_IDLE
    return OK


@njit(cache=True)
def _publish(S, E, i, oi, obs, mask, scratch, T):
    cfg = T[0]
    encode_row(S, i, E[i, E_SEAT], cfg, oi, T[2], obs, i)
    if E[i, E_STAGE] == STAGE_OVER:
        for c in range(mask.shape[1]):
            mask[i, c] = 0
    else:
        mask_row(S, i, cfg, T[5], T[6], T[7], mask, scratch)


@njit(cache=True)
def _step_one(
    i, S, E, actions, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
):
    rewards[i] = 0.0
    E[i, E_DONE] = 0
    E[i, E_ILLEGAL] = 0
    E[i, E_TERMINATED] = 0
    E[i, E_TRUNCATED] = 0
    st = E[i, E_STAGE]
    if st == STAGE_IDLE:
        if apply_action(S, i, actions[i], T[0], T[5], T[6], T[7], T[8], T[9], T[10]):
            E[i, E_ILLEGAL] = 1
            rewards[i] += fp[FP_ILLEGAL_REWARD]
        E[i, E_STEPS] += 1
        E[i, E_STAGE] = STAGE_ADVANCE
    elif st == STAGE_OVER:
        E[i, E_STAGE] = STAGE_INIT
    return _resume_one(
        i, S, E, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
    )


@njit(cache=True)
def _resume_one(
    i, S, E, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
):
    st = E[i, E_STAGE]
    if st == STAGE_IDLE or st == STAGE_OVER:  # noqa: SIM109 (numba-friendly)
        return 0
    row = scratch[i]
    if _run(S, E, i, ep, fp, codes, unif, row, rewards, pending, final_obs, oi, T) == STARVED:
        return 1
    _publish(S, E, i, oi, obs, mask, row, T)
    return 0


@njit(cache=True)
def step_serial(
    S, E, actions, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
):
    """Apply ``actions`` to every game, then roll and let opponents move (one thread).

    Returns the number of games that ran out of draws (resume them after a refill)."""
    starved = 0
    for i in range(S.shape[0]):
        starved += _step_one(
            i,
            S,
            E,
            actions,
            ep,
            fp,
            codes,
            unif,
            rewards,
            pending,
            obs,
            mask,
            final_obs,
            oi,
            scratch,
            T,
        )
    return starved


@njit(cache=True, parallel=True)
def step_parallel(
    S, E, actions, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
):
    """:func:`step_serial` over numba's thread pool."""
    starved = 0
    for i in prange(S.shape[0]):
        starved += _step_one(
            i,
            S,
            E,
            actions,
            ep,
            fp,
            codes,
            unif,
            rewards,
            pending,
            obs,
            mask,
            final_obs,
            oi,
            scratch,
            T,
        )
    return starved


@njit(cache=True)
def resume_serial(
    S, E, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
):
    """Continue every game with a pending stage (after a refill of the draw buffers)."""
    starved = 0
    for i in range(S.shape[0]):
        starved += _resume_one(
            i, S, E, ep, fp, codes, unif, rewards, pending, obs, mask, final_obs, oi, scratch, T
        )
    return starved


@njit(cache=True)
def start_all(S, E, reset_rows):
    """Mark the rows flagged in ``reset_rows`` for a new episode (run them with resume)."""
    for i in range(S.shape[0]):
        if reset_rows[i]:
            E[i, E_STAGE] = STAGE_INIT
            E[i, E_DONE] = 0
            E[i, E_TERMINATED] = 0
            E[i, E_TRUNCATED] = 0
            E[i, E_ILLEGAL] = 0


@njit(cache=True)
def random_actions(S, unif01, scratch, out, T):
    """A uniformly random legal action of every row (``legal_moves`` order, like RandomBot)."""
    for i in range(S.shape[0]):
        row = scratch[i]
        m = legal_actions(S, i, T[0], T[5], T[6], T[7], row)
        out[i] = row[int(unif01[i] * m)] if m > 0 else 0


# ------------------------------------------------------------------------------------------
# game-level batch operations (tests, tools)


@njit(cache=True)
def batch_new_games(S, rows, n, first_player, cfg):
    """``new_game`` into every row flagged in ``rows``."""
    for i in range(S.shape[0]):
        if rows[i]:
            new_game(S, i, n, first_player, cfg)


@njit(cache=True)
def batch_apply_rolls(S, rows, codes, T):
    """``apply_roll`` of ``codes[i]`` to every flagged row (each must be at a chance node)."""
    for i in range(S.shape[0]):
        if rows[i]:
            apply_roll(S, i, codes[i], T[0], T[1], T[3], T[4], T[2], T[5], T[7])


@njit(cache=True)
def batch_apply_actions(S, rows, actions, illegal, T):
    """Play ``actions[i]`` in every flagged row; ``illegal[i]`` says whether it forfeited."""
    for i in range(S.shape[0]):
        if rows[i]:
            illegal[i] = apply_action(S, i, actions[i], T[0], T[5], T[6], T[7], T[8], T[9], T[10])


@njit(cache=True)
def batch_masks(S, mask, scratch, T):
    """Catalog masks of every row."""
    for i in range(S.shape[0]):
        mask_row(S, i, T[0], T[5], T[6], T[7], mask, scratch[i])


@njit(cache=True)
def batch_observations(S, seats, oi, obs, T):
    """Observations of every row from ``seats[i]``."""
    for i in range(S.shape[0]):
        encode_row(S, i, seats[i], T[0], oi, T[2], obs, i)


@njit(cache=True)
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


@njit(cache=True)
def free_slots(E, read_col, write_col, size):
    """Total free ring slots and the fewest draws left in any row."""
    total = 0
    low = size
    for i in range(E.shape[0]):
        left = E[i, write_col] - E[i, read_col]
        total += size - left
        if left < low:
            low = left
    return total, low
