"""The ``greed rules / score / play / replay`` commands, called through ``greed_env.cli.main``."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.bots.errors import UnknownBotError
from greed_env.bots.loader import load as load_bot
from greed_env.cli import main
from greed_env.rules import (
    Phase,
    apply,
    apply_roll,
    current_keep_options,
    load,
    new_game,
    parse_move,
    preset,
    preset_names,
    replay,
    sample_roll,
)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------
# greed rules


def test_rules_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "rules")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["NAME", "SOURCE", "DICE", "TARGET"]
    for name in preset_names():
        assert any(line.startswith(name + " ") for line in lines), name
    assert "seed 002 'Progressive 10,000'" in out and "=10000" in out


def test_rules_shows_one_preset_with_documentation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "rules", "greed")
    assert code == 0
    assert "entry_threshold = 500" in out and "reroll_all = True" in out
    assert "'if a higher score isn't achieved with the reroll" in out
    code, out, _ = cli(capsys, "rules", "greed", "--set", "entry_threshold=600")
    assert code == 0 and "entry_threshold = 600  (--set)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("rules", "yahtzee"), "unknown rules preset 'yahtzee'"),
        (("rules", "greed", "--set", "colour=red"), "unknown rules field 'colour'"),
        (("rules", "greed", "--set", "num_dice"), "--set expects FIELD=VALUE"),
        (("rules", "--set", "num_dice=5"), "needs a preset NAME"),
    ],
)
def test_rules_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------
# greed score


def test_score_prints_parts_then_the_score_alone(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(
        capsys, "score", "--rules", "progressive", "6", "6", "6", "1", "2", "3", "4", "5"
    )
    lines = out.splitlines()
    assert code == 0 and lines[-1] == "1350"
    assert lines[0].startswith("3 6s") and lines[0].split()[-1] == "600"
    assert lines[1].startswith("straight 1-2-3-4-5") and lines[1].split()[-1] == "750"


def test_score_fresh_applies_roll_level_bonuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli(capsys, "score", "--rules", "progressive", "--fresh", "66612345")[1].splitlines()[-1]
        == "2350"
    )
    out = cli(capsys, "score", "--rules", "zilch", "--fresh", "2", "2", "3", "4", "4", "6")[1]
    assert out.splitlines()[-1] == "500" and "nothing scores" in out


@pytest.mark.parametrize(
    ("faces", "expected"),
    [
        (("3,1,6,2,5,4",), "1500"),
        (("1", "1", "1", "2", "3", "4", "5", "6"), "1750"),
        (("12345611",), "1700"),
    ],
)
def test_score_reads_tap_order(
    capsys: pytest.CaptureFixture[str], faces: tuple[str, ...], expected: str
) -> None:
    code, out, _ = cli(capsys, "score", "--rules", "progressive", *faces)
    assert code == 0 and out.splitlines()[-1] == expected


def test_score_with_overrides(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("score", "--rules", "ten_thousand", "--set", "single_values=(100,0,0,0,50,60)", "6")
    assert cli(capsys, *argv)[1].splitlines()[-1] == "60"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("--rules", "progressive", "1", "2", "3", "4", "5", "6", "6", "6"),
            "illegal keep (dead-die)",
        ),
        (("--rules", "ten_thousand", "2", "3"), "every kept die must score: 2, 3"),
        (("--rules", "ten_thousand", "7"), "illegal keep (face)"),
        (("--rules", "ten_thousand", "1", "1", "1", "1", "1", "1", "1"), "too-many-dice"),
        (("--rules", "ten_thousand", "x"), "faces are digits 1..6"),
        (("--rules", "nope", "1"), "unknown rules preset 'nope'"),
        (("--rules", "greed", "--set", "foo=1", "1"), "unknown rules field 'foo'"),
        (("--rules", "greed", "--set", "num_dice=x", "1"), "rules field 'num_dice'"),
        (("--rules", "greed", "--set", "num_dice=9", "1"), "'num_dice' = 9 is out of range"),
    ],
)
def test_score_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = cli(capsys, "score", *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ------------------------------------------------------------------------------------------
# bot specs (the grammar's own tests: tests/bots/test_bots_spec.py)


def test_load_builtin_kinds() -> None:
    rules = preset("ten_thousand")
    assert isinstance(load_bot("random", rules), RandomBot)
    assert isinstance(load_bot("threshold", rules), ThresholdBot)
    bot = load_bot(" Threshold:650 ", rules)
    assert isinstance(bot, ThresholdBot) and bot.bank_at == 650
    for bad, message in [
        ("threshold:lots", "whole number"),
        ("threshold:-5", "whole number"),
        ("random:3", "unknown bot 'random:3'"),
        ("", "empty bot spec"),
    ]:
        with pytest.raises(UnknownBotError, match=message):
            load_bot(bad, rules)


def test_load_builds_the_solvers_bot() -> None:
    bot = load_bot("optimal", preset("farkle5"))
    assert bot.name == "optimal-duel"
    assert load_bot("optimal:turn", preset("farkle5")).name == "optimal-turn"
    with pytest.raises(UnknownBotError, match="no objective 'fastest'"):
        load_bot("optimal:fastest", preset("farkle5"))


# ------------------------------------------------------------------------------------------
# greed play / replay


BOTS = (
    "play",
    "--rules",
    "ten_thousand",
    "--players",
    "threshold:500,random,threshold",
    "--seed",
    "7",
)


def test_bots_only_game_is_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, *BOTS)
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "ten_thousand: 3 players, seed 7"
    assert "game over:" in out and out.splitlines()[-1].startswith("returns: P0 threshold:500")
    assert cli(capsys, *BOTS)[1] == out


def test_record_then_replay(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    code, out, _ = cli(capsys, *BOTS, "--record", str(path))
    assert code == 0 and f"record saved to {path}" in out
    record = load(path)
    assert record.seed == 7 and record.players == ("threshold:500", "random", "threshold")
    final_scores = next(line for line in reversed(out.splitlines()) if line.startswith("scores:"))
    code, shown, err = cli(capsys, "replay", str(path))
    assert code == 0 and err == ""
    assert shown.splitlines()[0].startswith("ten_thousand: 3 players, seed 7")
    assert "--- P0 threshold:500 to play ---" in shown or "--- P1 random to play ---" in shown
    assert final_scores in shown and "game over:" in shown


def test_replay_of_a_bad_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    code, out, err = cli(capsys, "replay", str(bad))
    assert out == ""
    assert code == 2 and "not a greed_env game record" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, "replay", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read game record" in err


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ("human", "played by 2..8 players"),
        ("random,threshold:abc", "whole number"),
        ("random,,random", "entry 2 is empty"),
        ("random,wizard", "unknown bot 'wizard'"),
    ],
)
def test_play_bad_players_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, players: str, message: str
) -> None:
    monkeypatch.setitem(sys.modules, "greed_env.bots.registry", None)
    code, _, err = cli(capsys, "play", "--rules", "ten_thousand", "--players", players)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def _human_script(seed: int) -> tuple[list[str], str]:
    """Inputs for a human in seat 0 of a one-round progressive game: help, three refused
    inputs, a keep typed compactly, roll on, then bust on purpose if asked again."""
    rules = preset("progressive")
    rng = np.random.default_rng(seed)
    s = new_game(rules, 2, first_player=0)
    s = apply_roll(rules, s, sample_roll(rules, s, rng))
    keep = current_keep_options(rules, s)[0]
    typed = "".join(map(str, keep.taps))
    return ["?", "hello", "bank", "7", typed, "r", "x"], "keep:" + ",".join(map(str, keep.taps))


def test_human_play_with_scripted_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    lines, keep = _human_script(seed=11)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    path = tmp_path / "human.json"
    argv = ("play", "--rules", "progressive", "--players", "human:Ann,threshold", "--seed", "11")
    code, out, err = cli(
        capsys, *argv, "--first-player", "0", "--set", "horizon_rounds=1", "--record", str(path)
    )
    assert code == 0 and err == "" and "Traceback" not in out
    assert "legal moves: keep:" in out and "bust" in out.split("legal moves:")[1].splitlines()[0]
    assert "not understood: 'hello'; legal here: keep:" in out  # the moves of these rules, not every kind
    assert "not allowed (phase): move 'bank' is not legal now" in out
    assert "not allowed (face): a die shows 1..6, got 7" in out
    assert f"P0 Ann: [{keep}]" in out
    assert "game over:" in out and "horizon reached" in out
    record = load(path)
    moves = [e["move"] for e in record.events if "move" in e and e["player"] == 0]
    assert moves[:2] == [keep, "roll"]
    assert len(replay(record)) == len(record.events) + 1


def test_human_input_ending_early_stops_cleanly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("?\n"))
    path = tmp_path / "part.json"
    argv = (
        "play",
        "--rules",
        "ten_thousand",
        "--players",
        "random,human",
        "--seed",
        "2",
        "--record",
        str(path),
    )
    code, out, err = cli(capsys, *argv)
    assert code == 1 and "game stopped: input ended" in out and "game not finished" in out
    assert err == ""
    assert replay(load(path))[-1].phase != 7


def test_quit_and_rich_output_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the output goes through rich (dice faces, a scores table); 'q' quits."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stdout", term)
    monkeypatch.setattr(sys, "stdin", io.StringIO("?\nq\n"))
    code = main(
        [
            "play",
            "--rules",
            "greed",
            "--players",
            "human,threshold",
            "--seed",
            "5",
            "--first-player",
            "0",
        ]
    )
    text = term.getvalue()
    assert code == 0 and "game stopped: quit" in text
    assert "roll:" in text and any(face in text for face in "⚀⚁⚂⚃⚄⚅")
    assert "legal moves:" in text


def test_phase_hints_explain_the_rarer_decisions() -> None:
    from greed_env.commands.play_cmd import phase_hint

    prog = preset("progressive")
    eight = (1, 2, 2, 3, 3, 4, 5, 6)
    s = new_game(prog, 2, first_player=0)._replace(scores=(9850, 9850), entered=(True, True))
    s = apply(prog, apply_roll(prog, s, eight), parse_move("keep:1,5"))
    assert phase_hint(prog, s).startswith("exactly 10000: roll for nothing")
    split = s._replace(phase=Phase.SPLIT, finishers=(0, 1))
    assert "split the pot (s) or refuse" in phase_hint(prog, split)
    assert "roll first" in phase_hint(prog, split._replace(phase=Phase.ORDER_CHOICE))
    fark = preset("farkle", piggyback=True)
    start = new_game(fark, 2, first_player=0)._replace(phase=Phase.START, piggy=(700, 2))
    assert phase_hint(fark, start) == "piggyback on 700 with 2 dice (p) or start fresh (f)"


def test_play_refuses_a_record_path_in_a_missing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "no" / "such" / "game.json"
    code, out, err = cli(capsys, *BOTS, "--record", str(target))
    assert code == 2 and out == "" and "--record" in err and "does not exist" in err
    code, _, err = cli(capsys, *BOTS, "--first-player", "3")
    assert code == 2 and "--first-player must be a seat 0..2" in err


def test_play_hints_show_the_optimal_value_of_each_move(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from greed_env.cli import main as cli_main

    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    rc = cli_main(
        ["play", "--rules", "ten_thousand", "--players", "human,threshold", "--seed", "3",
         "--first-player", "0", "--hints", "--plain"]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "hints (duel" in out and "best" in out
