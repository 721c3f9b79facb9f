"""The exact solver as a teacher: the value of every legal action at the vector engine's positions.

Teacher-assisted training (``greed_env.train.kickstart``) adds to PPO's loss a distillation
term toward the solver's move distribution at the states the student itself visits. This
module computes that distribution, in batches, for rows of the vector engine's game array
(:mod:`greed_env.vector`):

* :class:`TeacherLabeller` values each legal action of each row exactly as
  :meth:`greed_env.solver.optimal_bot.OptimalBot.move_values` does (tested equal on sampled
  positions), but from the engine's own option records (catalog action, points, next dice
  state) and the in-turn value arrays of the mover's *turn context*, so it needs no
  reference-rules call per position. Rows are grouped by context first (the score pair and
  the mover, for a duel), so each context's in-turn pass runs once per batch: under
  carry-over rules (Progressive) that pass is the costly part (about 9 ms per duel score pair).
* :func:`teacher_distribution` turns the values of one position into the teacher's
  probabilities: a softmax of ``(value - best) / temperature``; at temperature 0 the moves of
  best value share the mass evenly (ties split).
* :class:`TurnValueArrays` holds the in-turn value arrays of a turn that only an offline job
  can solve (Trippn: its dice-state tables take 17 GB), saved once by :func:`solve_turn_arrays`
  so that training reads a file of a few tens of MB instead of the tables; :func:`turn_teacher`
  is the turn teacher from the table or from such a file (solved first when missing).
* :func:`teacher_starts` draws positions along the teacher's own games, for exploring starts.

Values are in each objective's own terms, higher is better: points of the turn (``turn``),
minus the expected number of turns (``race``), the mover's win probability (``duel``). Rows
whose context cannot be valued (phases other than keep and continue without a solved table,
such as a roll-off under Trippn) are reported as not labelled.
"""

from __future__ import annotations

import math
import multiprocessing
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.files import atomic_write_with
from greed_env.rules import (
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    is_chance,
    is_over,
    new_game,
    sample_roll,
)
from greed_env.rules.scoring import Carry
from greed_env.solver.carry import (
    CarryEvaluator,
    canonical_carry,
    carry_tables,
    exact_turn_context,
    run_dp,
)
from greed_env.solver.model import needs_full_tables, roll_tables
from greed_env.solver.objectives import turn_arrays
from greed_env.solver.optimal_bot import OptimalBot, turn_context
from greed_env.solver.table import SolverTable
from greed_env.spaces.catalog import ActionCatalog
from greed_env.vector import kernels as K
from greed_env.vector.engine import row_fields
from greed_env.vector.tables import VectorTables, vector_tables

__all__ = [
    "TEACHER_OBJECTIVES",
    "TIE_TOLERANCE",
    "TeacherLabeller",
    "TeacherLabels",
    "TurnValueArrays",
    "display_values",
    "encode_dice_state",
    "save_turn_arrays",
    "solve_turn_arrays",
    "teacher_distribution",
    "teacher_starts",
    "turn_teacher",
]

TEACHER_OBJECTIVES = ("turn", "race", "duel")
"""Objectives a teacher can be built from (the solver bots ``optimal-turn``, ``optimal-race``
and ``optimal-duel``)."""

TIE_TOLERANCE = 1e-9
"""Two move values closer than this (relative to the best, at least absolute) are a tie."""

_MIN_PROB = 1e-6
"""Teacher probabilities below this are dropped (and the rest renormalised) when labels are
packed: at the temperatures used they carry nothing a student could learn from."""


