"""Optimal play from a solved table, and the value of every legal move for advice.

The table holds values at the start of a turn; the positions inside the current turn are
recomputed on demand (one in-turn pass of the compiled kernel per distinct turn context,
cached) and each legal move of :func:`greed_env.rules.legal_moves` is valued by the position
it leads to.

Move values are in the objective's own terms: expected points of the turn (``turn``; with a
bust penalty, plus the relative value of the streak the turn ends in), probability of coming in
(``entry``), expected number of turns still to play counting the current one (``race``, lower
is better) and the mover's probability of winning (``duel``).

>>> import numpy as np
>>> from greed_env.rules import preset, new_game, apply_roll
>>> r = preset("farkle5")
>>> bot = OptimalBot(r, "entry")
>>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 5, 2, 3))
>>> [(str(m), round(v, 3)) for m, v in bot.move_values(r, s)][:2]
[('keep:5', 0.205), ('keep:1', 0.23)]
>>> str(bot.act(r, s, np.random.default_rng(0)))
'keep:1'
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from greed_env.abilities import Abilities, NativePlay
from greed_env.rules.config import Rules, resolve_rules
from greed_env.rules.game import (
    BANK,
    BUST,
    FRESH,
    REROLL_ALL,
    ROLL,
    ROLL_FIRST,
    SPLIT,
    Move,
    Phase,
    State,
    current_keep_options,
    legal_moves,
)
from greed_env.rules.scoring import best_keep_score
from greed_env.solver import kernels, rounds
from greed_env.solver.model import RollTables, SolverError, needs_full_tables, roll_tables
from greed_env.solver.objectives import cap_eps, tail_gain, turn_arrays
from greed_env.solver.table import SolverTable

__all__ = ["OptimalBot", "TurnContext", "turn_context"]

_CACHE_SIZE = 512


@dataclass(frozen=True)
class TurnContext:
    """Everything the in-turn pass needs for one player's turn (totals in units).

    ``bank_val``/``bank_ok``: value and legality of banking at each turn total; ``x``: value of
    a bust; ``t_cap``: first total of the tail policy; ``tail``: tail gain per dice count;
    ``sense``: +1 when higher values are better, -1 for the race (expected turns); ``win``: the
    value of a roll that wins the game at once (``six_kind_wins``): 1 for a probability of
    winning, 0 turns left for the race.
    """

    t_cap: int
    bank_val: np.ndarray
    bank_ok: np.ndarray
    x: float
    tail: np.ndarray
    sense: int = 1
    offset: float = 0.0
    win: float = 1.0


def _units(points: int, unit: int) -> int:
    if points % unit:
        raise SolverError(f"score {points} is not a multiple of the solver unit {unit}")
    return points // unit


def turn_context(table: SolverTable, rules: Rules, state: State, at_least: int = 0) -> TurnContext:
    """The in-turn problem of ``state.player`` under ``table``'s objective.

    ``at_least``: the cap is raised so that turn totals up to this (units) are covered.
    """
    tb = roll_tables(rules, needs_full_tables(rules, table.objective))
    unit = tb.unit
    p = state.player
    zeros = np.zeros(tb.num_dice + 1)
    obj = table.objective
    need_entry = rules.entry_threshold > 0 and not state.entered[p]
    need = max(rules.min_bank, rules.entry_threshold if need_entry else 0)
    need_u = max(1, -(-need // unit))
    if obj == "turn":
        t_cap = max(table.meta["cap_points"] // unit, at_least + 1)
        size = t_cap + tb.max_keep + 1
        t = np.arange(size)
        xs = table.arrays["bust_value"]
        x = float(xs[min(state.streaks[p], len(xs) - 1)])
        return TurnContext(t_cap, t * float(unit), t >= need_u, x, tail_gain(tb))
    if obj == "entry":
        goal = int(table.meta["goal_points"]) // unit
        t_cap = max(goal, at_least + 1)
        size = t_cap + tb.max_keep + 1
        ok = np.arange(size) >= goal
        return TurnContext(t_cap, ok.astype(float), ok, 0.0, zeros)
    if obj == "race":
        return _race_context(table, rules, tb, state, at_least, need_u)
    if obj == "duel":
        return _duel_context(table, rules, tb, state, at_least, need_u)
    raise SolverError(f"unknown objective {obj!r}")


def _race_context(table: SolverTable, rules: Rules, tb: RollTables, state: State, at_least: int, need_u: int) -> TurnContext:
    unit = tb.unit
    p = state.player
    target = -(-rules.target // unit)
    r = table.arrays["expected_turns"]
    b = _units(state.scores[p], unit)
    zeros = np.zeros(tb.num_dice + 1)
    if r.ndim == 1:
        t_cap, bank_val, bank_ok = kernels.race_bank_values(b, target, need_u, r, tb.max_keep)
        x = -float(r[b])
    else:
        lo = table.meta["floor_points"] // unit
        k = r.shape[1]
        i = max(b - lo, 0)
        t_cap = max(target - b, need_u, 1)
        size = t_cap + tb.max_keep + 1
        t = np.arange(size)
        idx = np.minimum(i + t, r.shape[0] - 1)
        bank_val = np.where(b + t < target, -r[idx, 0], 0.0)
        bank_ok = t >= need_u
        s = state.streaks[p]
        x = -float(r[i, s + 1]) if s + 1 < k else -float(r[max(i - rules.bust_penalty // unit, 0), 0])
    if at_least >= t_cap:
        extra = at_least + 1 - t_cap
        bank_val = np.concatenate([bank_val, np.full(extra, bank_val[-1])])
        bank_ok = np.concatenate([bank_ok, np.ones(extra, dtype=bool)])
        t_cap = at_least + 1
    return TurnContext(int(t_cap), np.asarray(bank_val, float), np.asarray(bank_ok, bool), x, zeros, -1, 1.0, 0.0)


def _duel_context(table: SolverTable, rules: Rules, tb: RollTables, state: State, at_least: int, need_u: int) -> TurnContext:
    if state.num_players != 2:
        raise SolverError("the duel table plays two-player games only")
    unit = tb.unit
    p = state.player
    o = 1 - p
    target = -(-rules.target // unit)
    a = _units(state.scores[p], unit)
    b = _units(state.scores[o], unit)
    v = table.arrays["win"]
    zeros = np.zeros(tb.num_dice + 1)
    if state.endgame:
        beat = max(state.scores[q] for q in range(state.num_players) if q != p)
        xx = _units(beat, unit) - a
        t_cap = max(xx + 1, need_u, at_least + 1)
        size = t_cap + tb.max_keep + 1
        t = np.arange(size)
        bank_val = np.where(t > xx, 1.0, np.where(t == xx, 0.5, 0.0))
        return TurnContext(t_cap, bank_val, t >= need_u, 0.0, zeros)
    if rules.rounds and rules.target == 0:
        k = rounds.turns_left(rules, state.rounds)
        t_cap, bank_val, bank_ok, x = rounds.no_target_context(
            k, int(state.entered[p]), int(state.entered[o]), a - b, int(table.meta["span_units"]), need_u, v,
            False, tb.max_keep, at_least + 1,
        )
        return TurnContext(int(t_cap), bank_val, bank_ok, float(x), zeros)
    if v.ndim == 4:
        lo = table.meta["floor_points"] // unit
        k = v.shape[2]
        i, j = max(a - lo, 0), max(b - lo, 0)
        sa, sb = state.streaks[p], state.streaks[o]
        t_cap = max(target - a, need_u, 1, at_least + 1)
        size = t_cap + tb.max_keep + 1
        t = np.arange(size)
        idx = np.minimum(i + t, v.shape[1] - 1)
        bank_val = np.where(a + t < target, 1.0 - v[j, idx, sb, 0], 1.0)
        if sa + 1 < k:
            x = 1.0 - float(v[j, i, sb, sa + 1])
        else:
            x = 1.0 - float(v[j, max(i - rules.bust_penalty // unit, 0), sb, 0])
        return TurnContext(t_cap, bank_val, t >= need_u, x, zeros)
    g_in = table.arrays.get("final_entered", np.zeros(1))
    g_out = table.arrays.get("final_not_entered", np.zeros(1))
    if v.ndim == 3:
        k = rounds.turns_left(rules, state.rounds)
        eps = cap_eps(float(table.meta.get("tolerance", 1e-12)))
        past = rules.final_round_past_rounds
        margin = int(rounds.rounds_margin(
            k, a, b, target, rules.final_round, table.meta["p_min_bust"], eps, v, g_in, g_out, past
        ))
        t_cap, bank_val, bank_ok = rounds.rounds_bank_values(
            k, a, b, target, margin, need_u, rules.final_round, v, g_in, g_out, tb.max_keep, at_least + 1,
            past,
        )
        return TurnContext(int(t_cap), bank_val, bank_ok, float(rounds.bust_value(k, a, b, v)), zeros)
    margin = 0
    if rules.final_round:
        gfin = g_out if b == 0 else g_in
        eps = cap_eps(float(table.meta.get("tolerance", 1e-12)))
        margin = int(kernels.duel_margin(b, target, float(v[b, a]), table.meta["p_min_bust"], gfin, eps))
    margin = max(margin, at_least + 1 - (target - a))
    t_cap, bank_val, bank_ok = kernels.duel_bank_values(
        a, b, target, margin, need_u, rules.final_round, v, g_in, g_out, tb.max_keep
    )
    if t_cap <= at_least:
        extra = at_least + 1 - t_cap
        bank_val = np.concatenate([bank_val, np.ones(extra)])
        bank_ok = np.concatenate([bank_ok, np.ones(extra, dtype=bool)])
        t_cap = at_least + 1
    return TurnContext(int(t_cap), bank_val, bank_ok, 1.0 - float(v[b, a]), zeros)


def _context_key(objective: str, rules: Rules, state: State) -> tuple[Any, ...]:
    """What the in-turn problem of ``state.player`` depends on, per objective."""
    p = state.player
    streaks = state.streaks if rules.bust_penalty_after and rules.bust_penalty else ()
    if objective == "turn":
        return (state.entered[p], streaks[p] if streaks else 0)
    if objective == "entry":
        return (state.entered[p],)
    if objective == "race":
        return (state.scores[p], state.entered[p], streaks[p] if streaks else 0)
    return (state.scores, state.entered, streaks, state.endgame, p, state.rounds if rules.rounds else 0)


class OptimalBot:
    """Plays the moves of highest value under a solved table (Bot protocol).

    Args:
        rules: the rule set (a preset name or :class:`Rules`).
        objective: ``duel`` for two-player games (default), ``turn``, ``entry`` or ``race``.
        table: a solved table; by default :func:`greed_env.solver.load_table` (package data,
            user cache, else solved now).

    Ties are broken by the order of :func:`greed_env.rules.legal_moves`.
    """

    def __init__(self, rules: Rules | str, objective: str = "duel", table: SolverTable | None = None) -> None:
        self.rules = resolve_rules(rules)
        if objective == "3p":
            raise SolverError("the three-player table is played by optimal-3p (greed_env.solver.three_bot)")
        if table is None:
            from greed_env.solver import load_table

            table = load_table(self.rules, objective)
        if table.objective != objective or table.rules.fingerprint != self.rules.fingerprint:
            raise SolverError("the table does not match the bot's rules and objective")
        self.table = table
        self.objective = objective
        self.name = f"optimal-{objective}"
        self._cache: OrderedDict[Any, tuple[TurnContext, dict[str, np.ndarray]]] = OrderedDict()
        if self.rules.carry_over:
            from greed_env.solver import carry

            self._carry = carry.CarryEvaluator(self.rules, table)
        else:
            self._carry = None

    def abilities(self) -> Abilities:
        """The rules of its table only; two seats for the duel (its table holds two-player
        games), whose table the numba kernels play (:class:`~greed_env.abilities.NativePlay`)."""
        duel = self.objective == "duel"
        return Abilities(
            rules=self.rules,
            min_players=2 if duel else 1,
            max_players=2 if duel else None,
            native=NativePlay("optimal", optimal=self) if duel else None,
        )

    def _arrays(self, rules: Rules, state: State, t_units: int) -> tuple[TurnContext, dict[str, np.ndarray]]:
        key = _context_key(self.objective, rules, state)
        hit = self._cache.get(key)
        if hit is not None and hit[0].t_cap > t_units:
            self._cache.move_to_end(key)
            return hit
        ctx = turn_context(self.table, rules, state, at_least=t_units)
        tb = roll_tables(rules, needs_full_tables(rules, self.objective))
        arr = turn_arrays(rules, tb, ctx.t_cap, ctx.bank_val, ctx.bank_ok, ctx.x, ctx.tail, ctx.win)
        self._cache[key] = (ctx, arr)
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return ctx, arr

    def move_values(self, rules: Rules, state: State) -> list[tuple[Move, float]]:
        """Every legal move with its value (see the module docstring for the units)."""
        moves = legal_moves(rules, state)
        if not moves:
            return []
        if self._carry is not None:
            return self._carry.move_values(state, moves)
        if state.phase in (Phase.SPLIT, Phase.ORDER_CHOICE, Phase.START):
            return [(m, 0.0) for m in moves]
        tb = roll_tables(rules, needs_full_tables(rules, self.objective))
        unit = tb.unit
        t_now = _units(state.turn_total, unit)
        ctx, arr = self._arrays(rules, state, t_now)
        c, r, w = arr["c"], arr["r"], arr["w"]
        n_dice = tb.num_dice
        out: list[tuple[Move, float]] = []
        if state.phase == Phase.KEEP:
            opts = {o.taps: o for o in current_keep_options(rules, state)}
            for m in moves:
                if m.kind == "keep":
                    o = opts[m.taps]
                    left = state.dice - len(o.dice)
                    if left == 0 and rules.hot_dice:
                        left = n_dice
                    val = float(c[t_now + _units(o.score, unit), left])
                elif m == REROLL_ALL:
                    bar = t_now + _units(best_keep_score(rules, state.roll, state.carry, state.fresh), unit)
                    val = float(w[bar])
                elif m == BUST:
                    val = ctx.x
                else:
                    raise SolverError(f"no value for move {m}")
                out.append((m, val))
        elif state.phase == Phase.CONTINUE:
            for m in moves:
                if m == BANK:
                    val = float(ctx.bank_val[t_now])
                elif m == ROLL:
                    val = float(r[t_now, state.dice])
                else:
                    raise SolverError(f"no value for move {m}")
                out.append((m, val))
        else:
            return [(m, 0.0) for m in moves]
        if ctx.sense < 0:
            out = [(m, ctx.offset - v) for m, v in out]
        return out

    def turn_start_value(self, rules: Rules, state: State) -> float:
        """Value, in move-value units, of a turn about to start for ``state.player`` (the
        scores, streaks and entry of ``state``; its phase and turn total are ignored)."""
        probe = state._replace(phase=Phase.CONTINUE, turn_total=0, dice=rules.num_dice, roll=(),
                               fresh=True, bar=-1)
        if self._carry is not None:
            return self._carry.turn_start_value(probe)
        ctx, arr = self._arrays(rules, probe, 0)
        value = float(arr["r"][0, rules.num_dice])
        return ctx.offset - value if ctx.sense < 0 else value

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """The legal move of best value (first in legal-move order on ties)."""
        moves = legal_moves(rules, state)
        if not moves:
            raise ValueError("no legal moves: the position is a chance node or the game is over")
        if state.phase == Phase.START:
            return FRESH
        if state.phase == Phase.SPLIT and self._carry is None:
            return SPLIT
        if state.phase == Phase.ORDER_CHOICE and self._carry is None:
            return ROLL_FIRST
        vals = self.move_values(rules, state)
        sense = -1 if self.objective == "race" else 1
        best = max(range(len(vals)), key=lambda i: (sense * vals[i][1], -i))
        return vals[best][0]

