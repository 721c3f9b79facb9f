"""Scripted games: chosen rolls (``apply_roll``) and moves walk every turn-level rule of the seeds.

A step is a tuple of faces (a chance outcome) or the text of a move. Positions late in a game
are set up with ``State._replace`` on the scores, which is all a long game would change.
"""

from __future__ import annotations

import pytest

from greed_env.rules import (
    BANK,
    IllegalMove,
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    chance_outcomes,
    legal_moves,
    new_game,
    parse_move,
    preset,
    returns,
)

Step = tuple[int, ...] | str


def run(rules: Rules, state: State, *steps: Step) -> State:
    """Apply the steps in order: tuples are rolls, strings are moves."""
    for step in steps:
        if isinstance(step, tuple):
            state = apply_roll(rules, state, step)
        else:
            state = apply(rules, state, parse_move(step))
    return state


def moves(rules: Rules, state: State) -> list[str]:
    return [str(m) for m in legal_moves(rules, state)]


def at_scores(rules: Rules, scores: tuple[int, ...], first: int = 0) -> State:
    """A game whose players have banked ``scores`` (all on the board), ``first`` to play."""
    n = len(scores)
    return new_game(rules, n, first_player=first)._replace(scores=scores, entered=(True,) * n)


def refused(
    rules: Rules, state: State, move: str, rule: str, match: str | None = None
) -> IllegalMove:
    """Assert ``move`` is refused under ``rule`` and the position is left as it was."""
    before = tuple(state)
    with pytest.raises(IllegalMove, match=match) as info:
        apply(rules, state, parse_move(move))
    assert info.value.rule == rule
    assert tuple(state) == before
    return info.value


# ------------------------------------------------------------------------------------------
# who starts


def test_who_starts_roll_with_ties() -> None:
    """000/001/003: 'each player rolls one die ... If there is a tie for the highest number,
    the tied players roll again until one gets a higher number.'"""
    r = preset("ten_thousand")
    s = new_game(r, 3)
    assert s.phase == Phase.ORDER_ROLL and s.contenders == (0, 1, 2)
    assert sorted(chance_outcomes(r, s)) == [((f,), 1 / 6) for f in range(1, 7)]
    s = run(r, s, (5,), (5,), (3,))
    assert s.phase == Phase.ORDER_ROLL and s.contenders == (0, 1) and s.player == 0
    s = run(r, s, (4,), (4,))
    assert s.contenders == (0, 1)
    s = run(r, s, (2,), (6,))
    assert s.phase == Phase.ROLL and s.player == 1 and s.dice == 6
    assert s.turns == (0, 1, 0)


def test_who_starts_roll_is_skipped_for_seat0_rules_and_a_given_seat() -> None:
    """002 is silent on who starts: seat 0 starts; new_game(first_player=k) starts seat k."""
    assert new_game(preset("progressive"), 3).player == 0
    assert new_game(preset("progressive"), 3).phase == Phase.ROLL
    s = new_game(preset("farkle"), 4, first_player=2)
    assert (s.phase, s.player) == (Phase.ROLL, 2)


# ------------------------------------------------------------------------------------------
# getting on the board


def test_entry_threshold_per_turn_refuses_bank_with_the_rule() -> None:
    """001: 'To get "on the board," you must accumulate at least 1,000 points on your initial
    turn.' Banking below it is refused with a message naming the rule."""
    r = preset("ten_thousand")
    s = run(r, new_game(r, 2, first_player=0), (1, 5, 2, 3, 4, 4), "keep:1,5")
    assert moves(r, s) == ["roll"]
    err = refused(r, s, "bank", "cannot-bank", match="not on the board yet")
    assert "1000" in str(err) and "turn" in str(err)
    s = run(r, s, "roll", (1, 1, 1, 6), "keep:1,1,1")
    assert s.turn_total == 1150 and "bank" in moves(r, s)
    s = run(r, s, "bank")
    assert s.scores == (1150, 0) and s.entered == (True, False) and s.player == 1


