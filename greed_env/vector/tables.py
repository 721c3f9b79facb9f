"""Lookup tables of the vector engine, derived from the reference rules implementation.

Nothing here scores dice or decodes rolls by itself:

* every keep option of every roll comes from :func:`greed_env.rules.scoring.keep_options`
  (the one reference scoring), its action id from the rules'
  :class:`~greed_env.envs.catalog.ActionCatalog`;
* the code-to-roll table is filled by calling :func:`greed_env.rules.sample_roll` with a
  generator that returns each code in turn, so a code means the same roll to the vector
  engine and to the reference engine.

A roll of ``k`` dice is a sorted multiset with a *roll id*; ids of ``k`` dice are
``roll_start[k] .. roll_start[k + 1] - 1`` in ``combinations_with_replacement`` order. One
random *code* in ``[0, 6**num_dice)`` serves a roll of any ``k <= num_dice`` dice as
``code % 6**k`` (uniform, since ``6**k`` divides ``6**num_dice``), decoded by
``decode[decode_start[k] + code % 6**k]``.

>>> t = vector_tables("ten_thousand")
>>> int(t.roll_start[7] - t.roll_start[6]), t.max_options >= 1
(462, True)
>>> r = int(t.decode[t.decode_start[6] + 0])
>>> t.roll_counts[r].tolist()          # code 0 is six 1s
[6, 0, 0, 0, 0, 0]
>>> [t.catalog.labels[a] for a in t.opt_action[1, r, : t.opt_count[1, r]]][:3]
['keep 1', 'keep 1,1', 'keep 1,1,1']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from typing import Any

import numpy as np

from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import MAX_SEATS, OBS_DIM, OBS_INDEX, STREAK_SCALE_DEFAULT
from greed_env.rules import Phase, Rules, new_game, resolve_rules, sample_roll
from greed_env.rules.scoring import EMPTY_CARRY, keep_options
from greed_env.vector.kernels import (
    CFG_ACT_BANK,
    CFG_ACT_BUST,
    CFG_ACT_REROLL,
    CFG_ACT_ROLL,
    CFG_ENTRY,
    CFG_ENTRY_ROLL_SCOPE,
    CFG_ENTRY_UNTIL_MADE,
    CFG_FINAL_ROUND,
    CFG_FIRST_ROLL,
    CFG_HORIZON,
    CFG_HOT_DICE,
    CFG_MIN_BANK,
    CFG_MUST_BEAT,
    CFG_N_ACTIONS,
    CFG_NUM_DICE,
    CFG_PENALTY,
    CFG_PENALTY_AFTER,
    CFG_REROLL_ALL,
    CFG_SIZE,
    CFG_STREAK_SCALE,
    CFG_TARGET,
    CFG_VOLUNTARY_BUST,
    OPT_FIELDS,
    T_HEADER,
    T_MAXOPT,
    T_NROLLS,
    T_OFF_BEST,
    T_OFF_COUNTS,
    T_OFF_DECODE,
    T_OFF_DSTART,
    T_OFF_NOPT,
    T_OFF_OBS,
    T_OFF_OPT,
)

__all__ = [
    "MAX_VECTOR_DICE",
    "VectorTables",
    "VectorUnsupportedError",
    "check_vector_supported",
    "vector_tables",
]

MAX_VECTOR_DICE = 6
"""Largest ``num_dice`` the vector engine tables (the decode table holds ``6**k`` codes)."""

FACES = (1, 2, 3, 4, 5, 6)


# obs index slots (int64 vector of positions in the observation, from OBS_INDEX)
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
)


class VectorUnsupportedError(ValueError):
    """The vector engine does not model these rules; the message names every field."""


def check_vector_supported(rules: Rules) -> None:
    """Raise :class:`VectorUnsupportedError` naming each rules field the engine does not model.

    Modelled: every order-free rule set of at most :data:`MAX_VECTOR_DICE` dice (entry
    thresholds of either scope, ``entry_until_made``, ``min_bank``, hot dice on or off,
    reroll-all with or without must-beat, voluntary bust, bust penalties, the nothing bonus,
    the all-dice bonus, the final round, six-of-a-kind wins, the who-starts roll, the horizon).
    Not modelled: ``carry_over`` / ``trippn`` (tap-order keeps whose outcome depends on the
    turn's working combinations: the options of a roll are a function of the roll *and* the
    carry-over, see ``docs/scale.md``), ``exact_target`` (roll for nothing, split vote and
    roll-off), ``piggyback``.
    """
    bad = []
    if rules.carry_over:
        bad.append("carry_over=True (tap-order keeps with working combinations)")
    if rules.exact_target:
        bad.append("exact_target=True (roll for nothing, split vote, roll-off)")
    if rules.piggyback:
        bad.append("piggyback=True")
    if rules.num_dice > MAX_VECTOR_DICE:
        bad.append(f"num_dice={rules.num_dice} (at most {MAX_VECTOR_DICE})")
    if bad:
        raise VectorUnsupportedError(
            f"the vector engine does not model the {rules.name} rules: " + ", ".join(bad)
        )


class _CodeSource:
    """A stand-in generator whose next ``integers`` draw is a chosen code."""

    def __init__(self) -> None:
        self.code = 0

    def integers(self, high: int, *args: Any, **kwargs: Any) -> int:
        if not 0 <= self.code < high:
            raise ValueError(f"code {self.code} outside [0, {high})")
        return self.code


@dataclass(frozen=True, eq=False)
class VectorTables:
    """Every table the kernels read, for one rules configuration.

    Attributes:
        rules: the configuration.
        catalog: its action catalog (the vector engine's action ids are the catalog's).
        num_dice: dice in a full roll.
        roll_start: ``(num_dice + 2,)``; roll ids of ``k`` dice are ``roll_start[k]`` to
            ``roll_start[k + 1] - 1``.
        roll_size: ``(R,)`` dice in each roll.
        roll_counts: ``(R, 6)`` dice showing each face.
        decode_start: ``(num_dice + 1,)`` offset of the ``k``-dice codes in ``decode``.
        decode: roll id of code ``c`` of ``k`` dice at ``decode[decode_start[k] + c]``.
        opt_count: ``(2, R)`` keep options of a roll; index 0: not fresh, 1: a fresh full
            roll (only rolls of ``num_dice`` dice differ).
        opt_action, opt_score, opt_used, opt_wins: ``(2, R, M)``: catalog id, points, dice
            kept and instant win of each option, in :func:`keep_options` order (the order of
            :func:`~greed_env.rules.legal_moves`).
        opt_best: ``(2, R)`` most points of any option (the points a reroll-all gives up).
        cfg: int64 rules constants and non-keep action ids for the kernels.
        obs_index: int64 positions of the observation entries the kernels write.
        tab: everything above the kernels read, as one flat int64 array (header slots
            ``greed_env.vector.kernels.T_*``, then ``cfg`` values and the sub-tables).
    """

    rules: Rules
    catalog: ActionCatalog
    num_dice: int
    roll_start: np.ndarray
    roll_size: np.ndarray
    roll_counts: np.ndarray
    decode_start: np.ndarray
    decode: np.ndarray
    opt_count: np.ndarray
    opt_action: np.ndarray
    opt_score: np.ndarray
    opt_used: np.ndarray
    opt_wins: np.ndarray
    opt_best: np.ndarray
    cfg: np.ndarray
    obs_index: np.ndarray
    tab: np.ndarray

    @property
    def n_actions(self) -> int:
        return self.catalog.n

    @property
    def max_options(self) -> int:
        return int(self.opt_action.shape[2])

    def roll_of(self, roll_id: int) -> tuple[int, ...]:
        """The sorted faces of a roll id."""
        counts = self.roll_counts[roll_id]
        return tuple(f for f in FACES for _ in range(int(counts[f - 1])))


def _action_id(catalog: ActionCatalog, kind: str) -> int:
    try:
        return catalog.index_of((kind, ()))
    except KeyError:
        return -1


def _flatten(
    cfg: np.ndarray,
    obs_index: np.ndarray,
    roll_counts: np.ndarray,
    decode_start: np.ndarray,
    decode: np.ndarray,
    opt_count: np.ndarray,
    opt_best: np.ndarray,
    options: np.ndarray,
) -> np.ndarray:
    """The flat table: header (cfg values, sizes, offsets), then each sub-table, C order."""
    head = np.zeros(T_HEADER, dtype=np.int64)
    head[: len(cfg)] = cfg
    head[T_NROLLS] = roll_counts.shape[0]
    head[T_MAXOPT] = options.shape[2]
    parts = [
        (T_OFF_OBS, obs_index),
        (T_OFF_COUNTS, roll_counts),
        (T_OFF_DSTART, decode_start),
        (T_OFF_DECODE, decode),
        (T_OFF_NOPT, opt_count),
        (T_OFF_BEST, opt_best),
        (T_OFF_OPT, options),
    ]
    offset = T_HEADER
    chunks = [head]
    for slot, arr in parts:
        head[slot] = offset
        flat = np.ascontiguousarray(arr, dtype=np.int64).ravel()
        chunks.append(flat)
        offset += flat.size
    if options.shape[3] != OPT_FIELDS:
        raise ValueError("option records must have OPT_FIELDS fields")
    return np.concatenate(chunks)


@lru_cache(maxsize=32)
def _build(rules: Rules) -> VectorTables:
    check_vector_supported(rules)
    nd = rules.num_dice
    catalog = ActionCatalog(rules)
    rolls: list[tuple[int, ...]] = []
    roll_start = np.zeros(nd + 2, dtype=np.int64)
    for k in range(1, nd + 1):
        roll_start[k] = len(rolls)
        rolls.extend(combinations_with_replacement(FACES, k))
    roll_start[nd + 1] = len(rolls)
    roll_id = {r: i for i, r in enumerate(rolls)}
    n_rolls = len(rolls)
    roll_size = np.array([len(r) for r in rolls], dtype=np.int64)
    roll_counts = np.array([[r.count(f) for f in FACES] for r in rolls], dtype=np.int64)

    decode_start = np.zeros(nd + 1, dtype=np.int64)
    chunks = []
    source = _CodeSource()
    solo = rules.replace(min_players=1) if rules.min_players > 1 else rules
    at_roll = new_game(solo, 1)
    for k in range(1, nd + 1):
        decode_start[k] = sum(len(c) for c in chunks)
        state = at_roll._replace(phase=Phase.ROLL, dice=k)
        table = np.empty(6**k, dtype=np.int32)
        for code in range(6**k):
            source.code = code
            table[code] = roll_id[sample_roll(rules, state, source)]
        chunks.append(table)
    decode = np.concatenate(chunks)

    per_roll: list[list[list[tuple[int, int, int, bool]]]] = [[], []]
    for fresh in (0, 1):
        for r in rolls:
            opts = keep_options(rules, r, EMPTY_CARRY, bool(fresh) and len(r) == nd)
            per_roll[fresh].append(
                [(catalog.index_of(o), o.score, len(o.taps), o.wins) for o in opts]
            )
    width = max(1, max(len(o) for side in per_roll for o in side))
    opt_count = np.zeros((2, n_rolls), dtype=np.int64)
    opt_action = np.full((2, n_rolls, width), -1, dtype=np.int64)
    opt_score = np.zeros((2, n_rolls, width), dtype=np.int64)
    opt_used = np.zeros((2, n_rolls, width), dtype=np.int64)
    opt_wins = np.zeros((2, n_rolls, width), dtype=np.int64)
    opt_best = np.zeros((2, n_rolls), dtype=np.int64)
    for fresh in (0, 1):
        for i, opts in enumerate(per_roll[fresh]):
            opt_count[fresh, i] = len(opts)
            for j, (a, score, used, wins) in enumerate(opts):
                opt_action[fresh, i, j] = a
                opt_score[fresh, i, j] = score
                opt_used[fresh, i, j] = used
                opt_wins[fresh, i, j] = int(wins)
            opt_best[fresh, i] = max((o[1] for o in opts), default=0)

    cfg = np.zeros(CFG_SIZE, dtype=np.int64)
    cfg[CFG_NUM_DICE] = nd
    cfg[CFG_TARGET] = rules.target
    cfg[CFG_ENTRY] = rules.entry_threshold
    cfg[CFG_ENTRY_ROLL_SCOPE] = int(rules.entry_scope == "roll")
    cfg[CFG_ENTRY_UNTIL_MADE] = int(rules.entry_until_made)
    cfg[CFG_MIN_BANK] = rules.min_bank
    cfg[CFG_HOT_DICE] = int(rules.hot_dice)
    cfg[CFG_REROLL_ALL] = int(rules.reroll_all)
    cfg[CFG_MUST_BEAT] = int(rules.reroll_all_must_beat)
    cfg[CFG_FINAL_ROUND] = int(rules.final_round)
    cfg[CFG_PENALTY_AFTER] = rules.bust_penalty_after
    cfg[CFG_PENALTY] = rules.bust_penalty
    cfg[CFG_HORIZON] = rules.horizon_rounds
    cfg[CFG_FIRST_ROLL] = int(rules.first_player == "roll")
    cfg[CFG_ACT_BANK] = _action_id(catalog, "bank")
    cfg[CFG_ACT_ROLL] = _action_id(catalog, "roll")
    cfg[CFG_ACT_REROLL] = _action_id(catalog, "reroll_all")
    cfg[CFG_ACT_BUST] = _action_id(catalog, "bust")
    cfg[CFG_N_ACTIONS] = catalog.n
    cfg[CFG_VOLUNTARY_BUST] = int(rules.voluntary_bust)
    cfg[CFG_STREAK_SCALE] = rules.bust_penalty_after or STREAK_SCALE_DEFAULT

    obs_index = np.array([OBS_INDEX[name] for name in OBS_SLOT_NAMES], dtype=np.int64)
    if MAX_SEATS != 8 or int(obs_index.max()) >= OBS_DIM:
        raise VectorUnsupportedError("observation layout changed: rebuild the vector kernels")
    tab = _flatten(
        cfg,
        obs_index,
        roll_counts,
        decode_start,
        decode,
        opt_count,
        opt_best,
        np.stack([opt_action, opt_score, opt_used, opt_wins], axis=-1),
    )
    return VectorTables(
        rules=rules,
        catalog=catalog,
        num_dice=nd,
        roll_start=roll_start,
        roll_size=roll_size,
        roll_counts=roll_counts,
        decode_start=decode_start,
        decode=decode,
        opt_count=opt_count,
        opt_action=opt_action,
        opt_score=opt_score,
        opt_used=opt_used,
        opt_wins=opt_wins,
        opt_best=opt_best,
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
