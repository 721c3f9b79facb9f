"""The float32 observation vector, seen from one seat, and its generated index table.

The layout is the same for every rules configuration (:data:`OBS_DIM` entries): seats are
rotated so that slot 0 is the observing player ("me"), slot ``k`` the ``k``-th seat after
mine, for up to :data:`MAX_SEATS` seats, padded with zeros and flagged by ``seat_present``.
Points are divided by the rules' target and clipped, dice counts by ``num_dice``; every
entry lies in the ``low..high`` of its row in :data:`OBSERVATION_SPEC`, which is also what
the Gymnasium ``Box`` declares. A model trained on one spec version must refuse another:
compare :func:`observation_spec` ``["version"]`` with :data:`OBS_SPEC_VERSION`, or ask
:func:`spec_version_reads` whether an older version still reads the same for given rules.
Rules without a target (``target=0``, a game of a fixed number of rounds) scale points by
:data:`NO_TARGET_SCALE` instead.

>>> from greed_env.rules import preset, new_game, apply_roll
>>> r = preset("ten_thousand")
>>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
>>> obs = encode_observation(r, s)
>>> obs.shape, obs.dtype, OBS_DIM
((106,), dtype('float32'), 106)
>>> [round(float(x), 3) for x in obs[OBS_INDEX["showing_1"]: OBS_INDEX["showing_6"] + 1]]
[0.5, 0.167, 0.167, 0.0, 0.167, 0.0]
>>> observation_spec(r)["version"] == OBS_SPEC_VERSION
True
>>> check_observation(obs[:-1])
Traceback (most recent call last):
...
ValueError: observation must have shape (106,) (spec v2), got (105,)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from greed_env.rules import Phase, Rules, State, can_bank

__all__ = [
    "MAX_SEATS",
    "NO_TARGET_SCALE",
    "OBSERVATION_SPEC",
    "OBS_DIM",
    "OBS_INDEX",
    "OBS_SPEC_VERSION",
    "ObsEntry",
    "check_observation",
    "check_observation_spec",
    "encode_observation",
    "observation_bounds",
    "observation_spec",
    "observation_table",
    "score_scale",
    "spec_version_reads",
]

OBS_SPEC_VERSION = 2
"""Bumped whenever an index, a scaling or a bound of the observation changes.

* v1: the first layout.
* v2: ``round_progress`` counts toward the end of a game of a fixed number of rounds
  (``rules.rounds``), which shows the rounds left; points of rules without a target are scaled
  by :data:`NO_TARGET_SCALE`. Both read as in v1 for rules with ``rounds=0``, the only rules v1
  knew, so a v1 model stays valid there (:func:`spec_version_reads`).
