"""The options the rule texts leave open (issue 20): each a documented field, each played by
the engine, the catalog and the solver as its docstring says."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from greed_env.rules import (
    REROLL_ALL,
    IllegalKeep,
    IllegalMove,
    Move,
    RulesError,
    apply,
    apply_roll,
    is_chance,
    is_over,
    keep_options,
    legal_moves,
    new_game,
    preset,
    read_keep,
    sample_roll,
)
from greed_env.rules.config import reading_revisions
from greed_env.spaces.catalog import ActionCatalog


def test_fields_quote_their_seed_sentences() -> None:
    from greed_env.rules import Rules

    docs = Rules.field_docs()
    assert "try to beat that score" in docs["tie_rule"]
    assert "Three of a Kind (in a single roll)" in docs["repeat_sets"]
    assert "losing their initial score" in docs["reroll_all_any_time"]
    assert "not necessarily unique" in docs["quad_counts_as_two_pairs"]


# --- Ten Thousand ties -------------------------------------------------------------------


def _play_out(rules, moves_of, seed: int, n: int = 2):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    s = new_game(rules, n, first_player=0)
    while not is_over(s):
        s = apply_roll(rules, s, sample_roll(rules, s, rng)) if is_chance(s) else apply(
            rules, s, moves_of(s)
        )
    return s


def _final_round_tie(tie_rule: str):  # type: ignore[no-untyped-def]
    """Seat 0 banks 10,000 from 9,000; seat 1 ties it on the last turn."""
    rules = preset("ten_thousand", tie_rule=tie_rule)
    s = new_game(rules, 2, first_player=0)._replace(scores=(9_000, 9_000), entered=(True, True))
    s = apply(rules, apply_roll(rules, s, (1, 1, 1, 1, 2, 3)), Move("keep", (1, 1, 1, 1)))
    s = apply(rules, s, Move("bank"))  # 2,000 -> 11,000, final round for seat 1
    assert s.endgame and s.player == 1
    s = apply(rules, apply_roll(rules, s, (1, 1, 1, 1, 2, 3)), Move("keep", (1, 1, 1, 1)))
    return apply(rules, s, Move("bank"))


def test_first_finisher_wins_a_tie_and_shared_splits_it() -> None:
    """001: 'everyone else gets one more turn to try to beat that score' - a tie does not beat."""
    shared = _final_round_tie("shared")
    assert shared.scores == (11_000, 11_000) and shared.winners == (0, 1)
    first = _final_round_tie("first_finisher")
    assert first.scores == (11_000, 11_000) and first.winners == (0,)
    assert first.shares == (1.0, 0.0)


def test_first_finisher_games_never_share() -> None:
    rules = preset("ten_thousand", tie_rule="first_finisher")

    def greedy(s):  # type: ignore[no-untyped-def]
        moves = legal_moves(rules, s)
        if Move("bank") in moves:
            return Move("bank")
        keeps = [m for m in moves if m.kind == "keep"]
        return max(keeps, key=lambda m: read_keep(rules, m.taps).score) if keeps else moves[-1]

    for seed in range(20):
        s = _play_out(rules, greedy, seed)
        assert len(s.winners) == 1 and max(s.scores) >= rules.target


def test_first_finisher_needs_a_final_round() -> None:
    with pytest.raises(RulesError, match="first_finisher"):
        preset("farkle", tie_rule="first_finisher")


# --- Farkle six of a kind ----------------------------------------------------------------


def test_farkle_six_of_a_kind_is_one_triple_plus_singles() -> None:
    """003 scores 'Three of a Kind (in a single roll)' and no larger set."""
    farkle = preset("farkle")
    assert not farkle.repeat_sets
    assert read_keep(farkle, (1,) * 6).score == 1100 + 300
    with pytest.raises(IllegalKeep, match="2, 2, 2 score nothing"):
        read_keep(farkle, (2,) * 6)
    assert max(o.score for o in keep_options(farkle, (2,) * 6)) == 200
    two = preset("farkle", repeat_sets=True)
    assert read_keep(two, (2,) * 6).score == 400 and read_keep(two, (1,) * 6).score == 2200
    assert ActionCatalog(farkle).n < ActionCatalog(two).n


# --- Zilch ---------------------------------------------------------------------------------


def test_zilch_counts_four_of_a_kind_and_a_pair_as_three_pairs() -> None:
    zilch = preset("zilch")
    assert zilch.quad_counts_as_two_pairs
    assert read_keep(zilch, (2, 2, 2, 2, 3, 3)).score == 1500  # four 2s alone: 400


# --- Greed reroll-all ------------------------------------------------------------------------


def test_greed_rerolls_only_the_first_roll_of_the_turn() -> None:
    """000: 'reroll all six dice, losing their initial score'."""
    greed = preset("greed")
    s = apply_roll(greed, new_game(greed, 2, first_player=0), (1, 2, 3, 3, 4, 6))
    assert REROLL_ALL in legal_moves(greed, s)
    s = apply(greed, s, Move("keep", (1,)))
    s = apply(greed, s, Move("roll"))
    s = apply_roll(greed, s, (1, 2, 3, 4, 6))
    assert REROLL_ALL not in legal_moves(greed, s)
    with pytest.raises(IllegalMove, match="first roll") as info:
        apply(greed, s, REROLL_ALL)
    assert info.value.rule == "reroll-first-roll-only"
    anytime = preset("greed", reroll_all_any_time=True)
    t = apply_roll(anytime, new_game(anytime, 2, first_player=0), (1, 2, 3, 3, 4, 6))
    t = apply_roll(anytime, apply(anytime, apply(anytime, t, Move("keep", (1,))), Move("roll")), (1, 2, 3, 4, 6))
    assert REROLL_ALL in legal_moves(anytime, t)


def test_no_second_reroll_after_a_reroll() -> None:
    greed = preset("greed")
    s = apply_roll(greed, new_game(greed, 2, first_player=0), (1, 2, 3, 3, 4, 6))
    s = apply_roll(greed, apply(greed, s, REROLL_ALL), (1, 2, 2, 3, 4, 6))
    assert REROLL_ALL not in legal_moves(greed, s)


# --- refusals and fingerprints -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "overrides", "names"),
    [
        ("progressive", {"quad_counts_as_two_pairs": True}, ("quad_counts_as_two_pairs", "carry_over")),
        ("progressive", {"two_triplets": 2500}, ("two_triplets", "carry_over")),
        ("progressive", {"four_kind_plus_pair": 1500}, ("four_kind_plus_pair", "carry_over")),
        ("ten_thousand", {"straight_fill_bonus": 500}, ("straight_fill_bonus", "carry_over")),
        ("ten_thousand", {"reroll_all_any_time": True}, ("reroll_all_any_time", "reroll_all")),
    ],
)
def test_overrides_a_reading_cannot_honour_are_refused(
    name: str, overrides: dict[str, object], names: tuple[str, ...]
) -> None:
    with pytest.raises(RulesError) as info:
        preset(name, **overrides)
    for field in names:
        assert field in str(info.value)


def test_changed_readings_change_fingerprints_and_new_defaults_do_not() -> None:
    assert preset("ten_thousand").fingerprint == "ab06fc21052116fd"  # shipped tables still apply
    assert reading_revisions(preset("progressive")) == {"tap_order": 2}
    assert reading_revisions(preset("greed")) == {"reroll_all": 2}
    assert preset("greed").fingerprint != preset("greed", reroll_all_any_time=True).fingerprint
    assert preset("farkle").fingerprint != preset("farkle", repeat_sets=True).fingerprint


# --- Progressive: every tap order of a legal keep is one of the listed moves -------------


def test_every_tap_order_of_every_listed_keep_reads_as_a_listed_move() -> None:
    """For rolls of up to seven dice (and the seed's eight-dice examples), each permutation of
    each listed keep is refused or reads as one of the listed options of the same dice."""
    rules = preset("progressive")
    rng = np.random.default_rng(7)
    rolls = [tuple(sorted(rng.integers(1, 7, size=k).tolist())) for k in (5, 6, 7, 7, 8) for _ in range(6)]
    rolls += [(1, 1, 1, 2, 3, 4, 5, 6), (1, 1, 2, 2, 5, 5, 1, 3)]
    for roll in rolls:
        opts = keep_options(rules, tuple(sorted(roll)), fresh=False)
        outcomes = {(o.dice, o.score, o.carry) for o in opts}
        for o in opts:
            for perm in set(itertools.permutations(o.dice)):
                try:
                    res = read_keep(rules, perm)
                except IllegalKeep:
                    continue
                assert (o.dice, res.score, res.carry) in outcomes, (roll, perm)


def test_a_card_made_under_an_earlier_reading_is_refused_by_name() -> None:
    """A bot card from before a reading revision names the corrected reading."""
    from greed_env.bots.cards import card_rules
    from greed_env.bots.errors import RulesMismatchError
    from greed_env.rules.config import fingerprint_before_revisions

    greed = preset("greed")
    card = {"rules": greed.to_dict(), "rules_fingerprint": fingerprint_before_revisions(greed)}
    with pytest.raises(RulesMismatchError, match=r"earlier reading .* reroll_all"):
        card_rules(card, where="bot greed/ppo-turn")


@given(st.data())
@settings(max_examples=150, deadline=None)
def test_any_tap_order_of_a_listed_keep_is_refused_or_a_listed_move(data: st.DataObject) -> None:
    """Hypothesis: a roll, a carry-over of working sets (Trippn keeps them through and-rolls),
    a listed keep and any permutation of its dice: the permutation is refused or reads as one
    of the listed options of the same dice (same points and carry-over)."""
    from greed_env.rules import Carry

    name = data.draw(st.sampled_from(["progressive", "trippn"]))
    rules = preset(name)
    roll = tuple(sorted(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=8))))
    working = data.draw(st.lists(st.sampled_from([1, 2, 3, 4, 5, 6]), max_size=3, unique=True))
    carry = Carry(tuple(3 if f in working else 0 for f in range(1, 7)), (), ())  # type: ignore[arg-type]
    opts = keep_options(rules, roll, carry, False)
    if not opts:
        return
    outcomes = {(o.dice, o.score, o.carry) for o in opts}
    o = data.draw(st.sampled_from(opts))
    perm = tuple(data.draw(st.permutations(o.dice)))
    try:
        res = read_keep(rules, perm, carry)
    except IllegalKeep:
        return
    assert (o.dice, res.score, res.carry) in outcomes
