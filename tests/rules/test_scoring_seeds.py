"""Scoring straight from the rule texts: every number in every seed, one row per sentence.

Each row names the preset, the earlier keeps of the same turn (for the working sets of 002),
the keep in tap order, and the points the text gives, with the sentence quoted as the test id.
``None`` means the text makes the keep illegal. Seed files: 000 Greed, 001 10,000, 002
Progressive 10,000, 003 Farkle 10000; Zilch comes from RULES-NOTES.md.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import pytest

from greed_env.rules import EMPTY_CARRY, Carry, IllegalKeep, Rules, preset, read_keep


class Case(NamedTuple):
    rules: str
    taps: tuple[int, ...]
    points: int | None
    quote: str
    overrides: dict[str, Any] = {}  # noqa: RUF012 - never mutated
    fresh: bool = False
    before: tuple[tuple[int, ...], ...] = ()


def _carry_after(rules: Rules, keeps: tuple[tuple[int, ...], ...]) -> Carry:
    carry = EMPTY_CARRY
    for keep in keeps:
        carry = read_keep(rules, keep, carry).carry
    return carry


SIX_1S = {"ones_set_values": (2000, 4000, 8000)}

CASES = [
    # ---- 000 Greed ------------------------------------------------------------------------
    Case("greed", (1,), 100, "000: '1=100 points'"),
    Case("greed", (5,), 50, "000: '5=50 points'"),
    Case("greed", (2, 2, 2), 200, "000: '3 of a kind= 100 x the number on the dice' (2s)"),
    Case("greed", (3, 3, 3), 300, "000: '3 of a kind= 100 x the number' (3s)"),
    Case("greed", (4, 4, 4), 400, "000: '3 of a kind= 100 x the number' (4s)"),
    Case("greed", (5, 5, 5), 500, "000: '500 points for three 5's'"),
    Case("greed", (6, 6, 6), 600, "000: '3 of a kind= 100 x the number' (6s)"),
    Case(
        "greed",
        (1, 1, 1),
        300,
        "000: '100 points for three 1's' - read as three singles (300), the best reading",
    ),
    Case("greed", (2, 2, 2, 2), 1000, "000: '4 of a kind= 1000 points' (2s)"),
    Case("greed", (6, 6, 6, 6), 1000, "000: '4 of a kind= 1000 points' (6s, whatever the face)"),
    Case("greed", (1, 1, 1, 1), 1000, "000: '4 of a kind= 1000 points' (1s)"),
    Case("greed", (3, 3, 3, 3, 3), 2000, "000: '5 of a kind= 2000 points'"),
    Case("greed", (4, 4, 4, 4, 4, 4), 3000, "000: '6 of a kind= 3000 points'"),
    Case(
        "greed",
        (2, 2, 3, 3, 4, 4),
        1500,
        "000: 'three pairs (can only be achieved on a single roll)= 1500'",
    ),
    Case(
        "greed", (1, 1, 5, 5, 6, 6), 1500, "000: 'three pairs ... = 1500' beats the singles (300)"
    ),
    Case(
        "greed", (4, 2, 6, 1, 3, 5), 2000, "000: 'A straight with all six dice ... = 2000 points'"
    ),
    Case("greed", (2, 2), None, "000: a pair is no combination: every kept die must score"),
    Case("greed", (1, 5), 150, "000: '1=100', '5=50' together"),
    # ---- 001 10,000 -----------------------------------------------------------------------
    Case("ten_thousand", (1,), 100, "001: 'A single 1 is worth 100 points.'"),
    Case("ten_thousand", (5,), 50, "001: 'A single 5 is worth 50 points.'"),
    Case("ten_thousand", (2, 2, 2), 200, "001: 'three 2s are worth 200 points'"),
    Case("ten_thousand", (6, 6, 6), 600, "001: 'three 6s are worth 600 points'"),
    Case(
        "ten_thousand",
        (3, 3, 3),
        300,
        "001: 'Three of a kind (except 1s) is worth 100 times the number'",
    ),
    Case("ten_thousand", (1, 1, 1), 1000, "001: 'Three 1s are worth 1,000 points.'"),
    Case("ten_thousand", (2, 2, 2, 2), 400, "001: 'four 2s are worth 400 points'"),
    Case("ten_thousand", (2, 2, 2, 2, 2), 800, "001: 'five 2s are worth 800 points'"),
    Case("ten_thousand", (2, 2, 2, 2, 2, 2), 1600, "001: 'six 2s are worth 1,600 points'"),
    Case(
        "ten_thousand",
        (6, 6, 6, 6),
        1200,
        "001: 'Four, five, or six ... double the points of three of a kind' (6s)",
    ),
    Case(
        "ten_thousand",
        (3, 6, 1, 4, 2, 5),
        1500,
        "001: 'A straight of 1-2-3-4-5-6 is worth 1,500 points.'",
    ),
    Case(
        "ten_thousand",
        (2, 2, 4, 4, 6, 6),
        1500,
        "001: 'Three pairs of any number are worth 1,500 points.'",
    ),
    Case(
        "ten_thousand",
        (1, 1, 5, 5, 3, 3),
        1500,
        "001: 'Three pairs of any number' (with 1s and 5s)",
    ),
    Case("ten_thousand", (6,), None, "001: a single 6 scores nothing without the variant"),
    Case(
        "ten_thousand",
        (6,),
        60,
        "001 variant: 'A single 6 is worth 60 points.'",
        {"single_values": (100, 0, 0, 0, 50, 60)},
    ),
    Case(
        "ten_thousand",
        (6, 6, 6),
        600,
        "001 variant: single 6 = 60 leaves 'three 6s ... 600' as the best reading",
        {"single_values": (100, 0, 0, 0, 50, 60)},
    ),
    Case(
        "ten_thousand",
        (1, 1),
        200,
        "001 variant: 'A pair of 1s is worth 200 points.'",
        {"pair_values": (200, 0, 0, 0, 0, 0)},
    ),
    Case(
        "ten_thousand",
        (5, 5),
        100,
        "001 variant: 'A pair of 5s is worth 100 points.'",
        {"pair_values": (0, 0, 0, 0, 100, 0)},
    ),
    Case(
        "ten_thousand", (1, 1, 1, 1), 2000, "001 variant: 'Four 1s are worth 2,000 points.'", SIX_1S
    ),
    Case("ten_thousand", (1,) * 5, 4000, "001 variant: 'Five 1s are worth 4,000 points.'", SIX_1S),
    Case("ten_thousand", (1,) * 6, 8000, "001 variant: 'Six 1s are worth 8,000 points.'", SIX_1S),
    # ---- 002 Progressive 10,000 -----------------------------------------------------------
    Case("progressive", (1,), 100, "002: 'Single 1 — 100'"),
    Case("progressive", (5,), 50, "002: 'single 5 — 50'"),
    Case("progressive", (1, 1, 1), 1000, "002: 'Three 1s — 1,000'"),
    Case(
        "progressive",
        (6, 6, 6),
        600,
        "002: 'three of anything else — face value × 100 (three 6s = 600)'",
    ),
    Case("progressive", (4, 4, 4), 400, "002: 'face value × 100' (4s)"),
    Case(
        "progressive",
        (6, 6, 6, 6),
        1200,
        "002: 'Each extra die added to a set scores that set's value again'",
    ),
    Case(
        "progressive",
        (1,) * 5,
        3000,
        "002: 'Each extra die added to a set scores that set's value again' (1s)",
    ),
    Case(
        "progressive",
        (6,),
        600,
        "002: an extra die added on a later keep scores the set's value again (sets stay working)",
        before=((6, 6, 6),),
    ),
    Case(
        "progressive",
        (3, 3),
        600,
        "002: two extra dice on a later keep, 300 each",
        before=((3, 3, 3),),
    ),
    Case(
        "progressive",
        (1, 2, 3, 4, 5),
        750,
        "002: 'Small straight (1-2-3-4-5 or 2-3-4-5-6) — 750' (1-5)",
    ),
    Case(
        "progressive", (6, 5, 4, 3, 2), 750, "002: 'Small straight (... or 2-3-4-5-6) — 750' (2-6)"
    ),
    Case("progressive", (1, 2, 3, 4, 5, 6), 1500, "002: 'Large straight (1-6) — 1,500'"),
    Case(
        "progressive",
        (6,),
        500,
        "002: 'Filling a small straight made on an earlier keep — +500' (1-5 filled by a 6)",
        before=((1, 2, 3, 4, 5),),
    ),
    Case(
        "progressive",
        (1,),
        500,
        "002: 'Filling a small straight made on an earlier keep — +500' (2-6 filled by a 1)",
        before=((2, 3, 4, 5, 6),),
    ),
    Case(
        "progressive",
        (6, 6),
        None,
        "002: a small straight is filled once; the second 6 scores nothing",
        before=((1, 2, 3, 4, 5),),
    ),
    Case("progressive", (2, 2, 4, 4, 6, 6), 1100, "002: 'Three pairs — 1,100'"),
    Case("progressive", (1, 1, 3, 3, 6, 6), 1100, "002: 'Three pairs — 1,100' (beats two singles)"),
    Case("progressive", (2, 2, 3, 3, 4, 4), 1500, "002: 'or 1,500 if the pairs run in sequence'"),
    Case(
        "progressive",
        (4, 4, 5, 5, 6, 6),
        1500,
        "002: 'or 1,500 if the pairs run in sequence' (4-5-6)",
    ),
    Case("progressive", (1, 1, 3, 3, 4, 4, 6, 6), 1750, "002: 'Four pairs — 1,750'"),
    Case("progressive", (2, 2, 3, 3, 4, 4, 5, 5), 2000, "002: 'or 2,000 if sequential'"),
    Case("progressive", (3, 3, 4, 4, 5, 5, 6, 6), 2000, "002: 'or 2,000 if sequential' (3-6)"),
    Case(
        "progressive",
        (2, 2, 4, 4, 6, 6, 1, 5),
        1250,
        "002: 'All eight: roll eight dice and keep all eight' - no bonus unless fresh",
    ),
    Case(
        "progressive",
        (2, 2, 4, 4, 6, 6, 1, 5),
        2250,
        "002: 'All eight ... the score plus a 1,000 bonus'",
        fresh=True,
    ),
    Case(
        "progressive",
        (6, 6, 6, 1, 2, 3, 4, 5),
        1350,
        "002: 'Tapping 6,6,6 first locks a trip and the remaining 1,2,3,4,5 then reads as a small straight (1,350 total)'",
    ),
    Case(
        "progressive",
        (6, 6, 6, 1, 2, 3, 4, 5),
        2350,
        "002: the 1,350 example kept as all eight of a fresh roll adds the all-eight 1,000",
        fresh=True,
    ),
    # hard tap-order cases of 002
    Case(
        "progressive",
        (1, 1, 1, 2, 3, 4, 5, 6),
        1750,
        "002 tap order: 1,1,1 first locks the trip (1000) and 2-6 is a small straight (750)",
    ),
    Case(
        "progressive",
        (1, 2, 3, 4, 5, 6, 1, 1),
        1700,
        "002 tap order: 1-6 first is 'always a large straight' (1500), then two single 1s",
    ),
    Case(
        "progressive",
        (1, 1, 2, 3, 4, 5, 6, 1),
        1700,
        "002 tap order: the large straight locks before the third 1 arrives",
    ),
    Case(
        "progressive",
        (1, 2, 3, 4, 5, 6, 6, 6),
        None,
        "002 tap order: 1-6 locks first, so the last two 6s are a dead pair ('a selection containing a die that scores nothing is rejected')",
    ),
    Case(
        "progressive",
        (6, 6, 1, 2, 3, 4, 5, 6),
        None,
        "002 tap order: the sixth distinct face completes 1-6 before the third 6",
    ),
    Case(
        "progressive",
        (5,),
        500,
        "002: sets stay working - a 5 added to a trip of 5s scores 500, not 50",
        before=((5, 5, 5),),
    ),
    Case(
        "progressive",
        (1, 2, 3, 4, 5, 6),
        1500,
        "002: 'A complete 1-6 inside one selection is always a large straight, whatever order "
        "you tap it in', even with a set of 6s working (the 6 does not grow the set)",
        before=((6, 6, 6),),
    ),
    Case(
        "progressive",
        (6, 1, 2, 3, 4, 5),
        1500,
        "002: 'always a large straight, whatever order' - the working 6 tapped first too",
        before=((6, 6, 6),),
    ),
    Case(
        "progressive",
        (6, 6, 1, 2, 3, 4, 5),
        2100,
        "002: 1-6 is a large straight (1,500) and the other 6 grows the working set (600)",
        before=((6, 6, 6),),
    ),
    # combinations lock as they complete, in tap order (issue 20's table)
    Case(
        "progressive",
        (1, 2, 3, 4, 5, 1, 1),
        950,
        "002 tap order: 1-5 locks as a small straight (750), then two single 1s",
    ),
    Case(
        "progressive",
        (2, 3, 4, 5, 6, 5, 5),
        850,
        "002 tap order: 2-6 locks as a small straight (750), then two single 5s",
    ),
    Case(
        "progressive",
        (1, 1, 5, 5, 2, 2, 1),
        1200,
        "002 tap order: three pairs 1-2-5 lock at the sixth die (1,100), then a single 1",
    ),
    Case(
        "progressive",
        (1, 2, 3, 4, 5, 1, 1, 5),
        2000,
        "002 tap order: small straight, two 1s and a 5, kept as all eight of a fresh roll (+1,000)",
        fresh=True,
    ),
    Case(
        "progressive",
        (1, 1, 1, 2, 3, 4, 5),
        None,
        "002 tap order: 1,1,1 locks a trip first, so 2,3,4 score nothing",
    ),
    Case(
        "progressive",
        (6, 1, 2, 3, 4, 5),
        1500,
        "002: 'A complete 1-6 inside one selection is always a large straight' (6 tapped first)",
    ),
    Case(
        "progressive",
        (2, 3, 4, 5, 6, 1),
        1500,
        "002: 2-6 locks, and the 1 that follows in the same selection makes it the large straight",
    ),
    Case(
        "progressive",
        (2, 2, 3, 3, 4, 4, 5, 5),
        2000,
        "002 tap order: three pairs 2-3-4 lock (1,500) and the pair of 5s makes four pairs (2,000)",
    ),
    Case(
        "trippn",
        (1, 2, 3, 4, 5, 6),
        1500,
        "002 Trippn: 'A complete 1-6 inside one selection is always a large straight' with 2s "
        "and 5s working after an and-roll",
        before=((2, 2, 2), (5, 5, 5)),
    ),
    Case(
        "progressive",
        (5, 5),
        500,
        "002: three pairs 2-3-4 (1,500) upgraded by a pair of 5s to sequential four pairs (2,000)",
        before=((2, 2, 3, 3, 4, 4),),
    ),
    Case(
        "progressive",
        (4, 4),
        650,
        "002: three pairs 1-3-6 (1,100) upgraded by a pair of 4s to four pairs (1,750)",
        before=((1, 1, 3, 3, 6, 6),),
    ),
    Case(
        "trippn",
        (6, 6, 6, 1, 2, 3, 4, 5),
        1350,
        "002 Trippn scores like progressive: 'Tapping 6,6,6 first ... (1,350 total)'",
    ),
    # ---- 003 Farkle 10000 -----------------------------------------------------------------
    Case("farkle", (5,), 50, "003: '5s = 50 points'"),
    Case("farkle", (1,), 100, "003: '1s = 100 points'"),
    Case("farkle", (4, 4, 4), 400, "003: 'three 4s = 400'"),
    Case("farkle", (2, 2, 2), 200, "003: 'Three of a Kind ... = 100 x number shown' (2s)"),
    Case("farkle", (6, 6, 6), 600, "003: 'Three of a Kind ... = 100 x number shown' (6s)"),
    Case("farkle", (1, 1, 1), 1100, "003: 'Three 1s (in a single roll) = 1100'"),
    Case("farkle", (1, 1, 1, 1), 1200, "003: no four-of-a-kind rule: the fourth 1 is a single"),
    Case("farkle", (2, 2, 2, 2), None, "003: no four-of-a-kind rule: the fourth 2 scores nothing"),
    Case("farkle", (1, 2, 3, 4, 5, 6), 1500, "003: 'Straight (1 2 3 4 5 [6]) = 1500' (six dice)"),
    Case(
        "farkle",
        (2, 2, 3, 3, 4, 4),
        None,
        "003: three pairs is not listed: 'Points are scored as follows'",
    ),
    Case("farkle5", (5, 4, 3, 2, 1), 1500, "003: 'Straight (1 2 3 4 5 [6]) = 1500' (five dice)"),
    Case("farkle5", (1, 1, 1), 1100, "003: 'Three 1s (in a single roll) = 1100' (five dice)"),
    Case("farkle5", (2, 3, 4, 5, 6), None, "003: with five dice only 1-2-3-4-5 is the straight"),
    # ---- Zilch (RULES-NOTES.md) -----------------------------------------------------------
    Case(
        "zilch",
        (2, 2, 3, 4, 4, 6),
        500,
        "Zilch: 'six non-scoring dice score 500 and roll again'",
        fresh=True,
    ),
    Case("zilch", (2, 2, 3, 4, 4, 6), None, "Zilch: the 500 is for a full fresh roll only"),
    Case("zilch", (2, 2, 2, 2), 400, "Zilch: '4+ of a kind doubles' (four 2s)"),
    Case("zilch", (2,) * 5, 800, "Zilch: '4+ of a kind doubles' (five 2s)"),
    Case("zilch", (1, 1, 1, 1), 2000, "Zilch: '4+ of a kind doubles' (four 1s)"),
    Case("zilch", (6, 5, 4, 3, 2, 1), 1500, "Zilch: 'straight and three pairs 1500' (straight)"),
    Case("zilch", (3, 3, 4, 4, 6, 6), 1500, "Zilch: 'straight and three pairs 1500' (three pairs)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.quote for c in CASES])
def test_seed_scores(case: Case) -> None:
    rules = preset(case.rules, **case.overrides)
    carry = _carry_after(rules, case.before)
    if case.points is None:
        with pytest.raises(IllegalKeep):
            read_keep(rules, case.taps, carry, fresh=case.fresh)
    else:
        assert read_keep(rules, case.taps, carry, fresh=case.fresh).score == case.points


def test_greed_three_ones_is_a_set_of_100() -> None:
    """000: '(100 points for three 1's ...)': the set itself is worth 100; a player reads the
    three dice as singles (300) instead, since order-free keeps take the best reading."""
    greed = preset("greed")
    assert greed.set_value(1, 3) == 100
    parts = read_keep(greed, (1, 1, 1)).parts
    assert [p.name for p in parts] == ["single 1"] * 3


def test_ten_thousand_variant_six_of_a_kind_wins() -> None:
    """001 variant: 'Rolling six of the same number in one roll is an instant win.'"""
    rules = preset("ten_thousand", six_kind_wins=True)
    assert read_keep(rules, (3,) * 6, fresh=True).wins
    assert not read_keep(rules, (3,) * 5).wins
    assert not read_keep(preset("ten_thousand"), (3,) * 6).wins


def test_seed_game_constants() -> None:
    """The numbers of the seeds that are not scores: dice, targets, come-in thresholds, seats."""
    greed, tt, prog, fark, fark5 = (
        preset(n) for n in ("greed", "ten_thousand", "progressive", "farkle", "farkle5")
    )
    assert (greed.num_dice, greed.target, greed.entry_threshold, greed.min_players) == (
        6,
        10_000,
        500,
        2,
    )
    assert (tt.num_dice, tt.target, tt.entry_threshold, tt.final_round) == (6, 10_000, 1000, True)
    assert (prog.num_dice, prog.target, prog.exact_target) == (8, 10_000, True)
    assert (prog.min_players, prog.max_players) == (1, 8)
    assert (fark.num_dice, fark.entry_threshold, fark5.num_dice, fark.min_players) == (6, 600, 5, 2)
    zilch = preset("zilch")
    assert (zilch.min_bank, zilch.bust_penalty_after, zilch.bust_penalty, zilch.nothing_bonus) == (
        300,
        3,
        500,
        500,
    )


@pytest.mark.parametrize("rules_name", ["progressive", "trippn", "ten_thousand", "greed", "zilch"])
def test_large_straight_whatever_the_order(rules_name: str) -> None:
    """002: 'A complete 1-6 inside one selection is always a large straight, whatever order you
    tap it in' (and order never matters elsewhere): all 720 tap orders read the same."""
    rules = preset(rules_name)
    large = next(pts for faces, pts in rules.straights if len(faces) == 6)
    scores = {read_keep(rules, perm).score for perm in itertools.permutations(range(1, 7))}
    assert scores == {large}


