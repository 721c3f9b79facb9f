"""The teacher scripts (``ppo_teacher_turn``, ``ppo_teacher_duel``) at a tiny budget: the run,
its card with the teacher's settings, the labels' CPU, resuming as KickstartPPO, saved value
arrays as the teacher, the export, and the settings they refuse before any run folder."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from sb3_contrib import MaskablePPO
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from training_settings import SHORT_RULES, TINY, load_script

from greed_env.bots.loader import load as load_bot
from greed_env.bots.numpy_backend import PolicyBot, load_policy
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.evaluation.policy_value import turn_value
from greed_env.rules import preset
from greed_env.train.teacher import TeacherLabeller, solve_turn_arrays, turn_teacher


@pytest.fixture(scope="module")
def ppo_teacher_turn() -> ModuleType:
    return load_script("ppo_teacher_turn")


@pytest.fixture(scope="module")
def ppo_teacher_duel() -> ModuleType:
    return load_script("ppo_teacher_duel")


def _card(run: Path) -> dict[str, Any]:
    return json.loads((run / "model.json").read_text())


def _scalars(run: Path, tag: str) -> list[tuple[int, float]]:
    """(step, value) of a TensorBoard scalar of the run's first session."""
    first = sorted((run / "tb").glob("events.out.tfevents.*"))[0]
    acc = EventAccumulator(str(first))
    acc.Reload()
    return [(e.step, round(e.value, 6)) for e in acc.Scalars(tag)]