def test_entered_player_banks_any_amount() -> None:
    """000: 'Once a player has scored their initial "come in" of 500 points, they add all
    points accumulated on subsequent turns to their score, even if they score less than 500.'"""
    r = preset("greed")
    s = run(r, new_game(r, 2, first_player=0), (5, 5, 5, 2, 3, 4), "keep:5,5,5", "bank")
    s = run(r, s, (2, 3, 3, 4, 4, 6), (1, 2, 3, 4, 6, 6), "keep:1", "bank")
    assert s.scores == (600, 0)


def test_entry_threshold_per_roll_scope() -> None:
    """000 'score 500 or more on their initial roll': with entry_scope='roll' one keep must
    score the threshold on its own; 300 + 300 over two keeps is not enough."""
    r = preset("greed", entry_scope="roll")
    s = run(r, new_game(r, 2, first_player=0), (3, 3, 3, 2, 4, 6), "keep:3,3,3")
    s = run(r, s, "roll", (3, 3, 3), "keep:3,3,3")
    assert s.phase == Phase.ROLL and s.player == 1 and s.scores == (0, 0)
    assert "cannot bank" in s.event
    s2 = run(r, new_game(r, 2, first_player=0), (5, 5, 5, 2, 3, 4), "keep:5,5,5")
    assert moves(r, s2) == ["bank", "roll"]
    turn_scope = preset("greed")
    s3 = run(turn_scope, new_game(turn_scope, 2, first_player=0), (3, 3, 3, 2, 4, 6), "keep:3,3,3")
    s3 = run(turn_scope, s3, "roll", (3, 3, 3), "keep:3,3,3")
    assert s3.turn_total == 600 and moves(turn_scope, s3) == ["bank"]


def test_entry_until_made_false_applies_to_the_first_turn_only() -> None:
    """001 'on your first turn': entry_until_made=False lifts the threshold after a player's
    first turn, made or not; the default keeps it until the player comes in."""
    for until_made, can_bank in ((True, False), (False, True)):
        r = preset("ten_thousand", entry_until_made=until_made)
        s = run(r, new_game(r, 2, first_player=0), (2, 2, 3, 3, 4, 6))
        s = run(r, s, (2, 2, 3, 4, 6, 6))
        s = run(r, s, (1, 2, 3, 4, 6, 6), "keep:1")
        assert s.player == 0 and s.turns == (2, 1)
        assert ("bank" in moves(r, s)) is can_bank


# ------------------------------------------------------------------------------------------
# within a turn


def test_hot_dice_gives_a_fresh_full_roll() -> None:
    """003: 'If after one or more rolls, all the dice can be counted towards the score, the
    player can then choose to continue by rolling all the dice again.'"""
    r = preset("ten_thousand")
    s = run(r, new_game(r, 2, first_player=0), (1, 5, 2, 3, 4, 6), "keep:1,5")
    s = run(r, s, "roll", (1, 1, 1, 5), "keep:1,1,1,5")
    assert (s.phase, s.turn_total, s.dice, s.fresh) == (Phase.CONTINUE, 1200, 6, True)
    assert moves(r, s) == ["bank", "roll"]
    s = run(r, s, "roll")
    assert chance_outcomes(r, s)[0][0] == (1, 1, 1, 1, 1, 1)


def test_no_hot_dice_in_greed_strands_a_player_below_entry() -> None:
    """000 is silent on hot dice (off): with every die kept the player must bank, and a turn
    below the come-in threshold then scores nothing."""
    r = preset("greed")
    s = run(r, new_game(r, 2, first_player=0), (1, 2, 3, 4, 5, 6), "keep:1,2,3,4,5,6")
    assert (s.dice, moves(r, s)) == (0, ["bank"])
    s = run(r, new_game(r, 2, first_player=0), (2, 2, 2, 1, 5, 5), "keep:1,2,2,2,5,5")
    assert s.player == 1 and s.scores == (0, 0) and "cannot bank" in s.event


def test_greed_reroll_all_must_beat_success() -> None:
    """000: 'reroll all six dice, losing their initial score in the hopes of scoring a higher
    one': the turn's points are given up, and the first keep must beat them."""
    r = preset("greed")
    s = run(r, new_game(r, 2, first_player=0), (1, 2, 3, 4, 4, 6))
    assert "reroll_all" in moves(r, s)
    s = run(r, s, "reroll_all")
    assert (s.phase, s.bar, s.turn_total, s.dice) == (Phase.ROLL, 100, 0, 6)
    s = run(r, s, (5, 5, 5, 1, 3, 4))
    assert "keep:1" not in moves(r, s) and "keep:5" not in moves(r, s)
    refused(r, s, "keep:1", "must-beat", match="more than 100")
    s = run(r, s, "keep:5,5,5")
    assert (s.turn_total, s.bar) == (500, -1)
    assert "bank" in moves(r, s)