def test_illegal_keep_names_a_tap_order_that_works() -> None:
    """A keep that one tap order reads is refused in another with a tap order that works."""
    with pytest.raises(IllegalKeep, match=r"2, 3, 4 score nothing; tapped as 1,2,3,4,5,1,1 these dice read 950"):
        read_keep(preset("progressive"), (1, 1, 1, 2, 3, 4, 5))


def test_two_readings_of_one_keep_are_both_listed() -> None:
    """002: the same eight dice 1,1,1,2,3,4,5,6 read sets-first (1000+750) or large-first
    (1500+200); the move list offers both, each with a tap order that produces it."""
    from greed_env.rules import keep_options

    rules = preset("progressive")
    full = [
        o
        for o in keep_options(rules, (1, 1, 1, 2, 3, 4, 5, 6), EMPTY_CARRY, False)
        if len(o.dice) == 8
    ]
    assert sorted(o.score for o in full) == [1700, 1750]
    for o in full:
        assert read_keep(rules, o.taps).score == o.score


def test_error_names_the_dead_die() -> None:
    """A kept die that scores nothing is refused with a message naming it."""
    with pytest.raises(IllegalKeep, match="every kept die must score: 2, 3") as info:
        read_keep(preset("ten_thousand"), (2, 3))
    assert info.value.rule == "dead-die"
