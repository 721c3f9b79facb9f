"""Evaluation statistics on bots whose value is known, bad model files, report and CLI."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.errors import BotLoadError
from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot, load_policy
from greed_env.evaluation import (
    default_duel_games,
    evaluate,
    first_roll_bust_probability,
    learning_curve,
    mean_ci,
    optimal_value,
    regret_by_situation,
    write_report,
)
from greed_env.rules import Rules, preset
from greed_env.rules.config import rules_from_args
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM

RULES = preset("ten_thousand")
SHORT = rules_from_args("ten_thousand", ["target=3000", "entry_threshold=500"])
"""A short game (target 3,000) whose duel table solves in seconds."""


def test_mean_ci_matches_the_textbook_formula() -> None:
    x = np.random.default_rng(0).normal(10.0, 2.0, size=400)
    est = mean_ci(x)
    assert est.mean == pytest.approx(x.mean())
    assert est.half_width == pytest.approx(1.959964 * x.std(ddof=1) / 20.0, rel=1e-5)
    assert est.contains(x.mean()) and est.n == 400
    assert default_duel_games(0.005) == 38415


def test_optimal_bot_turn_score_is_the_table_value_within_its_ci() -> None:
    res = evaluate("optimal-turn", RULES, "turn", episodes=3000, seed=3, regret_episodes=300)
    table = optimal_value(RULES, "turn")
    assert res.optimal == pytest.approx(table)
    assert res.score.contains(table), (res.score, table)
    assert res.decisions > 300
    assert res.mean_regret == pytest.approx(0.0, abs=1e-9)
    assert res.worst_regret == pytest.approx(0.0, abs=1e-9)
    assert res.optimal_share == 1.0
    assert res.regret_estimate is not None
    assert res.regret_estimate.mean == pytest.approx(table)


def test_random_bot_is_far_below_optimal_and_its_regret_explains_the_gap() -> None:
    res = evaluate("random", RULES, "turn", episodes=2000, seed=4, regret_episodes=2000)
    assert res.ratio < 0.6
    assert res.score.high < res.optimal
    assert res.mean_regret > 10.0 and res.optimal_share < 0.8
    assert res.regret_estimate is not None
    gap = abs(res.regret_estimate.mean - res.score.mean)
    assert gap < res.score.half_width + res.regret_estimate.half_width


def test_first_roll_bust_probability_is_the_six_dice_farkle_chance() -> None:
    assert first_roll_bust_probability(RULES) == pytest.approx(0.0231481, abs=1e-6)


def test_race_of_the_optimal_bot_has_zero_regret() -> None:
    res = evaluate("optimal-race", SHORT, "race", episodes=150, seed=5, regret_episodes=50)
    assert res.optimal == pytest.approx(optimal_value(SHORT, "race"))
    assert res.score.contains(res.optimal)
    assert res.worst_regret == pytest.approx(0.0, abs=1e-9)


def test_a_slow_racer_needs_the_turns_its_regret_adds_to_the_optimum() -> None:
    """A race counts turns (lower is better): the regret estimate is the optimum *plus* the
    turns the decisions gave up, and lands on the simulated mean, 1.2 turns above the optimum."""
    res = evaluate("threshold:300", SHORT, "race", episodes=400, seed=5, regret_episodes=400)
    assert res.regret_estimate is not None and res.mean_regret > 0.0
    assert res.regret_estimate.low > res.optimal + 1.0 and res.score.low > res.optimal + 1.0
    gap = abs(res.regret_estimate.mean - res.score.mean)
    assert gap < res.score.half_width + res.regret_estimate.half_width


def test_duel_optimal_against_optimal_is_even_and_seats_balance() -> None:
    """Seats alternate, so the optimal bot against itself wins half its games, although the
    first player of this short game wins 55.2% (the duel table's headline) and here seat 0
    always starts. 20,000 games (the first 40 in Python, scored for regret; the rest in numba)
    give a standard error of 0.0035: the test passes within 3.29 standard errors (a correct
    evaluation fails one seed in a thousand) and a seat bias of 2 points fails it with
    probability 0.99."""
    seat0 = SHORT.replace(first_player="seat0")
    res = evaluate("optimal", seat0, "duel", episodes=20_000, seed=6, regret_episodes=40)
    assert res.optimal == 0.5 and res.score.n == 20_000
    se = res.score.half_width / 1.959964
    assert se < 0.0036
    assert abs(res.score.mean - 0.5) < 3.29 * se, res.score
    assert optimal_value(seat0, "duel") - 0.5 > 4 * 3.29 * se  # what a bot kept in seat 0 would show
    assert res.worst_regret == pytest.approx(0.0, abs=1e-9)
    weak = evaluate("threshold:2000", SHORT, "duel", episodes=400, seed=6, regret_episodes=400)
    assert weak.score.high < 0.5 and weak.mean_regret > 0.0
    # against the optimal bot the win rate is estimated as 0.5 less the regret per game too
    assert weak.regret_estimate is not None and weak.regret_estimate.high < 0.5
    gap = abs(weak.regret_estimate.mean - weak.score.mean)
    assert gap < weak.score.half_width + weak.regret_estimate.half_width
    table = weak.decisions_table
    assert len(table["lead"]) == len(table["final"]) == weak.decisions
    assert table["final"].any() and (table["lead"] < 0).any() and (table["lead"] > 0).any()
    by_lead = regret_by_situation(table)["lead"]
    assert by_lead[0][0] == "final round" and sum(n for _, n, _, _ in by_lead) == weak.decisions
    assert sum(n * mean for _, n, mean, _ in by_lead) == pytest.approx(table["regret"].sum())


def test_results_do_not_depend_on_the_number_of_workers() -> None:
    one = evaluate("threshold:350", RULES, "turn", episodes=400, seed=9, regret_episodes=0)
    two = evaluate("threshold:350", RULES, "turn", episodes=400, seed=9, regret_episodes=0, workers=2)
    assert one.score == two.score


def _tiny_policy(rules: Rules = RULES, bias_action: int = 0) -> NumpyPolicy:
    n = ActionCatalog(rules).n
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(8, OBS_DIM)).astype(np.float32), np.zeros(8, np.float32))]
    head_b = np.zeros(n, np.float32)
    head_b[bias_action] = 5.0
    return NumpyPolicy(layers, (rng.normal(size=(n, 8)).astype(np.float32), head_b), "relu",
                       meta={"rules_fingerprint": rules.fingerprint})


def test_policy_snapshots_round_trip_and_play(tmp_path: Path) -> None:
    pol = _tiny_policy(bias_action=0)
    path = pol.save(tmp_path / "snap.npz")
    back = NumpyPolicy.load(path)
    obs = np.random.default_rng(1).random((5, OBS_DIM), dtype=np.float32)
    assert np.allclose(back.logits(obs), pol.logits(obs))
    res = evaluate(str(path), RULES, "turn", episodes=100, seed=1, regret_episodes=20)
    assert res.score.n == 100 and res.decisions > 0
    two = evaluate(str(path), RULES, "turn", episodes=100, seed=1, regret_episodes=20, workers=2)
    assert two.score == res.score and two.mean_regret == pytest.approx(res.mean_regret)


def test_bad_model_files_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(BotLoadError, match="does not exist"):
        load_policy(tmp_path / "missing.zip", RULES)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(BotLoadError, match="not a stable-baselines3 model"):
        load_policy(junk, RULES)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(BotLoadError, match="no data"):
        load_policy(other, RULES)
    bad_npz = tmp_path / "bad.npz"
    bad_npz.write_bytes(b"garbage")
    with pytest.raises(BotLoadError, match="not a readable policy"):
        load_policy(bad_npz, RULES)
    farkle = preset("farkle")
    snap = _tiny_policy(farkle).save(tmp_path / "farkle.npz")
    with pytest.raises(BotLoadError, match="other rules"):
        load_policy(snap, RULES)
    with pytest.raises(BotLoadError, match="built for rules"):
        PolicyBot(_tiny_policy(), RULES).act(SHORT, None, np.random.default_rng(0))  # type: ignore[arg-type]


def test_report_and_plots(tmp_path: Path) -> None:
    res = evaluate("threshold:300", RULES, "turn", episodes=300, seed=2, regret_episodes=300)
    groups = regret_by_situation(res.decisions_table)
    assert groups["dice"] and groups["turn_total"] and not groups["lead"]  # one seat: no lead
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.csv").write_text(
        "step,wall_s,value,ci95,optimal,ratio,regret_estimate\n"
        "0,1,200,10,582.3,0.34,210\n1000,2,400,10,582.3,0.69,420\n"
    )
    assert [r["step"] for r in learning_curve(run)] == [0.0, 1000.0]
    report = write_report(res, tmp_path / "out", run_dir=run, command="greed eval threshold:300")
    text = report.read_text()
    assert "optimal (solver)" in text and "Regret by situation" in text
    assert (tmp_path / "out" / "regret.png").stat().st_size > 1000
    assert (tmp_path / "out" / "learning_curve.png").stat().st_size > 1000


def test_cli_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from greed_env.cli import main

    rc = main(["eval", "threshold:300", "--episodes", "200", "--workers", "1", "--regret-episodes", "50",
               "--no-progress", "--json", "--out", str(tmp_path / "rep")])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 200 and summary["objective"] == "turn"
    assert (tmp_path / "rep" / "report.md").is_file()
    rc = main(["eval", str(tmp_path / "nope.zip"), "--episodes", "10", "--no-progress", "--trust-code"])
    assert rc == 2
    assert "does not exist" in capsys.readouterr().err


def test_rules_without_a_table_are_measured_without_a_yardstick() -> None:
    """Trippn at another target has no table (the solver refuses Trippn on demand): the value is
    measured, the optimum and regret are absent."""
    import math

    res = evaluate("threshold:300", preset("trippn").replace(target=5000), "turn", episodes=60, seed=2)
    assert math.isnan(res.optimal) and math.isnan(res.ratio)
    assert res.decisions == 0 and res.score.mean > 0


def test_trippn_turn_is_measured_against_its_shipped_headline_without_regret() -> None:
    """The preset's turn table is shipped (scripts/trippn_turn.py) without move values."""
    from greed_env.solver import load_table

    table = load_table(preset("trippn"), "turn", solve_if_missing=False)
    res = evaluate("threshold:300", preset("trippn"), "turn", episodes=60, seed=2)
    assert res.optimal == table.headline and 0 < res.ratio < 1
    assert res.decisions == 0 and table.meta["risk_free_states"] > 0