def test_greed_reroll_all_failure_scores_zero() -> None:
    """000: 'if a higher score isn't achieved with the reroll, the player scores 0 for the
    turn'. The bar is the turn total plus the best keep of the abandoned roll."""
    r = preset("greed")
    s = at_scores(r, (1000, 0))
    s = run(r, s, (5, 5, 5, 2, 3, 4), "reroll_all")  # the first roll: 500 given up
    assert s.bar == 500
    s = run(r, s, (1, 1, 5, 2, 3, 4))
    assert s.player == 1 and s.scores == (1000, 0) and "does not beat 500" in s.event
    anytime = preset("greed", reroll_all_any_time=True)
    s = at_scores(anytime, (1000, 0))
    s = run(anytime, s, (5, 5, 5, 2, 3, 4), "keep:5,5,5", "roll", (1, 2, 3))
    s = run(anytime, s, "reroll_all")
    assert s.bar == 600
    s = run(anytime, s, (1, 1, 5, 2, 3, 4))
    assert s.player == 1 and s.scores == (1000, 0) and "does not beat 600" in s.event


def test_greed_reroll_all_free_retry_variant() -> None:
    """reroll_all_must_beat=False: the reroll is a free retry with no bar."""
    r = preset("greed", reroll_all_must_beat=False)
    s = run(r, new_game(r, 2, first_player=0), (1, 2, 3, 4, 4, 6), "reroll_all")
    assert s.bar == -1
    s = run(r, s, (5, 2, 3, 3, 4, 6), "keep:5")
    assert s.turn_total == 50


def test_reroll_all_gives_up_the_come_in_keep() -> None:
    """Regression: with entry_scope='roll', rerolling all kept the 'one keep scored the
    threshold' mark of the keep it threw away, so a free retry could come in with 100."""
    r = preset("greed", entry_scope="roll", reroll_all_must_beat=False, reroll_all_any_time=True)
    s = run(r, new_game(r, 2, first_player=0), (5, 5, 5, 2, 3, 4), "keep:5,5,5", "roll", (1, 2, 3))
    s = run(r, s, "reroll_all", (1, 2, 3, 4, 6, 6), "keep:1")
    assert s.turn_total == 100 and not s.entry_met
    assert moves(r, s) == ["roll"]
    refused(r, s, "bank", "cannot-bank", match="not on the board yet")


def test_voluntary_bust() -> None:
    """002: 'Keep at least one scoring die or you bust and lose everything unbanked that turn.'"""
    r = preset("progressive")
    s = at_scores(r, (500, 700))
    s = run(r, s, (1, 2, 2, 3, 3, 4, 6, 6), "keep:1", "roll", (1, 2, 3, 4, 6, 6, 6))
    assert "bust" in moves(r, s)
    s = run(r, s, "bust")
    assert s.player == 1 and s.scores == (500, 700) and s.turn_total == 0
    tt = preset("ten_thousand")
    assert "bust" not in moves(tt, run(tt, new_game(tt, 2, first_player=0), (1, 2, 3, 4, 6, 6)))


def test_farkle_piggyback() -> None:
    """003 variation: 'The next player could choose to begin a turn as normal or could begin by
    rolling the previous players remaining die (or dice).'"""
    r = preset("farkle", piggyback=True)
    s = run(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 4), "keep:1,1,1", "bank")
    assert s.scores == (1100, 0) and s.phase == Phase.START and s.piggy == (1100, 3)
    assert moves(r, s) == ["piggyback", "fresh"]
    took = run(r, s, "piggyback")
    assert (took.phase, took.turn_total, took.dice) == (Phase.ROLL, 1100, 3)
    took = run(r, took, (5, 2, 3), "keep:5", "bank")
    assert took.scores == (1100, 1150)
    lost = run(r, s, "piggyback", (2, 3, 4))
    assert lost.scores == (1100, 0) and lost.player == 0 and lost.phase == Phase.ROLL
    fresh = run(r, s, "fresh")
    assert (fresh.phase, fresh.turn_total, fresh.dice) == (Phase.ROLL, 0, 6)


