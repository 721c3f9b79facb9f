"""The two-player game of a fixed number of rounds, solved exactly by backward induction.

With ``rules.rounds = N`` a two-player game lasts at most ``2N`` turns, so the win probability
is a finite-horizon problem: ``V[k, a, b]`` is the probability that the player about to start a
turn wins, with ``k`` turns left in the game counting this one (``k = 2N - turns played``), a
banked score of ``a`` against the opponent's ``b`` (units of the roll tables; 0 means not on
the board when there is an entry threshold). Every turn moves to layer ``k - 1``, so there are
no cycles and no iteration: each value is one in-turn pass of
:func:`greed_env.solver.kernels.turn_dp` over the layer below, and layers are solved from
``k = 1`` up.

What banking ``t`` points (score ``s = a + t``) is worth to the mover:

* on the last turn (``k = 1``): 1 if ``s > b``, 0.5 on a tie (the pot is shared), else 0; a
  bust compares ``a`` with ``b`` the same way;
* reaching the target (``s >= target``) with turns left: the opponent's final turn, which must
  beat ``s`` (``1 - g[s - b]``, :func:`~greed_env.solver.kernels.final_turn_values`), or a win
  without a final round;
* otherwise ``1 - V[k - 1, b, s]``; a bust is worth ``1 - V[k - 1, b, a]``.

Above the target the mover banks at once from the first total where the opponent's final turn
is so unlikely to succeed that rolling on cannot pay (the bound of
:func:`~greed_env.solver.kernels.duel_margin`: a roll busts with probability at least
``p_min``); where that bound is void the cap stops where the final turn succeeds with
probability below ``eps``, which bounds the error (``meta["cap_error_bound"]``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit, prange

from greed_env import progress
from greed_env.progress import counter
from greed_env.rules.config import Rules
from greed_env.solver import kernels
from greed_env.solver.model import SolverError, check_supported, needs_full_tables, roll_tables
from greed_env.solver.objectives import DEFAULT_TOL, cap_eps, final_round_caps, reroll_mode
from greed_env.solver.table import SolverTable

__all__ = [
    "bust_value",
    "check_rounds_supported",
    "rounds_bank_values",
    "rounds_duel_solve",
    "rounds_margin",
    "solve_rounds_duel",
    "turns_left",
]


@njit(cache=True)
def _compare(a: int, b: int) -> float:
    if a > b:
        return 1.0
    if a == b:
        return 0.5
    return 0.0


@njit(cache=True)
def bust_value(k: int, a: int, b: int, v: np.ndarray) -> float:
    """Value for the mover at ``a`` against ``b`` of a turn that ends without banking."""
    if k == 1:
        return _compare(a, b)
    return 1.0 - v[k - 1, b, a]


@njit(cache=True)
def rounds_bank_values(k: int, a: int, b: int, target: int, margin: int, need: int, final_round: bool, v: np.ndarray, g_in: np.ndarray, g_out: np.ndarray, max_keep: int, min_cap: int, past: bool = False) -> Any:
    """Cap ``T`` and the bank values / legality of the mover at ``a`` against ``b`` with ``k``
    turns left (units). ``margin``: with a final round, totals from ``target - a + margin`` on
    bank at once; ``min_cap``: the smallest cap wanted (to cover a turn total already held);
    ``past``: the final round is played past the last round (``final_round_past_rounds``), so
    reaching the target on the last turn gives the opponent a final turn too."""
    last = k == 1 and not (past and final_round)
    if last:
        t_cap = max(b - a + 1, need, 1, min_cap)
    elif k == 1:
        t_cap = max(b - a + 1, target - a + margin, need, 1, min_cap)
    else:
        t_cap = max(target - a + (margin if final_round else 0), need, 1, min_cap)
    size = t_cap + max_keep + 1
    bank_val = np.empty(size)
    bank_ok = np.empty(size, dtype=np.bool_)
    gfin = g_out if b == 0 else g_in
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= need
        sc = a + t
        if last or (k == 1 and sc < target):
            bank_val[t] = _compare(sc, b)
        elif sc < target:
            bank_val[t] = 1.0 - v[k - 1, b, sc]
        elif final_round:
            xx = sc - b
            bank_val[t] = 1.0 - (gfin[xx] if xx < gfin.shape[0] else 0.0)
        else:
            bank_val[t] = 1.0
    return t_cap, bank_val, bank_ok


@njit(cache=True)
def rounds_margin(k: int, a: int, b: int, target: int, final_round: bool, p_min: float, eps: float, v: np.ndarray, g_in: np.ndarray, g_out: np.ndarray, past: bool = False) -> int:
    """Excess over the target from which banking is provably optimal (see the module text)."""
    if (k == 1 and not past) or not final_round:
        return 0
    gfin = g_out if b == 0 else g_in
    return kernels.duel_margin(b, target, 1.0 - bust_value(k, a, b, v), p_min, gfin, eps)


@njit(cache=True)
def _rounds_value(k: int, a: int, b: int, v: np.ndarray, target: int, thr: int, min_bank: int, final_round: bool, past: bool, g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int) -> float:
    num_dice = tab[0]
    need = max(min_bank, thr if a == 0 else 0)
    margin = rounds_margin(k, a, b, target, final_round, p_min, eps, v, g_in, g_out, past)
    t_cap, bank_val, bank_ok = rounds_bank_values(k, a, b, target, margin, need, final_round, v, g_in, g_out, tab[10], 0, past)
    size = bank_val.shape[0]
    shape = size * (num_dice + 1)
    c = np.empty(shape)
    d = np.empty(shape)
    r = np.empty(shape)
    dr = np.empty(shape)
    w = np.zeros(size)
    dw = np.zeros(size)
    x = bust_value(k, a, b, v)
    kernels.turn_dp(t_cap, tab, bank_val, bank_ok, np.zeros(num_dice + 1), x, reroll, c, d, r, dr, w, dw)
    return c[num_dice]


@njit(cache=True, parallel=True, nogil=True)
def rounds_duel_solve(turns: int, target: int, thr: int, min_bank: int, final_round: bool, past: bool, g_in: np.ndarray, g_out: np.ndarray, p_min: float, eps: float, tab: tuple, reroll: int, prog: np.ndarray) -> Any:
    """``V[k, a, b]`` for ``k = 1 .. turns`` (layer 0 unused), both scores below the target.

    Every pair is solved in every layer, also those no game reaches (at ``k = turns`` only
    ``(0, 0)`` is), so that advice on any position is right. ``prog`` (out): layers done and
    their number.
    """
    v = np.zeros((turns + 1, target, target))
    prog[0] = 0.0
    prog[1] = turns
    for k in range(1, turns + 1):
        for q in prange(target * target):
            a = q // target
            b = q % target
            v[k, a, b] = _rounds_value(k, a, b, v, target, thr, min_bank, final_round, past, g_in, g_out, p_min, eps, tab, reroll)
        prog[0] = k
    return v


@njit(cache=True)
def _after_turn(k: int, e_opp: int, e_me: int, s: int, span: int, v: np.ndarray, exit_mode: bool) -> float:
    """No target: the value for the mover of a turn that ends with the mover ``s`` units ahead
    (the opponent, on the board or not as ``e_opp``, moves next with ``k - 1`` turns left).

    Value mode: 1, 1/2 or 0 on the last turn; else ``1 - V[k - 1, e_opp, e_me, -s]``, a lead
    beyond ``span`` read as a win and a deficit beyond it as a loss. Exit mode: 1 where the
    lead leaves the window with turns still to play, else the chance that it leaves it later
    (both players trying: the bound on what the window's edge can cost)."""
    if exit_mode:
        if k == 1:
            return 0.0
        if s > span or s < -span:
            return 1.0
        return v[k - 1, e_opp, e_me, span - s]
    if k == 1:
        return _compare(s, 0)
    if s > span:
        return 1.0
    if s < -span:
        return 0.0
    return 1.0 - v[k - 1, e_opp, e_me, span - s]


@njit(cache=True)
def no_target_context(k: int, ea: int, eb: int, d: int, span: int, need: int, v: np.ndarray, exit_mode: bool, max_keep: int, min_cap: int) -> Any:
    """No target: cap, bank values / legality and bust value of the mover ``d`` units ahead
    (``ea``, ``eb``: mover and opponent on the board) with ``k`` turns left. ``min_cap``: the
    smallest cap wanted (to cover a turn total already held)."""
    edge = 0 if (k == 1 and not exit_mode) else span
    t_cap = max(edge - d + 1, need, 1, min_cap)
    size = t_cap + max_keep + 1
    bank_val = np.empty(size)
    bank_ok = np.empty(size, dtype=np.bool_)
    for t in range(size):
        bank_ok[t] = t >= 1 and t >= need
        bank_val[t] = _after_turn(k, eb, 1, d + t, span, v, exit_mode)
    return t_cap, bank_val, bank_ok, _after_turn(k, eb, ea, d, span, v, exit_mode)


@njit(cache=True)
def _no_target_value(k: int, ea: int, eb: int, d: int, span: int, thr: int, min_bank: int, v: np.ndarray, exit_mode: bool, tab: tuple, reroll: int) -> float:
    if exit_mode and k == 1:
        return 0.0  # on the last turn the window's edge changes nothing
    num_dice = tab[0]
    need = max(min_bank, thr if ea == 0 else 0)
    t_cap, bank_val, bank_ok, x = no_target_context(k, ea, eb, d, span, need, v, exit_mode, tab[10], 0)
    size = bank_val.shape[0]
    shape = size * (num_dice + 1)
    c = np.empty(shape)
    dd = np.empty(shape)
    r = np.empty(shape)
    dr = np.empty(shape)
    w = np.zeros(size)
    dw = np.zeros(size)
    kernels.turn_dp(t_cap, tab, bank_val, bank_ok, np.zeros(num_dice + 1), x, reroll, c, dd, r, dr, w, dw)
    return c[num_dice]


@njit(cache=True, parallel=True, nogil=True)
def no_target_solve(turns: int, span: int, thr: int, min_bank: int, exit_mode: bool, tab: tuple, reroll: int, prog: np.ndarray) -> Any:
    """``V[k, ea, eb, span + d]`` for ``k = 1 .. turns``: the mover ``d`` units ahead (``|d| <=
    span``), ``ea``/``eb`` whether the mover / opponent are on the board (with ``thr`` 0 both
    always are; a player not on the board has score 0, so ``ea = 0`` means ``d <= 0`` and
    ``eb = 0`` means ``d >= 0``). Exit mode: the chance that the lead leaves the window, both
    players trying. ``prog`` (out): layers done and their number."""
    width = 2 * span + 1
    v = np.zeros((turns + 1, 2, 2, width))
    prog[0] = 0.0
    prog[1] = turns
    for k in range(1, turns + 1):
        for q in prange(4 * width):
            e = q // width
            ea = e // 2
            eb = e % 2
            d = q % width - span
            if thr == 0 and e != 3:
                continue
            if (ea == 0 and d > 0) or (eb == 0 and d < 0):
                continue
            v[k, ea, eb, d + span] = _no_target_value(k, ea, eb, d, span, thr, min_bank, v, exit_mode, tab, reroll)
        prog[0] = k
    return v


def turns_left(rules: Rules, turns_played: int, num_players: int = 2) -> int:
    """Turns left in a game of ``rules.rounds`` rounds, counting the one being played."""
    return rules.rounds * num_players - turns_played


def check_rounds_supported(rules: Rules) -> None:
    """Raise :class:`SolverError` naming what the rounds solver does not model."""
    check_supported(rules, "duel")
    bad = []
    if rules.rounds <= 0:
        bad.append("rules without a fixed number of rounds (use the duel solver)")
    if rules.exact_target:
        bad.append("exact_target=True")
    if rules.bust_penalty_after and rules.bust_penalty:
        bad.append("a bust penalty")
    if rules.tie_rule != "shared":
        bad.append(f"tie_rule={rules.tie_rule!r}")
    if rules.max_players < 2:
        bad.append("rules not played by two players")
    if bad:
        raise SolverError("the rounds solver does not model " + ", ".join(bad))


def solve_rounds_duel(rules: Rules, tol: float = DEFAULT_TOL, levels: Any = None) -> SolverTable:
    """Probability that the player to move wins a two-player game of ``rules.rounds`` rounds.

    ``tol`` sets the cap error bound above the target (``cap_eps(tol)``); there is no
    iteration to converge. ``levels``: where the layers run
    (:class:`greed_env.solver.distributed.ClusterLevels`: a Ray cluster); None: here.
    """
    check_rounds_supported(rules)
    if rules.target == 0:
        if levels is not None:
            raise SolverError(
                "a game of rounds without a target is solved in a window of leads that doubles until it "
                "holds, not on a cluster: solve it without --address"
            )
        return _solve_no_target(rules, tol)
    t0 = time.perf_counter()
    tb = roll_tables(rules, needs_full_tables(rules, "duel"))
    unit = tb.unit
    target = -(-rules.target // unit)
    thr = -(-rules.entry_threshold // unit)
    mb = -(-rules.min_bank // unit)
    p_min = float(min(tb.p_bust[1:]))
    eps = cap_eps(tol)
    g_in, g_out = final_round_caps(rules, tb, target, p_min, eps)
    turns = 2 * rules.rounds
    layers = rounds_duel_solve if levels is None else levels.rounds
    v = layers(
        turns, target, thr, mb, rules.final_round, rules.final_round_past_rounds, g_in, g_out, p_min, eps,
        tb.kernel_tables(), reroll_mode(rules), counter(),
    )
    arrays: dict[str, np.ndarray] = {"win": v}
    if rules.final_round:
        arrays.update(final_entered=g_in, final_not_entered=g_out)
    head = float(v[turns, 0, 0])
    meta: dict[str, Any] = {
        "unit": unit,
        "tolerance": tol,
        "rounds": rules.rounds,
        "turns": turns,
        "headline": head,
        "headline_label": f"first player's win probability at the start ({rules.rounds} rounds)",
        "p_min_bust": p_min,
        "cap_error_bound": eps if rules.final_round else 0.0,
        "full_tables": tb.full,
        "elapsed_s": time.perf_counter() - t0,
    }
    return SolverTable(rules, "duel", arrays, meta)


FIRST_SPAN_POINTS = 10_000
"""The first window tried for a game without a target (points of lead each way); it doubles
until the chance of leaving it is below the tolerance."""


def _solve_no_target(rules: Rules, tol: float) -> SolverTable:
    """A game of ``rules.rounds`` rounds without a target: the outcome depends only on the lead
    ``d = a - b`` and who is on the board, so ``win[k, ea, eb, span + d]`` holds it.

    The scores have no bound, so the lead is solved in a window ``|d| <= span``, a lead beyond
    it read as a win (and a deficit as a loss). The two games differ only on paths where the
    lead leaves the window with turns to play, so the values differ by at most the chance of
    such a path under the players' best effort to make one (an exit pass of the same kernel,
    both players trying); the window doubles from :data:`FIRST_SPAN_POINTS` until that chance
    is at most ``tol`` from the start (``meta["window_error_bound"]``).
    """
    t0 = time.perf_counter()
    tb = roll_tables(rules, needs_full_tables(rules, "duel"))
    unit = tb.unit
    thr = -(-rules.entry_threshold // unit)
    mb = -(-rules.min_bank // unit)
    turns = 2 * rules.rounds
    e0 = 1 if thr == 0 else 0
    reroll = reroll_mode(rules)
    span = -(-FIRST_SPAN_POINTS // unit)
    while True:
        # the exit pass and the value pass cost the same at one window
        progress.plan((f"window of {span * unit:,} points of lead: the chance of leaving it", 1.0),
                      ("win probabilities", 1.0))
        ex = no_target_solve(turns, span, thr, mb, True, tb.kernel_tables(0.0), reroll, counter())
        bound = float(ex[turns, e0, e0, span])
        if bound <= tol:
            progress.advance()
            break
        if span * unit >= 200 * FIRST_SPAN_POINTS:
            raise SolverError(
                f"no window up to {span * unit:,} points of lead keeps the chance of leaving it "
                f"below {tol:g} (it is {bound:.3g})"
            )
        span *= 2
    v = no_target_solve(turns, span, thr, mb, False, tb.kernel_tables(), reroll, counter())
    head = float(v[turns, e0, e0, span])
    meta: dict[str, Any] = {
        "unit": unit,
        "tolerance": tol,
        "rounds": rules.rounds,
        "turns": turns,
        "span_units": span,
        "window_points": span * unit,
        "window_error_bound": bound,
        "headline": head,
        "headline_label": f"first player's win probability at the start ({rules.rounds} rounds, no target)",
        "p_min_bust": float(min(tb.p_bust[1:])),
        "full_tables": tb.full,
        "elapsed_s": time.perf_counter() - t0,
    }
    return SolverTable(rules, "duel", {"win": v}, meta)
