"""Layout of the vector engine's int64 arrays, derived from the reference state.

A batch of ``N`` games is one int64 array ``S`` of shape ``(N, N_COLS)``: one row per game.
Its columns are not written by hand: :data:`STATE_FIELDS` says, for every field of
:class:`greed_env.rules.State`, how the field is held in a row (a scalar column, a block of
:data:`MAX_PLAYERS` seat columns, a seat bitmask, a count column and an ordered block, a roll
or dice-state id, or not held), and :func:`derive_layout` allocates the columns in the order of
``State._fields``, the one-column fields first (the part of a row every kernel reads), the
seat blocks after them. Importing this module fails, naming the field, when ``State`` gains a
field that :data:`STATE_FIELDS` does not place, so the engine cannot drift from the rules.

The numba kernels need plain module-level ints, so the allocated columns are bound below as
``C_*`` (scalar and count columns) and ``B_*`` (first column of a seat block) constants; the
same holds for the episode arrays (``E_*``), the parameter vectors (``EP_*``, ``FP_*``), the
flat table header (``CFG_*``, ``T_*``) and the observation slots (``O_*``, from
:data:`OBS_SLOT_NAMES`). :func:`encode_state` and :func:`decode_row` convert a reference
state to a row and back through the same field table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NamedTuple

import numpy as np

from greed_env.envs.observation import MAX_SEATS
from greed_env.rules import Phase, State

MAX_PLAYERS: Final[int] = MAX_SEATS
"""Seats a row holds (the observation's seat count)."""

# ------------------------------------------------------------------------------------------
# the game rows (S): derived from State._fields


class Held(NamedTuple):
    """How one :class:`~greed_env.rules.State` field is held in a row.

    ``kind``: ``int`` / ``flag`` (one column), ``seats`` / ``seat_flags`` (one column per
    seat), ``seat_set`` (per seat: 1 if the seat is in the tuple), ``seat_mask`` (one column,
    bit ``q`` for seat ``q``), ``sequence`` (a count column and a block, in order),
    ``by_contender`` (a count column and a block indexed by the contender's seat), ``roll``
    (the roll id of the vector tables), ``carry`` (the dice-state id of the vector tables),
    ``absent`` (not held: derived, or refused by :func:`encode_state` when set).
    ``names``: the constants bound to its columns (count column first)."""

    kind: str
    names: tuple[str, ...] = ()


_WIDTH = {
    "int": (1,),
    "flag": (1,),
    "seats": (MAX_PLAYERS,),
    "seat_flags": (MAX_PLAYERS,),
    "seat_set": (MAX_PLAYERS,),
    "seat_mask": (1,),
    "sequence": (1, MAX_PLAYERS),
    "by_contender": (1, MAX_PLAYERS),
    "roll": (1,),
    "carry": (1,),
    "absent": (),
}

STATE_FIELDS: Final[Mapping[str, Held]] = {
    "phase": Held("int", ("C_PHASE",)),
    "player": Held("int", ("C_PLAYER",)),
    "scores": Held("seats", ("B_SCORE",)),
    "entered": Held("seat_flags", ("B_ENTERED",)),
    "streaks": Held("seats", ("B_STREAK",)),
    "turns": Held("seats", ("B_TURNS",)),
    "turn_total": Held("int", ("C_TOTAL",)),
    "dice": Held("int", ("C_DICE",)),
    "roll": Held("roll", ("C_ROLL",)),
    "carry": Held("carry", ("C_DSTATE",)),
    "fresh": Held("flag", ("C_FRESH",)),
    "bar": Held("int", ("C_BAR",)),
    "entry_met": Held("flag", ("C_ENTRY_MET",)),
    "for_nothing": Held("flag", ("C_FOR_NOTHING",)),
    "rounds": Held("int", ("C_ROUNDS",)),
    "piggy": Held("absent"),  # the piggyback offer is not modelled (must be None)
    "taken_over": Held("absent"),  # points taken over by a piggyback (must be 0)
    "contenders": Held("seat_mask", ("C_CONTENDERS",)),
    "order_rolls": Held("by_contender", ("C_NORDER", "B_ORDER")),
    "final_left": Held("seat_set", ("B_OWED",)),
    "endgame": Held("flag", ("C_ENDGAME",)),
    "finishers": Held("sequence", ("C_NFIN", "B_FIN")),
    "votes": Held("int", ("C_VOTES",)),
    "rolloff": Held("sequence", ("C_NROLLOFF", "B_ROLLOFF")),
    "rolloff_scores": Held("sequence", ("C_NRSCORES", "B_RSCORE")),
    "rolloff_round": Held("int", ("C_RROUND",)),
    "winners": Held("seat_mask", ("C_WINNERS",)),
    "shares": Held("absent"),  # derived from the winners
    "event": Held("absent"),  # a log line, not a position
    "rules_name": Held("absent"),  # the tables' rules
}
"""Every :class:`~greed_env.rules.State` field and how a row holds it."""

EXTRA_COLUMNS: Final[tuple[str, ...]] = ("C_NPLAYERS",)
"""Columns that hold no single field: the number of seats (the length of the seat tuples)."""

UNSET_ABSENT: Final[Mapping[str, Any]] = {"piggy": None, "taken_over": 0}
"""Values the ``absent`` fields must have in a state the engine can load."""


def derive_layout(fields: Iterable[str], held: Mapping[str, Held] = STATE_FIELDS) -> dict[str, int]:
    """Column of every ``C_*`` / ``B_*`` name (and ``N_COLS``), allocated in field order.

    Raises:
        ValueError: a field without a place in ``held``, or a place without a field.
    """
    fields = tuple(fields)
    missing = [f for f in fields if f not in held]
    stale = [f for f in held if f not in fields]
    if missing or stale:
        raise ValueError(
            "the vector layout does not match State: "
            + "; ".join(
                part
                for part in (
                    f"no place for {', '.join(missing)}" if missing else "",
                    f"no State field {', '.join(stale)}" if stale else "",
                )
                if part
            )
        )
    singles: list[str] = []  # one-column names first (the hot part of a row), then blocks
    blocks: list[str] = []
    for name in fields:
        h = held[name]
        widths = _WIDTH[h.kind]
        if len(widths) != len(h.names):
            raise ValueError(f"the vector layout of {name} ({h.kind}) needs {len(widths)} names")
        for const, width in zip(h.names, widths, strict=True):
            (singles if width == 1 else blocks).append(const)
    singles.extend(EXTRA_COLUMNS)
    columns = {const: k for k, const in enumerate(singles)}
    col = len(singles)
    for const in blocks:
        columns[const] = col
        col += MAX_PLAYERS
    columns["N_COLS"] = col
    return columns


COLUMNS: Final[Mapping[str, int]] = derive_layout(State._fields)
"""Column of every row constant (``N_COLS``: the row width)."""

C_PHASE: Final[int] = COLUMNS["C_PHASE"]
C_PLAYER: Final[int] = COLUMNS["C_PLAYER"]
C_TOTAL: Final[int] = COLUMNS["C_TOTAL"]
C_DICE: Final[int] = COLUMNS["C_DICE"]
C_ROLL: Final[int] = COLUMNS["C_ROLL"]
C_FRESH: Final[int] = COLUMNS["C_FRESH"]
C_BAR: Final[int] = COLUMNS["C_BAR"]
C_ENTRY_MET: Final[int] = COLUMNS["C_ENTRY_MET"]
C_ROUNDS: Final[int] = COLUMNS["C_ROUNDS"]
C_ENDGAME: Final[int] = COLUMNS["C_ENDGAME"]
C_WINNERS: Final[int] = COLUMNS["C_WINNERS"]
C_NPLAYERS: Final[int] = COLUMNS["C_NPLAYERS"]
C_CONTENDERS: Final[int] = COLUMNS["C_CONTENDERS"]
C_NORDER: Final[int] = COLUMNS["C_NORDER"]  # order rolls so far, at B_ORDER + contender seat
C_DSTATE: Final[int] = COLUMNS["C_DSTATE"]  # carry-over rules: dice state; 0: nothing working
C_FOR_NOTHING: Final[int] = COLUMNS["C_FOR_NOTHING"]
C_NFIN: Final[int] = COLUMNS["C_NFIN"]  # finishers so far (exact target), in order at B_FIN
C_VOTES: Final[int] = COLUMNS["C_VOTES"]
C_NROLLOFF: Final[int] = COLUMNS["C_NROLLOFF"]  # roll-off order length (0: no roll-off)
C_NRSCORES: Final[int] = COLUMNS["C_NRSCORES"]  # roll-off scores of this round so far
C_RROUND: Final[int] = COLUMNS["C_RROUND"]
B_SCORE: Final[int] = COLUMNS["B_SCORE"]
B_ENTERED: Final[int] = COLUMNS["B_ENTERED"]
B_STREAK: Final[int] = COLUMNS["B_STREAK"]
B_TURNS: Final[int] = COLUMNS["B_TURNS"]
B_OWED: Final[int] = COLUMNS["B_OWED"]
B_ORDER: Final[int] = COLUMNS["B_ORDER"]
B_FIN: Final[int] = COLUMNS["B_FIN"]
B_ROLLOFF: Final[int] = COLUMNS["B_ROLLOFF"]
B_RSCORE: Final[int] = COLUMNS["B_RSCORE"]
N_COLS: Final[int] = COLUMNS["N_COLS"]

_unbound = sorted(set(COLUMNS) - {k for k, v in globals().items() if COLUMNS.get(k) == v})
if _unbound:  # a name placed by STATE_FIELDS that no constant above binds
    raise ImportError(f"greed_env.vector.layout binds no constant for {', '.join(_unbound)}")

# phases: greed_env.rules.Phase
PH_ORDER_ROLL: Final[int] = int(Phase.ORDER_ROLL)
PH_START: Final[int] = int(Phase.START)
PH_ROLL: Final[int] = int(Phase.ROLL)
PH_KEEP: Final[int] = int(Phase.KEEP)
PH_CONTINUE: Final[int] = int(Phase.CONTINUE)
PH_SPLIT: Final[int] = int(Phase.SPLIT)
PH_ORDER_CHOICE: Final[int] = int(Phase.ORDER_CHOICE)
PH_OVER: Final[int] = int(Phase.OVER)

# ------------------------------------------------------------------------------------------
# row <-> reference state


def encode_state(state: State, roll_id: int, dice_state: int) -> np.ndarray:
    """The row of ``state`` (``roll_id`` and ``dice_state`` from the vector tables).

    Raises:
        ValueError: more seats than a row holds, or an ``absent`` field that is set.
    """
    n = state.num_players
    if n > MAX_PLAYERS:
        raise ValueError(f"the vector engine holds at most {MAX_PLAYERS} seats, got {n}")
    for name, unset in UNSET_ABSENT.items():
        if getattr(state, name) != unset:
            raise ValueError(
                f"the vector engine does not model State.{name} (got {getattr(state, name)!r})"
            )
    row = np.zeros(N_COLS, dtype=np.int64)
    row[C_NPLAYERS] = n
    over = state.phase == Phase.OVER
    for name, h in STATE_FIELDS.items():
        value = getattr(state, name)
        cols = [COLUMNS[c] for c in h.names]
        if h.kind in ("int", "flag"):
            row[cols[0]] = int(value)
        elif h.kind in ("seats", "seat_flags"):
            row[cols[0] : cols[0] + n] = [int(v) for v in value]
        elif h.kind == "seat_set":
            for q in value:
                row[cols[0] + q] = 1
        elif h.kind == "seat_mask":
            if name != "winners" or over:  # winners are held once the game is over
                row[cols[0]] = sum(1 << q for q in value)
        elif h.kind == "sequence":
            row[cols[0]] = len(value)
            row[cols[1] : cols[1] + len(value)] = value
        elif h.kind == "by_contender":
            row[cols[0]] = len(value)
            for k, v in enumerate(value):
                row[cols[1] + state.contenders[k]] = v
        elif h.kind == "roll":
            row[cols[0]] = roll_id
        elif h.kind == "carry":
            row[cols[0]] = dice_state
    return row


def decode_row(
    row: np.ndarray,
    roll_of: Callable[[int], tuple[int, ...]],
    carry_of: Callable[[int], Any],
    rules_name: str,
) -> dict[str, Any]:
    """The reference-state fields of a row (every field but the ``absent`` ones, and
    ``rules_name``). ``final_left`` is in the reference's order: the owed seats after the
    player to act."""
    n = int(row[C_NPLAYERS])
    seats = range(n)
    over = int(row[C_PHASE]) == Phase.OVER
    out: dict[str, Any] = {}
    for name, h in STATE_FIELDS.items():
        cols = [COLUMNS[c] for c in h.names]
        if h.kind == "int":
            out[name] = int(row[cols[0]])
        elif h.kind == "flag":
            out[name] = bool(row[cols[0]])
        elif h.kind == "seats":
            out[name] = tuple(int(row[cols[0] + q]) for q in seats)
        elif h.kind == "seat_flags":
            out[name] = tuple(bool(row[cols[0] + q]) for q in seats)
        elif h.kind == "seat_set":
            p = int(row[C_PLAYER])
            out[name] = tuple(q for k in range(n) if row[cols[0] + (q := (p + k) % n)])
        elif h.kind == "seat_mask":
            mask = int(row[cols[0]])
            out[name] = (
                () if name == "winners" and not over else tuple(q for q in seats if mask >> q & 1)
            )
        elif h.kind == "sequence":
            out[name] = tuple(int(x) for x in row[cols[1] : cols[1] + int(row[cols[0]])])
        elif h.kind == "by_contender":
            order = out["contenders"][: int(row[cols[0]])]
            out[name] = tuple(int(row[cols[1] + q]) for q in order)
        elif h.kind == "roll":
            r = int(row[cols[0]])
            out[name] = () if r < 0 else roll_of(r)
        elif h.kind == "carry":
            out[name] = carry_of(int(row[cols[0]]))
    out["rules_name"] = rules_name
    return out


# ------------------------------------------------------------------------------------------
# the flat table (tab): rules constants, non-keep action ids, then the sub-table header

(
    CFG_NUM_DICE,
    CFG_TARGET,
    CFG_ENTRY,
    CFG_ENTRY_ROLL_SCOPE,
    CFG_ENTRY_UNTIL_MADE,
    CFG_MIN_BANK,
    CFG_HOT_DICE,
    CFG_REROLL_ALL,
    CFG_MUST_BEAT,
    CFG_FINAL_ROUND,
    CFG_PENALTY_AFTER,
    CFG_PENALTY,
    CFG_HORIZON,
    CFG_FIRST_ROLL,
    CFG_ACT_BANK,
    CFG_ACT_ROLL,
    CFG_ACT_REROLL,
    CFG_ACT_BUST,
    CFG_N_ACTIONS,
    CFG_VOLUNTARY_BUST,
    CFG_STREAK_SCALE,
    CFG_EXACT,
    CFG_CARRY,
    CFG_SPLIT_VOTE,
    CFG_ROLLOFF_HORIZON,
    CFG_ACT_FOR_NOTHING,
    CFG_ACT_SPLIT,
    CFG_ACT_REFUSE,
    CFG_ACT_FIRST,
    CFG_ACT_LAST,
    CFG_TRIPPN,
    CFG_ROUNDS,  # a fixed number of rounds (0: none)
    CFG_SIX_KIND,  # a roll showing six of a kind wins at once
    CFG_SCALE,  # points scale of the observation (the target, or a nominal one without)
    CFG_SIZE,
) = range(35)

(
    T_NROLLS,
    T_NDS,
    T_OFF_OBS,
    T_OFF_COUNTS,
    T_OFF_RSTART,
    T_OFF_MC,
    T_OFF_SBASE,  # per dice state: start of its block in the row index (-1: none yet)
    T_OFF_OSTART,
    T_OFF_SCORING,
    T_OFF_BEST,
    T_OFF_OPT,
    T_OFF_CARRY,
    T_OFF_DSDICE,
    T_OFF_RINDEX,  # (dice state, roll) -> option row, -1 where not built (Trippn)
    T_OFF_REQ,  # (dice state, roll id) pairs of missing rows the kernels asked for
    T_NREQ,
    T_CAPREQ,
    T_OFF_FOUR,  # face counts (4 bits per face) of every 4-digit base-6 code
    T_OFF_POW6,
    T_HEADER,
) = range(CFG_SIZE, CFG_SIZE + 20)

OPT_ACTION, OPT_SCORE, OPT_USED, OPT_WINS, OPT_NEXT, OPT_FIELDS = range(6)
"""Fields of one keep-option record."""
CARRY_FIELDS: Final[int] = 18  # working set size of each face, open fill flags, working pair flags

# observation slots: positions at tab[T_OFF_OBS + O_*] of these observation names
OBS_SLOT_NAMES: Final[tuple[str, ...]] = (
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
(
    O_NUM_DICE,
    O_NUM_PLAYERS,
    O_EXACT,
    O_ENTRY,
    O_MIN_BANK,
    O_SHOWING,
    O_MY_TURN,
    O_IN_HAND,
    O_FRESH,
    O_TURN_TOTAL,
    O_CAN_BANK,
    O_ENTRY_MET,
    O_ENTRY_MISSING,
    O_TO_TARGET,
    O_TO_TARGET_AFTER,
    O_PRESENT,
    O_SCORE,
    O_ENTERED,
    O_STREAK,
    O_OWED,
    O_PHASE,
    O_FINAL,
    O_ME_OWED,
    O_BAR_ACTIVE,
    O_BAR,
    O_PROGRESS,
    O_WENT_OUT,
    O_WORKING_SET,
    O_OPEN_FILL,
    O_WORKING_PAIRS,
    O_IN_ROLLOFF,
    O_ROLLOFF_BEST,
    O_ROLLOFF_ROUND,
    O_SPLIT_VOTES,
) = range(len(OBS_SLOT_NAMES))

# ------------------------------------------------------------------------------------------
# episodes: modes, opponents, parameter vectors (ep: int, fp: float), episode columns (E)

MODE_TURN, MODE_RACE, MODE_DUEL = range(3)
OPP_RANDOM, OPP_THRESHOLD, OPP_OPTIMAL = range(3)  # optimal: the solver's duel policy arrays
KEEP_MAX_SCORE, KEEP_MOST, KEEP_FEWEST = range(3)

(
    EP_MODE,
    EP_NPLAYERS,
    EP_FIXED_SEAT,
    EP_MAX_STEPS,
    EP_MAX_TURNS,
    EP_OPPONENT,
    EP_BANK_AT,
    EP_KEEP_STYLE,
    EP_MIN_DICE,
    EP_AUTORESET,
    EP_OPT_UNIT,  # OPP_OPTIMAL: solver unit (points), target in units, deepest deficit
    EP_OPT_TARGET,
    EP_OPT_DEFICIT,
    EP_SIZE,
) = range(14)
FP_REWARD_SCALE, FP_ILLEGAL_REWARD, FP_SIZE = range(3)

(
    E_STAGE,
    E_SEAT,
    E_STEPS,
    E_TURNS_DONE,
    E_CODE_READ,
    E_CODE_WRITE,
    E_U_READ,
    E_U_WRITE,
    E_DONE,
    E_ILLEGAL,
    E_TERMINATED,
    E_TRUNCATED,
    E_COLS,
) = range(13)
STAGE_IDLE, STAGE_ADVANCE, STAGE_INIT, STAGE_RESET_ADVANCE, STAGE_OVER = range(5)

OK, STARVED, MISSING = range(3)
"""Kernel status: done; out of random draws; the roll's option row is not built yet."""


def constants() -> dict[str, int]:
    """Every upper-case int constant of the layout (the cache stamp of the kernels)."""
    return {k: v for k, v in globals().items() if k.isupper() and isinstance(v, int)}
