"""Lookup tables of the vector engine, derived from the reference rules implementation.

Nothing here scores dice by itself: every keep option of every roll comes from
:func:`greed_env.rules.scoring.keep_options` (the one reference scoring), its action id from
the rules' :class:`~greed_env.envs.catalog.ActionCatalog`, and whether a roll for nothing
scores from :func:`~greed_env.rules.scoring.has_scoring_keep`.

A roll of ``k`` dice is a sorted multiset with a *roll id*; ids of ``k`` dice are
``roll_start[k] .. roll_start[k + 1] - 1`` in ``combinations_with_replacement`` order. One
random *code* in ``[0, 6**num_dice)`` serves a roll of any ``k <= num_dice`` dice as
``code % 6**k`` (uniform, since ``6**k`` divides ``6**num_dice``); the kernels read its ``k``
base-6 digits as the faces, as :func:`greed_env.rules.sample_roll` does (tested on every
code of every ``k``).

Options are indexed by *dice state* and roll. A dice state is what, besides the roll, decides
the legal keeps:

* order-free rules: two states, 0 (not fresh) and 1 (a fresh full roll);
* carry-over rules: (dice to roll, carry-over) pairs, state 0 being a fresh full roll with
  nothing working; each option names the dice state it leads to. Progressive's 204 are the
  ones :func:`greed_env.solver.carry.carry_tables` reaches, all tabled ahead; Trippn's never
  close (its carry-over survives hot dice), so its states and option rows are added as games
  meet them (:meth:`VectorTables.grow`).

Each (dice state, roll) has an option row: the options in :func:`keep_options` order (the
order of :func:`~greed_env.rules.legal_moves`).

>>> t = vector_tables("ten_thousand")
>>> int(t.roll_start[7] - t.roll_start[6]), t.max_options >= 1
(462, True)
>>> r = t.roll_id((1, 1, 1, 1, 1, 1))
>>> [t.catalog.labels[o[0]] for o in t.options(1, r)][:3]
['keep 1', 'keep 1,1', 'keep 1,1,1']
>>> p = vector_tables("progressive")
>>> p.n_dice_states, p.dice_states[0]
(204, (8, Carry(sets=(0, 0, 0, 0, 0, 0), fills=(), pairs=())))
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement
from math import comb

import numpy as np

from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import (
    MAX_SEATS,
    OBS_DIM,
    OBS_INDEX,
    STREAK_SCALE_DEFAULT,
    score_scale,
)
from greed_env.rules import Rules, resolve_rules
from greed_env.rules.scoring import EMPTY_CARRY, Carry, has_scoring_keep, keep_options
from greed_env.vector import kernels as K
from greed_env.vector.layout import OBS_SLOT_NAMES

__all__ = [
    "MAX_VECTOR_DICE",
    "VectorTables",
    "VectorUnsupportedError",
    "check_vector_supported",
    "vector_tables",
]

MAX_VECTOR_DICE = 8
"""Largest ``num_dice`` the vector engine tables (the rules allow no more)."""

FACES = (1, 2, 3, 4, 5, 6)


class VectorUnsupportedError(ValueError):
    """The vector engine does not model these rules; the message names every field."""


def check_vector_supported(rules: Rules) -> None:
    """Raise :class:`VectorUnsupportedError` naming each rules field the engine does not model.

    Modelled: every order-free rule set (entry thresholds of either scope,
    ``entry_until_made``, ``min_bank``, hot dice on or off, reroll-all with or without
    must-beat, voluntary bust, bust penalties, the nothing bonus, the all-dice bonus, the
    final round, six-of-a-kind wins on the roll, the who-starts roll, a fixed number of rounds
    with or without a target, a final round played past the last round
    (``final_round_past_rounds``), the horizon), up to eight dice; the
    exact target (overshoot, roll for nothing, finishers, split vote, roll-off order and
    roll-offs); and carry-over rules with hot dice under either reading of a die of a working
    face (``working_set_claims``: the option rows come from ``keep_options``): Progressive,
    whose 204 dice states are tabled ahead, and Trippn, whose dice states never close and whose
    rows are built on demand. Not modelled: carry-over without hot dice, ``piggyback`` (and so
    ``piggyback_counts_for_entry``), ``tie_rule='first_finisher'``, and Trippn under
    ``working_set_claims=False`` (no action catalog keys its keeps).
    """
    bad = []
    if rules.carry_over and not rules.hot_dice:
        bad.append("carry_over=True with hot_dice=False")
    if rules.piggyback:
        bad.append("piggyback=True")
    if rules.tie_rule == "first_finisher":
        bad.append("tie_rule='first_finisher'")
    if rules.trippn and not rules.working_set_claims:
        bad.append("working_set_claims=False with trippn=True (its action catalog cannot key the keeps)")
    if rules.num_dice > MAX_VECTOR_DICE:
        bad.append(f"num_dice={rules.num_dice} (at most {MAX_VECTOR_DICE})")
    if bad:
        raise VectorUnsupportedError(
            f"the vector engine does not model the {rules.name} rules: " + ", ".join(bad)
        )


Option = tuple[int, int, int, int, int]
"""One keep option record: (catalog action id, points, dice kept, instant win, next dice
state; -1 under order-free rules, where the kernels work out the dice left)."""

# growable sections of the flat table: (header offset slot, record width)
_SECTIONS = (
    ("dice", K.T_OFF_DSDICE, 1),
    ("sbase", K.T_OFF_SBASE, 1),
    ("carry", K.T_OFF_CARRY, K.CARRY_FIELDS),
    ("rindex", K.T_OFF_RINDEX, 1),
    ("ostart", K.T_OFF_OSTART, 1),
    ("scoring", K.T_OFF_SCORING, 1),
    ("best", K.T_OFF_BEST, 1),
    ("opt", K.T_OFF_OPT, K.OPT_FIELDS),
    ("req", K.T_OFF_REQ, 2),
)
_SECTION_OF = {
    "dice": "states",
    "sbase": "states",
    "carry": "states",
    "rindex": "rindex",
    "ostart": "rows",
    "scoring": "rows",
    "best": "rows",
    "opt": "opt",
    "req": "req",
}


class VectorTables:
    """Every table the kernels read, for one rules configuration.

    Dice states and option rows live in sections of one flat int64 array, :attr:`tab`
    (header slots ``greed_env.vector.kernels.T_*``): per dice state its dice, carry-over
    record and the base of its block in the row index; the row index maps (dice state, roll
    id) to an option row (-1: not built); per row the first option record, whether any die
    scores (``has_scoring_keep``: a roll for nothing that scores loses the turn) and the
    most points (what a reroll-all gives up); the option records (see :data:`Option`).

    Every rule set but Trippn is built whole when the tables are made. Trippn's dice states
    never close, so its rows are built on demand: a kernel that meets a missing row writes a
    request and stops that game (as when its dice codes run out); :meth:`grow` builds the
    requested rows from ``keep_options`` and the caller resumes. :attr:`tab` is then a new
    array whenever a section had to grow.

    Attributes:
        rules: the configuration.
        catalog: its action catalog (the vector engine's action ids are the catalog's).
        num_dice: dice in a full roll.
        roll_start: ``(num_dice + 2,)``; roll ids of ``k`` dice are ``roll_start[k]`` to
            ``roll_start[k + 1] - 1``.
        roll_counts: ``(R, 6)`` dice showing each face.
        dice_states: (dice to roll, carry-over) of each dice state; under order-free rules
            ``(0, EMPTY_CARRY)`` (not fresh) and ``(num_dice, EMPTY_CARRY)`` (fresh).
        cfg: int64 rules constants and non-keep action ids for the kernels.
        obs_index: int64 positions of the observation entries the kernels write.
        tab: the flat table the kernels read.
    """

    def __init__(self, rules: Rules) -> None:
        check_vector_supported(rules)
        nd = rules.num_dice
        self.rules = rules
        self.catalog = ActionCatalog(rules)
        self.num_dice = nd
        self.growing = rules.trippn
        self._rolls = _rolls(nd)
        roll_start = np.zeros(nd + 2, dtype=np.int64)
        roll_start[1:] = np.cumsum([0] + [comb(k + 5, 5) for k in range(1, nd + 1)])
        self.roll_start = roll_start
        self.roll_counts = np.array(
            [[r.count(f) for f in FACES] for r in self._rolls], dtype=np.int64
        )
        # multisets of t faces drawn from the m highest faces: the kernels' roll-id ranking
        self._multichoose = np.array(
            [[comb(m + t - 1, t) if m > 0 else int(t == 0) for t in range(9)] for m in range(7)],
            dtype=np.int64,
        )
        self.cfg = _cfg(rules, self.catalog)
        self.obs_index = np.array([OBS_INDEX[name] for name in OBS_SLOT_NAMES], dtype=np.int64)
        if MAX_SEATS != K.MAX_PLAYERS or int(self.obs_index.max()) >= OBS_DIM:
            raise VectorUnsupportedError("observation layout changed: rebuild the vector kernels")
        self.dice_states: list[tuple[int, Carry]] = []
        self._index: dict[tuple[int, Carry], int] = {}
        self._used = {"states": 0, "rindex": 0, "rows": 0, "opt": 0, "req": 0}
        self._cap = {"states": 16, "rindex": 4096, "rows": 1024, "opt": 8192, "req": 4096}
        self.tab = np.zeros(0, dtype=np.int64)
        self._views: dict[str, np.ndarray] = {}
        self._allocate()
        if self.growing:
            self._add_state(nd, EMPTY_CARRY)
            return
        states, _ = _dice_states(rules)
        for dice, carry in states:
            self._add_state(dice, carry)
        for d in range(len(states)):
            lo, hi = self._block(d)
            for r in range(lo, hi):
                self._add_row(d, r)

    # ------------------------------------------------------------------------------------
    @property
    def n_actions(self) -> int:
        return self.catalog.n

    @property
    def n_dice_states(self) -> int:
        return len(self.dice_states)

    @property
    def n_rows(self) -> int:
        """Option rows built so far."""
        return self._used["rows"]

    @property
    def max_options(self) -> int:
        ostart = self._views["ostart"][: self.n_rows + 1]
        return int(np.diff(ostart).max(initial=0))

    def roll_of(self, roll_id: int) -> tuple[int, ...]:
        """The sorted faces of a roll id."""
        counts = self.roll_counts[roll_id]
        return tuple(f for f in FACES for _ in range(int(counts[f - 1])))

    def roll_id(self, roll: tuple[int, ...]) -> int:
        """The id of a sorted roll."""
        return _roll_ids(self.num_dice)[tuple(sorted(roll))]

    def state_id(self, dice: int, carry: Carry) -> int:
        """The dice state of ``dice`` in hand with ``carry`` working (added under Trippn;
        0 for any position with nothing working that has no state of its own, which the
        kernels never look up). Order-free rules: always 0 (the kernels use the fresh flag).

        Raises:
            VectorUnsupportedError: a carry-over the dice-state search never reached.
        """
        if not self.rules.carry_over:
            return 0
        d = self._index.get((dice, carry))
        if d is not None:
            return d
        if carry.is_empty():
            return 0
        if not self.growing:
            raise VectorUnsupportedError(f"dice state {(dice, carry)} is not reachable")
        return self._add_state(dice, carry)

    def options(self, dice_state: int, roll_id: int) -> list[Option]:
        """The option records of a roll in a dice state, in ``keep_options`` order (the row
        is built first if it is missing)."""
        row = self._row(dice_state, roll_id)
        if row < 0:
            row = self._add_row(dice_state, roll_id)
        ostart = self._views["ostart"]
        lo, hi = int(ostart[row]), int(ostart[row + 1])
        return [tuple(int(x) for x in rec) for rec in self._views["opt"][lo:hi]]  # type: ignore[misc]

    def grow(self) -> bool:
        """Build the rows the kernels asked for since the last call; True if any was built
        (:attr:`tab` may then be a new array)."""
        asked = min(int(self.tab[K.T_NREQ]), self._cap["req"])
        if asked == 0:
            return False
        requests = {(int(d), int(r)) for d, r in self._views["req"][:asked]}
        self.tab[K.T_NREQ] = 0
        built = False
        for d, r in sorted(requests):
            if not self._valid_request(d, r):
                continue  # torn by two threads writing one slot: the game asks again on resume
            if self._row(d, r) < 0:
                self._add_row(d, r)
                built = True
        return built

    # ------------------------------------------------------------------------------------
    def _valid_request(self, d: int, r: int) -> bool:
        """A (dice state, roll id) pair that names a row (kernels on several threads may
        interleave their writes of one request slot and leave a mixed pair)."""
        if not 0 <= d < len(self.dice_states):
            return False
        lo, hi = self._block(d)
        return lo <= r < hi

    def _block(self, d: int) -> tuple[int, int]:
        """The roll ids a dice state has rows for."""
        if not self.rules.carry_over:
            return 0, len(self._rolls)
        dice = self.dice_states[d][0]
        return int(self.roll_start[dice]), int(self.roll_start[dice + 1])

    def _row(self, d: int, r: int) -> int:
        base = int(self._views["sbase"][d])
        return -1 if base < 0 else int(self._views["rindex"][base + r - self._block(d)[0]])

    def _allocate(self) -> None:
        """(Re)build the flat table with the current capacities, keeping what is in it."""
        old_tab, old_views = self.tab, self._views
        fixed = [
            (K.T_OFF_FOUR, _FOUR_DIGITS),
            (K.T_OFF_POW6, 6 ** np.arange(MAX_VECTOR_DICE + 1, dtype=np.int64)),
            (K.T_OFF_OBS, self.obs_index),
            (K.T_OFF_COUNTS, self.roll_counts),
            (K.T_OFF_RSTART, self.roll_start),
            (K.T_OFF_MC, self._multichoose),
        ]
        size = K.T_HEADER + sum(a.size for _, a in fixed)
        shapes = {}
        for name, _, width in _SECTIONS:
            cap = self._cap[_SECTION_OF[name]] + (1 if name == "ostart" else 0)
            shapes[name] = (cap, width)
            size += cap * width
        tab = np.zeros(size, dtype=np.int64)
        tab[: K.CFG_SIZE] = self.cfg
        tab[K.T_NROLLS] = len(self._rolls)
        tab[K.T_CAPREQ] = self._cap["req"]
        offset = K.T_HEADER
        for slot, arr in fixed:
            tab[slot] = offset
            tab[offset : offset + arr.size] = arr.ravel()
            offset += arr.size
        for name, slot, width in _SECTIONS:
            tab[slot] = offset
            offset += shapes[name][0] * width
        views = self._views_of(tab)
        views["sbase"][:] = -1
        views["rindex"][:] = -1
        for name, _, _ in _SECTIONS:
            if name in old_views:
                n = old_views[name].shape[0]
                views[name][:n] = old_views[name]
        if old_tab.size:
            tab[K.T_NDS] = old_tab[K.T_NDS]
            tab[K.T_NREQ] = old_tab[K.T_NREQ]
        self.tab = tab
        self._views = views

    def _views_of(self, tab: np.ndarray) -> dict[str, np.ndarray]:
        """The sections of ``tab`` as views (written in place by the builders)."""
        views = {}
        for name, slot, width in _SECTIONS:
            cap = self._cap[_SECTION_OF[name]] + (1 if name == "ostart" else 0)
            start = int(tab[slot])
            view = tab[start : start + cap * width]
            views[name] = view.reshape(cap, width) if width > 1 else view
        return views

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["_views"]  # views would unpickle as copies, detached from the table
        del state["catalog"]  # rebuilt from the rules
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.catalog = ActionCatalog(self.rules)
        self._views = self._views_of(self.tab)

    def _reserve(self, section: str, more: int) -> None:
        need = self._used[section] + more
        if need > self._cap[section]:
            while self._cap[section] < need:
                self._cap[section] *= 2
            self._allocate()

    def _add_state(self, dice: int, carry: Carry) -> int:
        self._reserve("states", 1)
        d = self._used["states"]
        self._used["states"] += 1
        self.dice_states.append((dice, carry))
        self._index[(dice, carry)] = d
        v = self._views
        v["dice"][d] = dice
        v["sbase"][d] = -1
        rec = v["carry"][d]
        rec[:6] = carry.sets
        for f in carry.fills:
            rec[6 + f - 1] = 1
        for f in carry.pairs:
            rec[12 + f - 1] = 1
        self.tab[K.T_NDS] = d + 1
        return d

    def _next_state(self, dice: int, kept: int, carry: Carry) -> int:
        """The dice state after a keep (``greed_env.solver.carry`` reads it the same way);
        a new one under Trippn."""
        if not self.rules.carry_over:
            return -1
        left = dice - kept
        if left == 0:
            key = (self.num_dice, carry if self.rules.trippn else EMPTY_CARRY)
        else:
            key = (left, carry)
        d = self._index.get(key)
        if d is None:
            if not self.growing:
                raise VectorUnsupportedError(f"dice state {key} is not among the searched ones")
            d = self._add_state(*key)
        return d

    def _add_row(self, d: int, r: int) -> int:
        """Build the option row of roll ``r`` in dice state ``d`` from ``keep_options``."""
        rules, nd = self.rules, self.num_dice
        carry = self.dice_states[d][1]
        lo, hi = self._block(d)
        if not lo <= r < hi:
            raise ValueError(f"roll id {r} has no row in dice state {d}")
        if self._views["sbase"][d] < 0:
            self._reserve("rindex", hi - lo)
            self._views["sbase"][d] = self._used["rindex"]
            self._used["rindex"] += hi - lo
        roll = self._rolls[r]
        fresh = len(roll) == nd and (rules.carry_over or d == 1)
        opts = keep_options(rules, roll, carry, fresh)
        records = [
            (
                self.catalog.index_of(o),
                o.score,
                len(o.taps),
                int(o.wins),
                self._next_state(len(roll), len(o.taps), o.carry),
            )
            for o in opts
        ]
        self._reserve("rows", 1)
        self._reserve("opt", len(records))
        v = self._views
        row, first = self._used["rows"], self._used["opt"]
        if records:
            v["opt"][first : first + len(records)] = records
        self._used["opt"] += len(records)
        v["ostart"][row] = first
        v["ostart"][row + 1] = first + len(records)
        v["scoring"][row] = int(has_scoring_keep(rules, roll, carry))
        v["best"][row] = max((o.score for o in opts), default=0)
        v["rindex"][int(v["sbase"][d]) + r - lo] = row
        self._used["rows"] += 1
        return row


_FOUR_DIGITS = np.array(
    [sum(1 << (4 * ((c // 6**j) % 6)) for j in range(4)) for c in range(6**4)], dtype=np.int64
)
"""Face counts, 4 bits per face, of the base-6 digits of every code below 6**4 (the kernels'
decoding, checked against ``sample_roll`` on every code)."""


def _action_id(catalog: ActionCatalog, kind: str) -> int:
    try:
        return catalog.index_of((kind, ()))
    except KeyError:
        return -1


@lru_cache(maxsize=8)
def _rolls(nd: int) -> tuple[tuple[int, ...], ...]:
    return tuple(r for k in range(1, nd + 1) for r in combinations_with_replacement(FACES, k))


@lru_cache(maxsize=8)
def _roll_ids(nd: int) -> dict[tuple[int, ...], int]:
    return {r: i for i, r in enumerate(_rolls(nd))}


def _dice_states(rules: Rules) -> tuple[tuple[tuple[int, Carry], ...], dict[tuple[int, Carry], int]]:
    """The dice states: fresh or not (order-free rules), or the carry-over states that the
    solver's breadth-first search from a fresh full roll reaches."""
    if not rules.carry_over:
        states = ((0, EMPTY_CARRY), (rules.num_dice, EMPTY_CARRY))
        return states, {}
    from greed_env.solver.carry import carry_tables

    ct = carry_tables(rules, True)
    if ct.states[0] != (rules.num_dice, EMPTY_CARRY):
        raise VectorUnsupportedError("dice state 0 must be a fresh full roll with no carry-over")
    return ct.states, ct.index