def teacher_distribution(values: np.ndarray, temperature: float) -> np.ndarray:
    """The teacher's probabilities of moves with ``values`` (higher is better).

    ``temperature > 0``: a softmax of ``(values - max) / temperature``; ``0``: uniform over
    the moves within :data:`TIE_TOLERANCE` of the best (a hard argmax with ties split
    evenly). Either way exact ties get exactly equal probability.

    >>> teacher_distribution(np.array([1.0, 3.0, 3.0]), 0.0).tolist()
    [0.0, 0.5, 0.5]
    >>> teacher_distribution(np.array([0.0, 1.0]), 1.0).round(4).tolist()
    [0.2689, 0.7311]

    Raises:
        ValueError: no values, a non-finite value or a negative temperature.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError("teacher_distribution needs one or more finite values")
    if not (temperature >= 0.0 and math.isfinite(temperature)):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    best = float(v.max())
    gap = best - v
    tol = TIE_TOLERANCE * max(1.0, abs(best))
    if temperature == 0.0:
        p = (gap <= tol).astype(np.float64)
    else:
        p = np.exp(-np.where(gap <= tol, 0.0, gap) / temperature)
    return p / p.sum()


@dataclass(frozen=True)
class TeacherLabels:
    """The teacher's distributions of a batch of positions, packed sparse.

    Attributes:
        actions: ``(n, k)`` catalog action ids, ``-1`` where a row has fewer moves.
        probs: ``(n, k)`` float32 probabilities (0 at the padding), each labelled row sums to 1.
        labelled: ``(n,)`` whether the row has a teacher distribution at all.
    """

    actions: np.ndarray
    probs: np.ndarray
    labelled: np.ndarray

    def dense(self, n_actions: int) -> np.ndarray:
        """The ``(n, n_actions)`` probabilities (tests and tools)."""
        out = np.zeros((self.actions.shape[0], n_actions), dtype=np.float64)
        rows, cols = np.nonzero(self.actions >= 0)
        out[rows, self.actions[rows, cols]] = self.probs[rows, cols]
        return out


# ------------------------------------------------------------------------------------------
# turn value arrays saved by an offline job


@dataclass(frozen=True, eq=False)
class TurnValueArrays:
    """The in-turn values of the ``turn`` objective under an exact target, from score 0.

    ``c[t, s]``: value after a keep that leaves turn total ``t`` (units) and dice state ``s``;
    ``r[t, s]``: value of rolling on there. Rows ``0 .. t_exact`` are the solver's; one more
    row holds the value of a lost turn (a total past the target), so any total past it reads
    that row. ``states``: per dice state, :func:`encode_dice_state` of (dice, carry-over).
    """

    rules_fingerprint: str
    unit: int
    c: np.ndarray
    r: np.ndarray
    states: np.ndarray
    headline: float

    def save(self, path: str | Path) -> Path:
        """Write the arrays (compressed ``.npz``, atomically) and return the path."""
        path = Path(path)

        def write(tmp: Path) -> None:
            with tmp.open("wb") as fh:  # a file object: savez would add ".npz" to a bare path
                np.savez_compressed(
                    fh, c=self.c, r=self.r, states=self.states, unit=np.array(self.unit),
                    headline=np.array(self.headline), rules_fingerprint=np.array(self.rules_fingerprint),
                )

        atomic_write_with(path, write)
        return path

    @classmethod
    def load(cls, path: str | Path, rules: Rules) -> TurnValueArrays:
        """Read arrays written by :meth:`save`.

        Raises:
            ValueError: arrays made for other rules, or a file that is not such arrays.
        """
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                out = cls(
                    rules_fingerprint=str(data["rules_fingerprint"]),
                    unit=int(data["unit"]),
                    c=data["c"],
                    r=data["r"],
                    states=data["states"],
                    headline=float(data["headline"]),
                )
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{path}: not a turn value file ({exc})") from None
        if out.rules_fingerprint != rules.fingerprint:
            raise ValueError(f"{path}: made for rules {out.rules_fingerprint}, not {rules.name} ({rules.fingerprint})")
        if out.c.shape != out.r.shape or out.c.shape[1] != out.states.shape[0]:
            raise ValueError(f"{path}: arrays of mismatched shapes")
        return out


def encode_dice_state(dice: int, carry: Carry) -> tuple[int, ...]:
    """A dice state as integers: dice, the six set counts, the fill faces and the pair faces
    as bit masks (bit ``f - 1`` for face ``f``)."""
    fills = sum(1 << (f - 1) for f in carry.fills)
    pairs = sum(1 << (f - 1) for f in carry.pairs)
    return (dice, *carry.sets, fills, pairs)


def solve_turn_arrays(rules: Rules, max_states: int | None = None) -> TurnValueArrays:
    """Solve the exact-target turn from score 0 and keep its value arrays (see
    :class:`TurnValueArrays`). Under Trippn this enumerates every dice state: about an hour
    of CPU and 17 GB of memory (``scripts/trippn_turn.py`` measures it).

    Raises:
        ValueError: rules without carry-over or without an exact target.
    """
    if not (rules.carry_over and rules.exact_target):
        raise ValueError("turn value arrays are for carry-over rules with an exact target")
    from greed_env.solver.carry import DEFAULT_MAX_STATES

    ct = carry_tables(rules, False, max_states or DEFAULT_MAX_STATES)
    ctx = exact_turn_context(rules, ct, 0)
    arr = run_dp(ct, rules, ctx["t_cap"], ctx["t_exact"], ctx["out"], ctx["bank_val"], ctx["bank_ok"], ctx["x"])
    top = ctx["t_exact"] + 2  # rows 0..t_exact, then one row of a lost turn
    states = np.array([encode_dice_state(d, cr) for d, cr in ct.states], dtype=np.int16)
    return TurnValueArrays(
        rules_fingerprint=rules.fingerprint,
        unit=ct.unit,
        c=np.ascontiguousarray(arr["c"][:top]),
        r=np.ascontiguousarray(arr["r"][:top]),
        states=states,
        headline=float(arr["c"][0, 0]),
    )


def save_turn_arrays(rules: Rules, path: Path) -> None:
    """Solve the turn's value arrays and save them at ``path`` (run in a child process by
    :func:`turn_teacher`: the dice-state tables behind them, 17 GB under Trippn, are freed when
    it ends)."""
    solve_turn_arrays(rules).save(path)


def turn_teacher(rules: Rules, temperature: float, arrays: str | Path | None = None) -> TeacherLabeller:
    """The solver's ``turn`` teacher at ``temperature`` points: from the solved table, or from
    the value arrays saved at ``arrays``, solved and saved there first (in a child process) when
    the file is missing.

    Raises:
        RuntimeError: solving the arrays failed.
        ValueError: ``arrays`` made for other rules, or not such a file.
    """
    if arrays is None:
        return TeacherLabeller(rules, "turn", temperature)
    path = Path(arrays)
    if not path.is_file():
        print(f"solving the turn's value arrays into {path} (Trippn: about an hour of CPU, 17 GB)", flush=True)
        child = multiprocessing.get_context("spawn").Process(target=save_turn_arrays, args=(rules, path))
        child.start()
        child.join()
        if child.exitcode != 0 or not path.is_file():
            raise RuntimeError(f"solving the turn's value arrays failed (exit status {child.exitcode})")
    return TeacherLabeller(rules, "turn", temperature, arrays=TurnValueArrays.load(path, rules))


# ------------------------------------------------------------------------------------------
# contexts: the in-turn arrays of one mover's turn


@dataclass(frozen=True, eq=False)
class _Context:
    """In-turn values of one turn context, higher is better.

    ``c``/``r``: [turn total in units, dice state (carry-over) or dice left (order-free)];
    ``bank``: value of banking per turn total; ``x``: a bust; ``w``: a reroll-all per bar.
    """

    c: np.ndarray
    r: np.ndarray
    bank: np.ndarray
    x: float
    w: np.ndarray | None = None


def _row_key(objective: str, rules: Rules, row: np.ndarray) -> tuple[Any, ...]:
    """What the in-turn problem of a row's mover depends on: the keys of
    :meth:`~greed_env.solver.carry.CarryEvaluator.context` under carry-over rules and of
    :class:`~greed_env.solver.optimal_bot.OptimalBot`'s context cache under order-free rules, read
    from the row's columns."""
    p = int(row[K.C_PLAYER])
    n = int(row[K.C_NPLAYERS])
    scores = tuple(int(x) for x in row[K.B_SCORE : K.B_SCORE + n])
    if rules.carry_over:
        if objective in ("turn", "race"):
            return (scores[p],)
        return (scores, p, bool(row[K.C_ENDGAME]))
    entered = tuple(bool(x) for x in row[K.B_ENTERED : K.B_ENTERED + n])
    penalty = bool(rules.bust_penalty_after and rules.bust_penalty)
    streaks = tuple(int(x) for x in row[K.B_STREAK : K.B_STREAK + n]) if penalty else ()
    if objective == "turn":
        return (entered[p], streaks[p] if penalty else 0)
    if objective == "race":
        return (scores[p], entered[p], streaks[p] if penalty else 0)
    return (scores, entered, streaks, bool(row[K.C_ENDGAME]), p, int(row[K.C_ROUNDS]) if rules.rounds else 0)


