"""Positions as plain JSON, field for field, for hosts in other languages.

The JSON of a :class:`~greed_env.rules.State` holds every field but the event text and the
rules' name, under the field's own name: integers, booleans and lists of them; the carry-over
as ``{"sets": [6 counts], "fills": [faces], "pairs": [faces]}``; ``piggy`` as
``[points, dice]`` or ``null``; ``phase`` as the integer of :class:`~greed_env.rules.Phase`.
docs/portable.md describes each field.

>>> from greed_env.rules import preset, new_game
>>> r = preset("ten_thousand")
>>> s = new_game(r, 2, first_player=0)
>>> d = state_to_json(s)
>>> d["phase"], d["scores"], d["carry"]
(2, [0, 0], {'sets': [0, 0, 0, 0, 0, 0], 'fills': [], 'pairs': []})
>>> state_from_json(d, r) == s._replace(event="")
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from greed_env.rules import Carry, Phase, Rules, State

__all__ = ["STATE_FIELDS", "carry_from_json", "carry_to_json", "state_from_json", "state_to_json"]

STATE_FIELDS: tuple[str, ...] = tuple(f for f in State._fields if f not in ("event", "rules_name"))
"""The fields a position's JSON holds, in :class:`~greed_env.rules.State` order."""

_INT_TUPLES = {
    "scores",
    "streaks",
    "turns",
    "roll",
    "contenders",
    "order_rolls",
    "final_left",
    "finishers",
    "rolloff",
    "rolloff_scores",
    "winners",
}


def carry_to_json(carry: Carry) -> dict[str, list[int]]:
    """``{"sets", "fills", "pairs"}`` of a carry-over."""
    return {"sets": list(carry.sets), "fills": list(carry.fills), "pairs": list(carry.pairs)}


def carry_from_json(data: Mapping[str, Any]) -> Carry:
    """The carry-over of its JSON (see :func:`carry_to_json`)."""
    sets = tuple(int(x) for x in data["sets"])
    if len(sets) != 6:
        raise ValueError(f"a carry's sets hold six counts, got {len(sets)}")
    return Carry(
        sets,  # type: ignore[arg-type]
        tuple(int(x) for x in data["fills"]),
        tuple(int(x) for x in data["pairs"]),
    )


def state_to_json(state: State) -> dict[str, Any]:
    """The JSON of a position (see the module docstring)."""
    out: dict[str, Any] = {}
    for name in STATE_FIELDS:
        value = getattr(state, name)
        if name == "carry":
            out[name] = carry_to_json(value)
        elif name == "piggy":
            out[name] = None if value is None else [int(value[0]), int(value[1])]
        elif name == "phase":
            out[name] = int(value)
        elif name == "entered":
            out[name] = [bool(x) for x in value]
        elif name == "shares":
            out[name] = [float(x) for x in value]
        elif name in _INT_TUPLES:
            out[name] = [int(x) for x in value]
        else:
            out[name] = value
    return out


def state_from_json(data: Mapping[str, Any], rules: Rules | None = None) -> State:
    """The position of its JSON; ``rules`` (optional) names the rules it belongs to.

    Raises:
        ValueError: a missing field or a phase that is not one.
    """
    missing = [f for f in STATE_FIELDS if f not in data]
    if missing:
        raise ValueError("a position's JSON lacks " + ", ".join(missing))
    values: dict[str, Any] = {}
    for name in STATE_FIELDS:
        value = data[name]
        if name == "carry":
            values[name] = carry_from_json(value)
        elif name == "piggy":
            values[name] = None if value is None else (int(value[0]), int(value[1]))
        elif name == "phase":
            values[name] = int(Phase(int(value)))
        elif name == "entered":
            values[name] = tuple(bool(x) for x in value)
        elif name == "shares":
            values[name] = tuple(float(x) for x in value)
        elif name in _INT_TUPLES:
            values[name] = tuple(int(x) for x in value)
        elif isinstance(value, bool):
            values[name] = value
        else:
            values[name] = int(value)
    return State(**values, rules_name=rules.name if rules is not None else "")