def _cfg(rules: Rules, catalog: ActionCatalog) -> np.ndarray:
    cfg = np.zeros(K.CFG_SIZE, dtype=np.int64)
    cfg[K.CFG_NUM_DICE] = rules.num_dice
    cfg[K.CFG_TARGET] = rules.target
    cfg[K.CFG_ENTRY] = rules.entry_threshold
    cfg[K.CFG_ENTRY_ROLL_SCOPE] = int(rules.entry_scope == "roll")
    cfg[K.CFG_ENTRY_UNTIL_MADE] = int(rules.entry_until_made)
    cfg[K.CFG_MIN_BANK] = rules.min_bank
    cfg[K.CFG_HOT_DICE] = int(rules.hot_dice)
    cfg[K.CFG_REROLL_ALL] = 0 if not rules.reroll_all else (2 if rules.reroll_all_any_time else 1)
    cfg[K.CFG_MUST_BEAT] = int(rules.reroll_all_must_beat)
    # 2: a final round begun in the last round is played to its end (final_round_past_rounds)
    cfg[K.CFG_FINAL_ROUND] = (2 if rules.final_round_past_rounds else 1) if rules.final_round else 0
    cfg[K.CFG_PENALTY_AFTER] = rules.bust_penalty_after
    cfg[K.CFG_PENALTY] = rules.bust_penalty
    cfg[K.CFG_HORIZON] = rules.horizon_rounds
    cfg[K.CFG_FIRST_ROLL] = int(rules.first_player == "roll")
    cfg[K.CFG_ACT_BANK] = _action_id(catalog, "bank")
    cfg[K.CFG_ACT_ROLL] = _action_id(catalog, "roll")
    cfg[K.CFG_ACT_REROLL] = _action_id(catalog, "reroll_all")
    cfg[K.CFG_ACT_BUST] = _action_id(catalog, "bust")
    cfg[K.CFG_N_ACTIONS] = catalog.n
    cfg[K.CFG_VOLUNTARY_BUST] = int(rules.voluntary_bust)
    cfg[K.CFG_STREAK_SCALE] = rules.bust_penalty_after or STREAK_SCALE_DEFAULT
    cfg[K.CFG_EXACT] = int(rules.exact_target)
    cfg[K.CFG_CARRY] = int(rules.carry_over)
    cfg[K.CFG_SPLIT_VOTE] = int(rules.tie_rule == "split_vote")
    cfg[K.CFG_ROLLOFF_HORIZON] = rules.rolloff_horizon
    cfg[K.CFG_ACT_FOR_NOTHING] = _action_id(catalog, "roll_for_nothing")
    cfg[K.CFG_ACT_SPLIT] = _action_id(catalog, "split")
    cfg[K.CFG_ACT_REFUSE] = _action_id(catalog, "refuse")
    cfg[K.CFG_ACT_FIRST] = _action_id(catalog, "roll_first")
    cfg[K.CFG_ACT_LAST] = _action_id(catalog, "roll_last")
    cfg[K.CFG_TRIPPN] = int(rules.trippn)
    cfg[K.CFG_ROUNDS] = rules.rounds
    cfg[K.CFG_SIX_KIND] = int(rules.six_kind_wins)
    cfg[K.CFG_SCALE] = score_scale(rules)
    return cfg


@lru_cache(maxsize=32)
def _build(rules: Rules) -> VectorTables:
    return VectorTables(rules)


def vector_tables(rules: Rules | str | None) -> VectorTables:
    """The (cached) tables of a preset name or :class:`~greed_env.rules.Rules`.

    Raises:
        VectorUnsupportedError: rules the vector engine does not model.
    """
    return _build(resolve_rules(rules))
