"""``greed rules`` (list presets, show one preset's fields) and ``greed score`` (read one keep).

Both take ``--set FIELD=VALUE`` overrides, validated by the rules configuration; a bad preset,
field or value exits with status 2 and the :class:`RulesError` message on stderr.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from greed_env.commands import argtypes
from greed_env.rules.config import PRESET_SOURCES, PRESETS, Rules, RulesError, preset
from greed_env.rules.scoring import IllegalKeep, read_keep

__all__ = ["CommandError", "parse_sets", "register", "rules_from_args", "summary"]


class CommandError(Exception):
    """A user error in a command's arguments; the command prints the message and exits 2."""


def parse_sets(items: Sequence[str] | None) -> dict[str, str]:
    """``["FIELD=VALUE", ...]`` -> ``{FIELD: VALUE}`` (:func:`greed_env.rules.config.parse_sets`)."""
    try:
        return argtypes.parse_sets(items)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


_FIELD_IN_MESSAGE = re.compile(r"rules field '(\w+)'")


def rules_from_args(name: str | Rules, sets: Sequence[str] | None) -> Rules:
    """The preset ``name`` (or the rules given) with the ``--set`` overrides.

    Raises:
        CommandError: naming the problem; when an override breaks a field the user did not set
            (``--set num_dice=1`` leaves a six-dice straight), the message names the ``--set``
            and the preset's field it conflicts with.
    """
    overrides = parse_sets(sets)
    try:
        return preset(name, **overrides) if isinstance(name, str) else name.replace(**overrides)
    except RulesError as exc:
        raise CommandError(_conflict(name, overrides, str(exc))) from None


def _conflict(name: str | Rules, overrides: dict[str, str], message: str) -> str:
    """``message`` led by the ``--set`` at fault when it names a field the user did not set."""
    found = _FIELD_IN_MESSAGE.search(message)
    if not overrides or found is None or found.group(1) in overrides:
        return message
    field_name = found.group(1)
    base = name if isinstance(name, Rules) else PRESETS.get(name.strip().lower())
    given = " ".join(f"--set {k}={v}" for k, v in overrides.items())
    where = f"{base.name}'s {field_name}" if base is not None else field_name
    return (f"{given} conflicts with {where}, which you did not set: {message}; "
            f"change it too with --set {field_name}=...")