def test_turn_script_trains_with_the_teacher_resumes_and_exports(
    ppo_teacher_turn: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    args = ppo_teacher_turn.Args(
        **TINY, rules="greed", runs_dir=str(runs), run_name="kick", teacher_until=1.0, eval_exact_positions=200_000,
    )  # fmt: skip
    run = ppo_teacher_turn.main(args)
    card = _card(run)
    assert card["script"] == "training/ppo_teacher_turn.py" and card["objective"] == "turn" and card["steps"] == 256
    teacher = card["teacher"]
    assert teacher["teacher"] == "optimal-turn" and teacher["teacher_until_step"] == 256
    assert teacher["teacher_label_cpu_s"] > 0.0 and teacher["teacher_weight"] == 1.0
    # the weight in force at each of the two updates: 1.0 * (1 - 128/256), then 0 (no labels)
    assert _scalars(run, "train/teacher_weight") == [(128, 0.5), (256, 0.0)]
    assert [step for step, _ in _scalars(run, "charts/teacher_labelled")] == [128]
    ev = card["evaluation"]
    assert ev["optimal"] == pytest.approx(503.49, abs=0.01)
    rules = preset("greed")
    saved = load_policy(run / "model.zip", rules)  # the card's exact value is the saved policy's
    assert ev["exact"] == pytest.approx(turn_value(PolicyBot(saved, rules), rules).value, abs=1e-9)
    assert ev["exact_ratio"] == pytest.approx(ev["exact"] / ev["optimal"])
    assert isinstance(MaskablePPO.load(run / "model.zip", device="cpu"), MaskablePPO)  # loads without the teacher
    assert turn_teacher(rules, 7.5).temperature == 7.5
    temperatures: list[float] = []

    def recorded(rules: Any, temperature: float, arrays: Any = None) -> TeacherLabeller:
        temperatures.append(temperature)
        return turn_teacher(rules, temperature, arrays)

    monkeypatch.setattr(ppo_teacher_turn, "turn_teacher", recorded)

    # --resume to a longer run: KickstartPPO from the checkpoint, the teacher attached again
    longer = ppo_teacher_turn.Args(
        **{**TINY, "total_timesteps": 384}, rules="greed", runs_dir=str(runs), run_name="kick", resume=True,
        teacher_until=1.0, teacher_temperature=2.5, eval_exact_positions=200_000, export="tiny-kick", export_dir=str(tmp_path / "bots"),
        export_check_positions=200, export_games=0,
    )  # fmt: skip
    assert ppo_teacher_turn.main(longer) == run
    assert temperatures == [2.5]  # the teacher attached again labels at --teacher-temperature
    card = _card(run)
    assert card["steps"] == 384 and card["sessions"] == 2 and card["teacher"]["teacher_until_step"] == 384
    bot_card = json.loads((tmp_path / "bots" / "greed" / "tiny-kick.json").read_text())
    assert bot_card["id"] == "greed/tiny-kick" and "PPO + solver teacher" in bot_card["description"]
    assert bot_card["training"]["teacher"]["teacher"] == "optimal-turn"
    assert bot_card["training"]["args"]["runs_dir"] == "runs"  # no machine path in a shipped card
    assert bot_card["export"]["equivalence_check"]["mismatches"] == 0
    monkeypatch.setenv("GREED_BOTS_PATH", str(tmp_path / "bots"))
    assert isinstance(load_bot("greed/tiny-kick", preset("greed")), OnnxBot)


def test_turn_script_reads_saved_value_arrays_and_its_control_has_no_teacher(
    ppo_teacher_turn: ModuleType, tmp_path: Path
) -> None:
    arrays = tmp_path / "progressive_turn.npz"
    solve_turn_arrays(preset("progressive", target=2000)).save(arrays)
    run = ppo_teacher_turn.main(ppo_teacher_turn.Args(
        **TINY, rules_set=["target=2000"], runs_dir=str(tmp_path / "runs"), run_name="arrays",
        teacher_arrays=str(arrays), teacher_until=1.0, eval_exact_positions=1,
    ))  # fmt: skip
    card = _card(run)
    assert card["rules"]["target"] == 2000 and card["teacher"]["teacher"] == "optimal-turn"
    assert card["teacher"]["teacher_label_cpu_s"] > 0.0
    control = ppo_teacher_turn.main(ppo_teacher_turn.Args(
        **TINY, rules="greed", runs_dir=str(tmp_path / "runs"), run_name="control", teacher_weight=0.0,
        eval_exact_positions=200_000,
    ))  # fmt: skip
    teacher = _card(control)["teacher"]
    assert teacher["teacher"] is None and teacher["teacher_label_cpu_s"] == 0.0  # no position labelled


def test_duel_script_trains_with_the_teacher_and_its_starts(
    ppo_teacher_duel: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = {k: v for k, v in TINY.items() if k != "eval_regret_episodes"}
    args = ppo_teacher_duel.Args(
        **{**tiny, "eval_episodes": 4, "final_eval_episodes": 8}, rules="ten_thousand", rules_set=SHORT_RULES,
        opponent="threshold-300", runs_dir=str(tmp_path / "runs"), run_name="duel", teacher_start_games=4,
        teacher_max_contexts=50, features="margin", need_readings=False, teacher_temperature=0.01,
    )  # fmt: skip
    temperatures: list[float] = []

    class Recorded(TeacherLabeller):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            temperatures.append(self.temperature)

    monkeypatch.setattr(ppo_teacher_duel, "TeacherLabeller", Recorded)
    run = ppo_teacher_duel.main(args)
    assert temperatures == [0.01]  # the teacher labels at --teacher-temperature
    card = _card(run)
    assert card["script"] == "training/ppo_teacher_duel.py" and card["objective"] == "duel"
    assert card["opponent"] == "threshold-300" and card["teacher"]["teacher"] == "optimal-duel"
    assert card["teacher"]["teacher_label_cpu_s"] > 0.0  # the first update is labelled
    ev = card["evaluation"]
    assert ev["episodes"] == 8 and ev["opponent"] == "optimal" and ev["decisions"] > 0
    # every game is scored: the estimate is the optimum less the regret per game, whose
    # total is the mean regret per decision times the decisions
    per_game = ev["mean_regret"] * ev["decisions"] / ev["episodes"]
    assert per_game > 0.01 and ev["regret_estimate"] == pytest.approx(0.5 - per_game, rel=1e-9)


@pytest.mark.parametrize(
    ("script", "settings", "match"),
    [
        ("ppo_teacher_turn", {"teacher_until": 1.5}, "--teacher-until 1.5"),
        ("ppo_teacher_turn", {"teacher_weight": -1.0}, "--teacher-weight"),
        ("ppo_teacher_turn", {"rules": "greed", "need_readings": True}, "--need-readings needs rules with an exact target"),
        ("ppo_teacher_duel", {"teacher_starts": 2.0}, "--teacher-starts"),
        ("ppo_teacher_duel", {"opponent": "no-such-bot"}, "no-such-bot"),
    ],
)
def test_scripts_refuse_bad_settings_before_any_run_folder(
    script: str, settings: dict[str, Any], match: str, tmp_path: Path
) -> None:
    module = load_script(script)
    runs = tmp_path / "runs"
    with pytest.raises(Exception, match=match):
        module.main(module.Args(runs_dir=str(runs), **settings))
    assert not runs.exists() or list(runs.iterdir()) == []
