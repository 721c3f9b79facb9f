"""web/host/keeps.mjs reads every keep as greed_env.rules.scoring does.

Positions are the KEEP decisions of seeded random games of the two tap-order presets
(``progressive`` and ``trippn``; the players roll on four times in five, so that much is
working), the keeps of :func:`greed_env.spaces.catalog.fill_alternates`
(the same dice and reading, with and without a die filling an open straight) under each set of
open straights, and rolls of all six faces beside working sets (where a large straight takes a
working set's die). Python's ``keep_options``, ``has_scoring_keep`` and ``best_keep_score`` of
each go to a JSON file; one node process compares its own, option for option.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from itertools import combinations
from typing import Any

import numpy as np
import pytest

from greed_env.rules import (
    ROLL,
    Carry,
    Phase,
    Rules,
    apply,
    apply_roll,
    fill_faces,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
    preset_names,
    sample_roll,
)
from greed_env.rules.scoring import best_keep_score, has_scoring_keep, keep_options
from greed_env.spaces.catalog import fill_alternates

PRESETS = ("trippn", "progressive")
GAME_POSITIONS = 1450
"""Distinct (roll, carry, fresh) positions from random games, per preset."""
ROLL_ON = 0.8
"""How often a random player rolls on where it may: working sets, straights and pairs carry over."""
SIX_FACE_ROLLS = ((1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6, 6, 6), (1, 1, 2, 3, 4, 5, 6, 6))
SET_FACES = ((1,), (2, 5), (1, 2, 3, 4, 5, 6))

Position = tuple[tuple[int, ...], Carry, bool]


def _game_positions(rules: Rules, count: int, seed: int) -> list[Position]:
    """Distinct KEEP positions of seeded two-player games of random moves."""
    rng = np.random.default_rng(seed)
    found: dict[Position, None] = {}
    while len(found) < count:
        state = new_game(rules, 2, first_player=0)
        while not is_over(state) and len(found) < count:
            if is_chance(state):
                state = apply_roll(rules, state, sample_roll(rules, state, rng))
                continue
            if state.phase == Phase.KEEP:
                found.setdefault((state.roll, state.carry, state.fresh), None)
            moves = legal_moves(rules, state)
            roll_on = ROLL in moves and rng.random() < ROLL_ON
            state = apply(rules, state, ROLL if roll_on else moves[int(rng.integers(len(moves)))])
    return list(found)


def _hard_positions(rules: Rules) -> list[Position]:
    """The fill alternates under every set of open straights, and six-face rolls beside sets."""
    faces = fill_faces(rules)
    opened = [fills for k in range(len(faces) + 1) for fills in combinations(faces, k)]
    out = [
        (dice, Carry(fills=fills), fresh)
        for dice, _ in fill_alternates(rules)
        for fills in opened
        for fresh in (False, True)
    ]
    for roll in SIX_FACE_ROLLS:
        for set_faces in SET_FACES:
            sets = tuple(3 if f in set_faces else 0 for f in range(1, 7))
            out += [(roll, Carry(sets=sets, fills=fills), fresh) for fills in ((), faces) for fresh in (False, True)]
    return out


def _carry(carry: Carry) -> dict[str, list[int]]:
    return {"sets": list(carry.sets), "fills": list(carry.fills), "pairs": list(carry.pairs)}


def _expected(rules: Rules, position: Position) -> dict[str, Any]:
    roll, carry, fresh = position
    options = keep_options(rules, roll, carry, fresh)
    return {
        "rules": rules.name,
        "roll": list(roll),
        "carry": _carry(carry),
        "fresh": fresh,
        "hasScoring": has_scoring_keep(rules, roll, carry),
        "best": best_keep_score(rules, roll, carry, fresh),
        "options": [
            {
                "dice": list(o.dice),
                "taps": list(o.taps),
                "score": o.score,
                "carry": _carry(o.carry),
                "wins": o.wins,
                "reading": o.reading,
                "fills": any(p.name.startswith("fills straight") for p in o.parts),
                "parts": [{"name": p.name, "dice": list(p.dice), "points": p.points} for p in o.parts],
            }
            for o in options
        ],
    }


def _set_values() -> list[dict[str, Any]]:
    """Every preset's set values, and a table of four and more 1s, for faces 1..6 and 0..12 dice."""
    rule_sets = [preset(n) for n in preset_names()] + [replace(preset("greed"), ones_set_values=(2000, 4000))]
    return [
        {
            "rules": rules.to_dict(),
            "values": [[f, n, rules.set_value(f, n)] for f in range(1, 7) for n in range(13)],
        }
        for rules in rule_sets
    ]


def _refused() -> dict[str, dict[str, Any]]:
    return {
        "order-free": preset("ten_thousand").to_dict(),
        "working_set_claims": replace(preset("progressive"), working_set_claims=False).to_dict(),
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, run_node: Callable[..., Any]) -> dict[str, Any]:
    cases = []
    for seed, name in enumerate(PRESETS):
        rules = preset(name)
        positions = dict.fromkeys([*_hard_positions(rules), *_game_positions(rules, GAME_POSITIONS, seed)])
        cases += [_expected(rules, p) for p in positions]
    path = tmp_path_factory.mktemp("keeps_js") / "keeps.json"
    path.write_text(
        json.dumps({
            "rules": {n: preset(n).to_dict() for n in PRESETS},
            "positions": cases,
            "setValues": _set_values(),
            "refused": _refused(),
        })
    )
    return run_node("check_keeps.mjs", str(path))


def test_every_keep_reads_as_in_python(report: dict[str, Any]) -> None:
    assert report["positions"] >= 3000
    assert not report["differ"], f"{report['differ']} positions differ; the first: {report['shown']}"


def test_set_values_match_python(report: dict[str, Any]) -> None:
    assert report["setValuesChecked"] >= 8 * 6 * 13
    assert not report["setValuesDiffer"], report["setValuesDiffer"][:5]


def test_rules_it_cannot_read_are_refused(report: dict[str, Any]) -> None:
    assert "tap-order rules only (carry_over: true)" in (report["refused"]["order-free"] or "")
    assert "working_set_claims: true only" in (report["refused"]["working_set_claims"] or "")


def test_the_hard_cases_are_there(report: dict[str, Any]) -> None:
    assert report["fillingAlternates"] > 0, "no position offers a keep both filling a straight and not"
    assert report["eightDiceTrippn"] >= 300


def test_a_trippn_roll_reads_quickly(report: dict[str, Any]) -> None:
    timing = report["timing"]
    print(
        f"{report['positions']} positions ({report['options']} options); Trippn rolls: "
        f"{timing['meanMs']:.2f} ms mean, {timing['maxMs']:.1f} ms max (eight dice: "
        f"{timing['meanMs8']:.2f} ms mean, {timing['maxMs8']:.1f} ms max)"
    )
    assert timing["meanMs8"] < 50
