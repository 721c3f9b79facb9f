"""Exact one-turn values of deterministic bots (greed_env.evaluation.policy_value)."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.bots.play import batch_moves
from greed_env.evaluation import evaluate, optimal_value
from greed_env.evaluation.policy_value import turn_value
from greed_env.rules import Rules, apply_roll, new_game, preset
from greed_env.solver import OptimalBot
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM


@pytest.mark.parametrize("name", ["farkle5", "greed"])
def test_optimal_bot_reproduces_the_table(name: str) -> None:
    """The solver's own policy, enumerated, gives the solver's headline to rounding."""
    rules = preset(name)
    res = turn_value(OptimalBot(rules, "turn"), rules)
    assert res.value == pytest.approx(optimal_value(rules, "turn"), abs=1e-8)
    assert res.p_cap == 0.0
    assert res.decisions > 1000


@pytest.mark.parametrize("name", ["ten_thousand", "greed"])
def test_threshold_bot_agrees_with_simulation(name: str) -> None:
    """Exact value inside the simulation's confidence interval (greed: reroll-all cycles)."""
    rules = preset(name)
    exact = turn_value(ThresholdBot(bank_at=300), rules).value
    sim = evaluate("threshold:300", rules, "turn", episodes=6000, seed=11, regret_episodes=0)
    assert abs(sim.score.mean - exact) < 1.5 * sim.score.half_width  # 3 standard errors
    assert exact < optimal_value(rules, "turn")


def test_cap_is_reported_for_a_bot_that_never_banks() -> None:
    rules = preset("farkle5")
    # bank_at beyond the cap: the bot rolls until it busts or reaches the cap
    res = turn_value(ThresholdBot(bank_at=10**9), rules, cap_points=3000)
    assert 0.0 < res.p_cap < 0.05
    # only turns reaching the cap score, each with at least 3,000 and less than 3,000 + one keep
    assert 3000 * res.p_cap <= res.value < 6000 * res.p_cap


def test_bad_arguments() -> None:
    rules = preset("farkle5")
    with pytest.raises(ValueError, match="cap_points"):
        turn_value(ThresholdBot(), rules, cap_points=0)
    with pytest.raises(ValueError, match="'turn' objective only"):
        evaluate("threshold:300", rules, "race", episodes=10, exact=True)


def test_evaluate_reports_the_exact_value() -> None:
    rules = preset("farkle5")
    res = evaluate("threshold:300", rules, "turn", episodes=200, regret_episodes=0, exact=True)
    assert res.exact == pytest.approx(turn_value(ThresholdBot(bank_at=300), rules).value)
    summary = res.summary()
    assert summary["exact_ratio"] == pytest.approx(res.exact / res.optimal)


def test_onnx_bot_batches_like_single_moves_and_pickles() -> None:
    from greed_env.bots.loader import load

    rules = preset("ten_thousand")
    bot = load("ten_thousand/ppo-turn")
    rng = np.random.default_rng(3)
    states = []
    for _ in range(64):
        s = new_game(rules, 2, first_player=0)
        roll = tuple(sorted(int(x) for x in rng.integers(1, 7, size=6)))
        s = apply_roll(rules, s, roll)
        if s.phase == 3:  # KEEP: a decision
            states.append(s)
    batched = batch_moves(bot, rules, states, rng)
    assert batched == [bot.act(rules, s, rng) for s in states]
    clone = pickle.loads(pickle.dumps(bot))
    assert batch_moves(clone, rules, states, rng) == batched
    # a plain bot goes one position at a time
    assert len(batch_moves(RandomBot(), rules, states, np.random.default_rng(0))) == len(states)


def test_zilch_turn_is_measured_against_the_single_turn_optimum() -> None:
    """One Solitaire turn never meets Zilch's third-bust penalty: its yardstick is the
    single-turn optimum (rules without the penalty), above the long-run average per turn."""
    from greed_env.evaluation import yardstick_rules

    rules = preset("zilch")
    res = evaluate("optimal-turn", rules, "turn", episodes=100, regret_episodes=50, exact=True)
    assert res.optimal > optimal_value(rules, "turn") + 1.0
    assert res.optimal == pytest.approx(optimal_value(yardstick_rules(rules, "turn"), "turn"))
    assert res.exact == pytest.approx(res.optimal, abs=1e-6)
    assert res.mean_regret == 0.0


