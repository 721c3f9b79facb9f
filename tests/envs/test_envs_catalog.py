"""The action catalog: sizes, exactness of the keep set, and the mask <-> legal_moves bijection."""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Any

import numpy as np
import pytest

from greed_env.envs.docs import CATALOG_SIZES_DOC, catalog_sizes_table
from greed_env.rules import (
    Carry,
    IllegalMove,
    Move,
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    current_keep_options,
    is_chance,
    is_over,
    keep_options,
    legal_moves,
    new_game,
    preset,
    preset_names,
    sample_roll,
)
from greed_env.spaces.catalog import (
    ACTION_CATALOG_VERSION,
    ActionCatalog,
    catalog_version,
    fill_alternates,
)

VARIANTS: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in preset_names()] + [
    ("farkle", {"piggyback": True}),
    ("ten_thousand", {"six_kind_wins": True, "pair_values": (200, 0, 0, 0, 100, 0)}),
    ("zilch", {"four_kind_plus_pair": 1500, "two_triplets": 2500}),
    ("greed", {"entry_scope": "roll", "hot_dice": True}),
]


def _rules(name: str, overrides: dict[str, Any]) -> Rules:
    return preset(name, **overrides)


def test_catalog_sizes_match_docs() -> None:
    assert catalog_sizes_table() == CATALOG_SIZES_DOC


def test_catalog_is_cached_per_rules_and_versioned() -> None:
    a = ActionCatalog("ten_thousand")
    assert ActionCatalog(preset("ten_thousand")) is a
    assert a.version == catalog_version(a.rules) == 1
    assert ActionCatalog("progressive").version == ACTION_CATALOG_VERSION == 3
    assert ActionCatalog(preset("ten_thousand", single_values=(100, 0, 0, 0, 50, 60))) is not a


@pytest.mark.parametrize("name", ["farkle5", "zilch", "greed"])
def test_order_free_keeps_are_exactly_the_dice_of_every_keep_option(name: str) -> None:
    """The catalog's fast enumeration equals collecting KeepOption.dice over every roll."""
    r = preset(name)
    seen: set[tuple[int, ...]] = set()
    for size in range(1, r.num_dice + 1):
        for roll in combinations_with_replacement(range(1, 7), size):
            for fresh in (True, False):
                seen.update(o.dice for o in keep_options(r, roll, fresh=fresh))
    cat = ActionCatalog(r)
    keeps = [e.dice for e in cat.entries if e.kind == "keep"]
    assert set(keeps) == seen and len(keeps) == len(seen)
    assert keeps == sorted(keeps, key=lambda d: (len(d), d))


def test_carry_over_catalog_has_every_multiset_and_its_readings() -> None:
    """Tap-order rules: every multiset plain, and a twin for each combination that can lock
    first in some tap order (a large straight, a small straight, three pairs), then the three
    alternate fill keeps."""
    cat = ActionCatalog("progressive")
    keeps = [e for e in cat.entries if e.kind == "keep"]
    by_reading = {k: [e.dice for e in keeps if e.reading == k and not e.fills] for k in ("", "large", "small", "pairs")}
    assert len(by_reading[""]) == 3002 and len(keeps) == 3002 + 28 + 140 + 515 + 3
    assert all(set(d) == set(range(1, 7)) for d in by_reading["large"])
    assert all({1, 2, 3, 4, 5} <= set(d) or {2, 3, 4, 5, 6} <= set(d) for d in by_reading["small"])
    assert all(sum(d.count(f) >= 2 for f in set(d)) >= 3 for d in by_reading["pairs"])
    s = cat.summary()
    assert s["kinds"] == [
        "bank",
        "roll",
        "roll_for_nothing",
        "bust",
        "split",
        "refuse",
        "roll_first",
        "roll_last",
    ]


def test_non_keep_kinds_follow_the_rules() -> None:
    assert ActionCatalog("greed").summary()["kinds"] == ["bank", "roll", "reroll_all"]
    assert ActionCatalog(preset("farkle", piggyback=True)).summary()["kinds"] == [
        "bank",
        "roll",
        "piggyback",
        "fresh",
    ]