def test_no_piggyback_after_a_bust_or_without_the_variation() -> None:
    r = preset("farkle", piggyback=True)
    s = run(
        r, new_game(r, 2, first_player=0), (1, 2, 3, 4, 6, 6), "keep:1", "roll", (2, 2, 3, 4, 6)
    )
    assert s.phase == Phase.ROLL and s.piggy is None
    plain = preset("farkle")
    s = run(plain, new_game(plain, 2, first_player=0), (1, 1, 1, 2, 3, 4), "keep:1,1,1", "bank")
    assert s.phase == Phase.ROLL


# ------------------------------------------------------------------------------------------
# between turns


def _zilch_bust(r: Rules, s: State) -> State:
    return run(r, s, (1, 2, 3, 4, 6, 6), "keep:1", "roll", (2, 2, 3, 4, 6))


def test_zilch_three_busts_in_a_row_cost_500() -> None:
    """Zilch (RULES-NOTES): 'a third zilch in a row costs 500'; banking resets the count."""
    r = preset("zilch")
    bank_1000 = ((1, 1, 1, 2, 3, 4), "keep:1,1,1", "bank")
    s = new_game(r, 2, first_player=0)
    s = run(r, _zilch_bust(r, s), *bank_1000)
    s = run(r, _zilch_bust(r, s), *bank_1000)
    assert s.streaks == (2, 0) and s.scores == (0, 2000)
    s = _zilch_bust(r, s)
    assert s.scores == (-500, 2000) and s.streaks == (0, 0) and "cost 500" in s.event
    s = run(r, _zilch_bust(r, run(r, s, *bank_1000)), *bank_1000)
    assert s.streaks == (1, 0)
    s = run(r, s, *bank_1000)
    assert s.scores == (500, 4000) and s.streaks == (0, 0)


def test_zilch_nothing_bonus_and_min_bank() -> None:
    """Zilch: 'six non-scoring dice score 500 and roll again'; '300 to bank'."""
    r = preset("zilch")
    s = run(r, new_game(r, 2, first_player=0), (2, 2, 3, 4, 4, 6))
    assert moves(r, s) == ["keep:2,2,3,4,4,6"]
    s = run(r, s, "keep:2,2,3,4,4,6")
    assert (s.turn_total, s.dice, s.fresh) == (500, 6, True)
    s2 = run(r, new_game(r, 2, first_player=0), (1, 2, 3, 4, 6, 6), "keep:1")
    refused(r, s2, "bank", "cannot-bank", match="300")
    s2 = run(r, new_game(r, 2, first_player=0), (2, 2, 3, 4, 4, 6), "keep:2,2,3,4,4,6")
    assert "bank" in moves(r, s2)
    partial = run(r, new_game(r, 2, first_player=0), (1, 2, 3, 4, 6, 6), "keep:1", "roll")
    s3 = run(r, partial, (2, 2, 3, 4, 6))
    assert s3.player == 1, "five non-scoring dice are a bust, not the six-dice bonus"


# ------------------------------------------------------------------------------------------
# ending a game


def test_ten_thousand_final_round_and_shared_tie() -> None:
    """001: 'The game ends when one player reaches or passes 10,000 points. Then, everyone else
    gets one more turn to try to beat that score. The player with the highest score wins.'"""
    r = preset("ten_thousand")
    s = at_scores(r, (9500, 9000, 200))
    s = run(r, s, (5, 5, 5, 1, 2, 3), "keep:1,5,5,5", "bank")
    assert s.scores[0] == 10100 and s.endgame and s.final_left == (1, 2) and s.player == 1
    s = run(r, s, (1, 1, 1, 2, 3, 4), "keep:1,1,1", "roll", (1, 2, 4), "keep:1", "bank")
    assert s.scores[1] == 10100 and s.player == 2
    s = run(r, s, (2, 2, 3, 3, 4, 6))
    assert s.phase == Phase.OVER and s.winners == (0, 1) and s.shares == (0.5, 0.5, 0.0)
    assert returns(s) == (0.5, 0.5, -1.0)