class TeacherLabeller:
    """Exact values of the legal actions at rows of the vector engine, and the teacher's
    distributions built from them.

    Args:
        rules: the rules trained on.
        objective: ``turn``, ``race`` or ``duel``: the solver bot that teaches.
        temperature: of :func:`teacher_distribution`, in the objective's units (points for
            ``turn``, turns for ``race``, win probability for ``duel``); 0: argmax, ties split.
        table: the solved table (default :func:`greed_env.solver.load_table`), or
        arrays: instead of a table, the saved arrays of an exact-target turn
            (:class:`TurnValueArrays`; objective ``turn`` only, positions of a turn from 0).
        cache_contexts: carry-over rules: in-turn arrays kept between batches, least recently
            used dropped first (a Progressive duel context takes 0.1-0.4 MB once cut at the
            target); the positions of a cached context are valued at no cost, and
            ``max_contexts`` counts only the contexts computed anew.

    Raises:
        ValueError: an objective other than those of :data:`TEACHER_OBJECTIVES`.
    """

    def __init__(
        self,
        rules: Rules,
        objective: str,
        temperature: float = 0.0,
        table: SolverTable | None = None,
        arrays: TurnValueArrays | None = None,
        cache_contexts: int = 1024,
    ) -> None:
        if objective not in TEACHER_OBJECTIVES:
            raise ValueError(f"teacher objective must be one of {', '.join(TEACHER_OBJECTIVES)}, got {objective!r}")
        if arrays is not None and objective != "turn":
            raise ValueError("turn value arrays teach the 'turn' objective only")
        teacher_distribution(np.zeros(1), temperature)  # refuses a bad temperature
        self.rules = rules
        self.objective = objective
        self.temperature = float(temperature)
        self.tables: VectorTables = vector_tables(rules)
        self.catalog = ActionCatalog(rules)
        self.arrays = arrays
        self.bot: OptimalBot | None = None
        self._carry: CarryEvaluator | None = None
        if arrays is None:
            self.bot = OptimalBot(rules, objective, table)
            self._carry = self.bot._carry
            self.unit = self._carry.ct.unit if self._carry is not None else roll_tables(
                rules, needs_full_tables(rules, objective)).unit
        else:
            self.unit = arrays.unit
            self._array_index = {tuple(int(x) for x in row): i for i, row in enumerate(arrays.states)}
        cfg = self.tables.cfg
        self._bank, self._roll = int(cfg[K.CFG_ACT_BANK]), int(cfg[K.CFG_ACT_ROLL])
        self._nothing, self._reroll = int(cfg[K.CFG_ACT_FOR_NOTHING]), int(cfg[K.CFG_ACT_REROLL])
        self._bust = int(cfg[K.CFG_ACT_BUST])
        self._dstate: dict[int, int] = {}
        self._options: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}
        self._plain_cache: dict[tuple[Any, ...], _Context] = {}
        self._carry_cache: OrderedDict[tuple[Any, ...], _Context] = OrderedDict()
        self.cache_contexts = int(cache_contexts)
        self.contexts_computed = 0
        """In-turn passes run so far (one per distinct context per batch; cached under order-free rules)."""

    # --------------------------------------------------------------------------------------
    def values(
        self,
        rows: np.ndarray,
        masks: np.ndarray,
        max_contexts: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> list[tuple[np.ndarray, np.ndarray] | None]:
        """Per row of a game array: ``(legal action ids, their values)`` or None (not valued).

        Args:
            rows: ``(n, N_COLS)`` rows of the vector engine (the learner to act in each).
            masks: ``(n, n_actions)`` legal masks of those rows (nonzero: legal).
            max_contexts: value the rows of at most this many turn contexts (the others are
                None): the contexts of the rows in the order of a random permutation drawn
                from ``rng``, so a context is picked about in proportion to its rows.
            rng: the generator of that permutation (needed with ``max_contexts``).
        """
        rows = np.asarray(rows, dtype=np.int64)
        masks = np.asarray(masks)
        n = rows.shape[0]
        out: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n
        phase = rows[:, K.C_PHASE]
        fast = ((phase == Phase.KEEP) | (phase == Phase.CONTINUE)) & (rows[:, K.C_NROLLOFF] == 0)
        groups: dict[tuple[Any, ...], list[int]] = {}
        states: dict[tuple[Any, ...], State] = {}
        for i in np.flatnonzero(fast):
            i = int(i)
            key = _row_key(self.objective, self.rules, rows[i])
            members = groups.get(key)
            if members is None:
                groups[key] = members = []
                if self.arrays is None:
                    states[key] = State(**row_fields(rows, i, self.tables))
            members.append(i)
        if max_contexts is not None:
            if rng is None:
                raise ValueError("max_contexts needs a generator")
            owner = {i: key for key, members in groups.items() for i in members}
            chosen = {key: members for key, members in groups.items() if key in self._carry_cache}
            new = 0
            for i in rng.permutation(np.flatnonzero(fast)).tolist():
                key = owner[int(i)]
                if key not in chosen and new < max_contexts:
                    chosen[key] = groups[key]
                    new += 1
            groups = chosen
        for key, members in groups.items():
            top = int(max(rows[i, K.C_TOTAL] for i in members)) // self.unit
            ctx = self._context(key, states.get(key), top)
            if ctx is None:
                continue
            for i in members:
                out[i] = self._row_values(rows[i], masks[i], ctx)
        if self.bot is not None:
            for i in np.flatnonzero(~fast):
                out[int(i)] = self._reference_values(rows, int(i), masks[int(i)])
        return out

    def label(
        self,
        rows: np.ndarray,
        masks: np.ndarray,
        max_moves: int = 16,
        max_contexts: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> TeacherLabels:
        """The teacher's distribution of each row, packed (see :class:`TeacherLabels`).

        ``max_moves``: at most this many moves per row keep probability (the most probable;
        exact ties beyond it are cut, and the rest renormalised). ``max_contexts``, ``rng``:
        as in :meth:`values`.
        """
        vals = self.values(rows, masks, max_contexts, rng)
        n = len(vals)
        dists: list[tuple[np.ndarray, np.ndarray] | None] = []
        width = 1
        for item in vals:
            if item is None or item[0].size == 0:
                dists.append(None)
                continue
            ids, v = item
            p = teacher_distribution(v, self.temperature)
            keep = p >= _MIN_PROB
            ids, p = ids[keep], p[keep]
            if ids.size > max_moves:
                order = np.argsort(-p, kind="stable")[:max_moves]
                ids, p = ids[order], p[order]
            dists.append((ids, p / p.sum()))
            width = max(width, ids.size)
        actions = np.full((n, width), -1, dtype=np.int64)
        probs = np.zeros((n, width), dtype=np.float32)
        labelled = np.zeros(n, dtype=bool)
        for i, d in enumerate(dists):
            if d is None:
                continue
            actions[i, : d[0].size] = d[0]
            probs[i, : d[1].size] = d[1]
            labelled[i] = True
        return TeacherLabels(actions, probs, labelled)

    def best_actions(self, rows: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The first legal action of best value per row (-1 where not valued): the move
        :meth:`OptimalBot.act` plays when the best value is unique."""
        out = np.full(rows.shape[0], -1, dtype=np.int64)
        for i, item in enumerate(self.values(rows, masks)):
            if item is not None and item[0].size:
                out[i] = int(item[0][int(np.argmax(item[1]))])
        return out

    # --------------------------------------------------------------------------------------
    def _context(self, key: tuple[Any, ...], state: State | None, top: int) -> _Context | None:
        if self.arrays is not None:
            if key[0] != 0:
                return None  # the saved arrays are the turn from score 0 only
            a = self.arrays
            t = np.arange(a.c.shape[0])
            return _Context(a.c, a.r, t * float(a.unit), float(a.c[-1, 0]))
        assert state is not None
        if self._carry is not None:
            hit = self._carry_cache.get(key)
            if hit is not None:
                self._carry_cache.move_to_end(key)
                return hit
            raw = self._carry.context(state)
            self.contexts_computed += 1
            arr, t_exact = raw["arr"], int(raw["t_exact"])
            # past an exact target every row is the lost turn's: keep the first such row only
            rows = t_exact + 2 if t_exact >= 0 else arr["c"].shape[0]
            ctx = _Context(arr["c"][:rows].copy(), arr["r"][:rows].copy(),
                           np.asarray(raw["bank_val"][:rows], dtype=np.float64), float(raw["x"]))
            if self.cache_contexts > 0:
                self._carry_cache[key] = ctx
                if len(self._carry_cache) > self.cache_contexts:
                    self._carry_cache.popitem(last=False)
            return ctx
        hit = self._plain_cache.get(key)
        if hit is not None and hit.c.shape[0] > top + self._max_keep():
            return hit
        assert self.bot is not None
        table = self.bot.table
        tc = turn_context(table, self.rules, state, at_least=top)
        tb = roll_tables(self.rules, needs_full_tables(self.rules, self.objective))
        arr = turn_arrays(self.rules, tb, tc.t_cap, tc.bank_val, tc.bank_ok, tc.x, tc.tail)
        self.contexts_computed += 1
        ctx = _Context(arr["c"], arr["r"], np.asarray(tc.bank_val, dtype=np.float64), float(tc.x), arr["w"])
        if len(self._plain_cache) >= 4096:
            self._plain_cache.clear()
        self._plain_cache[key] = ctx
        return ctx

    def _max_keep(self) -> int:
        if self._carry is not None:
            return int(self._carry.ct.max_keep)
        return int(roll_tables(self.rules, needs_full_tables(self.rules, self.objective)).max_keep)

    def _state_index(self, d: int) -> int:
        """The solver's index of the engine's dice state ``d`` (carry-over rules)."""
        hit = self._dstate.get(d)
        if hit is None:
            dice, carry = self.tables.dice_states[d]
            carry = canonical_carry(self.rules, carry)
            if self.arrays is not None:
                hit = self._array_index[encode_dice_state(dice, carry)]
            else:
                assert self._carry is not None
                hit = self._carry.ct.index[(dice, carry)]
            self._dstate[d] = hit
        return hit

    def _option_state(self, row: np.ndarray) -> int:
        """The dice state whose option rows hold the roll of ``row`` (the kernels'
        ``row_dice_state``: order-free rules tell a fresh full roll, 1, from any other, 0)."""
        if self.rules.carry_over:
            return int(row[K.C_DSTATE])
        return int(row[K.C_FRESH] != 0 and row[K.C_DICE] == self.rules.num_dice)

    def _row_options(self, d: int, roll_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Cached (action ids, points in units, next dice state or dice left, best points)."""
        key = (d, roll_id)
        hit = self._options.get(key)
        if hit is None:
            recs = self.tables.options(d, roll_id)
            ids = np.array([o[0] for o in recs], dtype=np.int64)
            pts = np.array([o[1] // self.unit for o in recs], dtype=np.int64)
            if self.rules.carry_over:
                nxt = np.array([self._state_index(o[4]) for o in recs], dtype=np.int64)
            else:
                n = len(self.tables.roll_of(roll_id))
                left = np.array([n - o[2] for o in recs], dtype=np.int64)
                if self.rules.hot_dice:
                    left[left == 0] = self.rules.num_dice
                nxt = left
            best = int(pts.max()) if pts.size else 0
            hit = (ids, pts, nxt, best)
            self._options[key] = hit
        return hit

    def _row_values(self, row: np.ndarray, mask: np.ndarray, ctx: _Context) -> tuple[np.ndarray, np.ndarray]:
        t = int(row[K.C_TOTAL]) // self.unit
        last = ctx.c.shape[0] - 1
        legal = np.flatnonzero(mask)
        vals: dict[int, float] = {}
        if int(row[K.C_PHASE]) == Phase.KEEP:
            ids, pts, nxt, best = self._row_options(self._option_state(row), int(row[K.C_ROLL]))
            v = ctx.c[np.minimum(t + pts, last), nxt]
            vals = dict(zip(ids.tolist(), v.tolist(), strict=True))
            if self._bust >= 0:
                vals[self._bust] = ctx.x
            if self._reroll >= 0 and ctx.w is not None:
                vals[self._reroll] = float(ctx.w[min(t + best, ctx.w.shape[0] - 1)])
        else:
            if self.rules.carry_over:
                s = self._state_index(int(row[K.C_DSTATE]))
            else:
                s = int(row[K.C_DICE])
            rolling = float(ctx.r[min(t, last), s])
            vals = {self._roll: rolling, self._nothing: rolling, self._bank: float(ctx.bank[min(t, ctx.bank.shape[0] - 1)])}
        missing = [a for a in legal.tolist() if a not in vals]
        if missing:
            raise RuntimeError(f"no teacher value for legal actions {[self.catalog.labels[a] for a in missing]}")
        return legal.astype(np.int64), np.array([vals[a] for a in legal.tolist()], dtype=np.float64)

    def _reference_values(self, rows: np.ndarray, i: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Values by the reference rules and :class:`OptimalBot` (rare phases: split votes,
        roll-off order, roll-offs), in the labeller's higher-is-better sense."""
        assert self.bot is not None
        state = State(**row_fields(rows, i, self.tables))
        if state.phase not in (Phase.KEEP, Phase.CONTINUE, Phase.SPLIT, Phase.ORDER_CHOICE):
            return None
        _, moves = self.catalog.legal(state)
        ids = {m: a for a, m in moves.items()}
        pairs = self.bot.move_values(self.rules, state)
        if self.objective == "race":
            pairs = [(m, 1.0 - v) for m, v in pairs]
        out = [(ids[m], v) for m, v in pairs if m in ids and mask[ids[m]]]
        if not out:
            return None
        out.sort()
        return np.array([a for a, _ in out], dtype=np.int64), np.array([v for _, v in out], dtype=np.float64)


def display_values(objective: str, values: np.ndarray) -> np.ndarray:
    """Labeller values in :meth:`OptimalBot.move_values`' units (the race's expected turns
    counting the current one, lower is better; the others unchanged)."""
    return 1.0 - values if objective == "race" else values


# ------------------------------------------------------------------------------------------
# exploring starts along the teacher's games


def teacher_starts(
    rules: Rules,
    bot: Any,
    games: int,
    rng: np.random.Generator,
    num_players: int = 2,
    keep: Callable[[State], bool] | None = None,
    max_moves: int = 10_000,
) -> list[State]:
    """Turn starts (phase ROLL, nothing kept yet) met in games the teacher plays against itself.

    ``bot`` plays every seat (the Bot protocol's ``act``); ``keep`` filters the positions
    (default: every turn start). The positions are the teacher's, so a share of training
    episodes started there meets the score pairs strong play reaches, which a weak student's
    own games rarely do (both scores near an exact target, for instance).
    """
    out: list[State] = []
    for _ in range(games):
        state = new_game(rules, num_players)
        for _ in range(max_moves):
            if is_over(state):
                break
            if is_chance(state):
                if state.phase == Phase.ROLL and state.dice == rules.num_dice and state.turn_total == 0 \
                        and state.fresh and not state.in_rolloff and (keep is None or keep(state)):
                    out.append(state)
                state = apply_roll(rules, state, sample_roll(rules, state, rng))
            else:
                state = apply(rules, state, bot.act(rules, state, rng))
    return out