def test_index_of_and_labels() -> None:
    cat = ActionCatalog("progressive")
    small = cat.index_of(Move("keep", (1, 1, 1, 2, 3, 4, 5, 6)))
    large = cat.index_of(Move("keep", (1, 2, 3, 4, 5, 6, 1, 1)))
    assert small != large and cat.entries[large].large_first
    assert cat.entries[small].reading == "small"
    assert cat.index_of(Move("keep", (6, 1, 2, 3, 4, 5))) == cat.index_of(
        "keep 1,2,3,4,5,6 (large straight)"
    )
    pairs = cat.index_of(Move("keep", (1, 1, 5, 5, 2, 2, 1)))
    assert cat.labels[pairs] == "keep 1,1,1,2,2,5,5 (three pairs first)"
    assert cat.index_of("bank") == 0 and cat.index_of(Move("roll")) == 1
    assert cat.labels[large].endswith("(large straight)")
    with pytest.raises(KeyError, match="not in the"):
        ActionCatalog("ten_thousand").index_of(Move("reroll_all"))
    with pytest.raises(KeyError, match="never legal"):
        ActionCatalog("ten_thousand").index_of(Move("keep", (2, 3)))
    rows = cat.table()
    assert rows[0] == {
        "index": 0,
        "kind": "bank",
        "dice": (),
        "reading": "",
        "fills": False,
        "label": "bank",
    }
    assert [r["index"] for r in rows] == list(range(cat.n))
    assert rows[-1]["fills"] and rows[-1]["label"] == "keep 1,1,4,4,5,5,6,6 (three pairs first, filling the straight)"


def test_action_to_move_refuses_masked_and_out_of_range_actions() -> None:
    r = preset("ten_thousand")
    cat = ActionCatalog(r)
    s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
    with pytest.raises(IllegalMove, match="not legal"):
        cat.action_to_move(s, cat.index_of("bank"))
    for bad in (-1, cat.n, 1.5, "x"):
        with pytest.raises(IllegalMove):
            cat.action_to_move(s, bad)


# ---------------------------------------------------------------------------------------------
# bijection over random positions


_EIGHT = (1, 5, 2, 2, 3, 4, 6, 6)
_NOTHING6 = (2, 2, 3, 4, 6, 6)


def _split_vote_start(r: Rules) -> State:
    """Players 0 and 2 of three both go out: the split vote starts (exact-target rules)."""
    s = new_game(r, 3, first_player=0)._replace(scores=(9850, 0, 9850), entered=(True,) * 3)
    steps: list[Any] = [_EIGHT, "keep:1,5", "roll_for_nothing", _NOTHING6]
    steps += [_EIGHT, "keep:1", "bank", _EIGHT, "keep:1,5", "roll_for_nothing", _NOTHING6]
    for step in steps:
        if isinstance(step, tuple):
            s = apply_roll(r, s, step)
        else:
            s = apply(r, s, next(m for m in legal_moves(r, s) if str(m) == step))
    assert s.phase == Phase.SPLIT
    return s


