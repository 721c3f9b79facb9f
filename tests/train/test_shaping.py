"""Potential-based shaping of duel rewards with the solver's win probability."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from greed_env.rules import preset
from greed_env.solver import load_table
from greed_env.train.shaping import SolverPotentialShaping, solver_potential
from greed_env.vector import kernels as K
from greed_env.vector.sb3 import make_sb3_vec_env

RULES = preset("ten_thousand", target=2000)


def _episodes_telescope(venv: Any, shaped_env: SolverPotentialShaping, steps: int, seed: int) -> int:
    """Play random legal moves; every finished episode's shaped return must be its true return
    minus the potential it started at. Returns the number of episodes finished."""
    n = venv.num_envs
    start = shaped_env._phi.copy()
    shaped, true = np.zeros(n), np.zeros(n)
    rng = np.random.default_rng(seed)
    ended = 0
    for _ in range(steps):
        masks = venv.action_masks().astype(bool)
        shaped_env.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        _, rewards, dones, infos = shaped_env.step_wait()
        shaped += rewards
        true += [info["true_reward"] for info in infos]
        for i in np.flatnonzero(dones):
            assert true[i] in (-1.0, 0.0, 1.0)
            assert shaped[i] == pytest.approx(true[i] - start[i], abs=1e-4)
            shaped[i] = true[i] = 0.0
            start[i] = shaped_env._phi[i]
            ended += 1
    return ended


def test_shaped_returns_telescope_to_the_true_return_minus_the_start_potential() -> None:
    venv = make_sb3_vec_env("greed_env/Duel-v0", 8, seed=3, rules=RULES, opponent="optimal")
    shaped_env = SolverPotentialShaping(venv)
    shaped_env.reset()
    assert np.all(np.abs(shaped_env._phi) < 1.0)
    assert _episodes_telescope(venv, shaped_env, 800, seed=0) > 30


def test_the_potential_is_the_tables_win_probability_at_the_learners_turn() -> None:
    venv = make_sb3_vec_env("greed_env/Duel-v0", 16, seed=1, rules=RULES, opponent="optimal")
    venv.reset()
    batch = venv.env.batch
    win = load_table(RULES, "duel").arrays["win"]
    phi = solver_potential(batch, win)
    for i in range(16):
        seat = int(batch.E[i, K.E_SEAT])
        a, b = (int(batch.S[i, K.B_SCORE + q]) // 50 for q in (seat, 1 - seat))
        assert phi[i] == pytest.approx(2 * win[a, b] - 1)


def test_against_a_threshold_bot_an_exact_target_game_is_shaped_by_the_same_potential() -> None:
    """Under Progressive's exact target the duel table values every position itself (after the
    opponent lands, the last turn's chance to land too), so it is a potential against any
    opponent; the shaped returns still telescope."""
    rules = preset("progressive", target=600)  # the table of the last-turn test below: one solve
    venv = make_sb3_vec_env("greed_env/Duel-v0", 8, seed=4, rules=rules, opponent="threshold-300")
    shaped_env = SolverPotentialShaping(venv)
    shaped_env.reset()
    table = load_table(rules, "duel")
    win, unit = table.arrays["win"], int(table.meta["unit"])
    batch = venv.env.batch
    for i in range(8):
        seat = int(batch.E[i, K.E_SEAT])
        a, b = (int(batch.S[i, K.B_SCORE + q]) // unit for q in (seat, 1 - seat))
        assert shaped_env._phi[i] == pytest.approx(2 * win[a, b] - 1)
    assert _episodes_telescope(venv, shaped_env, 600, seed=1) > 5
    with pytest.raises(ValueError, match="pass the duel table"):
        solver_potential(batch, win)


def test_shaping_refuses_other_environments() -> None:
    venv = make_sb3_vec_env("greed_env/Duel-v0", 2, seed=1, rules=RULES, opponent="random")
    with pytest.raises(ValueError, match="optimal duel bot"):
        SolverPotentialShaping(venv)


def test_final_round_starts_begin_at_the_learners_last_turn() -> None:
    from greed_env.rules import State
    from greed_env.train.curriculum import FinalRoundStarts, final_round_start
    from greed_env.vector.engine import row_fields

    venv = make_sb3_vec_env("greed_env/Duel-v0", 64, seed=2, rules=RULES, opponent="optimal")
    starts = FinalRoundStarts(venv, fraction=1.0, seed=5)
    obs = starts.reset()
    batch = starts.batch
    final = batch.S[:, K.C_ENDGAME] != 0
    assert final.mean() > 0.8  # the rest busted before deciding and began a new game
    for i in np.flatnonzero(final):
        state = State(**row_fields(batch.S, i, batch.tables))
        seat = int(batch.E[i, K.E_SEAT])
        assert state.player == seat and state.final_left == (seat,)
        assert state.scores[1 - seat] >= RULES.target > state.scores[seat]
    assert np.array_equal(obs, batch.obs)
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(40):
        masks = venv.action_masks().astype(bool)
        starts.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        _, rewards, dones, _ = starts.step_wait()
        outcomes += rewards[dones].tolist()
    assert len(outcomes) > 64 and set(outcomes) <= {-1.0, 0.0, 1.0}
    assert np.mean(outcomes) < 0  # random play from behind mostly loses
    with pytest.raises(ValueError, match="no final round"):
        final_round_start(preset("farkle"), 0, rng)


def test_final_round_starts_exist_only_where_the_rules_have_a_final_round_turn() -> None:
    """greed, farkle and farkle5 have no final round, and progressive's (an exact target) is not
    built by the curriculum: ``final_round_start`` refuses them (training/ppo_duel.py switches
    those starts off there), while ten_thousand has them."""
    from greed_env.train.curriculum import final_round_start

    assert final_round_start(preset("ten_thousand"), 0, np.random.default_rng(0)).endgame
    for name in ("greed", "farkle", "farkle5", "progressive"):
        with pytest.raises(ValueError):
            final_round_start(preset(name), 0, np.random.default_rng(0))


def test_near_final_round_starts_trail_by_at_most_a_turn() -> None:
    from greed_env.train.curriculum import FinalRoundStarts, final_round_start

    rules = preset("ten_thousand")
    rng = np.random.default_rng(3)
    for learner in (0, 1):
        gaps = []
        for _ in range(500):
            s = final_round_start(rules, learner, rng, near=True)
            mine, theirs = s.scores[learner], s.scores[1 - learner]
            assert s.player == learner and s.final_left == (learner,)
            assert rules.entry_threshold <= mine < rules.target <= theirs and mine % 50 == 0
            gaps.append(theirs - mine)
        assert min(gaps) > 0 and max(gaps) <= 3000 + 50 and np.median(gaps) < 2500
    venv = make_sb3_vec_env("greed_env/Duel-v0", 8, seed=2, rules=RULES, opponent="optimal")
    with pytest.raises(ValueError, match="near must be in"):
        FinalRoundStarts(venv, fraction=0.5, seed=1, near=1.5)
    with pytest.raises(ValueError, match="warmup must be"):
        FinalRoundStarts(venv, fraction=0.5, seed=1, warmup=-1)


def test_warm_final_round_starts_reach_bank_or_roll_decisions_around_the_lead() -> None:
    from greed_env.rules import Phase, apply, can_bank, legal_moves
    from greed_env.train.curriculum import FinalRoundStarts, final_round_start

    rules = preset("ten_thousand")
    rng = np.random.default_rng(8)
    leads, dice = [], set()
    for i in range(600):
        s = final_round_start(rules, i % 2, rng, near=True, warmup=3)
        me, opp = s.player, 1 - s.player
        assert s.endgame and s.final_left == (me,) and me == i % 2
        assert rules.entry_threshold <= s.scores[me] < rules.target <= s.scores[opp]
        if s.phase == Phase.CONTINUE:
            assert s.turn_total > 0 and can_bank(rules, s)
            leads.append(s.scores[me] + s.turn_total - s.scores[opp])
            dice.add(s.dice)
            if leads[-1] > 0:  # banking now wins: the reference rules agree
                assert apply(rules, s, legal_moves(rules, s)[0]).winners == (me,)
    assert len(leads) > 300 and dice >= {1, 2, 3, 4, 5}
    assert 0.1 < np.mean(np.array(leads) > 0) < 0.5 and min(leads) >= -1000
    venv = make_sb3_vec_env("greed_env/Duel-v0", 64, seed=2, rules=rules, opponent="threshold-300")  # any opponent: the starts are the point
    starts = FinalRoundStarts(venv, fraction=1.0, seed=5, near=1.0, warmup=3)
    starts.reset()
    phases = starts.batch.S[:, K.C_PHASE]
    assert (phases == Phase.CONTINUE).mean() > 0.3


def test_score_starts_draw_both_scores_and_the_seat_to_move() -> None:
    from greed_env.rules import Phase, State
    from greed_env.train.curriculum import FinalRoundStarts, score_start
    from greed_env.vector.engine import row_fields

    rules = preset("ten_thousand")
    rng = np.random.default_rng(4)
    scores, movers, mid_turn = [], [], 0
    for i in range(800):
        s = score_start(rules, i % 2, rng, warmup=2)
        assert not s.endgame and s.phase in (Phase.ROLL, Phase.CONTINUE)
        for v, entered in zip(s.scores, s.entered, strict=True):
            assert 0 <= v < rules.target and v % 50 == 0 and entered == (v > 0)
            assert v == 0 or v >= rules.entry_threshold
        scores += list(s.scores)
        movers.append(s.player == i % 2)
        mid_turn += s.turn_total > 0
        if s.player != i % 2:
            assert s.turn_total == 0  # only the learner's turn is warmed up
    assert 0.4 < np.mean(movers) < 0.6 and mid_turn > 100
    assert 4000 < np.median(scores) < 6500 and max(scores) >= 9500 and 0 in scores
    endgame = [v for _ in range(200) for v in score_start(rules, 0, rng, near=2000).scores]
    assert min(endgame) >= 8000 and max(endgame) < rules.target and len(set(endgame)) > 30
    venv = make_sb3_vec_env("greed_env/Duel-v0", 64, seed=2, rules=rules, opponent="threshold-300")  # any opponent: the starts are the point
    starts = FinalRoundStarts(venv, fraction=0.0, seed=5, scores=1.0)
    obs = starts.reset()
    batch = starts.batch
    assert np.array_equal(obs, batch.obs)
    begun = [State(**row_fields(batch.S, i, batch.tables)).scores for i in range(64)]
    assert sum(max(s) > 0 for s in begun) > 56  # the rest ended before the learner decided
    late = FinalRoundStarts(venv, fraction=0.0, seed=6, scores=1.0, scores_near=1.0)
    late.reset()
    begun = [State(**row_fields(batch.S, i, batch.tables)).scores for i in range(64)]
    assert sum(min(s) >= 8000 for s in begun) > 48  # or a new game after a final round
    with pytest.raises(ValueError, match="share one draw"):
        FinalRoundStarts(venv, fraction=0.5, seed=1, scores=0.6)
    with pytest.raises(ValueError, match="scores_near must be in"):
        FinalRoundStarts(venv, fraction=0.0, seed=1, scores=0.5, scores_near=2.0)
    with pytest.raises(ValueError, match="scores_warmup must be"):
        FinalRoundStarts(venv, fraction=0.0, seed=1, scores=0.5, scores_warmup=-1)


def test_entry_starts_open_turns_not_yet_on_the_board() -> None:
    from greed_env.rules import State
    from greed_env.train.curriculum import EntryStarts
    from greed_env.vector.engine import row_fields

    rules = preset("ten_thousand")
    venv = make_sb3_vec_env("greed_env/Solitaire-v0", 64, seed=2, rules=rules, objective="turn")
    starts = EntryStarts(venv, 0.5, seed=5)
    obs = starts.reset()
    batch = starts.batch
    assert np.array_equal(obs, batch.obs)
    began = batch.S[:, K.B_ENTERED].copy()
    assert 16 < int((began == 0).sum()) < 48  # about half, drawn from the wrapper's seed
    for i in np.flatnonzero(began == 0):
        s = State(**row_fields(batch.S, i, batch.tables))
        assert s.entered == (False,) and s.turn_total == 0 and s.roll  # the episode's first roll kept
    # same seed, same episodes
    again = EntryStarts(make_sb3_vec_env("greed_env/Solitaire-v0", 64, seed=2, rules=rules, objective="turn"), 0.5, 5)
    again.reset()
    assert np.array_equal(again.batch.S[:, K.B_ENTERED], began)
    # an episode that began off the board banks nothing, or at least the entry threshold
    rng = np.random.default_rng(0)
    off, on = [], []
    for _ in range(300):
        masks = venv.action_masks().astype(bool)
        starts.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        _, rewards, dones, _ = starts.step_wait()
        for i in np.flatnonzero(dones):
            (off if began[i] == 0 else on).append(float(rewards[i]))
        began[dones] = batch.S[dones, K.B_ENTERED]
    assert len(off) > 100 and len(on) > 100
    assert all(r == 0.0 or r >= rules.entry_threshold * 1e-3 for r in off)
    assert any(0.0 < r < rules.entry_threshold * 1e-3 for r in on)  # on the board, smaller banks count
    with pytest.raises(ValueError, match="no entry threshold"):
        EntryStarts(make_sb3_vec_env("greed_env/Solitaire-v0", 4, seed=2, rules="progressive"), 0.5, 1)
    with pytest.raises(ValueError, match="'turn' objective"):
        EntryStarts(make_sb3_vec_env("greed_env/Duel-v0", 4, seed=2, rules=RULES, opponent="optimal"), 0.5, 1)
    with pytest.raises(ValueError, match="fraction must be in"):
        EntryStarts(venv, 1.5, 1)


def test_keep_starts_begin_after_a_random_first_keep() -> None:
    from greed_env.rules import Phase, State
    from greed_env.train.curriculum import KeepStarts
    from greed_env.vector.engine import row_fields

    rules = preset("greed")

    def started(seed: int) -> tuple[KeepStarts, np.ndarray]:
        venv = make_sb3_vec_env("greed_env/Solitaire-v0", 64, seed=2, rules=rules, objective="turn")
        starts = KeepStarts(venv, 0.5, seed=seed)
        obs = starts.reset()
        assert np.array_equal(obs, starts.batch.obs)
        return starts, starts.batch.S.copy()

    starts, first = started(5)
    states = [State(**row_fields(first, i, starts.batch.tables)) for i in range(64)]
    later = [s for s in states if not (s.phase == Phase.KEEP and s.fresh and s.turn_total == 0)]
    assert 16 < len(later) < 48  # about half, drawn from the wrapper's seed
    # a first keep made: points on the table (or a reroll of all six with its bar), or the
    # keep decision of the roll after it
    assert all(s.turn_total > 0 or s.bar >= 0 for s in later)
    assert any(s.phase == Phase.CONTINUE for s in later)
    assert all(s.phase == Phase.KEEP and s.turn_total == 0 for s in later if s.bar >= 0)  # after a reroll
    assert np.array_equal(started(5)[1], first)  # same seed, same starts
    assert not np.array_equal(started(6)[1], first)
    with pytest.raises(ValueError, match="'turn' objective"):
        KeepStarts(make_sb3_vec_env("greed_env/Duel-v0", 4, seed=2, rules=RULES, opponent="optimal"), 0.5, 1)
    with pytest.raises(ValueError, match="fraction must be in"):
        KeepStarts(starts.venv, -0.1, 1)


def test_a_last_turn_after_the_opponent_lands_is_worth_landing_too() -> None:
    """In Progressive's final round (the opponent landed on the target) the potential is the
    table's chance to land exactly in one turn times the tie's value for the second finisher."""
    rules = preset("progressive", target=600)
    venv = make_sb3_vec_env("greed_env/Duel-v0", 64, seed=4, rules=rules, opponent="threshold-300")
    shaped_env = SolverPotentialShaping(venv)
    shaped_env.reset()
    table = load_table(rules, "duel")
    q, unit = table.arrays["last_turn_out"], int(table.meta["unit"])
    tie = float(table.meta["tie_value_first_finisher"])
    batch = venv.env.batch
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(3000):
        masks = venv.action_masks().astype(bool)
        shaped_env.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        shaped_env.step_wait()
        for i in np.flatnonzero(batch.S[:, K.C_ENDGAME] != 0):
            a = int(batch.S[i, K.B_SCORE + int(batch.E[i, K.E_SEAT])]) // unit
            assert shaped_env._phi[i] == pytest.approx(2 * q[a] * (1 - tie) - 1)
            seen += 1
        if seen >= 5:
            break
    assert seen >= 5
