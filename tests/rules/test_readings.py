"""The readings the seed texts leave open, each a field with both readings playable.

* ``working_set_claims`` (002): "The order you tap the dice decides how the roll is read, so
  the same dice can pay differently"; "A complete 1-6 inside one selection is always a large
  straight, whatever order you tap it in" is the only combination named as taking a die
  whatever the order.
* ``final_round_past_rounds`` (001): "The game ends when one player reaches or exceeds the
  target score of 10,000 points (or the agreed number of rounds). However, each player gets
  one final chance to beat that score."
* ``piggyback_counts_for_entry`` (003): "Players must score 600 points in one turn before their
  score begins to count" and the variation "take over from exactly where the previous player
  left off, including using their score".
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from greed_env.rules import (
    BANK,
    EMPTY_CARRY,
    Carry,
    IllegalKeep,
    IllegalMove,
    Move,
    Phase,
    Rules,
    RulesError,
    apply,
    apply_roll,
    can_bank,
    is_over,
    keep_options,
    new_game,
    preset,
    read_keep,
)
from greed_env.rules.scoring import _dice_of, _tap, _tap_finish, _tap_start

ALT = {"working_set_claims": False}


class Case(NamedTuple):
    rules: str
    before: tuple[tuple[int, ...], ...]
    taps: tuple[int, ...]
    claims: int | None  # points under the default reading (None: the keep is refused)
    free: int | None  # points with working_set_claims=False
    quote: str


CASES = [
    Case("progressive", ((2, 2, 2),), (3, 4, 5, 6, 2), None, 750,
         "002: 2s working, 3,4,5,6 then 2: the 2 completes the small straight 2-6"),
    Case("progressive", ((2, 2, 2),), (2, 3, 4, 5, 6), None, None,
         "002: 2s working, 2 tapped first grows its set: 3,4,5,6 score nothing"),
    Case("progressive", ((2, 2, 2),), (2,), 200, 200,
         "002: 'Each extra die added to a set scores that set's value again'"),
    Case("progressive", ((5, 5, 5),), (1, 2, 3, 4, 5), None, 750,
         "002: 5s working, 1,2,3,4 then 5: 'Small straight (1-2-3-4-5 ...) — 750'"),
    Case("progressive", ((5, 5, 5),), (5, 1, 2, 3, 4), None, None,
         "002: 5s working, the 5 tapped first grows its set: 2, 3, 4 score nothing"),
    Case("progressive", ((1, 1, 1),), (2, 3, 4, 5, 1), None, 750,
         "002: 1s working, 2,3,4,5 then 1 is the small straight 1-5"),
    Case("progressive", ((1, 1, 1),), (1, 5), 1050, 1050,
         "002: 1s working, a 1 grows the set (+1,000) and a 5 is a single"),
    Case("progressive", ((6, 6, 6),), (2, 3, 4, 5, 6), None, 750,
         "002: 6s working, 2,3,4,5 then 6 is the small straight 2-6"),
    Case("progressive", ((2, 2, 2),), (3, 4, 5, 6, 2, 2), None, 950,
         "002: 2s working, the straight takes the first 2, the second grows the set"),
    Case("progressive", (), (6, 6, 6, 1, 2, 3, 4, 5), 1350, 1350,
         "002: 'Tapping 6,6,6 first locks a trip and the remaining 1,2,3,4,5 then reads as a "
         "small straight (1,350 total)' (no set working before the keep)"),
    Case("trippn", ((2, 2, 2),), (3, 3, 4, 4, 2, 2), None, 1500,
         "002 Trippn: 2s working, 3,3,4,4 then 2,2: 'Three pairs ... 1,500 if the pairs run in "
         "sequence'"),
    Case("trippn", ((2, 2, 2),), (2, 2, 3, 3, 4, 4), None, None,
         "002 Trippn: 2s working, the 2s tapped first grow the set: 3,3,4,4 score nothing"),
    Case("trippn", ((2, 2, 2),), (1, 2, 3, 4, 5, 6), 1500, 1500,
         "002: 'A complete 1-6 inside one selection is always a large straight, whatever order "
         "you tap it in' (with a set of 2s working, in either reading)"),
    Case("trippn", ((2, 2, 2),), (2, 1, 3, 4, 5, 6), 1500, 1500,
         "002: 'always a large straight, whatever order' (the 2 tapped first)"),
]


def _carry_after(rules: Rules, keeps: tuple[tuple[int, ...], ...]) -> Carry:
    carry = EMPTY_CARRY
    for keep in keeps:
        carry = read_keep(rules, keep, carry).carry
    return carry


def _score(rules: Rules, case: Case) -> int | None:
    try:
        return read_keep(rules, case.taps, _carry_after(rules, case.before)).score
    except IllegalKeep:
        return None


@pytest.mark.parametrize("case", CASES, ids=[c.quote for c in CASES])
def test_working_set_readings_from_the_seed(case: Case) -> None:
    assert _score(preset(case.rules), case) == case.claims
    assert _score(preset(case.rules, **ALT), case) == case.free


def test_the_issue_example_gains_the_straight_only_under_the_other_reading() -> None:
    """With 2s working (kept 2,2,2 from eight), a roll of 2,3,4,5,6 on the five dice left
    offers the keeps 2, 5 and 2,5 by default; the other reading adds the small straight."""
    for claims, extra in ((True, set()), (False, {((2, 3, 4, 5, 6), 750, "small")})):
        rules = preset("progressive", working_set_claims=claims)
        carry = read_keep(rules, (2, 2, 2)).carry
        opts = {(o.dice, o.score, o.reading) for o in keep_options(rules, (2, 3, 4, 5, 6), carry, False)}
        assert opts == {((5,), 50, ""), ((2,), 200, ""), ((2, 5), 250, "")} | extra


def _readings(rules: Rules, carry: Carry, dice: int) -> dict[tuple[int, ...], dict[str, set[Any]]]:
    """Every multiset of up to ``dice`` dice -> reading kind -> its distinct (points, carry)."""
    layer = {(0,) * 6: {_tap_start(carry)}}
    out: dict[tuple[int, ...], dict[str, set[Any]]] = {}
    for _ in range(dice):
        nxt: dict[Any, set[Any]] = {}
        for m, states in layer.items():
            for t in states:
                for i in range(6):
                    grown = (*m[:i], m[i] + 1, *m[i + 1:])
                    nxt.setdefault(grown, set()).add(_tap(rules, t, i + 1)._replace(parts=()))
        for m, states in nxt.items():
            found: dict[str, set[Any]] = {}
            for t in states:
                done = _tap_finish(rules, t, carry)
                if done is not None:
                    found.setdefault(done[1], set()).add((done[0].score, done[0].carry))
            out[_dice_of(m)] = found
        layer = nxt
    return out


def test_progressive_catalog_serves_both_readings() -> None:
    """The action catalog keys a keep by (dice, strongest combination locked); under either
    reading, in every dice state Progressive reaches, distinct readings of the same dice differ
    in that kind (the catalog's alternate fill keeps need a straight open beside eight dice to
    roll, which Progressive's hot dice never leave), so the catalog's version-2 ids (3,693 of
    its 3,696 actions) play both readings unchanged."""
    from greed_env.solver.carry import carry_tables
    from greed_env.spaces.catalog import ActionCatalog

    for claims in (True, False):
        rules = preset("progressive", working_set_claims=claims)
        catalog = ActionCatalog(rules)
        assert (catalog.n, catalog.size_of_version(2), catalog.version) == (3696, 3693, 3)
        ct = carry_tables(rules, True)
        assert len(ct.states) == 204
        dice: dict[Carry, int] = {}
        for n, carry in ct.states:
            dice[carry] = max(dice.get(carry, 0), n)
        keys = set()
        for carry, n in dice.items():
            for kept, found in _readings(rules, carry, n).items():
                for kind, outcomes in found.items():
                    assert len(outcomes) == 1, (carry, kept, kind, outcomes)
                    keys.add((kept, kind))
        assert all((*k, False) in catalog._keep_index for k in keys)


def test_trippn_under_the_other_reading_has_no_catalog() -> None:
    """Under Trippn the sets survive an and-roll, and a keep of eight can then lock three pairs
    in two ways that an action (dice, reading) cannot tell apart: the catalog, and so the
    environments and the vector engine, refuse the combination by name; the rules play it."""
    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.vector.tables import VectorUnsupportedError, check_vector_supported

    rules = preset("trippn", **ALT)
    carry = Carry((0, 3, 0, 0, 0, 0), (), ())  # 2s working after an and-roll
    full = [o for o in keep_options(rules, (2, 2, 3, 3, 4, 4, 5, 5), carry, False) if len(o.dice) == 8]
    assert sorted((o.score, o.reading) for o in full) == [(1900, "pairs"), (2000, "pairs")]
    with pytest.raises(RulesError, match="cannot tell apart"):
        ActionCatalog(rules)
    with pytest.raises(VectorUnsupportedError, match="working_set_claims=False with trippn=True"):
        check_vector_supported(rules)
    assert ActionCatalog(preset("trippn")).n == ActionCatalog(preset("progressive")).n


@st.composite
def working_carries(draw: Callable[..., Any]) -> tuple[str, Carry]:
    """A carry-over with at least one working set: a set kept first, then maybe another keep."""
    name = draw(st.sampled_from(["progressive", "trippn"]))
    rules = preset(name, **ALT)
    face = draw(st.integers(1, 6))
    carry = read_keep(rules, (face,) * 3).carry
    if draw(st.booleans()):
        roll = tuple(sorted(draw(st.lists(st.integers(1, 6), min_size=1, max_size=5))))
        opts = keep_options(rules, roll, carry, False)
        if opts:
            carry = opts[draw(st.integers(0, len(opts) - 1))].carry
    return name, carry


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=7).map(lambda x: tuple(sorted(x))), working_carries())
def test_every_tap_order_reading_is_listed_once_under_the_other_reading(
    dice: tuple[int, ...], named: tuple[str, Carry]
) -> None:
    """Brute force over ALL tap orders: the (points, carry) outcomes equal the keeps listed for
    exactly these dice, each once, and each listed tap order reads as listed."""
    name, carry = named
    rules = preset(name, **ALT)
    by_order = set()
    for taps in set(itertools.permutations(dice)):
        try:
            res = read_keep(rules, taps, carry)
        except IllegalKeep:
            continue
        by_order.add((res.score, res.carry))
    listed = [o for o in keep_options(rules, dice, carry, False) if o.dice == dice]
    assert {(o.score, o.carry) for o in listed} == by_order
    assert len(listed) == len(by_order)
    for o in listed:
        assert (read_keep(rules, o.taps, carry).score, read_keep(rules, o.taps, carry).carry) == (o.score, o.carry)


def test_the_other_reading_only_adds_readings() -> None:
    """Every keep the default reading offers is offered by the other one too (a die the set
    would claim can still be tapped first): the other reading only adds keeps."""
    rng = np.random.default_rng(4)
    base, free = preset("progressive"), preset("progressive", **ALT)
    for _ in range(60):
        face = int(rng.integers(1, 7))
        roll = tuple(sorted(int(x) for x in rng.integers(1, 7, size=5)))
        carry = read_keep(base, (face,) * 3).carry
        old = {(o.dice, o.score, o.carry) for o in keep_options(base, roll, carry, False)}
        new = {(o.dice, o.score, o.carry) for o in keep_options(free, roll, carry, False)}
        assert old <= new


# ------------------------------------------------------------------------------------------
# the final round past the last round (001)

BUST_ROLL = (2, 2, 3, 3, 4, 6)


def _reach_on_the_last_turn(rules: Rules) -> Any:
    """Two players, one round to 1,000: P0 banks 100, then P1 banks 1,000 on the last turn."""
    s = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 2, 2, 3, 4, 6))
    s = apply(rules, apply(rules, s, Move("keep", (1,))), BANK)
    s = apply_roll(rules, s, (1, 1, 1, 2, 3, 4))
    return apply(rules, apply(rules, s, Move("keep", (1, 1, 1))), BANK)


def test_the_final_round_can_outlast_the_rounds() -> None:
    """001: 'However, each player gets one final chance to beat that score.'"""
    cut = preset("ten_thousand", rounds=1, target=1000, entry_threshold=0)
    s = _reach_on_the_last_turn(cut)
    assert is_over(s) and s.winners == (1,)
    past = cut.replace(final_round_past_rounds=True)
    s = _reach_on_the_last_turn(past)
    assert not is_over(s) and s.player == 0 and s.final_left == (0,) and s.endgame
    beaten = apply_roll(past, s, (1, 1, 1, 1, 2, 3))  # four 1s: 2,000 on top of 100
    beaten = apply(past, apply(past, beaten, Move("keep", (1, 1, 1, 1))), BANK)
    assert is_over(beaten) and beaten.winners == (0,) and beaten.rounds == 3
    held = apply_roll(past, s, BUST_ROLL)
    assert is_over(held) and held.winners == (1,)


class _CodeRng:
    """Stands in for a Generator: the next ``integers(high)`` is ``code % high``."""

    def __init__(self, code: int) -> None:
        self.code = int(code)

    def integers(self, high: int, *args: Any, **kwargs: Any) -> int:
        return self.code % high


def _follow(rules: Rules, players: int, n_games: int, n_steps: int, seed: int) -> list[Any]:
    """Random legal play in the vector engine and the reference on the same dice codes and
    actions; every row must equal its reference state after every step. Returns the finished
    reference games."""
    from greed_env.rules import sample_roll
    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.vector.engine import BatchGame

    game = BatchGame(rules, n_games, players)
    catalog = ActionCatalog(rules)
    rng = np.random.default_rng(seed)
    ref = [new_game(rules, players, first_player=0) for _ in range(n_games)]
    game.new_games(first_player=0)
    done: list[Any] = []
    for _ in range(n_steps):
        over = np.array([s.phase == Phase.OVER for s in ref])
        if over.any():
            done += [ref[i] for i in np.flatnonzero(over)]
            game.new_games(first_player=0, rows=over)
            for i in np.flatnonzero(over):
                ref[i] = new_game(rules, players, first_player=0)
        chance = game.chance_rows()
        codes = rng.integers(0, 6**rules.num_dice, size=n_games)
        for i in np.flatnonzero(chance):
            ref[i] = apply_roll(rules, ref[i], sample_roll(rules, ref[i], _CodeRng(codes[i])))
        game.apply_rolls(codes, chance)
        masks = game.masks()
        decide = game.decision_rows()
        actions = np.zeros(n_games, dtype=np.int64)
        for i in np.flatnonzero(decide):
            legal = np.flatnonzero(masks[i])
            np.testing.assert_array_equal(masks[i], catalog.mask(ref[i]))
            actions[i] = legal[rng.integers(len(legal))]
            ref[i] = apply(rules, ref[i], catalog.action_to_move(ref[i], int(actions[i])))
        game.apply_actions(actions, decide)
        for i in range(n_games):
            got = game.fields(i)
            for name in ("phase", "player", "scores", "turn_total", "dice", "carry", "rounds", "endgame", "winners"):
                assert got[name] == getattr(ref[i], name), (i, name, got[name], getattr(ref[i], name))
    return done


def test_the_final_round_past_the_rounds_in_the_vector_engine() -> None:
    rules = preset("ten_thousand", rounds=2, target=600, entry_threshold=0, final_round_past_rounds=True)
    done = _follow(rules, 3, 16, 300, seed=2)
    assert any(s.rounds > 6 for s in done), "some game went past the last round"


def test_the_other_working_set_reading_in_the_vector_engine() -> None:
    rules = preset("progressive", working_set_claims=False, target=3000)
    done = _follow(rules, 2, 8, 200, seed=5)
    assert done, "games finished"


def test_fields_refuse_what_they_cannot_mean() -> None:
    with pytest.raises(RulesError, match="'working_set_claims' = False needs carry_over"):
        preset("ten_thousand", working_set_claims=False)
    with pytest.raises(RulesError, match="'final_round_past_rounds' = True needs rounds > 0"):
        preset("ten_thousand", final_round_past_rounds=True)
    with pytest.raises(RulesError, match="final_round=True"):
        preset("greed", rounds=3, final_round_past_rounds=True)
    with pytest.raises(RulesError, match="'piggyback_counts_for_entry' = False needs piggyback"):
        preset("farkle", piggyback_counts_for_entry=False)


def test_defaults_keep_every_preset_fingerprint() -> None:
    """The new fields enter a fingerprint only when set away from their default, so shipped
    tables and bots keep loading; set, they make new rules."""
    prog = preset("progressive")
    assert prog.replace(working_set_claims=True).fingerprint == prog.fingerprint
    assert prog.replace(working_set_claims=False).fingerprint != prog.fingerprint
    tt = preset("ten_thousand", rounds=3)
    assert tt.replace(final_round_past_rounds=True).fingerprint != tt.fingerprint
    fk = preset("farkle", piggyback=True)
    assert fk.replace(piggyback_counts_for_entry=False).fingerprint != fk.fingerprint


# ------------------------------------------------------------------------------------------
# piggyback and coming in (003)


def _piggyback_on_1100(rules: Rules) -> Any:
    s = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 1, 1, 2, 3, 4))
    s = apply(rules, apply(rules, s, Move("keep", (1, 1, 1))), BANK)
    s = apply(rules, s, Move("piggyback"))
    return apply(rules, apply_roll(rules, s, (5, 2, 3)), Move("keep", (5,)))


def test_points_taken_over_count_toward_coming_in_by_default() -> None:
    """003: 'take over from exactly where the previous player left off, including using their
    score': 1,100 taken over and a 5 bank 1,150 and bring player 1 in."""
    rules = preset("farkle", piggyback=True)
    s = _piggyback_on_1100(rules)
    assert (s.turn_total, s.taken_over) == (1150, 1100) and can_bank(rules, s)
    s = apply(rules, s, BANK)
    assert s.scores == (1100, 1150) and s.entered[1]


def test_points_taken_over_need_not_count_toward_coming_in() -> None:
    """003: 'Players must score 600 points in one turn before their score begins to count':
    under piggyback_counts_for_entry=False the 600 are the player's own points."""
    rules = preset("farkle", piggyback=True, piggyback_counts_for_entry=False)
    s = _piggyback_on_1100(rules)
    assert s.turn_total == 1150 and not can_bank(rules, s)
    with pytest.raises(IllegalMove, match="1100 of them taken over, which do not count"):
        apply(rules, s, BANK)
    s = apply_roll(rules, apply(rules, s, Move("roll")), (1, 1))
    s = apply(rules, s, Move("keep", (1, 1)))  # hot dice: 250 of its own
    s = apply_roll(rules, apply(rules, s, Move("roll")), (1, 1, 1, 5, 5, 5))
    s = apply(rules, s, Move("keep", (1, 1, 1)))  # 1,350 of its own: it comes in with 2,450
    assert can_bank(rules, s)
    s = apply(rules, s, BANK)
    assert s.scores == (1100, 2450) and s.entered[1] and s.taken_over == 0


def test_rules_show_the_quoted_sentences() -> None:
    """`greed rules` prints each new field with the seed sentence it comes from."""
    out = subprocess.run(
        [sys.executable, "-m", "greed_env.cli", "rules", "progressive"],
        capture_output=True, text=True, check=True,
    ).stdout
    flat = " ".join(out.split())
    assert "working_set_claims = True" in flat
    assert "'The order you tap the dice decides how the roll is read" in flat
    assert "final_round_past_rounds = False" in flat and "each player gets one final chance" in flat
    assert "piggyback_counts_for_entry = True" in flat and "including using their score" in flat