def test_enumeration_limit() -> None:
    from greed_env.evaluation.policy_value import EnumerationLimit

    rules = preset("farkle5")
    never_banks = ThresholdBot(bank_at=10**9)
    with pytest.raises(EnumerationLimit, match="more than 500 positions"):
        turn_value(never_banks, rules, max_positions=500)
    # evaluate() with a limit leaves the exact value out instead of failing
    res = evaluate(never_banks, rules, "turn", episodes=20, regret_episodes=0, exact=True, exact_max_positions=500)
    assert res.exact is None and "exact" not in res.summary()


def test_optimal_bot_reproduces_the_turn_table_under_an_exact_target() -> None:
    """Progressive's exact target ends a turn that passes it: the ``turn`` table is the turn
    ``Solitaire-v0`` plays (from score 0, the target respected), so the optimal bot's play,
    enumerated in the environment's rules, is the table's headline, and it is below the
    points per turn with the target ignored."""
    rules = preset("progressive", num_dice=3, straights=(), target=250, tie_rule="shared")
    table_value = optimal_value(rules, "turn")
    res = turn_value(OptimalBot(rules, "turn"), rules)
    assert res.value == pytest.approx(table_value, abs=1e-9)
    from greed_env.solver import load_table

    meta = load_table(rules, "turn").meta
    assert meta["points_per_turn_target_ignored"] > table_value + 1.0
    assert meta["cap_points"] == 250


def _bank_first_policy(rules: Rules) -> NumpyPolicy:
    """A deliberately weak greedy policy: its logits ignore the observation and fall with the
    action id, bank first; so it keeps the first scoring keep of the catalog and banks."""
    n = ActionCatalog(rules).n
    bias = -np.arange(n, dtype=np.float32) - 10.0
    bias[0] = 0.0  # bank
    bias[1:8] = -1e6  # roll, bust and the other non-keep moves: never while a keep or bank is legal
    return NumpyPolicy([], (np.zeros((n, OBS_DIM), np.float32), bias), "tanh", meta={"rules_fingerprint": rules.fingerprint})


def _estimates(stdout: str) -> list[tuple[float, float, float, float]]:
    """(simulated mean, its ci, regret estimate, its ci) of each model fast_turn_eval printed."""
    found = re.findall(
        r"([\d.]+) ± ([\d.]+) points per turn \(512 turns\).*\n\s+regret estimate: ([\d.]+) ± ([\d.]+) points "
        r"per turn.*, 0 not valued",
        stdout,
    )
    return [tuple(float(x) for x in row) for row in found]  # type: ignore[misc]


def test_the_regret_estimate_of_a_turn_matches_the_exact_value(tmp_path: Path, run_script: Callable) -> None:  # type: ignore[type-arg]
    """``scripts/fast_turn_eval.py --teacher-arrays`` estimates a turn policy's value as the
    optimum less the points its decisions give up. For a policy that keeps the first scoring
    keep and banks, whose exact value (101.37) lies 2,067 points below the optimum, the
    estimate over 512 turns lands within three of its intervals (±63) of the exact value, so
    an estimate that missed a tenth of the regret, or added it, would fail. For the shipped
    Progressive turn bot (exact value 2,150.54, 99.16% of the optimum) the estimate's
    interval is a fifth or less of the simulated mean's."""
    from greed_env.train.teacher import solve_turn_arrays

    rules = preset("progressive")
    arrays = solve_turn_arrays(rules)
    arrays.save(tmp_path / "turn.npz")
    _bank_first_policy(rules).save(tmp_path / "weak.npz")
    exact = 101.36974760897695  # turn_value(PolicyBot(weak policy)): 6 s of keep readings, so pinned
    proc = run_script(
        "scripts/fast_turn_eval.py", "progressive/ppo-turn-kick", str(tmp_path / "weak.npz"), "--rules", "progressive",
        "--turns", "512", "--num-envs", "128", "--optimal", f"{arrays.headline}", "--teacher-arrays",
        str(tmp_path / "turn.npz"),
    )  # fmt: skip
    (_, sim_ci, value, ci), (weak_sim, weak_sim_ci, weak_value, weak_ci) = _estimates(proc.stdout)
    assert abs(weak_sim - exact) < 1.5 * weak_sim_ci, proc.stdout  # the pinned value is this policy's
    assert arrays.headline - exact > 25 * weak_ci, proc.stdout  # the regret dwarfs the interval
    assert abs(weak_value - exact) < 3 * weak_ci, proc.stdout
    assert abs(value - 2150.54) < 3 * ci, proc.stdout
    assert 0 < ci < sim_ci / 5, proc.stdout
