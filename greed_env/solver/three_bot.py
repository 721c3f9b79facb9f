"""The three-player equilibrium as a bot: ``optimal-3p``.

:class:`ThreePlayerBot` plays a table of objective ``3p`` (:mod:`greed_env.solver.three`):
at every decision the move of highest value to itself, the positions of the current turn
recomputed by one in-turn pass from the table (cached per turn). Ties between moves of equal
value are broken as the solver breaks them (bank before roll; the keep of fewest dice, then
fewest points), so the bot plays the very strategy whose values the table holds. At the few
turn starts where the equilibrium mixes two policies (``mix_state`` in the table), the bot
draws once per turn from its generator which of the two to play.

It plays three-player games only; any other number of seats is refused with one line.

>>> import numpy as np
>>> from greed_env.rules import preset, new_game, apply_roll
>>> r = preset("ten_thousand", target=1000)
>>> bot = ThreePlayerBot(r)
>>> s = apply_roll(r, new_game(r, 3, first_player=0), (1, 1, 1, 5, 2, 3))
>>> str(bot.act(r, s, np.random.default_rng(0)))
'keep:1,1,1,5'
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from greed_env.abilities import Abilities
from greed_env.rules.config import Rules, resolve_rules
from greed_env.rules.game import (
    BANK,
    FRESH,
    ROLL,
    ROLL_FIRST,
    SPLIT,
    Move,
    Phase,
    State,
    current_keep_options,
    legal_moves,
)
from greed_env.solver import three_kernels as k3
from greed_env.solver.model import RollTables, SolverError, roll_tables
from greed_env.solver.objectives import cap_eps, turn_arrays
from greed_env.solver.simulate import DuelCheck, self_play_check
from greed_env.solver.table import SolverTable, TableError
from greed_env.solver.three import (
    OBJECTIVE,
    TIE_BREAKS,
    check_three_supported,
    load_three_table,
    three_values,
)

__all__ = ["ThreePlayerBot", "simulate_three", "wrong_seats"]

_CACHE_SIZE = 512


def wrong_seats(n: int) -> str:
    """The one line that refuses a game of ``n`` seats ("" for three)."""
    return "" if n == 3 else f"optimal-3p plays three-player games only, not {n}"


class ThreePlayerBot:
    """Plays the three-player equilibrium of a ``3p`` table (Bot protocol).

    Args:
        rules: the rules (a preset name or :class:`Rules`).
        table: a solved ``3p`` table; by default :func:`greed_env.solver.three.load_three_table`
            (package data, the user cache, else solved now when the target is small enough).

    Raises:
        SolverError: rules the three-player solver does not model, or a table of another tie-break.
        TableError: no table, and the target too large to solve on demand.
    """

    def __init__(self, rules: Rules | str, table: SolverTable | None = None) -> None:
        self.rules = resolve_rules(rules)
        check_three_supported(self.rules)
        if table is None:
            table = load_three_table(self.rules)
        if table.objective != OBJECTIVE or table.rules.fingerprint != self.rules.fingerprint:
            raise TableError("the table does not match the bot's rules and objective 3p")
        if table.meta.get("tie_break", TIE_BREAKS[0]) != TIE_BREAKS[0]:
            raise SolverError(f"optimal-3p plays the {TIE_BREAKS[0]} tie-break, not {table.meta.get('tie_break')}")
        self.table = table
        self.name = "optimal-3p"
        self.description = "exact solver: each of three players maximises their own chance to win"
        self.tb: RollTables = roll_tables(self.rules, True)
        self.v = three_values(table)
        self.unit = self.tb.unit
        self.target = -(-self.rules.target // self.unit)
        self.thr = -(-self.rules.entry_threshold // self.unit)
        self.p_min = float(table.meta["p_min_bust"])
        self.eps = cap_eps(float(table.meta.get("tolerance", 1e-12)))
        self.mix = {
            tuple(int(x) for x in st): (float(p), float(xs[0]), float(xs[1]))
            for st, p, xs in zip(table.arrays["mix_state"], table.arrays["mix_prob"], table.arrays["mix_x"], strict=True)
        }
        self.fin = np.zeros((3, 1, 1))
        if self.rules.final_round:
            a = table.arrays
            self.fin = k3.final_round_table(
                int(table.meta["final_round_size"]), self.tb.kernel_tables(), self.p_min,
                a["last_eq2"], a["last_gt2"], a["last_eq3"], a["last_gt3"], 0,
            )
        self._cache: OrderedDict[Any, tuple[np.ndarray, np.ndarray, float, dict[str, np.ndarray]]] = OrderedDict()
        self._turn: tuple[Any, float | None] = (None, None)

    # -- the in-turn problem of the player to move ------------------------------------------

    def _u(self, points: int) -> int:
        if points % self.unit:
            raise SolverError(f"score {points} is not a multiple of the solver unit {self.unit}")
        return points // self.unit

    def _need(self, state: State) -> int:
        need = max(-(-self.rules.min_bank // self.unit), 1)
        if self.thr and not state.entered[state.player]:
            need = max(need, self.thr)
        return need

    def bust_value(self, state: State) -> float:
        """The equilibrium value to the player to move of a bust (0 in the final round)."""
        if state.endgame:
            return 0.0
        n = state.num_players
        p = state.player
        a, q, r = (self._u(state.scores[(p + k) % n]) for k in range(3))
        return float(self.v[q, r, a, 2])

    def _context(self, state: State, x: float, at_least: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Cap, bank values and legality of the player to move when a bust is worth ``x``."""
        p = state.player
        a = self._u(state.scores[p])
        need = self._need(state)
        if not state.endgame:
            q = self._u(state.scores[(p + 1) % 3])
            r = self._u(state.scores[(p + 2) % 3])
            margin = 0
            if self.rules.final_round:
                margin = int(k3.mover_margin(q, r, x, self.target, self.p_min, self.eps, self.fin, self.tb.max_keep)[0])
            margin = max(margin, at_least + 1 - (self.target - a))
            if self.rules.final_round and self.target + margin + self.tb.max_keep - min(q, r) >= self.fin.shape[1]:
                margin = self.fin.shape[1] - 1 - self.tb.max_keep + min(q, r) - self.target
            t_cap, bank_val, _b1, _b2, bank_ok = k3.three_bank_values(
                a, q, r, self.target, margin, self.thr, 0, self.rules.final_round, self.v, self.fin, self.tb.max_keep
            )
            if t_cap <= at_least:  # past the table's reach: banking wins as much as anything
                extra = at_least + 1 - t_cap
                bank_val = np.concatenate([bank_val, np.full(extra, bank_val[-1])])
                bank_ok = np.concatenate([bank_ok, np.ones(extra, dtype=bool)])
                t_cap = at_least + 1
            return int(t_cap), bank_val, bank_ok
        left = state.final_left
        others = [self._u(state.scores[q]) for q in range(3) if q != p]
        if len(left) == 1:  # the last turn: beat the best score, a tie shares
            best = max(others)
            tau = 1.0 / (1 + others.count(best))
            y = best - a
            t_cap = max(y + 1, need, at_least + 1)
            t = np.arange(t_cap + self.tb.max_keep + 1)
            return t_cap, np.where(t > y, 1.0, np.where(t == y, tau, 0.0)), t >= need
        last = left[1]
        s_fin = max(self._u(state.scores[q]) for q in range(3) if q not in left)
        y_c = s_fin - self._u(state.scores[last])
        a_ = self.table.arrays
        eq2, gt2, eq3, gt3 = a_["last_eq2"], a_["last_gt2"], a_["last_eq3"], a_["last_gt3"]
        t_cap = max(s_fin - a + int(k3.middle_margin(y_c, self.p_min, eq2, gt2)), need, at_least + 1)
        t = np.arange(t_cap + self.tb.max_keep + 1)
        bank_val = np.zeros(t.shape[0])
        for i, ti in enumerate(t):
            s1 = a + int(ti)
            if s1 == s_fin:
                e3, g3 = _read(eq3, y_c), _read(gt3, y_c)
                bank_val[i] = 0.5 * (1.0 - e3 - g3) + e3 / 3.0
            elif s1 > s_fin:
                y = y_c + s1 - s_fin
                e2, g2 = _read(eq2, y), _read(gt2, y)
                bank_val[i] = 1.0 - g2 - 0.5 * e2
        return t_cap, bank_val, t >= need

    def _arrays(self, state: State, t_units: int, x: float) -> tuple[np.ndarray, np.ndarray, float, dict[str, np.ndarray]]:
        key = (state.scores, state.entered, state.endgame, state.final_left, state.player, x)
        hit = self._cache.get(key)
        if hit is not None and hit[0].shape[0] > t_units + 1:
            self._cache.move_to_end(key)
            return hit
        t_cap, bank_val, bank_ok = self._context(state, x, t_units)
        arr = turn_arrays(self.rules, self.tb, t_cap, bank_val, bank_ok, x)
        out = (bank_val, bank_ok, x, arr)
        self._cache[key] = out
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return out

    # -- values and play ----------------------------------------------------------------------

    def check_seats(self, state: State) -> None:
        """Raise :class:`SolverError` (one line) unless the game has three seats."""
        why = wrong_seats(state.num_players)
        if why:
            raise SolverError(why)

    def _values(self, rules: Rules, state: State, x: float) -> list[tuple[Move, float, tuple[int, int]]]:
        moves = legal_moves(rules, state)
        t_now = self._u(state.turn_total)
        bank_val, _ok, _x, arr = self._arrays(state, t_now, x)
        c, r = arr["c"], arr["r"]
        n_dice = self.tb.num_dice
        out: list[tuple[Move, float, tuple[int, int]]] = []
        if state.phase == Phase.KEEP:
            opts = {o.taps: o for o in current_keep_options(rules, state)}
            for m in moves:
                if m.kind != "keep":
                    raise SolverError(f"no value for move {m}")
                o = opts[m.taps]
                left = state.dice - len(o.dice)
                if left == 0 and rules.hot_dice:
                    left = n_dice
                out.append((m, float(c[t_now + self._u(o.score), left]), (len(o.dice), o.score)))
        elif state.phase == Phase.CONTINUE:
            for m in moves:
                if m == BANK:
                    out.append((m, float(bank_val[t_now]), (-1, 0)))
                elif m == ROLL:
                    out.append((m, float(r[t_now, state.dice]), (0, 0)))
                else:
                    raise SolverError(f"no value for move {m}")
        else:
            out = [(m, 0.0, (0, 0)) for m in moves]
        return out

    def move_values(self, rules: Rules, state: State) -> list[tuple[Move, float]]:
        """Every legal move with its value: the mover's probability of winning (a shared win
        counting ``1/k``) when it plays the move and everyone follows the equilibrium after."""
        self.check_seats(state)
        if not legal_moves(rules, state):
            return []
        if state.phase not in (Phase.KEEP, Phase.CONTINUE):
            return [(m, 0.0) for m in legal_moves(rules, state)]
        return [(m, v) for m, v, _ in self._values(rules, state, self.bust_value(state))]

    def start_values(self, state: State) -> tuple[float, float, float]:
        """The equilibrium values to seats 0, 1, 2 at the start of the turn of ``state.player``
        (its scores and entry; not in the final round)."""
        self.check_seats(state)
        p = state.player
        w = self.v[tuple(self._u(state.scores[(p + k) % 3]) for k in range(3))]
        out = [0.0, 0.0, 0.0]
        for k in range(3):
            out[(p + k) % 3] = float(w[k])
        return out[0], out[1], out[2]

    def _play_x(self, state: State, rng: np.random.Generator) -> float:
        """The bust value whose optimal pass is the policy played this turn: the equilibrium's,
        or at a mixing turn start one of its two policies, drawn once per turn."""
        x = self.bust_value(state)
        if state.endgame:
            return x
        p = state.player
        key = tuple(self._u(state.scores[(p + k) % 3]) for k in range(3))
        mixed = self.mix.get(key)
        if mixed is None:
            return x
        turn = (state.rounds, p, state.scores)
        if self._turn[0] != turn:
            prob, x_low, x_high = mixed
            self._turn = (turn, x_high if rng.random() < prob else x_low)
        return float(self._turn[1])  # type: ignore[arg-type]

    def abilities(self) -> Abilities:
        """The rules of its table only, three-player games only."""
        return Abilities(rules=self.rules, min_players=3, max_players=3)

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """The legal move of best value; ties as the solver breaks them (module docstring)."""
        self.check_seats(state)
        if rules.fingerprint != self.rules.fingerprint:
            raise SolverError("optimal-3p was solved for other rules")
        moves = legal_moves(rules, state)
        if not moves:
            raise ValueError("no legal moves: the position is a chance node or the game is over")
        if state.phase == Phase.START:
            return FRESH
        if state.phase == Phase.SPLIT:
            return SPLIT
        if state.phase == Phase.ORDER_CHOICE:
            return ROLL_FIRST
        if state.phase not in (Phase.KEEP, Phase.CONTINUE):
            return moves[0]
        vals = self._values(rules, state, self._play_x(state, rng))
        best = max(range(len(vals)), key=lambda i: (vals[i][1], -vals[i][2][0], -vals[i][2][1], -i))
        return vals[best][0]


def _read(p: np.ndarray, y: int) -> float:
    return float(p[y]) if y < p.shape[0] else 0.0


def simulate_three(table: SolverTable, games: int, rng: np.random.Generator) -> DuelCheck:
    """Play ``games`` three-player games, seat 0 first, every seat by ``ThreePlayerBot(table)``;
    seat 0's mean share of the pot against the table's headline (its z-score).

    Raises:
        SolverError: the table is not a ``3p`` table, or ``games`` is below 2.
    """
    if table.objective != OBJECTIVE:
        raise SolverError(f"a three-player simulation needs a 3p table, got {table.objective!r}")
    if not isinstance(games, int) or games < 2:
        raise SolverError(f"games must be an integer >= 2, got {games!r}")
    return self_play_check(table, ThreePlayerBot(table.rules, table), 3, games, rng)
