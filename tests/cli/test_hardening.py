"""The last ways a command ended in a traceback or did harm: each refused in one line (status 2),
before any work, with nothing written; and the inconsistencies made consistent.

Ctrl-C in every long command is ``tests/cli/test_interrupts.py``.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import greed_env  # noqa: F401  (registers the environments)
from greed_env.benchmark import match_tasks
from greed_env.bots import SeatCountError, load, parse_spec
from greed_env.bots.loader import as_bot
from greed_env.cli import main
from greed_env.commands import eval_cmd, train_cmd
from greed_env.commands.argtypes import OutputPathError, check_output_file
from greed_env.evaluation import MAX_EPISODES, evaluate
from greed_env.files import NotRegularFileError, atomic_write_text, check_target, folder_problem
from greed_env.rules import RulesError, preset
from greed_env.rules.record import Recorder, save
from greed_env.solver import SolveTooBigError, TableError, load_table, solve, table_paths
from greed_env.solver.kernels import level_work
from greed_env.solver.size import check_size, estimate

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def _one_line(err: str, *words: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GREED_ENV_CACHE", str(folder))
    return folder


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


PLAY = ["play", "--rules", "greed", "--players", "random,random", "--seed", "1", "--plain"]


# ------------------------------------------------------------------------------------------
# targets that are not regular files: never replaced


def test_a_pipe_in_place_of_an_output_file_is_refused_and_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "game.json"
    os.mkfifo(fifo)
    code, out, err = _run([*PLAY, "--record", str(fifo)], capsys)
    assert code == 2 and out == ""  # refused before the first roll
    _one_line(err, "--record", "a pipe", "not a regular file")
    gif = tmp_path / "game.gif"
    os.mkfifo(gif)
    code, out, err = _run([*PLAY, "--save-gif", str(gif)], capsys)
    assert code == 2 and out == ""
    _one_line(err, "--save-gif", "a pipe")
    table = tmp_path / "t.npz"
    os.mkfifo(table)
    code, _, err = _run(["solve", "--rules", "farkle5", "--objective", "entry", "--out", str(table)], capsys)
    assert code == 2 and "solving" not in err
    _one_line(err, "--out", "a pipe")
    # the library writers refuse it too, whoever calls them
    with pytest.raises(NotRegularFileError, match="a pipe"):
        atomic_write_text(fifo, "text")
    rules = preset("greed")
    with pytest.raises(OSError, match="not a regular file"):
        save(Recorder(rules, 2, 0, 1).record(), fifo)
    for path in (fifo, gif, table):
        assert stat.S_ISFIFO(os.stat(path).st_mode), path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.gif", "game.json", "t.npz"]  # no temporary files


def test_a_device_is_refused_before_anything_is_written() -> None:
    # checks only: nothing here writes, so a broken check cannot touch /dev/null
    with pytest.raises(NotRegularFileError, match="a device"):
        check_target("/dev/null")
    with pytest.raises(OutputPathError, match=r"--record '/dev/null': .*a device"):
        check_output_file("/dev/null", "--record")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_file_names_longer_than_the_file_system_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, flag in (
        ([*PLAY, "--record", str(tmp_path / ("r" * 300 + ".json"))], "--record"),
        (["solve", "--rules", "farkle5", "--objective", "entry", "--out", str(tmp_path / ("t" * 300 + ".npz"))], "--out"),
        (["eval", "random", "--episodes", "10", "--no-progress", "--out", str(tmp_path / ("d" * 300))], "--out"),
    ):
        code, out, err = _run(argv, capsys)
        assert code == 2 and out == "", argv
        line = _one_line(err, flag, "file name too long")
        assert len(line) < 250  # the name is shortened in the message
    assert _files(tmp_path) == []
    fits = tmp_path / ("n" * 250)  # a long name that fits: its temporary name is shortened
    assert atomic_write_text(fits, "ok").read_text() == "ok"
    assert _files(tmp_path) == [fits]


# ------------------------------------------------------------------------------------------
# folders that cannot be written: refused before the work


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A folder where no file can be made: read-only permissions, or (for root, whom
    permissions do not stop) a folder of the kernel's /sys."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if folder_problem(folder):
            yield folder
        elif Path("/sys/kernel").is_dir() and folder_problem("/sys/kernel"):
            yield Path("/sys/kernel")
        else:
            pytest.fail("no folder here refuses a new file (root without /sys): nothing to test the refusal with")
    finally:
        folder.chmod(0o755)


def test_unwritable_output_folders_are_refused_before_the_work(
    unwritable: Path, tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "game.json"
    assert _run([*PLAY, "--record", str(record)], capsys)[0] == 0
    cases = [
        (["eval", "random", "--episodes", "10", "--no-progress", "--out", str(unwritable / "evalout")], "--out"),
        (["benchmark", "farkle5/turn", "--bot", "random", "--no-progress", "--out", str(unwritable / "bench")], "--out"),
        (["export", str(tmp_path / "model.zip"), "--rules", "farkle", "--out", str(unwritable / "exp")], "--out"),
        (["tournament", "--rules", "greed", "--bots", "random,threshold", "--games", "10", "--no-progress",
          "--out", str(unwritable / "tour")], "--out"),
        (["train", "ppo_turn", "--runs-dir", str(unwritable / "runs"), "--total-timesteps", "64"], "--runs-dir"),
        (["solve", "--rules", "farkle5", "--objective", "entry", "--out", str(unwritable / "t.npz")], "--out"),
        ([*PLAY, "--save-gif", str(unwritable / "x.gif")], "--save-gif"),
        ([*PLAY, "--record", str(unwritable / "game.json")], "--record"),
        (["replay", str(record), "--plain", "--save-gif", str(unwritable / "x.gif")], "--save-gif"),
    ]
    for argv, flag in cases:
        code, out, err = _run(argv, capsys)
        assert code == 2 and out == "", (argv, out)
        _one_line(err, flag, "cannot write in")
    monkeypatch.setenv("GREED_ENV_CACHE", str(unwritable / "cache"))  # solve without --out: the cache
    code, out, err = _run(["solve", "--rules", "farkle5", "--objective", "entry"], capsys)
    assert code == 2 and out == ""
    _one_line(err, "the table cache", "cannot write in", "GREED_ENV_CACHE")
    assert _files(tmp_path) == [record]  # no run folder, table, report or temporary file


# ------------------------------------------------------------------------------------------
# bots made for two players, in games of three


def test_two_player_bots_are_refused_in_bigger_games(capsys: pytest.CaptureFixture[str]) -> None:
    for players, bot in (("random,ladder-30,random", "ladder-30"), ("random,optimal,threshold", "optimal")):
        code, out, err = _run(["play", "--rules", "ten_thousand", "--players", players, "--seed", "1"], capsys)
        assert code == 2 and out == ""  # at load, not mid-game
        _one_line(err, f"'{bot}'", "leader-duel plays the duel policy", "not a game of 3 players")
    with pytest.raises(SeatCountError, match="'optimal-duel' plays two-player games only, not a game of 3"):
        gym.make("greed_env/Duel-v0", opponent="optimal", num_players=3)
    for opponent, seats in (("optimal", 2), ("leader-duel", 3), ("optimal-turn", 3)):
        env = gym.make("greed_env/Duel-v0", opponent=opponent, num_players=seats)
        env.reset(seed=0)
        env.close()


def test_a_three_seat_duel_is_refused_alike_under_every_rule_book(capsys: pytest.CaptureFixture[str]) -> None:
    messages = []
    for rules in ("progressive", "ten_thousand"):
        code, out, err = _run(["eval", "random", "--rules", rules, "--objective", "duel", "--num-players", "3",
                               "--episodes", "10", "--no-progress"], capsys)
        assert code == 2 and out == ""
        messages.append(_one_line(err, "'optimal'", "leader-duel plays the duel policy", "not a game of 3 players"))
    assert messages[0] == messages[1]
    with pytest.raises(SeatCountError):
        evaluate("random", preset("ten_thousand"), "duel", episodes=10, num_players=3, opponent="optimal")
    field = next(t for t in match_tasks(["ten_thousand/*"]) if t.seats > 2)
    code, out, err = _run(["benchmark", field.id, "--bot", "optimal", "--no-progress"], capsys)
    assert code == 2 and out == ""  # before the plan and the games
    _one_line(err, "'optimal'", "leader-duel plays the duel policy", f"not a game of {field.seats} players")


# ------------------------------------------------------------------------------------------
# numbers too big for the work they ask


def test_huge_counts_name_their_flag(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, flag in (
        (["eval", "random", "--episodes", "99999999999999999999999999"], "--episodes"),
        (["advise", "--turn-total", "100000000000000000000"], "--turn-total"),
        (["solve", "--objective", "duel", "--simulate", "100000000000000000000"], "--simulate"),
    ):
        code, out, err = _run(argv, capsys)
        assert code == 2 and out == "", argv
        _one_line(err, f"argument {flag}", "must be an integer <=")
    assert eval_cmd.MAX_EPISODES == MAX_EPISODES
    with pytest.raises(ValueError, match="episodes"):
        evaluate("random", preset("ten_thousand"), "turn", episodes=10**20)


def test_a_solve_past_the_limits_is_refused_with_its_estimate(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for objective in ("race", "duel"):
        code, out, err = _run(["solve", "--rules", "ten_thousand", "--set", "target=1000000000",
                               "--objective", objective], capsys)
        assert code == 2 and out == ""
        _one_line(err, f"the {objective} table of ten_thousand", "positions", "estimate", "--force")
    assert not cache.exists() or _files(cache) == []
    with pytest.raises(SolveTooBigError, match="--force` solves it anyway") as info:
        solve(preset("ten_thousand", target=10**9), "race")
    assert info.value.size.positions == 10**9 // 50


def test_the_estimate_follows_the_work_of_the_kernels() -> None:
    # the duel's in-turn rows per sweep are the kernels' own progress unit (level_work), to 3%
    for target in (2_000, 10_000):
        n = target // 50
        rules = preset("farkle5", target=target)
        size = estimate(rules, "duel")
        assert size.positions == n * n
        work = float(level_work(n).sum())
        assert abs(size.rows / 3.0 - work) / work < 0.03
    small, big = (estimate(preset("farkle5", target=t), "duel") for t in (10_000, 20_000))
    assert 7.0 < big.rows / small.rows < 9.0  # pairs x rows per pass: the cube of the target
    check_size(estimate(preset("ten_thousand"), "duel"))  # the shipped tables are far inside the limits
    check_size(estimate(preset("zilch"), "duel"))


def test_the_progress_line_shows_the_estimate(cache: Path) -> None:
    rules = preset("farkle5", target=600)
    stream = io.StringIO()
    solve(rules, "race", progress=stream)
    first = stream.getvalue().splitlines()[0]
    assert first.startswith("solving the race table for farkle5") and first.endswith(" ...")
    assert f"(about {int(estimate(rules, 'race').positions)} positions, " in first


# ------------------------------------------------------------------------------------------
# exported bots need onnxruntime: the main job's install has it


def test_the_train_extra_installs_onnxruntime() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    train = re.search(r"^train = \[(.*?)\]$", text, re.M | re.S)
    assert train and re.search(r'"onnxruntime\b', train.group(1)), "the train extra must list onnxruntime"


def test_shipped_onnx_bots_play_and_without_onnxruntime_one_line_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["play", "--rules", "ten_thousand", "--players", "random,ten_thousand/ppo-turn", "--seed", "1", "--plain"]
    code, out, err = _run(argv, capsys)
    assert code == 0 and "game over" in out, err
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as in an install without it
    code, out, err = _run(argv, capsys)
    assert code == 2 and out == ""
    _one_line(err, "ten_thousand/ppo-turn", "onnxruntime", "pip install")
    code, out, err = _run(["benchmark", "ten_thousand/turn", "--bot", "ten_thousand/ppo-turn", "--no-progress"], capsys)
    assert code == 2 and out == ""
    _one_line(err, "onnxruntime")
    with pytest.raises(ImportError, match="onnxruntime"):  # still an ImportError for library callers
        load("ten_thousand/ppo-turn")


# ------------------------------------------------------------------------------------------
# the inconsistent and the unhelpful


def test_eval_is_its_own_command_and_takes_set(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert not hasattr(train_cmd, "_run_eval")
    code, out, err = _run(["eval", "optimal-turn", "--rules", "farkle", "--set", "min_bank=350", "--episodes", "200",
                           "--regret-episodes", "0", "--no-progress", "--json"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    house, plain = preset("farkle", min_bank=350), preset("farkle")
    assert summary["rules"] == "farkle"
    assert summary["optimal"] == pytest.approx(load_table(house, "turn").headline)
    assert summary["optimal"] < load_table(plain, "turn").headline - 1.0  # banking 350+ costs points
    code, out, err = _run(["eval", "farkle/ppo-turn", "--set", "min_bank=350", "--episodes", "20",
                           "--no-progress"], capsys)
    assert code == 2 and out == ""
    _one_line(err, "farkle/ppo-turn", "min_bank")  # trained for the plain rules


def test_resume_of_a_run_stopped_before_its_first_checkpoint_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "runs" / "stopped"
    run.mkdir(parents=True)
    code, _, err = _run(["train", "ppo_turn", "--runs-dir", str(tmp_path / "runs"), "--run-name", "stopped",
                         "--resume"], capsys)
    assert code == 2
    _one_line(err, "no checkpoint yet", f"rm -r {run}", "without --resume")


def test_a_corrupt_cached_table_says_how_to_recover(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = preset("farkle5", target=600)
    path = table_paths(rules, "race")[1]
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a table")
    command = "greed solve --rules farkle5 --set target=600 --objective race"
    with pytest.raises(TableError) as info:
        load_table(rules, "race")
    assert f"delete it (rm {path}) and run `{command}`" in str(info.value)
    code, out, err = _run(["advise", "--rules", "farkle5", "--set", "target=600", "--objective", "race",
                           "--scores", "100"], capsys)
    assert code == 2 and out == ""
    _one_line(err, f"rm {path}", command)
    path.unlink()  # the advice, followed
    assert _run(command.split()[1:], capsys)[0] == 0
    assert load_table(rules, "race").headline > 1.0


def test_benchmark_asks_for_its_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["benchmark", "--bot", "random"], capsys)
    assert code == 2 and out == ""
    line = _one_line(err, "name the tasks", "all", "--list")
    assert f"({len(match_tasks(['all']))} tasks, " in line


def test_a_conflicting_set_names_the_field_set_and_the_field_it_breaks(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["rules", "ten_thousand"], ["score", "--rules", "ten_thousand", "1"],
                 [*PLAY[:2], "ten_thousand", *PLAY[3:]], ["solve", "--rules", "ten_thousand"]):
        code, out, err = _run([*argv, "--set", "num_dice=1"], capsys)
        assert code == 2 and out == "", argv
        line = _one_line(err, "--set num_dice=1 conflicts with ten_thousand's straights", "you did not set")
        assert "--set straights=" in line
    code, _, err = _run(["rules", "ten_thousand", "--set", "entry_threshold=20000"], capsys)
    assert "conflicts" not in _one_line(err, "entry_threshold")  # the field set is the one named


def test_save_gif_wants_a_gif_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run([*PLAY, "--save-gif", str(tmp_path / "game.txt")], capsys)
    assert code == 2 and out == ""  # before the game
    _one_line(err, "--save-gif", ".gif")
    assert _files(tmp_path) == []


def test_rule_presets_read_like_bot_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert preset("TEN_THOUSAND") == preset("ten_thousand") and preset(" Farkle ").name == "farkle"
    with pytest.raises(RulesError, match="unknown rules preset"):
        preset("ten thousand")
    code, out, _ = _run(["rules", "TEN_THOUSAND"], capsys)
    assert code == 0 and out.startswith("ten_thousand: ")
    code, out, err = _run(["play", "--rules", "Greed", "--players", "RANDOM,Threshold-300", "--seed", "1", "--plain"], capsys)
    assert code == 0 and out.startswith("greed: 2 players"), err
    assert parse_spec("TEN_THOUSAND/optimal-turn").preset == "ten_thousand"
    assert load("Farkle/optimal-turn").rules == preset("farkle")  # type: ignore[attr-defined]


def test_load_of_none_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a bot spec is a string"):
        load(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a bot spec is a string"):
        parse_spec(3)  # type: ignore[arg-type]
    assert as_bot(None, preset("greed")).name == "threshold"  # None there means the default opponent
