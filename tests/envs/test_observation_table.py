"""The observation vector of hand-built positions, entry by entry, against its documented table.

Each expected value below is worked out by hand from the table's scaling column
(``OBSERVATION_SPEC``, quoted in docs/envs.md), never from the encoder; an entry not named is 0.
A shifted index, a wrong scale or a seat read from the wrong side shows up as the entries that
differ, by name.
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.rules import Phase, Rules, State, new_game, preset
from greed_env.rules.scoring import Carry
from greed_env.spaces.observation import OBS_DIM, OBS_INDEX, OBSERVATION_SPEC, encode_observation


def _differences(rules: Rules, state: State, expected: dict[str, float], seat: int | None = None) -> dict[str, tuple[float, float]]:
    """``{name: (encoded, expected)}`` for every entry that differs (an unnamed entry expects 0)."""
    unknown = set(expected) - set(OBS_INDEX)
    assert not unknown, f"not entries of the table: {sorted(unknown)}"
    got = encode_observation(rules, state, seat=seat)
    assert got.shape == (OBS_DIM,) and got.dtype == np.float32
    out = {}
    for entry in OBSERVATION_SPEC:
        want = expected.get(entry.name, 0.0)
        if abs(float(got[entry.index]) - want) > 1e-6:
            out[entry.name] = (float(got[entry.index]), want)
    return out


def test_a_first_roll_of_three_players_seen_by_the_player_to_act() -> None:
    """ten_thousand, 3 seats, seat 1 to keep from 1,1,1,2,5,5 (three faces, three counts)."""
    rules = preset("ten_thousand")
    state = new_game(rules, 3, first_player=1)._replace(
        phase=Phase.KEEP, roll=(1, 1, 1, 2, 5, 5), scores=(2500, 700, 9000), entered=(True, False, True),
        streaks=(0, 2, 1), rounds=6,
    )  # fmt: skip
    expected = {
        "num_dice": 6 / 8, "num_players": 3 / 8, "entry_threshold": 1000 / 10_000,
        "showing_1": 3 / 6, "showing_2": 1 / 6, "showing_5": 2 / 6,
        "my_turn": 1.0, "dice_in_hand": 6 / 6, "fresh": 1.0,
        "entry_missing": 1000 / 10_000,  # not in yet, nothing kept this turn
        "to_target": (10_000 - 700) / 10_000, "to_target_after_bank": (10_000 - 700) / 10_000,
        "seat_present_0": 1.0, "seat_present_1": 1.0, "seat_present_2": 1.0,
        # slot 0 is seat 1 (me), slot 1 seat 2, slot 2 seat 0
        "score_0": 700 / 10_000, "score_1": 9000 / 10_000, "score_2": 2500 / 10_000,
        "entered_1": 1.0, "entered_2": 1.0,
        "bust_streak_0": 2 / 3, "bust_streak_1": 1 / 3,  # no bust penalty: streaks / 3
        "phase_KEEP": 1.0,
        "round_progress": 6 / (400 * 3),  # no fixed rounds: turns / (horizon_rounds * players)
    }  # fmt: skip
    assert _differences(rules, state, expected) == {}


def test_a_final_round_decision_seen_from_both_seats() -> None:
    """ten_thousand, 2 seats: seat 1 reached the target, seat 0 (owed its final turn) holds
    1,250 points with 2 dice left and may bank; seat 1 watches."""
    rules = preset("ten_thousand")
    state = new_game(rules, 2, first_player=0)._replace(
        phase=Phase.CONTINUE, scores=(9000, 10_400), entered=(True, True), turn_total=1250, dice=2, fresh=False,
        entry_met=True, endgame=True, final_left=(0,), rounds=31,
    )  # fmt: skip
    both = {
        "num_dice": 6 / 8, "num_players": 2 / 8, "entry_threshold": 0.1,
        "dice_in_hand": 2 / 6, "turn_total": 1250 / 10_000, "entry_met": 1.0,
        "seat_present_0": 1.0, "seat_present_1": 1.0, "entered_0": 1.0, "entered_1": 1.0,
        "phase_CONTINUE": 1.0, "final_round": 1.0, "round_progress": 31 / (400 * 2),
    }  # fmt: skip
    acting = {
        **both, "my_turn": 1.0, "can_bank": 1.0,
        "to_target": (10_000 - 9000) / 10_000, "to_target_after_bank": (10_000 - 9000 - 1250) / 10_000,
        "score_0": 0.9, "score_1": 1.04, "owed_final_turn_0": 1.0, "me_owed_final_turn": 1.0,
    }  # fmt: skip
    watching = {
        **both,  # not my turn: no bank, and the unbanked points are not mine
        "to_target": (10_000 - 10_400) / 10_000, "to_target_after_bank": (10_000 - 10_400) / 10_000,
        "score_0": 1.04, "score_1": 0.9, "owed_final_turn_1": 1.0,
    }  # fmt: skip
    assert _differences(rules, state, acting) == {}
    assert _differences(rules, state, acting, seat=0) == {}
    assert _differences(rules, state, watching, seat=1) == {}


def test_carry_over_sets_fills_pairs_and_finishers_under_an_exact_target() -> None:
    """progressive (8 dice, carry-over, exact target), 3 seats: seat 2 keeps from
    2,3,3,4,6,6,6,6 holding a working set of three 2s, an open fill of 4 and working pairs of
    5s and 6s; seat 0 went out, seat 1 still owes its final turn; scores are clipped."""
    rules = preset("progressive")
    state = new_game(rules, 3, first_player=2)._replace(
        phase=Phase.KEEP, roll=(2, 3, 3, 4, 6, 6, 6, 6), dice=8, fresh=False, turn_total=450,
        scores=(10_000, 25_000, -12_000), entered=(True, True, True),
        carry=Carry(sets=(0, 3, 0, 0, 0, 0), fills=(4,), pairs=(5, 6)),
        endgame=True, finishers=(0,), final_left=(1, 2),
    )  # fmt: skip
    expected = {
        "num_dice": 8 / 8, "num_players": 3 / 8, "exact_target": 1.0,
        "showing_2": 1 / 8, "showing_3": 2 / 8, "showing_4": 1 / 8, "showing_6": 4 / 8,
        "my_turn": 1.0, "dice_in_hand": 8 / 8, "turn_total": 450 / 10_000,
        "to_target": 2.0,  # (target + 12,000) / target = 2.2, clipped to 2
        "to_target_after_bank": 2.0,
        "seat_present_0": 1.0, "seat_present_1": 1.0, "seat_present_2": 1.0,
        # slot 0 is seat 2 (me), slot 1 seat 0, slot 2 seat 1
        "score_0": -1.0, "score_1": 1.0, "score_2": 2.0,
        "entered_0": 1.0, "entered_1": 1.0, "entered_2": 1.0,
        "went_out_1": 1.0, "owed_final_turn_0": 1.0, "owed_final_turn_2": 1.0,
        "working_set_2": 3 / 8, "open_fill_4": 1.0, "working_pairs_5": 1.0, "working_pairs_6": 1.0,
        "phase_KEEP": 1.0, "final_round": 1.0, "me_owed_final_turn": 1.0,
    }  # fmt: skip
    assert _differences(rules, state, expected) == {}


def test_bar_piggyback_roll_off_and_split_entries() -> None:
    """The entries of rarer situations, each in a position of its own: a keep that must beat a
    bar, a turn on offer, a roll-off, and a split vote."""
    greed = preset("greed")
    base = {"num_dice": 6 / 8, "num_players": 2 / 8, "entry_threshold": 500 / 10_000, "seat_present_0": 1.0,
            "seat_present_1": 1.0, "to_target": 1.0, "to_target_after_bank": 1.0}  # fmt: skip
    bar = new_game(greed, 2, first_player=1)._replace(phase=Phase.KEEP, roll=(6, 6, 4, 4, 3, 2), bar=350)
    assert _differences(greed, bar, {
        **base, "showing_2": 1 / 6, "showing_3": 1 / 6, "showing_4": 2 / 6, "showing_6": 2 / 6, "my_turn": 1.0,
        "dice_in_hand": 1.0, "fresh": 1.0, "entry_missing": 0.05, "phase_KEEP": 1.0, "bar_active": 1.0,
        "bar": 350 / 10_000,
    }) == {}  # fmt: skip
    piggy = new_game(greed, 2, first_player=0)._replace(phase=Phase.START, piggy=(800, 2))
    assert _differences(greed, piggy, {
        **base, "my_turn": 1.0, "dice_in_hand": 1.0, "fresh": 1.0, "entry_missing": 0.05, "phase_START": 1.0,
        "piggy_offer": 1.0, "piggy_total": 800 / 10_000, "piggy_dice": 2 / 6,
    }) == {}  # fmt: skip
    rolloff = new_game(greed, 2, first_player=0)._replace(
        phase=Phase.ROLL, rolloff=(0, 1), rolloff_scores=(300, 1250), rolloff_round=5,
        scores=(10_000, 10_000), entered=(True, True),
    )  # fmt: skip
    assert _differences(greed, rolloff, {
        **base, "my_turn": 1.0, "dice_in_hand": 1.0, "fresh": 1.0, "to_target": 0.0, "to_target_after_bank": 0.0,
        "score_0": 1.0, "score_1": 1.0, "entered_0": 1.0, "entered_1": 1.0, "phase_ROLL": 1.0,
        "in_rolloff": 1.0, "rolloff_best": 1250 / 10_000, "rolloff_round": 5 / 50,
    }) == {}  # fmt: skip
    progressive = preset("progressive")
    split = new_game(progressive, 4, first_player=3)._replace(
        phase=Phase.SPLIT, votes=1, finishers=(1, 3), scores=(4000, 10_000, 0, 10_000), entered=(True,) * 4,
    )  # fmt: skip
    assert _differences(progressive, split, {
        "num_dice": 1.0, "num_players": 4 / 8, "exact_target": 1.0, "my_turn": 1.0, "dice_in_hand": 1.0,
        "fresh": 1.0, "to_target": 0.0, "to_target_after_bank": 0.0,
        **{f"seat_present_{k}": 1.0 for k in range(4)}, **{f"entered_{k}": 1.0 for k in range(4)},
        # slot 0 is seat 3 (me), then seats 0, 1, 2
        "score_0": 1.0, "score_1": 0.4, "score_2": 1.0, "went_out_0": 1.0, "went_out_2": 1.0,
        "phase_SPLIT": 1.0, "split_votes": 1 / 4,
    }) == {}  # fmt: skip


@pytest.mark.parametrize("face", [1, 2, 3, 4, 5, 6])
def test_each_face_showing_lands_in_its_own_entry(face: int) -> None:
    rules = preset("ten_thousand")
    state = new_game(rules, 2, first_player=0)._replace(phase=Phase.KEEP, roll=(face,), dice=1, fresh=False)
    obs = encode_observation(rules, state)
    showing = obs[OBS_INDEX["showing_1"] : OBS_INDEX["showing_6"] + 1]
    assert showing.tolist() == [pytest.approx(1 / 6) if f == face else 0.0 for f in range(1, 7)]
