"""The engine's caches and shortcuts change no result.

Seeded random play is pinned by a digest of every legal-move list and every state (events
included) taken before the hot paths were tuned; the readings of a keep under tap-order rules,
cached once for the working sets of the faces it holds, equal the readings against the whole
carry-over; the keep table remembered for the position :func:`apply_roll` made last is used for
that position and those rules only.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from greed_env.rules import (
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
    preset_names,
    sample_roll,
)
from greed_env.rules.game import Phase, current_keep_options
from greed_env.rules.scoring import (
    Carry,
    _sub_readings,
    _submultisets,
    _tap_order_readings,
    counts_of,
)

PINNED = [
    ("farkle", "bdfc8bd69f2ed273", "b62c6fbefd5dfb96"),
    ("farkle5", "3ae97a8db8df7d93", "f94b80e3b1b864bb"),
    ("greed", "3126004025d8ad16", "49aa3b9dcf377d0d"),
    ("progressive", "59467b91c3d4a40b", "8622cefe15412a5c"),
    ("ten_thousand", "f8847a2fad06cc40", "35c6aca89459121f"),
    ("trippn", "31cdc59a32c8139e", "c5243f143796c676"),
    ("zilch", "9f9d07fcac01d00f", "fc97644dcbcc8d8f"),
]


def trace_digest(name: str, games: int, seed: int, players: int) -> str:
    """A digest of random play: each legal-move list and each state, in order."""
    rules = preset(name)
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()
    for _ in range(games):
        s = new_game(rules, players)
        while not is_over(s):
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
            else:
                moves = legal_moves(rules, s)
                h.update(repr(moves).encode())
                s = apply(rules, s, moves[int(rng.integers(len(moves)))])
            h.update(repr(s).encode())
    return h.hexdigest()[:16]


def test_every_preset_is_pinned() -> None:
    assert sorted(name for name, _, _ in PINNED) == sorted(preset_names())


@pytest.mark.parametrize(("name", "two", "three"), PINNED)
def test_random_play_is_unchanged(name: str, two: str, three: str) -> None:
    assert trace_digest(name, 2, 11, 2) == two
    assert trace_digest(name, 1, 12, 3) == three


def _keep_positions(name: str, games: int, seed: int) -> set[tuple[tuple[int, ...], Carry, bool]]:
    rules = preset(name)
    rng = np.random.default_rng(seed)
    found = set()
    for _ in range(games):
        s = new_game(rules, 2)
        while not is_over(s):
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
                continue
            if s.phase == Phase.KEEP:
                found.add((s.roll, s.carry, s.fresh))
            moves = legal_moves(rules, s)
            s = apply(rules, s, moves[int(rng.integers(len(moves)))])
    return found


@pytest.mark.parametrize("name", ["progressive", "trippn"])
def test_readings_without_other_faces_sets_equal_the_whole_reading(name: str) -> None:
    rules = preset(name)
    checked = 0
    for roll, carry, fresh in _keep_positions(name, 3, 5):
        if not any(carry.sets):
            continue
        for sub in _submultisets(counts_of(roll)):
            for full in {False, fresh and sum(sub) == len(roll) == rules.num_dice}:
                assert _sub_readings(rules, sub, carry, full) == _tap_order_readings(rules, sub, carry, full)
                checked += 1
    assert checked > 100


_counts = st.tuples(*[st.integers(0, 3)] * 6).filter(lambda c: 0 < sum(c) <= 8)
_sets = st.tuples(*[st.sampled_from((0, 0, 0, 3, 4, 5))] * 6)
_fills = st.sets(st.sampled_from((1, 5, 6)), max_size=2).map(lambda f: tuple(sorted(f)))
_pairs = st.sampled_from(((), (1, 2, 3), (2, 4, 6), (3, 4, 5)))


@settings(max_examples=150, deadline=None)
@given(sub=_counts, sets=_sets, fills=_fills, pairs=_pairs, name=st.sampled_from(["progressive", "trippn"]))
def test_any_carry_reads_as_without_other_faces_sets(
    sub: tuple[int, ...], sets: tuple[int, ...], fills: tuple[int, ...], pairs: tuple[int, ...], name: str
) -> None:
    rules = preset(name)
    carry = Carry(sets, fills, pairs)  # type: ignore[arg-type]
    assert _sub_readings(rules, sub, carry, False) == _tap_order_readings(rules, sub, carry, False)  # type: ignore[arg-type]


def test_the_remembered_keep_table_serves_its_own_position_and_rules_only() -> None:
    rules = preset("ten_thousand")
    other = rules.replace(single_values=(100, 0, 0, 0, 0, 0))
    start = new_game(rules, 2, first_player=0)
    s = apply_roll(rules, start, (1, 2, 3, 4, 5, 5))
    ours = [str(m) for m in legal_moves(rules, s)]
    theirs = [str(m) for m in legal_moves(other, s)]
    assert "keep:5" in ours and "keep:5" not in theirs
    assert theirs == [f"keep:{','.join(map(str, o.taps))}" for o in current_keep_options(other, s)]
    equal = start._replace()
    same = apply_roll(rules, equal, (1, 2, 3, 4, 5, 5))
    assert same == s and same is not s
    assert legal_moves(rules, same) == legal_moves(rules, s)
    assert apply(other, s, legal_moves(other, s)[0]).turn_total == 100
    assert apply(rules, s, legal_moves(rules, s)[1]) == apply(rules, same, legal_moves(rules, same)[1])