def add_rules_options(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """Add ``--rules NAME`` and repeatable ``--set FIELD=VALUE`` to ``parser``."""
    parser.add_argument(
        "--rules",
        required=required,
        default=None if required else "ten_thousand",
        metavar="NAME",
        help="rules preset (see `greed rules`)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override one rules field (repeatable), e.g. --set entry_threshold=500",
    )


def summary(rules: Rules) -> str:
    """One line describing what sets ``rules`` apart, derived from its fields."""
    bits: list[str] = []
    if rules.exact_target:
        bits.append(f"exactly {rules.target:,} to go out")
    if rules.entry_threshold:
        scope = "turn" if rules.entry_scope == "turn" else "roll"
        when = "" if rules.entry_until_made else " (first turn only)"
        bits.append(f"{rules.entry_threshold} in one {scope} to come in{when}")
    if rules.min_bank:
        bits.append(f"bank {rules.min_bank}+")
    growth = {
        "none": "no sets past three",
        "additive": "sets grow by their value",
        "doubling": "sets double per die",
        "fixed": "4/5/6 of a kind " + "/".join(str(v) for v in rules.fixed_set_values[:3]),
    }[rules.set_growth]
    bits.append(growth)
    if rules.carry_over:
        bits.append("tap order matters, sets stay working")
    if rules.trippn:
        bits.append("Trippn: working sets survive an and-roll")
    if rules.hot_dice:
        bits.append("hot dice")
    if rules.reroll_all:
        bits.append("reroll all" + (" must beat" if rules.reroll_all_must_beat else ""))
    if rules.piggyback:
        bits.append("piggyback")
    if rules.nothing_bonus:
        bits.append(f"nothing scores {rules.nothing_bonus}")
    if rules.bust_penalty_after:
        bits.append(f"{rules.bust_penalty_after} busts in a row -{rules.bust_penalty}")
    if rules.six_kind_wins:
        bits.append("six of a kind rolled wins")
    if rules.final_round:
        bits.append("final round")
    if rules.rounds:
        bits.append(f"{rules.rounds} rounds, highest score wins" + ("" if rules.target else " (no target)"))
    if rules.tie_rule == "split_vote":
        bits.append("ties split or roll off")
    return ", ".join(bits)


def _value_text(value: Any) -> str:
    if isinstance(value, tuple):
        return (
            "(" + ", ".join(_value_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
        )
    return repr(value) if isinstance(value, str) else str(value)


def _cmd_rules(args: argparse.Namespace) -> int:
    out = sys.stdout
    if args.name is None:
        if args.set:
            return _fail("rules", "--set needs a preset NAME to apply to")
        rows = [("NAME", "SOURCE", "DICE", "TARGET", "SUMMARY")]
        for name in sorted(PRESETS):
            r = PRESETS[name]
            target = f"={r.target}" if r.exact_target else str(r.target)
            rows.append((name, PRESET_SOURCES.get(name, ""), str(r.num_dice), target, summary(r)))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            cells = [row[i].ljust(widths[i]) for i in range(4)]
            print("  ".join([*cells, row[4]]).rstrip(), file=out)
        print("\n`greed rules NAME` shows every field of one preset.", file=out)
        return 0
    try:
        rules = rules_from_args(args.name, args.set)
    except CommandError as exc:
        return _fail("rules", str(exc))
    base = PRESETS[rules.name]
    print(f"{rules.name}: {PRESET_SOURCES.get(rules.name, '')}", file=out)
    print(f"  {summary(rules)}", file=out)
    print(f"  fingerprint {rules.fingerprint}", file=out)
    docs = Rules.field_docs()
    for f in fields(Rules):
        value = getattr(rules, f.name)
        mark = "  (--set)" if value != getattr(base, f.name) else ""
        print(f"\n{f.name} = {_value_text(value)}{mark}", file=out)
        for line in textwrap.wrap(docs[f.name], width=92):
            print(f"    {line}", file=out)
    return 0


def _parse_faces(items: Sequence[str]) -> tuple[int, ...]:
    faces: list[int] = []
    for item in items:
        for ch in item.replace(",", " ").split():
            if not ch.isdigit():
                raise CommandError(f"faces are digits 1..6 in tap order, got {item!r}")
            faces.extend(int(c) for c in ch)
    if not faces:
        raise CommandError(
            "give the kept faces in tap order, e.g. `greed score --rules greed 1 5 5`"
        )
    return tuple(faces)


def _cmd_score(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args.rules, args.set)
        taps = _parse_faces(args.faces)
    except CommandError as exc:
        return _fail("score", str(exc))
    try:
        result = read_keep(rules, taps, fresh=args.fresh)
    except IllegalKeep as exc:
        return _fail("score", f"illegal keep ({exc.rule}): {exc}")
    width = max(len(p.name) for p in result.parts)
    for part in result.parts:
        dice = ",".join(map(str, part.dice)) if part.dice else "-"
        print(f"{part.name.ljust(width)}  {dice.ljust(15)} {part.points:>6}")
    if result.wins:
        print("wins the game at once")
    if rules.carry_over and not result.carry.is_empty():
        print(f"working after this keep: {result.carry.describe()}")
    print(result.score)
    return 0


def _fail(command: str, message: str) -> int:
    print(f"greed {command}: {message}", file=sys.stderr)
    return 2


def register(subparsers: Any) -> None:
    """Add the ``rules`` and ``score`` sub-commands."""
    p = subparsers.add_parser(
        "rules",
        help="list the rules presets or show one preset's fields",
        description="Without NAME: one line per preset. With NAME: every field, value and "
        "documentation (with the rule-book sentence it comes from).",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="preset to show")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="show the preset with this field overridden (repeatable)",
    )
    p.set_defaults(func=_cmd_rules)

    s = subparsers.add_parser(
        "score",
        help="score one keep (faces in tap order)",
        description="Read one keep as the rules do and print its parts, then its score alone "
        "on the last line. An illegal keep exits with status 2.",
    )
    add_rules_options(s)
    s.add_argument(
        "--fresh",
        action="store_true",
        help="the keep is all of a full fresh roll (roll-level bonuses apply)",
    )
    s.add_argument(
        "faces", nargs="+", metavar="FACE", help="kept faces in tap order (1 5 5 or 155)"
    )
    s.set_defaults(func=_cmd_score)