def test_ten_thousand_final_round_can_be_won_by_a_later_player() -> None:
    r = preset("ten_thousand")
    s = at_scores(r, (9500, 9000))
    s = run(r, s, (5, 5, 5, 1, 2, 3), "keep:1,5,5,5", "bank")
    s = run(r, s, (1, 1, 1, 2, 3, 4), "keep:1,1,1", "roll", (1, 1, 1), "keep:1,1,1", "bank")
    assert s.phase == Phase.OVER and s.winners == (1,) and returns(s) == (-1.0, 1.0)


def test_agreed_lower_target() -> None:
    """001: 'you can also set a lower or higher target': the target is a field."""
    r = preset("ten_thousand", target=5000)
    s = run(r, at_scores(r, (4500, 0)), (5, 5, 5, 1, 2, 3), "keep:1,5,5,5", "bank")
    assert s.scores[0] == 5100 and s.endgame and s.player == 1


def test_greed_ends_at_once_without_final_round() -> None:
    """000: 'The game ends when the first player reaches 10,000 or more points.'"""
    r = preset("greed")
    s = run(r, at_scores(r, (9500, 9900)), (5, 5, 5, 2, 3, 4), "keep:5,5,5", "bank")
    assert s.phase == Phase.OVER and s.winners == (0,)


def test_six_of_a_kind_instant_win_variant() -> None:
    """001 variant: 'Rolling six of the same number in one roll is an instant win.'"""
    r = preset("ten_thousand", six_kind_wins=True)
    s = run(r, new_game(r, 3, first_player=1), (4, 4, 4, 4, 4, 4))  # the roll wins, no keep
    assert s.phase == Phase.OVER and s.winners == (1,) and returns(s) == (-1.0, 2.0, -1.0)
    plain = preset("ten_thousand")
    s = run(plain, new_game(plain, 3, first_player=1), (4, 4, 4, 4, 4, 4), "keep:4,4,4,4,4,4")
    assert s.phase == Phase.CONTINUE and s.turn_total == 3200


# ------------------------------------------------------------------------------------------
# Progressive 10,000: exact target, endgame, split vote, roll-off, Trippn

EIGHT = (1, 2, 2, 3, 3, 4, 5, 6)
NOTHING6 = (2, 2, 3, 3, 4, 6)


def test_progressive_overshoot_ends_the_turn() -> None:
    """002: 'Going over is unrecoverable, since only an exact 10,000 goes out.'"""
    r = preset("progressive")
    s = run(r, at_scores(r, (9850, 0)), EIGHT, "keep:1,2,3,4,5")
    assert s.player == 1 and s.scores == (9850, 0) and "goes over" in s.event


def test_progressive_exactly_10000_cannot_bank_and_rolls_for_nothing() -> None:
    """002: 'Once your banked and unbanked total is exactly 10,000 you cannot bank. You must
    roll for nothing ... If none score, you go out even.'"""
    r = preset("progressive")
    s = run(r, at_scores(r, (9850, 0, 0)), EIGHT, "keep:1,5")
    assert moves(r, s) == ["roll_for_nothing"]
    refused(r, s, "bank", "cannot-bank", match="exactly 10000")
    refused(r, s, "roll", "must-roll-for-nothing")
    s = run(r, s, "roll_for_nothing")
    assert s.phase == Phase.ROLL and s.dice == 6
    out = run(r, s, NOTHING6)
    assert out.scores[0] == 10_000 and out.finishers == (0,) and out.endgame
    assert out.final_left == (1, 2) and out.player == 1
    lost = run(r, s, (1, 2, 3, 3, 4, 6))
    assert lost.scores[0] == 9850 and lost.finishers == () and lost.player == 1
    assert "turn lost" in lost.event


def test_progressive_endgame_one_more_turn_each_banking_wins_nothing() -> None:
    """002: 'When the first player goes out even, everyone else gets exactly one more turn to do
    the same. Banking on that last turn wins nothing'."""
    r = preset("progressive")
    s = run(r, at_scores(r, (9850, 100, 200)), EIGHT, "keep:1,5", "roll_for_nothing", NOTHING6)
    s = run(r, s, EIGHT, "keep:1", "bank")
    assert s.scores[1] == 200 and s.player == 2
    s = run(r, s, EIGHT, "keep:1,2,3,4,5", "bank")
    assert s.phase == Phase.OVER and s.winners == (0,) and returns(s) == (2.0, -1.0, -1.0)