"""

NO_TARGET_SCALE = 10_000
"""Points scale of the observation for rules without a target (``target=0``)."""

MAX_SEATS = 8
STREAK_SCALE_DEFAULT = 3
FACES = (1, 2, 3, 4, 5, 6)


class ObsEntry(NamedTuple):
    """One observation entry: index, name, bounds and how the raw quantity is scaled."""

    index: int
    name: str
    low: float
    high: float
    scaling: str


_GROUPS: list[tuple[str, int, float, float, str]] = [
    ("num_dice", 1, 0.0, 1.0, "rules.num_dice / 8"),
    ("num_players", 1, 0.0, 1.0, "players / 8"),
    ("exact_target", 1, 0.0, 1.0, "1 if the rules need an exact finish"),
    ("entry_threshold", 1, 0.0, 1.0, "rules.entry_threshold / target"),
    ("min_bank", 1, 0.0, 1.0, "rules.min_bank / target"),
    ("showing", 6, 0.0, 1.0, "dice showing this face / num_dice (KEEP phase)"),
    ("my_turn", 1, 0.0, 1.0, "1 if the observing seat is the one to act"),
    ("dice_in_hand", 1, 0.0, 1.0, "dice rolled (KEEP) or left to roll / num_dice"),
    ("fresh", 1, 0.0, 1.0, "1 if the dice in hand are a fresh full set"),
    ("turn_total", 1, 0.0, 2.0, "unbanked turn points / target, clipped"),
    ("can_bank", 1, 0.0, 1.0, "1 if banking is legal now"),
    ("entry_met", 1, 0.0, 1.0, "1 if a keep this turn met the come-in threshold"),
    ("entry_missing", 1, 0.0, 1.0, "come-in points still missing this turn / target (0 once in)"),
    ("to_target", 1, -1.0, 2.0, "(target - my banked score) / target, clipped"),
    ("to_target_after_bank", 1, -1.0, 2.0, "(target - banked - turn total) / target, clipped"),
    ("seat_present", MAX_SEATS, 0.0, 1.0, "1 for a seat in the game (slot 0 = me)"),
    ("score", MAX_SEATS, -1.0, 2.0, "banked score / target, clipped, per seat from mine"),
    ("entered", MAX_SEATS, 0.0, 1.0, "1 if the seat has come in"),
    (
        "bust_streak",
        MAX_SEATS,
        0.0,
        1.0,
        "busts in a row / bust_penalty_after (3 if none), clipped",
    ),
    ("went_out", MAX_SEATS, 0.0, 1.0, "1 if the seat went out (exact-target finishers)"),
    ("owed_final_turn", MAX_SEATS, 0.0, 1.0, "1 if the seat still has its final-round turn"),
    ("working_set", 6, 0.0, 1.0, "dice in the working set of this face / num_dice"),
    ("open_fill", 6, 0.0, 1.0, "1 if this face fills a small straight made earlier"),
    ("working_pairs", 6, 0.0, 1.0, "1 if this face is a pair of working three pairs"),
    ("phase", 8, 0.0, 1.0, "one-hot of the Phase enum (ORDER_ROLL .. OVER)"),
    ("final_round", 1, 0.0, 1.0, "1 once someone reached the target (final round)"),
    ("me_owed_final_turn", 1, 0.0, 1.0, "1 if I am playing or still owed a final-round turn"),
    ("in_rolloff", 1, 0.0, 1.0, "1 during a roll-off"),
    ("rolloff_best", 1, 0.0, 2.0, "best roll-off total so far this round / target, clipped"),
    ("rolloff_round", 1, 0.0, 1.0, "roll-off round / rolloff_horizon"),
    ("split_votes", 1, 0.0, 1.0, "finishers who agreed to split / players"),
    ("bar_active", 1, 0.0, 1.0, "1 if a keep must beat the points given up by a reroll-all"),
    ("bar", 1, 0.0, 2.0, "points the next keep must beat / target, clipped"),
    ("piggy_offer", 1, 0.0, 1.0, "1 if the previous player's turn can be taken over"),
    ("piggy_total", 1, 0.0, 2.0, "turn total on offer / target, clipped"),
    ("piggy_dice", 1, 0.0, 1.0, "dice on offer / num_dice"),
    (
        "round_progress",
        1,
        0.0,
        1.0,
        "turns played / (rounds * players): 1 - rounds left / rounds; without a fixed number "
        "of rounds, / (horizon_rounds * players)",
    ),
]


def _build_spec() -> tuple[ObsEntry, ...]:
    out: list[ObsEntry] = []
    for name, size, low, high, scaling in _GROUPS:
        if size == 1:
            out.append(ObsEntry(len(out), name, low, high, scaling))
            continue
        for k in range(size):
            if name == "phase":
                suffix = Phase(k).name
            elif size == 6:
                suffix = str(FACES[k])
            else:
                suffix = str(k)
            out.append(ObsEntry(len(out), f"{name}_{suffix}", low, high, scaling))
    return tuple(out)


OBSERVATION_SPEC: tuple[ObsEntry, ...] = _build_spec()
OBS_DIM = len(OBSERVATION_SPEC)
OBS_INDEX: dict[str, int] = {e.name: e.index for e in OBSERVATION_SPEC}
_LOW = np.array([e.low for e in OBSERVATION_SPEC], dtype=np.float32)
_HIGH = np.array([e.high for e in OBSERVATION_SPEC], dtype=np.float32)


def observation_bounds() -> tuple[np.ndarray, np.ndarray]:
    """Copies of the ``low`` and ``high`` float32 arrays of the observation ``Box``."""
    return _LOW.copy(), _HIGH.copy()


def score_scale(rules: Rules) -> int:
    """Points that the observation reads as 1.0: the target, or :data:`NO_TARGET_SCALE`."""
    return rules.target or NO_TARGET_SCALE


def spec_version_reads(version: Any, rules: Rules) -> bool:
    """Whether observations of spec ``version`` are those of this code for ``rules``.

    The current version always is; v1 is for rules without a fixed number of rounds, where v2
    changed nothing.
    """
    return version == OBS_SPEC_VERSION or (version == 1 and rules.rounds == 0)


def observation_spec(rules: Rules) -> dict[str, Any]:
    """What a model needs to check before acting on these observations.

    Returns ``{"version", "dim", "dtype", "max_seats", "rules", "rules_fingerprint",
    "entries"}``; ``entries`` lists ``{"index", "name", "low", "high", "scaling"}``.
    """
    return {
        "version": OBS_SPEC_VERSION,
        "dim": OBS_DIM,
        "dtype": "float32",
        "max_seats": MAX_SEATS,
        "rules": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "entries": [e._asdict() for e in OBSERVATION_SPEC],
    }


def check_observation_spec(spec: Mapping[str, Any]) -> None:
    """Refuse a model's recorded observation spec unless it matches this code's.

    Raises:
        ValueError: missing keys, or a version or dimension other than
            :data:`OBS_SPEC_VERSION` / :data:`OBS_DIM`.
    """
    version, dim = spec.get("version"), spec.get("dim")
    if version != OBS_SPEC_VERSION or dim != OBS_DIM:
        raise ValueError(
            f"observation spec mismatch: the model expects version {version!r} with {dim!r} "
            f"entries, this greed_env encodes version {OBS_SPEC_VERSION} with {OBS_DIM}"
        )


def check_observation(obs: Any) -> np.ndarray:
    """``obs`` as a float32 array of shape ``(OBS_DIM,)``; anything else is refused.

    Raises:
        ValueError: wrong shape, a non-numeric dtype, or non-finite entries.
    """
    arr = np.asarray(obs)
    if arr.shape != (OBS_DIM,):
        raise ValueError(
            f"observation must have shape ({OBS_DIM},) (spec v{OBS_SPEC_VERSION}), got {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"observation must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float32, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError("observation has non-finite entries")
    return arr


def observation_table(group_seats: bool = True) -> str:
    """The index table as Markdown; per-seat and per-face groups on one row each by default."""
    lines = ["| index | name | range | scaling |", "|---|---|---|---|"]
    i = 0
    for name, size, low, high, scaling in _GROUPS:
        idx = f"{i}" if size == 1 else f"{i}-{i + size - 1}"
        label = name if size == 1 else f"{name}[{size}]"
        if size > 1 and not group_seats:
            for e in OBSERVATION_SPEC[i : i + size]:
                lines.append(f"| {e.index} | {e.name} | {low:g}..{high:g} | {scaling} |")
        else:
            lines.append(f"| {idx} | {label} | {low:g}..{high:g} | {scaling} |")
        i += size
    return "\n".join(lines)


def _clip(x: float, low: float, high: float) -> float:
    return low if x < low else high if x > high else x


_I_NUM_DICE = OBS_INDEX["num_dice"]
_I_SHOWING = OBS_INDEX["showing_1"]
_I_MY_TURN = OBS_INDEX["my_turn"]
_I_IN_HAND = OBS_INDEX["dice_in_hand"]
_I_FRESH = OBS_INDEX["fresh"]
_I_TURN_TOTAL = OBS_INDEX["turn_total"]
_I_CAN_BANK = OBS_INDEX["can_bank"]
_I_ENTRY_MET = OBS_INDEX["entry_met"]
_I_ENTRY_MISSING = OBS_INDEX["entry_missing"]
_I_TO_TARGET = OBS_INDEX["to_target"]
_I_PRESENT = OBS_INDEX["seat_present_0"]
_I_SCORE = OBS_INDEX["score_0"]
_I_ENTERED = OBS_INDEX["entered_0"]
_I_STREAK = OBS_INDEX["bust_streak_0"]
_I_OUT = OBS_INDEX["went_out_0"]
_I_OWED = OBS_INDEX["owed_final_turn_0"]
_I_SET = OBS_INDEX["working_set_1"]
_I_FILL = OBS_INDEX["open_fill_1"]
_I_PAIRS = OBS_INDEX["working_pairs_1"]
_I_PHASE = OBS_INDEX["phase_ORDER_ROLL"]
_I_FINAL = OBS_INDEX["final_round"]
_I_ROLLOFF_BEST = OBS_INDEX["rolloff_best"]
_I_SPLIT = OBS_INDEX["split_votes"]
_I_BAR = OBS_INDEX["bar_active"]
_I_PIGGY = OBS_INDEX["piggy_offer"]
_I_PROGRESS = OBS_INDEX["round_progress"]


def encode_observation(
    rules: Rules, state: State, seat: int | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The observation of ``state`` from ``seat`` (default: the player to act).

    Args:
        rules: the configuration the state belongs to.
        state: any position, including chance and terminal ones.
        seat: the observing seat; slot 0 of every per-seat group.
        out: an optional float32 array of shape ``(OBS_DIM,)`` to fill in place.

    Raises:
        ValueError: ``out`` has the wrong shape or dtype, or ``seat`` is not a seat.
    """
    n = state.num_players
    me = state.player if seat is None else seat
    if not 0 <= me < n:
        raise ValueError(f"seat {me} is not a seat of a {n}-player game")
    if out is not None and (out.shape != (OBS_DIM,) or out.dtype != np.float32):
        raise ValueError(
            f"observation buffer must be float32 of shape ({OBS_DIM},), got {out.dtype} {out.shape}"
        )
    v = _template(rules, n)
    target = float(score_scale(rules))
    nd = float(rules.num_dice)
    phase = state.phase
    if phase == Phase.KEEP:
        for f in state.roll:
            v[_I_SHOWING + f - 1] += 1.0 / nd
    acting = state.player == me and phase != Phase.OVER
    v[_I_MY_TURN] = float(acting)
    v[_I_IN_HAND] = state.dice / nd
    v[_I_FRESH] = float(state.fresh)
    v[_I_TURN_TOTAL] = _clip(state.turn_total / target, 0.0, 2.0)
    v[_I_CAN_BANK] = float(acting and phase == Phase.CONTINUE and can_bank(rules, state))
    v[_I_ENTRY_MET] = float(state.entry_met)
    if acting and not state.entered[me] and rules.entry_threshold > 0:
        v[_I_ENTRY_MISSING] = _clip((rules.entry_threshold - state.turn_total) / target, 0.0, 1.0)
    my_score = state.scores[me]
    v[_I_TO_TARGET] = _clip((target - my_score) / target, -1.0, 2.0)
    unbanked = state.turn_total if acting else 0
    v[_I_TO_TARGET + 1] = _clip((target - my_score - unbanked) / target, -1.0, 2.0)
    streak_scale = float(rules.bust_penalty_after or STREAK_SCALE_DEFAULT)
    finishers = state.finishers
    owed = state.final_left
    scores, entered, streaks = state.scores, state.entered, state.streaks
    for k in range(min(n, MAX_SEATS)):
        p = (me + k) % n
        v[_I_SCORE + k] = _clip(scores[p] / target, -1.0, 2.0)
        if entered[p]:
            v[_I_ENTERED + k] = 1.0
        if streaks[p]:
            v[_I_STREAK + k] = _clip(streaks[p] / streak_scale, 0.0, 1.0)
        if p in finishers:
            v[_I_OUT + k] = 1.0
        if p in owed:
            v[_I_OWED + k] = 1.0
    carry = state.carry
    if carry.sets != _NO_SETS:
        for k in range(6):
            if carry.sets[k]:
                v[_I_SET + k] = _clip(carry.sets[k] / nd, 0.0, 1.0)
    for f in carry.fills:
        v[_I_FILL + f - 1] = 1.0
    for f in carry.pairs:
        v[_I_PAIRS + f - 1] = 1.0
    v[_I_PHASE + int(phase)] = 1.0
    v[_I_FINAL] = float(state.endgame)
    v[_I_FINAL + 1] = float(me in owed)
    in_rolloff = state.in_rolloff
    v[_I_FINAL + 2] = float(in_rolloff)
    if state.rolloff_scores:
        v[_I_ROLLOFF_BEST] = _clip(max(state.rolloff_scores) / target, 0.0, 2.0)
    if in_rolloff:
        v[_I_ROLLOFF_BEST + 1] = _clip(state.rolloff_round / rules.rolloff_horizon, 0.0, 1.0)
    if phase == Phase.SPLIT:
        v[_I_SPLIT] = state.votes / n
    if state.bar >= 0:
        v[_I_BAR] = 1.0
        v[_I_BAR + 1] = _clip(state.bar / target, 0.0, 2.0)
    if state.piggy is not None:
        v[_I_PIGGY] = 1.0
        v[_I_PIGGY + 1] = _clip(state.piggy[0] / target, 0.0, 2.0)
        v[_I_PIGGY + 2] = _clip(state.piggy[1] / nd, 0.0, 1.0)
    v[_I_PROGRESS] = _clip(state.rounds / ((rules.rounds or rules.horizon_rounds) * n), 0.0, 1.0)
    if out is None:
        return np.array(v, dtype=np.float32)
    out[:] = v
    return out


_NO_SETS = (0, 0, 0, 0, 0, 0)
_TEMPLATES: dict[tuple[Rules, int], list[float]] = {}


def _template(rules: Rules, n: int) -> list[float]:
    """A fresh list holding the entries fixed by the rules and the number of seats."""
    base = _TEMPLATES.get((rules, n))
    if base is None:
        target = float(score_scale(rules))
        base = [0.0] * OBS_DIM
        base[_I_NUM_DICE] = rules.num_dice / 8.0
        base[_I_NUM_DICE + 1] = n / 8.0
        base[_I_NUM_DICE + 2] = float(rules.exact_target)
        base[_I_NUM_DICE + 3] = _clip(rules.entry_threshold / target, 0.0, 1.0)
        base[_I_NUM_DICE + 4] = _clip(rules.min_bank / target, 0.0, 1.0)
        for k in range(min(n, MAX_SEATS)):
            base[_I_PRESENT + k] = 1.0
        if len(_TEMPLATES) > 4096:
            _TEMPLATES.clear()
        _TEMPLATES[(rules, n)] = base
    return base.copy()
