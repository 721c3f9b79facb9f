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
* carry-over rules (Progressive): the reachable (dice to roll, carry-over) pairs enumerated
  by :func:`greed_env.solver.carry.carry_tables` (204 for Progressive), state 0 being a fresh
  full roll with nothing working; each option names the dice state it leads to.

The options of (dice state ``d``, roll ``r``) are records ``opt_start[row] ..
opt_start[row + 1] - 1`` with ``row = pair_base[d] + r``, in :func:`keep_options` order (the
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

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from math import comb

import numpy as np

from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import MAX_SEATS, OBS_DIM, OBS_INDEX, STREAK_SCALE_DEFAULT
from greed_env.rules import Rules, resolve_rules
from greed_env.rules.scoring import EMPTY_CARRY, Carry, has_scoring_keep, keep_options
from greed_env.vector import kernels as K

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


# obs index slots (int64 vector of positions in the observation, from OBS_INDEX), in the
# order of the kernels' O_* constants
OBS_SLOT_NAMES = (
    "num_dice",
    "num_players",
    "exact_target",
    "entry_threshold",
    "min_bank",
    "showing_1",
    "my_turn",
    "dice_in_hand",
    "fresh",
    "turn_total",
    "can_bank",
    "entry_met",
    "entry_missing",
    "to_target",
    "to_target_after_bank",
    "seat_present_0",
    "score_0",
    "entered_0",
    "bust_streak_0",
    "owed_final_turn_0",
    "phase_ORDER_ROLL",
    "final_round",
    "me_owed_final_turn",
    "bar_active",
    "bar",
    "round_progress",
    "went_out_0",
    "working_set_1",
    "open_fill_1",
    "working_pairs_1",
    "in_rolloff",
    "rolloff_best",
    "rolloff_round",
    "split_votes",
)


class VectorUnsupportedError(ValueError):
    """The vector engine does not model these rules; the message names every field."""


def check_vector_supported(rules: Rules) -> None:
    """Raise :class:`VectorUnsupportedError` naming each rules field the engine does not model.

    Modelled: every order-free rule set (entry thresholds of either scope,
    ``entry_until_made``, ``min_bank``, hot dice on or off, reroll-all with or without
    must-beat, voluntary bust, bust penalties, the nothing bonus, the all-dice bonus, the
    final round, six-of-a-kind wins, the who-starts roll, the horizon), up to eight dice; the
    exact target (overshoot, roll for nothing, finishers, split vote, roll-off order and
    roll-offs); and carry-over rules with hot dice whose dice states close (Progressive).
    Not modelled: ``trippn`` (the carry-over survives hot dice, so the dice states never
    close: see ``docs/scale.md``), carry-over without hot dice, ``piggyback``.
    """
    bad = []
    if rules.trippn:
        bad.append("trippn=True (carry-over through hot dice: the dice states never close)")
    if rules.carry_over and not rules.hot_dice:
        bad.append("carry_over=True with hot_dice=False")
    if rules.piggyback:
        bad.append("piggyback=True")
    if rules.num_dice > MAX_VECTOR_DICE:
        bad.append(f"num_dice={rules.num_dice} (at most {MAX_VECTOR_DICE})")
    if bad:
        raise VectorUnsupportedError(
            f"the vector engine does not model the {rules.name} rules: " + ", ".join(bad)
        )


Option = tuple[int, int, int, int, int]
"""One keep option record: (catalog action id, points, dice kept, instant win, next dice
state; -1 under order-free rules, where the kernels work out the dice left)."""


@dataclass(frozen=True, eq=False)
class VectorTables:
    """Every table the kernels read, for one rules configuration.

    Attributes:
        rules: the configuration.
        catalog: its action catalog (the vector engine's action ids are the catalog's).
        num_dice: dice in a full roll.
        roll_start: ``(num_dice + 2,)``; roll ids of ``k`` dice are ``roll_start[k]`` to
            ``roll_start[k + 1] - 1``.
        roll_counts: ``(R, 6)`` dice showing each face.
        dice_states: (dice to roll, carry-over) of each dice state; under order-free rules
            ``(0, EMPTY_CARRY)`` (not fresh) and ``(num_dice, EMPTY_CARRY)`` (fresh).
        pair_base: ``(D,)``; the table row of (dice state ``d``, roll ``r``) is
            ``pair_base[d] + r``.
        opt_start: ``(rows + 1,)`` first option record of each row.
        opt: ``(options, OPT_FIELDS)`` records (see :data:`Option`).
        row_scoring: ``(rows,)`` whether any die of the roll scores (``has_scoring_keep``:
            a roll for nothing that scores loses the turn).
        row_best: ``(rows,)`` most points of any option (the points a reroll-all gives up).
        cfg: int64 rules constants and non-keep action ids for the kernels.
        obs_index: int64 positions of the observation entries the kernels write.
        tab: everything above the kernels read, as one flat int64 array (header slots
            ``greed_env.vector.kernels.T_*``, then ``cfg`` values and the sub-tables).
    """

    rules: Rules
    catalog: ActionCatalog
    num_dice: int
    roll_start: np.ndarray
    roll_counts: np.ndarray
    dice_states: tuple[tuple[int, Carry], ...]
    pair_base: np.ndarray
    opt_start: np.ndarray
    opt: np.ndarray
    row_scoring: np.ndarray
    row_best: np.ndarray
    cfg: np.ndarray
    obs_index: np.ndarray
    tab: np.ndarray

    @property
    def n_actions(self) -> int:
        return self.catalog.n

    @property
    def n_dice_states(self) -> int:
        return len(self.dice_states)

    @property
    def max_options(self) -> int:
        return int(np.diff(self.opt_start).max(initial=0))

    def roll_of(self, roll_id: int) -> tuple[int, ...]:
        """The sorted faces of a roll id."""
        counts = self.roll_counts[roll_id]
        return tuple(f for f in FACES for _ in range(int(counts[f - 1])))

    def roll_id(self, roll: tuple[int, ...]) -> int:
        """The id of a sorted roll."""
        return _roll_ids(self.num_dice)[tuple(sorted(roll))]

    def options(self, dice_state: int, roll_id: int) -> list[Option]:
        """The option records of a roll in a dice state, in ``keep_options`` order."""
        row = int(self.pair_base[dice_state]) + roll_id
        lo, hi = int(self.opt_start[row]), int(self.opt_start[row + 1])
        return [tuple(int(x) for x in rec) for rec in self.opt[lo:hi]]  # type: ignore[misc]


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


def _next_state(
    rules: Rules, index: dict[tuple[int, Carry], int], dice: int, kept: int, carry: Carry
) -> int:
    """The dice state after a keep (hot dice clear the carry-over: Trippn is refused)."""
    if not rules.carry_over:
        return -1
    left = dice - kept
    key = (rules.num_dice, EMPTY_CARRY) if left == 0 else (left, carry)
    return index[key]


def _flatten(head_values: np.ndarray, parts: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """The flat table: header (cfg values, sizes, offsets), then each sub-table, C order."""
    head = np.zeros(K.T_HEADER, dtype=np.int64)
    head[: len(head_values)] = head_values
    offset = K.T_HEADER
    chunks = [head]
    for slot, arr in parts:
        head[slot] = offset
        flat = np.ascontiguousarray(arr, dtype=np.int64).ravel()
        chunks.append(flat)
        offset += flat.size
    return np.concatenate(chunks)


def _cfg(rules: Rules, catalog: ActionCatalog) -> np.ndarray:
    cfg = np.zeros(K.CFG_SIZE, dtype=np.int64)
    cfg[K.CFG_NUM_DICE] = rules.num_dice
    cfg[K.CFG_TARGET] = rules.target
    cfg[K.CFG_ENTRY] = rules.entry_threshold
    cfg[K.CFG_ENTRY_ROLL_SCOPE] = int(rules.entry_scope == "roll")
    cfg[K.CFG_ENTRY_UNTIL_MADE] = int(rules.entry_until_made)
    cfg[K.CFG_MIN_BANK] = rules.min_bank
    cfg[K.CFG_HOT_DICE] = int(rules.hot_dice)
    cfg[K.CFG_REROLL_ALL] = int(rules.reroll_all)
    cfg[K.CFG_MUST_BEAT] = int(rules.reroll_all_must_beat)
    cfg[K.CFG_FINAL_ROUND] = int(rules.final_round)
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
    return cfg


@lru_cache(maxsize=32)
def _build(rules: Rules) -> VectorTables:
    check_vector_supported(rules)
    nd = rules.num_dice
    catalog = ActionCatalog(rules)
    rolls = _rolls(nd)
    roll_start = np.zeros(nd + 2, dtype=np.int64)
    roll_start[1:] = np.cumsum([0] + [comb(k + 5, 5) for k in range(1, nd + 1)])
    roll_counts = np.array([[r.count(f) for f in FACES] for r in rolls], dtype=np.int64)
    # multisets of t faces drawn from the m highest faces: the kernels' roll-id ranking
    multichoose = np.array(
        [[comb(m + t - 1, t) if m > 0 else int(t == 0) for t in range(9)] for m in range(7)],
        dtype=np.int64,
    )

    states, index = _dice_states(rules)
    pair_base = np.zeros(len(states), dtype=np.int64)
    opt_start = [0]
    records: list[Option] = []
    scoring: list[int] = []
    best: list[int] = []
    row = 0
    for d, (dice, carry) in enumerate(states):
        if rules.carry_over:
            lo, hi = int(roll_start[dice]), int(roll_start[dice + 1])
        else:
            lo, hi = 0, len(rolls)
        pair_base[d] = row - lo
        for r in rolls[lo:hi]:
            fresh = len(r) == nd and (rules.carry_over or d == 1)
            opts = keep_options(rules, r, carry, fresh)
            for o in opts:
                records.append(
                    (
                        catalog.index_of(o),
                        o.score,
                        len(o.taps),
                        int(o.wins),
                        _next_state(rules, index, len(r), len(o.taps), o.carry),
                    )
                )
            opt_start.append(len(records))
            scoring.append(int(has_scoring_keep(rules, r, carry)))
            best.append(max((o.score for o in opts), default=0))
            row += 1
    opt = np.array(records, dtype=np.int64).reshape(-1, K.OPT_FIELDS)
    carry_rows = np.zeros((len(states), 18), dtype=np.int64)
    dice_of = np.zeros(len(states), dtype=np.int64)
    for d, (dice, carry) in enumerate(states):
        dice_of[d] = dice
        carry_rows[d, :6] = carry.sets
        for f in carry.fills:
            carry_rows[d, 6 + f - 1] = 1
        for f in carry.pairs:
            carry_rows[d, 12 + f - 1] = 1

    cfg = _cfg(rules, catalog)
    obs_index = np.array([OBS_INDEX[name] for name in OBS_SLOT_NAMES], dtype=np.int64)
    if MAX_SEATS != K.MAX_PLAYERS or int(obs_index.max()) >= OBS_DIM:
        raise VectorUnsupportedError("observation layout changed: rebuild the vector kernels")
    head = np.zeros(K.T_NROLLS + 2, dtype=np.int64)
    head[: K.CFG_SIZE] = cfg
    head[K.T_NROLLS] = len(rolls)
    head[K.T_NDS] = len(states)
    opt_start_arr = np.array(opt_start, dtype=np.int64)
    row_scoring = np.array(scoring, dtype=np.int64)
    row_best = np.array(best, dtype=np.int64)
    tab = _flatten(
        head,
        [
            (K.T_OFF_OBS, obs_index),
            (K.T_OFF_COUNTS, roll_counts),
            (K.T_OFF_RSTART, roll_start),
            (K.T_OFF_MC, multichoose),
            (K.T_OFF_PAIR, pair_base),
            (K.T_OFF_OSTART, opt_start_arr),
            (K.T_OFF_SCORING, row_scoring),
            (K.T_OFF_BEST, row_best),
            (K.T_OFF_OPT, opt),
            (K.T_OFF_CARRY, carry_rows),
            (K.T_OFF_DSDICE, dice_of),
        ],
    )
    return VectorTables(
        rules=rules,
        catalog=catalog,
        num_dice=nd,
        roll_start=roll_start,
        roll_counts=roll_counts,
        dice_states=tuple(states),
        pair_base=pair_base,
        opt_start=opt_start_arr,
        opt=opt,
        row_scoring=row_scoring,
        row_best=row_best,
        cfg=cfg,
        obs_index=obs_index,
        tab=tab,
    )


def vector_tables(rules: Rules | str | None) -> VectorTables:
    """The (cached) tables of a preset name or :class:`~greed_env.rules.Rules`.

    Raises:
        VectorUnsupportedError: rules the vector engine does not model.
    """
    return _build(resolve_rules(rules))