def _check_position(cat: ActionCatalog, r: Rules, s: State) -> list[Move]:
    mask = cat.mask(s)
    assert mask.dtype == np.int8 and mask.shape == (cat.n,)
    moves = legal_moves(r, s)
    actions = np.flatnonzero(mask)
    mapped = [cat.action_to_move(s, int(a)) for a in actions]
    assert len(mapped) == len(set(mapped)) == len(moves), (s, mapped, moves)
    assert set(mapped) == set(moves)
    for a, m in zip(actions, mapped, strict=True):
        assert cat.index_of(m, s) == a
    opts = current_keep_options(r, s)
    assert sorted(cat.index_of(o) for o in opts) == sorted(
        int(a) for a in actions if cat.entries[a].kind == "keep"
    )
    masked = np.flatnonzero(mask == 0)
    if len(masked):
        with pytest.raises(IllegalMove):
            cat.action_to_move(s, int(masked[len(masked) // 2]))
    return mapped


@pytest.mark.parametrize(
    ("name", "overrides"),
    VARIANTS,
    ids=[f"{n}{'+' if o else ''}{'-'.join(o)}" for n, o in VARIANTS],
)
def test_unmasked_actions_and_legal_moves_correspond_one_to_one(
    name: str, overrides: dict[str, Any]
) -> None:
    r = _rules(name, overrides)
    cat = ActionCatalog(r)
    rng = np.random.default_rng(7)
    budget = 500 if r.carry_over else 1200
    positions = 0
    phases: set[int] = set()
    game = 0
    while positions < budget:
        game += 1
        if r.tie_rule == "split_vote" and game % 3 == 1:
            s = _split_vote_start(r)
        else:
            n = int(rng.integers(max(2, r.min_players), min(r.max_players, 5) + 1))
            s = new_game(r, n)
            if game % 2 == 0:
                near = tuple(int(x) * 50 for x in rng.integers(150, 200, size=n))
                s = s._replace(scores=near, entered=(True,) * n)
        steps = 0
        while not is_over(s) and steps < 150:
            if is_chance(s):
                assert not cat.mask(s).any()
                s = apply_roll(r, s, sample_roll(r, s, rng))
                continue
            mapped = _check_position(cat, r, s)
            phases.add(s.phase)
            positions += 1
            steps += 1
            s = apply(r, s, mapped[int(rng.integers(len(mapped)))])
        if is_over(s):
            assert not cat.mask(s).any()
    assert {Phase.KEEP, Phase.CONTINUE} <= phases
    if r.tie_rule == "split_vote":
        assert {Phase.SPLIT, Phase.ORDER_CHOICE} <= phases
    if r.piggyback:
        assert Phase.START in phases


@pytest.mark.parametrize(
    ("roll", "taps", "points"),
    [
        ((1, 1, 2, 3, 4, 5, 6, 6), (1, 2, 3, 4, 5, 1), 850),
        ((1, 1, 2, 3, 4, 5, 6, 6), (1, 2, 3, 4, 5, 6, 1), 1600),
        ((2, 3, 4, 5, 5, 5, 6, 6), (2, 3, 4, 5, 6, 5, 5), 850),
        ((1, 1, 1, 2, 2, 5, 5, 6), (1, 1, 5, 5, 2, 2, 1), 1200),
        ((1, 1, 1, 2, 3, 4, 5, 5), (1, 2, 3, 4, 5, 1, 1, 5), 2000),
        ((6, 6, 6, 1, 2, 3, 4, 5), (6, 6, 6, 1, 2, 3, 4, 5), 2350),
    ],
)
def test_tap_order_readings_are_unmasked_actions(
    roll: tuple[int, ...], taps: tuple[int, ...], points: int
) -> None:
    """Issue 20's keeps: each is one unmasked action of the catalog that plays a tap order
    reading the seed's points, and the move with the user's own tap order maps to it."""
    from greed_env.rules import is_chance

    rules = preset("progressive")
    cat = ActionCatalog(rules)
    s = apply_roll(rules, new_game(rules, 2), tuple(sorted(roll)))
    assert not is_chance(s)
    a = cat.index_of(Move("keep", taps), s)
    assert cat.mask(s)[a] == 1
    move = cat.action_to_move(s, a)
    after = apply(rules, s, move)
    assert after.turn_total == points
    assert apply(rules, s, Move("keep", taps)).turn_total == points


ALTERNATE_ROLLS = [(1, 1, 2, 2, 3, 3, 4, 4), (1, 1, 3, 3, 4, 4, 5, 5), (1, 1, 4, 4, 5, 5, 6, 6)]


@pytest.mark.parametrize("name", ["progressive", "trippn"])
def test_alternate_fill_keeps_come_after_the_version_2_ids(name: str) -> None:
    """The three keeps that read three pairs two ways with a straight open for a 1 each have a
    second action, appended: the version-2 ids keep their meaning."""
    cat = ActionCatalog(name)
    assert fill_alternates(cat.rules) == tuple((dice, "pairs") for dice in ALTERNATE_ROLLS)
    assert (cat.n, cat.size_of_version(2), cat.size_of_version(3), cat.size_of_version(1)) == (3696, 3693, 3696, None)
    added = cat.entries[3693:]
    assert [(e.dice, e.reading, e.fills) for e in added] == [(d, "pairs", True) for d in ALTERNATE_ROLLS]
    assert not any(e.fills for e in cat.entries[:3693])
    for e in added:
        primary = cat.entries[cat.primary_of(e.index)]
        assert (primary.dice, primary.reading, primary.fills) == (e.dice, e.reading, False)
        assert e.label == primary.label[:-1] + ", filling the straight)"
    assert cat.primary_of(5) == 5
    assert fill_alternates(preset("ten_thousand")) == ()


@pytest.mark.parametrize("name", ["progressive", "trippn"])
@pytest.mark.parametrize("roll", ALTERNATE_ROLLS)
def test_both_three_pairs_readings_of_a_fill_keep_get_their_own_action(name: str, roll: tuple[int, ...]) -> None:
    """With a straight open for a 1, eight dice of a pair of 1s and three other pairs keep as four
    pairs (the straight stays open) or as three pairs with a 1 filling it (they stay working):
    two legal moves, two actions, each playing its own outcome."""
    rules = preset(name)
    cat = ActionCatalog(rules)
    state = new_game(rules, 2, first_player=0)._replace(
        phase=Phase.KEEP, roll=roll, dice=8, carry=Carry((0,) * 6, (1,), ()), fresh=False
    )
    full = {o.taps: o for o in current_keep_options(rules, state) if len(o.dice) == 8}
    assert len(full) == 2
    ids = {cat.index_of(o): o for o in full.values()}
    assert len(ids) == 2 and set(ids) == {cat.index_of(("keep", roll)), cat.n - 3 + ALTERNATE_ROLLS.index(roll)}
    mask = cat.mask(state)
    for a, opt in ids.items():
        assert mask[a] == 1
        move = cat.action_to_move(state, a)
        assert move.taps == opt.taps
        assert cat.index_of(move, state) == a
        after = apply(rules, state, move)
        assert after.turn_total == state.turn_total + opt.score
        assert after.carry == (opt.carry if rules.trippn else Carry())  # Progressive's hot dice clear it
    fill = next(o for o in full.values() if any(p.name.startswith("fills straight") for p in o.parts))
    assert cat.entries[cat.index_of(fill)].fills and fill.carry.fills == ()