def _two_finishers(r: Rules) -> State:
    """Players 0 and 2 both go out (0 first); player 1 banks 100 on the last turn."""
    s = run(r, at_scores(r, (9850, 0, 9850)), EIGHT, "keep:1,5", "roll_for_nothing", NOTHING6)
    s = run(r, s, EIGHT, "keep:1", "bank")
    return run(r, s, EIGHT, "keep:5,1", "roll_for_nothing", NOTHING6)


def test_progressive_two_finishers_all_agree_to_split() -> None:
    """002: 'If more than one player goes out even, each is asked in turn whether to split the
    pot.' All agree: 'A split ... divides the prize between the winners.'"""
    r = preset("progressive")
    s = _two_finishers(r)
    assert (s.phase, s.player, s.finishers) == (Phase.SPLIT, 0, (0, 2))
    assert moves(r, s) == ["split", "refuse"]
    s = run(r, s, "split")
    assert (s.phase, s.player) == (Phase.SPLIT, 2)
    s = run(r, s, "split")
    assert s.phase == Phase.OVER and s.winners == (0, 2) and s.shares == (0.5, 0.0, 0.5)
    assert returns(s) == (0.5, -1.0, 0.5)


def test_progressive_refusal_goes_to_a_rolloff_in_the_chosen_order() -> None:
    """002: 'a single refusal sends it to a roll-off. The player who went out even first then
    chooses whether to roll first or last, and that order holds for the whole roll-off. In a
    roll-off you cannot bank. You roll until you bust, and whatever you had accumulated when you
    bust is added to your 10,000 rather than lost. Highest total wins.'"""
    r = preset("progressive")
    s = run(r, _two_finishers(r), "split", "refuse")
    assert (s.phase, s.player, moves(r, s)) == (Phase.ORDER_CHOICE, 0, ["roll_first", "roll_last"])
    first = run(r, s, "roll_first")
    assert first.rolloff == (0, 2) and first.player == 0
    s = run(r, s, "roll_last")
    assert s.rolloff == (2, 0) and s.player == 2 and s.phase == Phase.ROLL
    s = run(r, s, EIGHT, "keep:1")
    assert moves(r, s) == ["roll"]
    refused(r, s, "bank", "cannot-bank", match="roll-off")
    s = run(r, s, "roll", (2, 2, 3, 3, 4, 4, 6))
    assert "bust" not in moves(r, s)
    s = run(r, s, "keep:2,2,3,3,4,4", "roll", (6,))
    assert s.rolloff_scores == (1600,) and s.player == 0
    s = run(r, s, EIGHT, "keep:5", "roll", (2, 2, 3, 4, 6, 6, 6))
    s = run(r, s, "keep:6,6,6", "roll", (2, 3, 4, 4))
    assert s.phase == Phase.OVER and s.winners == (2,) and returns(s) == (-1.0, -1.0, 2.0)
    assert s.scores == (10_000, 100, 10_000)


def test_progressive_rolloff_tie_goes_again_in_the_same_order() -> None:
    """002: 'If the top score is tied, those players go again, in the same order, until someone
    comes out ahead.'"""
    r = preset("progressive")
    s = run(r, _two_finishers(r), "refuse", "roll_last")
    s = run(r, s, EIGHT, "keep:1,5", "roll", NOTHING6)
    s = run(r, s, EIGHT, "keep:1,5", "roll", NOTHING6)
    assert s.phase == Phase.ROLL and s.rolloff == (2, 0) and s.rolloff_round == 2
    assert s.player == 2 and s.rolloff_scores == ()
    s = run(r, s, EIGHT, "keep:1,5", "roll", NOTHING6)
    s = run(r, s, EIGHT, "keep:1,2,3,4,5", "roll", (2, 3, 4))
    assert s.phase == Phase.OVER and s.winners == (0,) and s.rolloff_scores == (150, 750)


