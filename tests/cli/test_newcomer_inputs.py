"""What a newcomer tripped on, one test each: inputs that gave a traceback, inputs accepted
silently, and friction in the output. Refusals are one line on stderr with status 2."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from greed_env.cli import main
from greed_env.commands.demo_cmd import evaluation_table
from greed_env.evaluation import evaluate
from greed_env.rules import (
    IllegalMove,
    Phase,
    RulesError,
    State,
    apply_roll,
    legal_moves,
    new_game,
    preset,
    sample_roll,
)
from greed_env.rules.record import GameRecord, Recorder, RecordError, save

ROOT = Path(__file__).resolve().parents[2]
LONG = "a" * 300


def run_cli(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return int(code or 0), out.getvalue(), err.getvalue()


def refused(argv: list[str], *words: str) -> str:
    code, _, err = run_cli(argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


PLAY = ["play", "--rules", "farkle", "--players", "random,threshold", "--seed", "1", "--plain"]


# ------------------------------------------------------------------------------------------
# tracebacks that are one line now


def test_set_name_is_refused_with_one_line() -> None:
    refused(["rules", "farkle", "--set", "name=ten_thousand"], "--set name=ten_thousand", "not a rule")
    assert preset("farkle", name="house").name == "house"  # in Python a preset may be renamed


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "--rules", "farkle", "--players", f"{LONG}.json,random", "--seed", "1"],
        ["eval", f"{LONG}.json", "--no-progress"],
        ["eval", f"{LONG}/bot.onnx", "--no-progress"],
        ["eval", f"py:{LONG}.py:Bot", "--no-progress", "--trust-code"],
        ["tournament", "--rules", "farkle", "--bots", f"random,{LONG}.json", "--games", "2"],
        ["benchmark", "farkle/turn", "--bot", f"{LONG}.json"],
    ],
    ids=["play", "eval", "eval-folder", "eval-py", "tournament", "benchmark"],
)
def test_a_bot_file_name_too_long_is_one_line(argv: list[str]) -> None:
    line = refused(argv, "file name too long")
    assert len(line) < 200  # the name is shortened


def test_demo_refuses_rules_without_a_turn_table_up_front(tmp_path: Path) -> None:
    code, out, err = run_cli(["demo", "--rules", "trippn", "--quick", "--runs-dir", str(tmp_path / "runs")])
    assert code == 2 and out == ""  # nothing of the demo ran
    assert len(err.strip().splitlines()) == 1 and "trippn" in err and "turn table" in err
    assert not (tmp_path / "runs").exists()


# ------------------------------------------------------------------------------------------
# accepted silently before


@pytest.mark.parametrize("flag", ["--record", "--save-gif"])
def test_an_empty_output_name_is_refused(flag: str) -> None:
    refused([*PLAY, f"{flag}="], flag, "empty name")


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "random", "--out=", "--no-progress"],
        ["tournament", "--rules", "farkle", "--bots", "random,threshold", "--games", "2", "--out="],
        ["benchmark", "farkle/turn", "--bot", "random", "--out="],
    ],
    ids=["eval", "tournament", "benchmark"],
)
def test_an_empty_out_folder_is_refused(argv: list[str]) -> None:
    refused(argv, "--out", "empty name")


@pytest.mark.parametrize("fps", ["inf", "1e9", "51", "0", "nan", "-1", "0.001"])
def test_gif_fps_outside_what_a_gif_shows_is_refused(fps: str, tmp_path: Path) -> None:
    refused([*PLAY, "--save-gif", str(tmp_path / "g.gif"), f"--gif-fps={fps}"], "--gif-fps", "0.01 to 50")
    assert not (tmp_path / "g.gif").exists()


def test_gif_fps_without_a_gif_is_refused(tmp_path: Path) -> None:
    refused([*PLAY, "--gif-fps", "4"], "--gif-fps", "--save-gif")
    record = tmp_path / "game.json"
    assert run_cli([*PLAY, "--record", str(record)])[0] == 0
    refused(["replay", str(record), "--gif-fps", "4"], "--gif-fps", "--save-gif")


def test_save_animation_refuses_rates_a_gif_cannot_show() -> None:
    from greed_env.envs.render import save_animation

    frame = np.zeros((4, 4, 3), dtype=np.uint8)
    for fps in (0.0, 1e9, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"fps must be a number from 0\.01 to 50"):
            save_animation([frame], "unused.gif", fps)


def test_an_opponent_outside_a_duel_is_refused() -> None:
    refused(["eval", "random", "--objective", "turn", "--opponent", "nosuch", "--no-progress"],
            "--opponent nosuch", "duel")


def test_run_dirs_must_be_runs_and_go_into_a_report(tmp_path: Path) -> None:
    base = ["eval", "random", "--episodes", "10", "--no-progress"]
    refused([*base, "--run-dir", str(tmp_path / "missing"), "--out", str(tmp_path / "rep")], "--run-dir", "no such folder")
    (tmp_path / "empty").mkdir()
    refused([*base, "--run-dir", str(tmp_path / "empty"), "--out", str(tmp_path / "rep")], "not a training run")
    (tmp_path / "empty" / "eval.csv").write_text("step,value\n1,2\n", encoding="utf-8")
    refused([*base, "--run-dir", str(tmp_path / "empty")], "--run-dir", "--out")
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize(
    "bots",
    ["random,RANDOM", "threshold-300,threshold:300", "threshold,farkle/threshold-300", "random,random"],
)
def test_two_specs_of_one_bot_are_refused(bots: str) -> None:
    refused(["tournament", "--rules", "farkle", "--bots", bots, "--games", "2"], "distinct", "the same bot")


def test_an_elo_task_reads_another_spelling_of_a_reference_bot_as_that_bot() -> None:
    """``threshold:300`` on a task whose field holds ``threshold-300`` is that bot, not a second
    copy the tournament would refuse."""
    from greed_env.benchmark import Task, run_task

    task = Task("ten_thousand/tiny-elo", 1, "elo", "ten_thousand", 2, ("random", "threshold-300"), 7, 4, "Elo", "tiny")
    assert run_task(task, "threshold:300").value == run_task(task, "threshold-300").value


@pytest.mark.parametrize("roll", ["1,,2", "1,2,", ",5", ""])
def test_advise_refuses_a_roll_with_a_face_left_out(roll: str) -> None:
    refused(["advise", "--rules", "ten_thousand", "--objective", "turn", f"--roll={roll}"], "--roll")


def test_min_bank_above_the_target_is_refused() -> None:
    refused(["rules", "farkle", "--set", "min_bank=20000"], "min_bank", "0..target")
    with pytest.raises(RulesError, match="min_bank"):
        preset("farkle", min_bank=10_050)
    assert preset("farkle", min_bank=10_000).min_bank == 10_000


def test_a_record_gives_each_seat_a_name_of_its_own(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    assert run_cli(["play", "--rules", "farkle", "--players", "random,random", "--seed", "2", "--plain",
                    "--record", str(record)])[0] == 0
    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["players"] == ["random", "random#2"]
    data["players"] = ["random", "random"]
    record.write_text(json.dumps(data), encoding="utf-8")
    refused(["replay", str(record)], "'random'", "seats 0 and 1")
    with pytest.raises(RecordError, match="seats 0 and 1"):
        GameRecord.from_dict(data)
    rec = Recorder(preset("farkle"), 2, first_player=0, players=["me", "me"])
    assert save(rec.record(), tmp_path / "again.json").is_file() and rec.players == ("me", "me#2")


@pytest.mark.parametrize("roll", [(1.0, 2, 3, 4, 5, 6), (True, 2, 3, 4, 5, 6), (1.0, 5.0, 2, 3, 4, 6), ("1", 2, 3, 4, 5, 6)])
def test_apply_roll_takes_whole_numbers_only(roll: tuple[object, ...]) -> None:
    rules = preset("farkle")
    with pytest.raises(IllegalMove, match="dice must be integers"):
        apply_roll(rules, new_game(rules, 2, first_player=0), roll)  # type: ignore[arg-type]
    assert apply_roll(rules, new_game(rules, 2, first_player=0), tuple(np.arange(1, 7))).phase == Phase.KEEP


def test_the_api_names_a_wrong_argument() -> None:
    rules = preset("farkle")
    state = new_game(rules, 2, first_player=0)
    for rng in (None, 7, "seed"):
        with pytest.raises(TypeError, match="rng must be a numpy Generator"):
            sample_roll(rules, state, rng)
    with pytest.raises(TypeError, match="state must be a State"):
        legal_moves(rules, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rules must be a Rules"):
        legal_moves(None, state)  # type: ignore[arg-type]
    assert evaluate("threshold", "farkle", "turn", episodes=4, regret_episodes=0).rules == rules
    with pytest.raises(ValueError, match="regret_episodes"):
        evaluate("threshold", rules, "turn", episodes=4, regret_episodes=-1)


# ------------------------------------------------------------------------------------------
# friction


def test_the_bot_docs_list_every_state_field() -> None:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    section = text[text.index("## What a bot reads") : text.index("## The registry")]
    cells = re.findall(r"^\| ([^|]+) \|", section, flags=re.M)
    named = {name.strip(" `") for cell in cells for name in cell.split(",")} - {"field"}
    assert named == set(State._fields)


def test_the_tournament_table_shows_a_python_bots_name(tmp_path: Path) -> None:
    source = tmp_path / "mine.py"
    source.write_text(
        "from greed_env.rules import legal_moves\n\n"
        "class Careful:\n    name = 'careful'\n\n"
        "    def act(self, rules, state, rng):\n        return legal_moves(rules, state)[0]\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["tournament", "--rules", "farkle", "--bots", f"random,py:{source}:Careful",
                              "--games", "2", "--no-progress", "--trust-code"])
    assert code == 0, err
    assert "| careful |" in out and str(source) not in out


def test_a_tie_in_the_who_starts_roll_shows_the_last_roll() -> None:
    rules = preset("farkle")
    state = new_game(rules, 2)
    state = apply_roll(rules, state, (5,))
    state = apply_roll(rules, state, (5,))
    assert state.event == "rolls 5; tie at 5: roll again"
    state = apply_roll(rules, apply_roll(rules, state, (6,)), (1,))
    assert state.event.startswith("rolls 1; player 0 starts")
    three = preset("ten_thousand")
    s = apply_roll(three, apply_roll(three, apply_roll(three, new_game(three, 3), (5,)), (5,)), (1,))
    assert s.event == "rolls 1; tie at 5: roll again"  # the third player's 1 is shown


def test_not_understood_lists_the_moves_of_these_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("hello\nq\n"))
    _, out, _ = run_cli(["play", "--rules", "farkle", "--players", "human,random", "--seed", "1", "--plain"])
    line = next(x for x in out.splitlines() if x.startswith("not understood"))
    assert "'hello'" in line and "legal here: keep:" in line
    for absent in ("piggyback", "roll_first", "split", "reroll_all"):  # kinds farkle has not
        assert absent not in line


@pytest.mark.parametrize("opponent", ["optimal", "optimal-duel", "ten_thousand/optimal-duel"])
def test_the_regret_estimate_is_shown_against_every_name_of_the_optimal_duel_bot(opponent: str) -> None:
    code, out, err = run_cli(["eval", "threshold", "--objective", "duel", "--opponent", opponent,
                              "--episodes", "6", "--regret-episodes", "6", "--workers", "1", "--no-progress"])
    assert code == 0, err
    assert "optimal - regret estimate" in out


def test_the_demo_table_shows_the_agents_exact_value_from_its_training() -> None:
    score = SimpleNamespace(mean=500.0, half_width=5.0)
    rows = [
        ("PPO agent", SimpleNamespace(score=score, optimal_share=0.9, exact=None)),
        ("threshold bot (bank at 300)", SimpleNamespace(score=score, optimal_share=0.5, exact=480.0)),
        ("optimal bot (solver)", SimpleNamespace(score=score, optimal_share=1.0, exact=None)),
    ]
    lines = evaluation_table(rows, 582.3, 570.4)
    agent = next(x for x in lines if "PPO agent" in x)
    assert "570.4" in agent and "97.96%" in agent
    assert "480.0" in next(x for x in lines if "threshold" in x)
