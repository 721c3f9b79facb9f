"""Seed 001's fixed number of rounds and its six-of-a-kind instant win, in the engine and solver.

001: "you can also set a lower or higher target or a fixed number of rounds"; "The game ends
when one player reaches or exceeds the target score of 10,000 points (or the agreed number of
rounds)... The winner is the player with the highest score after everyone has had a final
turn."; "Rolling six of the same number in one roll is an instant win."
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.rules import (
    BANK,
    ROLL,
    Move,
    Phase,
    RulesError,
    apply,
    apply_roll,
    chance_outcomes,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
)
from greed_env.rules.config import reading_revisions
from greed_env.rules.record import record_game, replay
from greed_env.solver import OptimalBot, SolverError, solve
from greed_env.solver.simulate import simulate_duel
from greed_env.spaces.observation import OBS_INDEX, encode_observation, spec_version_reads

BUST_ROLL = (2, 2, 3, 3, 4, 6)


def _bank_1000(rules, s):  # type: ignore[no-untyped-def]
    s = apply_roll(rules, s, (1, 1, 1, 2, 3, 4))
    s = apply(rules, s, Move("keep", (1, 1, 1)))
    return apply(rules, s, BANK)


def test_the_highest_score_after_the_agreed_rounds_wins() -> None:
    rules = preset("ten_thousand", rounds=2)
    s = _bank_1000(rules, new_game(rules, 2, first_player=0))
    s = apply_roll(rules, s, BUST_ROLL)  # P1
    assert s.player == 0 and not is_over(s)
    s = apply_roll(rules, s, BUST_ROLL)  # P0, round 2
    assert not is_over(s)
    s = apply_roll(rules, s, BUST_ROLL)  # P1, round 2: the last turn
    assert is_over(s) and s.winners == (0,) and s.rounds == 4
    assert "2 rounds played" in s.event


def test_a_tie_after_the_rounds_follows_tie_rule() -> None:
    rules = preset("ten_thousand", rounds=1)
    s = apply_roll(rules, new_game(rules, 2, first_player=1), BUST_ROLL)
    s = apply_roll(rules, s, BUST_ROLL)
    assert is_over(s) and s.winners == (0, 1) and s.shares == (0.5, 0.5)
    voted = preset("ten_thousand", rounds=1, exact_target=True, tie_rule="split_vote", entry_threshold=0)
    s = apply_roll(voted, new_game(voted, 3, first_player=0), BUST_ROLL)
    s = apply_roll(voted, s, BUST_ROLL)
    s = apply_roll(voted, s, (1, 2, 2, 3, 3, 4))
    s = apply(voted, apply(voted, s, Move("keep", (1,))), BANK)
    assert is_over(s) and s.winners == (2,)
    s = apply_roll(voted, new_game(voted, 2, first_player=0), BUST_ROLL)
    s = apply_roll(voted, s, BUST_ROLL)
    assert s.phase == Phase.SPLIT and s.finishers == (0, 1)


def test_reaching_the_target_still_ends_a_rounds_game_and_the_rounds_cut_the_final_round() -> None:
    # P1 reaches the target in the last round: P0 would be owed a final turn in round 2,
    # but the agreed single round is over, and P1 has the highest score.
    rules = preset("ten_thousand", rounds=1, target=1000, entry_threshold=0)
    s = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 2, 2, 3, 4, 6))
    s = apply(rules, apply(rules, s, Move("keep", (1,))), BANK)
    s = _bank_1000(rules, s)
    assert is_over(s) and s.winners == (1,) and s.endgame
    # with two rounds, P0 gets its final turn to beat 1,000
    rules = rules.replace(rounds=2)
    s = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 2, 2, 3, 4, 6))
    s = apply(rules, apply(rules, s, Move("keep", (1,))), BANK)
    s = _bank_1000(rules, s)
    assert not is_over(s) and s.player == 0 and s.final_left == (0,)
    s = apply_roll(rules, s, BUST_ROLL)
    assert is_over(s) and s.winners == (1,)


def test_without_a_target_only_the_rounds_end_the_game() -> None:
    with pytest.raises(RulesError, match=r"'target'.*only with rounds > 0"):
        preset("ten_thousand", target=0)
    with pytest.raises(RulesError, match="'rounds'"):
        preset("ten_thousand", rounds=401)
    rules = preset("ten_thousand", target=0, rounds=1, entry_threshold=0)
    s = new_game(rules, 2, first_player=0)
    for i in range(12):  # twelve hot-dice sets of six 1s in one turn, far past 10,000
        if i:
            s = apply(rules, s, Move("roll"))
        s = apply_roll(rules, s, (1, 1, 1, 1, 1, 1))
        s = apply(rules, s, Move("keep", (1, 1, 1, 1, 1, 1)))
    s = apply(rules, s, BANK)
    assert not is_over(s) and s.scores[0] == 12 * 8000
    s = apply_roll(rules, s, BUST_ROLL)
    assert is_over(s) and s.winners == (0,)


def test_new_fields_at_their_defaults_keep_fingerprints() -> None:
    assert preset("ten_thousand", rounds=0).fingerprint == preset("ten_thousand").fingerprint
    assert preset("ten_thousand", rounds=5).fingerprint != preset("ten_thousand").fingerprint
    assert reading_revisions(preset("ten_thousand")) == {}
    assert reading_revisions(preset("ten_thousand", six_kind_wins=True)) == {"six_kind_wins": 2}


def test_rolling_six_of_the_same_number_in_one_roll_is_an_instant_win() -> None:
    """001: 'Rolling six of the same number in one roll is an instant win.'"""
    rules = preset("ten_thousand", six_kind_wins=True)
    s = apply_roll(rules, new_game(rules, 2, first_player=1), (4, 4, 4, 4, 4, 4))
    assert is_over(s) and s.winners == (1,) and "six of a kind" in s.event
    # the roll itself wins: no keep is asked for, even mid-turn after hot dice
    s = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 2, 3, 4, 5, 6))
    s = apply(rules, apply(rules, s, Move("keep", (1, 2, 3, 4, 5, 6))), Move("roll"))
    s = apply_roll(rules, s, (2, 2, 2, 2, 2, 2))
    assert is_over(s) and s.winners == (0,)
    # six of one face among eight dice is six of the same number in one roll too
    eight = preset("ten_thousand", six_kind_wins=True, num_dice=8)
    assert is_over(apply_roll(eight, new_game(eight, 2, first_player=0), (2, 3, 3, 3, 3, 3, 3, 5)))
    # without the variation the same roll is an ordinary (large) keep
    plain = preset("ten_thousand")
    s = apply_roll(plain, new_game(plain, 2, first_player=0), (4, 4, 4, 4, 4, 4))
    assert s.phase == Phase.KEEP


def test_rounds_games_replay_from_their_records() -> None:
    from greed_env.bots import ThresholdBot

    rules = preset("ten_thousand", rounds=3, six_kind_wins=True)
    bots = [ThresholdBot(400), ThresholdBot(700)]
    rec = record_game(rules, [b.act for b in bots], np.random.default_rng(5), seed=5)
    states = replay(rec)
    assert is_over(states[-1]) and states[-1].rounds <= 6


def test_the_observation_shows_the_rounds_left() -> None:
    rules = preset("ten_thousand", rounds=3)
    s = apply_roll(rules, new_game(rules, 2, first_player=0), BUST_ROLL)
    progress = encode_observation(rules, s)[OBS_INDEX["round_progress"]]
    assert progress == pytest.approx(1 / 6)  # one of six turns played: 2.5 rounds left
    assert spec_version_reads(1, preset("ten_thousand")) and not spec_version_reads(1, rules)


def test_rounds_duel_headline_by_simulation() -> None:
    rules = preset("ten_thousand", rounds=3, target=2000, entry_threshold=300)
    table = solve(rules, "duel")
    assert table.meta["turns"] == 6 and table.arrays["win"].shape[0] == 7
    check = simulate_duel(table, 1500, np.random.default_rng(9))
    assert abs(check.z) < 3, (check, table.headline)


def _rounds_brute_force(rules):  # type: ignore[no-untyped-def]
    """``value(state)``: seat 0's share of the pot with both seats playing best, by memoised
    expectimax over the engine itself (``legal_moves`` / ``apply`` / ``chance_outcomes``).

    A game of rounds has no cycles between turns, so no iteration is needed; within a turn
    the totals only grow, and a continue decision stops the search where banking is provably
    at least as good as rolling on: rolling is worth at most the bust outcomes' exact values
    plus 1 for every other throw. Nothing here knows of score units, layers or caps."""
    memo: dict = {}

    def value(s):  # type: ignore[no-untyped-def]
        key = s._replace(event="")
        hit = memo.get(key)
        if hit is not None:
            return hit
        if is_over(s):
            v = s.shares[0]
        elif is_chance(s):
            v = sum(p * value(apply_roll(rules, s, roll)) for roll, p in chance_outcomes(rules, s))
        else:
            mover = s.player

            def own(x: float) -> float:  # the mover's share, from seat 0's
                return x if mover == 0 else 1.0 - x

            moves = legal_moves(rules, s)
            v = None
            if s.phase == Phase.CONTINUE and set(moves) == {BANK, ROLL}:
                bank = value(apply(rules, s, BANK))
                thrown = apply(rules, s, ROLL)
                bound = 0.0
                for roll, p in chance_outcomes(rules, thrown):
                    after = apply_roll(rules, thrown, roll)
                    busted = is_over(after) or after.player != mover or after.rounds != s.rounds
                    bound += p * (own(value(after)) if busted else 1.0)
                if own(bank) >= bound - 1e-12:
                    v = bank
            if v is None:
                values = [value(apply(rules, s, m)) for m in moves]
                v = max(values) if mover == 0 else min(values)
        memo[key] = v
        return v

    return value


@pytest.mark.parametrize(("rounds", "final_round"), [(3, True), (2, False)])
def test_rounds_duel_matches_brute_force(rounds: int, final_round: bool) -> None:
    """Two dice, target 200, threshold 100: every layer of turns left and every pair of
    scores of the solver's table against the brute force, to 1e-9."""
    rules = preset("ten_thousand", num_dice=2, straights=(), three_pairs=0, target=200, entry_threshold=100,
                   rounds=rounds, final_round=final_round)
    win = solve(rules, "duel").arrays["win"]
    value = _rounds_brute_force(rules)
    turns = 2 * rounds
    checked = 0
    for k in range(1, turns + 1):
        for a in (0, 100, 150):
            for b in (0, 100, 150):
                s = new_game(rules, 2, first_player=0)._replace(scores=(a, b), entered=(a > 0, b > 0), rounds=turns - k)
                assert abs(value(s) - win[k, a // 50, b // 50]) < 1e-9, (k, a, b)
                checked += 1
    assert checked == 9 * turns


def test_the_optimal_bot_knows_the_turns_left() -> None:
    """The same scores are played differently with one turn left than with many."""
    rules = preset("ten_thousand", rounds=2, target=2000, entry_threshold=300)
    bot = OptimalBot(rules, "duel", solve(rules, "duel"))
    s = new_game(rules, 2, first_player=0)._replace(scores=(0, 600), entered=(False, True))
    s = apply_roll(rules, s, (1, 1, 1, 2, 3, 4))
    s = apply(rules, apply(rules, s, Move("keep", (1, 1, 1))), Move("roll"))
    s = apply_roll(rules, s, (1, 2, 4))
    s = apply(rules, s, Move("keep", (1,)))  # 1,100 points in hand, two dice left
    early = dict(bot.move_values(rules, s))
    last = dict(bot.move_values(rules, s._replace(rounds=3)))  # the game's last turn
    assert last[BANK] == 1.0 and early[BANK] < 1.0


def test_many_rounds_give_the_duel_without_rounds() -> None:
    """A game to 600 almost never lasts 20 rounds: both solvers must agree to 1e-9."""
    rules = preset("ten_thousand", target=600, entry_threshold=300)
    duel = solve(rules, "duel").headline
    assert solve(rules.replace(rounds=20), "duel").headline == pytest.approx(duel, abs=1e-9)
    # a single round: the second player, who sees the first's score, is favoured
    assert solve(rules.replace(rounds=1), "duel").headline < 0.5


def test_greed_solve_checks_a_rounds_game_by_simulation(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    from greed_env.cli import main

    argv = ["solve", "--rules", "ten_thousand", "--set", "rounds=2", "--set", "target=1500",
            "--objective", "duel", "--simulate", "300", "--out", str(tmp_path)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "(2 rounds)" in lines[1] and lines[-2].startswith("simulated: ") and float(lines[-1]) < 0.5


def test_greed_advise_takes_the_turns_left(capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from greed_env.cli import main

    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path))
    base = ["advise", "--rules", "ten_thousand", "--set", "rounds=2", "--set", "target=2000",
            "--scores", "1000,1500", "--turn-total", "450", "--dice", "2"]
    assert main([*base, "--turns-left", "1"]) == 0
    out = capsys.readouterr().out
    best = next(line for line in out.splitlines() if line.startswith("*"))
    bank = next(line for line in out.splitlines() if line.split()[:1] == ["bank"])
    assert best.split()[1] == "roll" and bank.split()[1] == "0.0%"  # 1,450 < 1,500: must roll
    assert main([*base, "--turns-left", "5"]) == 2
    assert "--turns-left must be 1..4" in capsys.readouterr().err


def test_rounds_solver_refuses_what_it_does_not_model() -> None:
    from greed_env.vector.optimal import check_optimal_supported
    from greed_env.vector.tables import VectorUnsupportedError

    with pytest.raises(VectorUnsupportedError, match="fixed number of rounds"):
        check_optimal_supported(preset("ten_thousand", rounds=3))
    with pytest.raises(SolverError, match="exact_target"):
        solve(preset("ten_thousand", rounds=2, exact_target=True, entry_threshold=0), "duel")
    with pytest.raises(SolverError, match="six_kind_wins=True for the turn objective"):
        solve(preset("ten_thousand", rounds=2, six_kind_wins=True), "turn")


def test_the_environments_play_rounds_games_to_the_end() -> None:
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import api_test

    import greed_env  # noqa: F401  (registers the ids)
    from greed_env.pettingzoo import greed_v0

    overrides = {"rounds": 2}
    api_test(greed_v0.env(rules="ten_thousand", rules_overrides=overrides, num_players=3), num_cycles=200)
    env = gym.make("greed_env/Duel-v0", rules="ten_thousand", rules_overrides=overrides, opponent="random")
    check_env(env.unwrapped)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    progress = [float(obs[OBS_INDEX["round_progress"]])]
    terminated = False
    while not terminated:
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        progress.append(float(obs[OBS_INDEX["round_progress"]]))
    state = env.unwrapped.state
    assert state.rounds <= 4 and reward in (-1.0, 0.0, 1.0) and not truncated
    assert progress == sorted(progress) and progress[0] < 0.5
    with pytest.raises(ValueError, match="needs a target"):
        gym.make("greed_env/Solitaire-v0", rules="ten_thousand", objective="race",
                 rules_overrides={"rounds": 2, "target": 0})


def test_bots_of_spec_v1_load_for_rules_without_rounds_only() -> None:
    from greed_env.bots.cards import check_compatible
    from greed_env.bots.errors import ObsSpecMismatchError
    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.spaces.observation import OBS_DIM

    def card(rules):  # type: ignore[no-untyped-def]
        return {
            "rules": rules.to_dict(), "rules_fingerprint": rules.fingerprint, "obs_spec_version": 1,
            "obs_dim": OBS_DIM, "action_catalog_version": ActionCatalog(rules).version,
            "num_actions": ActionCatalog(rules).n,
        }

    plain = preset("ten_thousand")
    assert check_compatible(card(plain)) == plain
    with pytest.raises(ObsSpecMismatchError, match="spec v1"):
        check_compatible(card(preset("ten_thousand", rounds=5)))