def test_trippn_carry_survives_an_and_roll() -> None:
    """002 Trippn: 'Sets, unfilled straights and three-pairs survive an and-roll, so they can
    still be extended on later rolls in the same turn.' Without Trippn they are cleared."""
    for name, kept in (("trippn", True), ("progressive", False)):
        r = preset(name)
        s = run(r, new_game(r, 2), (6, 6, 6, 1, 2, 3, 4, 5), "keep:6,6,6,1,2,3,4,5")
        assert s.dice == 8 and s.fresh and s.turn_total == 2350
        assert (s.carry.sets[5] == 3) is kept
        s = run(r, s, "roll", (6, 2, 2, 3, 3, 4, 4, 1))
        six = [m for m in moves(r, s) if m == "keep:6"]
        assert bool(six) is kept


def test_trippn_lock_in_wins_the_rolloff_outright() -> None:
    """002: 'In a Trippn roll-off only, a player who gets sets of 2s, 3s, 4s and 6s all working
    at the same time wins the roll-off outright, there and then.'"""
    r = preset("trippn")
    s = run(r, _two_finishers(r), "refuse", "roll_first")
    assert s.player == 0 and s.in_rolloff
    s = run(r, s, (2, 2, 2, 3, 3, 3, 1, 1), "keep:2,2,2,3,3,3,1,1")
    assert s.dice == 8 and s.carry.sets[1] == 3 and s.carry.sets[2] == 3
    s = run(r, s, "roll", (4, 4, 4, 6, 6, 6, 2, 3), "keep:4,4,4,6,6,6")
    assert s.phase == Phase.OVER and s.winners == (0,) and "locked in" in s.event
    assert returns(s) == (2.0, -1.0, -1.0)


def test_trippn_lock_in_does_not_win_outside_a_rolloff() -> None:
    r = preset("trippn")
    s = run(r, new_game(r, 2), (2, 2, 2, 3, 3, 3, 1, 1), "keep:2,2,2,3,3,3,1,1")
    s = run(r, s, "roll", (4, 4, 4, 6, 6, 6, 2, 3), "keep:4,4,4,6,6,6")
    assert s.phase == Phase.CONTINUE


def test_horizon_ends_the_game_with_a_shared_pot() -> None:
    """Rules.horizon_rounds: 'Rounds after which the game stops with the pot shared by every
    player, so that every game ends'."""
    r = preset("ten_thousand", horizon_rounds=1)
    s = new_game(r, 2, first_player=0)
    s = run(r, s, (2, 2, 3, 3, 4, 6))
    assert s.phase == Phase.ROLL and s.player == 1
    s = run(r, s, (2, 2, 3, 3, 4, 6))
    assert s.phase == Phase.OVER and s.winners == (0, 1) and s.shares == (0.5, 0.5)
    assert returns(s) == (0.0, 0.0)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_returns_are_zero_sum(n: int) -> None:
    """002 'Every player pays the buy-in ... the winner takes the whole pot': returns are the
    net pot share in buy-ins, zero before the end and summing to zero after it."""
    r = preset("progressive")
    s = new_game(r, n)
    assert returns(s) == (0.0,) * n
    s = run(r, s._replace(scores=(9850,) * n), EIGHT, "keep:1,5", "roll_for_nothing", NOTHING6)
    while s.phase != Phase.OVER:
        s = run(r, s, (2, 2, 3, 3, 4, 6, 6, 6), "keep:6,6,6")
    assert s.winners == (0,)
    assert abs(sum(returns(s))) < 1e-12
    assert returns(s)[0] == n - 1


def test_face_outside_one_to_six_is_an_illegal_move() -> None:
    """Regression: apply() refused a keep of face 7 with scoring's IllegalKeep instead of
    IllegalMove (its documented contract)."""
    r = preset("ten_thousand")
    s = run(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
    for taps in ("keep:7", "keep:0", "keep:1,9"):
        refused(r, s, taps, "face")


def test_illegal_moves_name_their_rule_and_change_nothing() -> None:
    r = preset("ten_thousand")
    s = run(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
    refused(r, s, "keep:1,1,1,1", "not-showing")
    refused(r, s, "keep:2,3", "dead-die", match="every kept die must score")
    refused(r, s, "bank", "phase")
    refused(r, s, "split", "phase")
    with pytest.raises(IllegalMove) as info:
        apply(r, new_game(r, 2, first_player=0), BANK)
    assert info.value.rule == "chance-node"
