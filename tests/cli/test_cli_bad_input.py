"""Every sub-command refuses generated bad arguments the same way.

Exit status 2, exactly one line on stderr that names the flag or the value at fault, no
traceback, and no file left behind. The CLI runs in-process (``greed_env.cli.main``); the
arguments are drawn by hypothesis from out-of-range numbers, words where numbers belong,
missing and existing paths, and positions the rules cannot reach. Nothing here trains or
solves: each refusal must come before the work.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from greed_env.cli import main

NOT_INTS = st.sampled_from(["x", "1.5", "nan", "", "1e3", "0x10", "½"])
NEGATIVE = st.integers(max_value=-1)
NOT_POSITIVE = st.integers(max_value=0)
BAD_FLOATS = st.sampled_from(["-1", "0", "nan", "inf", "-inf", "x", ""])


@contextlib.contextmanager
def _in(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def run_cli(argv: list[str]) -> tuple[int, str]:
    """``greed ARGV`` in this process: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return int(code or 0), err.getvalue()


def _number(flag: str, values: st.SearchStrategy[object]) -> st.SearchStrategy[tuple[list[str], str]]:
    return values.map(lambda v: ([f"{flag}={v}"], flag))


@st.composite
def bad_invocations(draw: st.DrawFn) -> tuple[list[str], str]:
    """(argv, a word the one-line message must contain)."""
    case = draw(st.sampled_from([
        "rules", "score", "play", "replay", "solve", "advise", "train", "soup", "eval",
        "bots", "export", "tournament", "demo",
    ]))
    tt = ["--rules", "ten_thousand"]
    if case == "rules":
        name = draw(st.sampled_from(["yahtzee", "ten-thousand", "", "ten thousand"]))
        if draw(st.booleans()):
            return ["rules", name], repr(name)
        field, value = draw(st.sampled_from([
            ("target", "-50"), ("target", "1000000000000"), ("num_dice", "0"), ("num_dice", "9"),
            ("entry_threshold", "20000"), ("bust_penalty", "500"), ("nope", "1"), ("min_bank", "x"),
        ]))
        return ["rules", "ten_thousand", "--set", f"{field}={value}"], field
    if case == "score":
        faces = draw(st.sampled_from(["7", "0", "x", "1,1,1,1,1,1,1"]))
        return ["score", *tt, faces], ""
    if case == "play":
        players = ["--players", "random,random"]
        which = draw(st.sampled_from(["seed", "record", "first", "players"]))
        if which == "seed":
            args, word = draw(_number("--seed", st.one_of(NEGATIVE, NOT_INTS)))
            return ["play", *tt, *players, *args], word
        if which == "record":
            where = draw(st.sampled_from(["adir", "afile.txt/rec.json", "nowhere/rec.json", "adir/"]))
            return ["play", *tt, *players, "--record", where], "--record"
        if which == "first":
            seat = draw(st.one_of(st.integers(min_value=2), NEGATIVE))
            return ["play", *tt, *players, f"--first-player={seat}"], "--first-player"
        spec = draw(st.sampled_from(["random", "random,,random", "nobot,random", "random,missing.onnx",
                                     "random,/nowhere/bot.zip", ",".join(["random"] * 9)]))
        return ["play", *tt, "--players", spec], ""
    if case == "replay":
        return ["replay", draw(st.sampled_from(["missing.json", "adir", "afile.txt"]))], ""
    if case == "solve":
        which = draw(st.sampled_from(["tol", "cap", "out", "floor"]))
        if which == "tol":
            args, word = draw(_number("--tol", BAD_FLOATS))
            return ["solve", *tt, "--objective", "turn", *args], word
        if which == "cap":
            args, word = draw(_number("--cap", st.one_of(NOT_POSITIVE, NOT_INTS)))
            return ["solve", *tt, "--objective", "turn", *args], word
        if which == "floor":
            floor = draw(st.integers(min_value=1))
            return ["solve", "--rules", "zilch", "--objective", "race", f"--floor={floor}"], "--floor"
        out = draw(st.sampled_from(["afile.txt/t.npz", "afile.txt", "x.txt", "nowhere/t.npz", "adir/t.txt"]))
        return ["solve", *tt, "--objective", "entry", "--out", out], "--out"
    if case == "advise":
        base = ["advise", *tt, "--no-solve"]
        which = draw(st.sampled_from(["scores", "dice", "roll", "streak", "turn", "count"]))
        if which == "scores":
            score = draw(st.one_of(st.integers(min_value=10_000), NEGATIVE))
            objective = draw(st.sampled_from(["duel", "race", "turn"]))
            return [*base, "--objective", objective, f"--scores={score},0"], "--scores"
        if which == "count":
            return [*base, "--scores=0,0,0"], "--scores"
        if which == "dice":
            dice = draw(st.one_of(st.integers(min_value=7), NOT_POSITIVE))
            return [*base, "--turn-total=300", f"--dice={dice}"], "--dice"
        if which == "roll":
            n = draw(st.integers(min_value=7, max_value=12))
            return [*base, "--roll", ",".join(["1"] * n)], "--roll"
        if which == "streak":
            streak = draw(st.one_of(st.integers(min_value=1), NEGATIVE))
            return [*base, "--turn-total=300", f"--streak={streak}"], "--streak"
        total = draw(st.one_of(NEGATIVE, NOT_INTS))
        return [*base, f"--turn-total={total}"], "--turn-total"
    if case == "train":
        flag, values = draw(st.sampled_from([
            ("--total-timesteps", st.one_of(NOT_POSITIVE, NOT_INTS)),
            ("--num-envs", NOT_POSITIVE),
            ("--seed", NEGATIVE),
            ("--learning-rate", st.sampled_from(["nan", "0", "-1"])),
            ("--gamma", st.sampled_from(["0", "1.5", "nan"])),
            ("--checkpoint-every", NOT_POSITIVE),
        ]))
        args, word = draw(_number(flag, values))
        return ["train", "ppo_turn", "--runs-dir", "runs", *args], word
    if case == "soup":
        return ["train", "soup", "missing1.zip", "missing2.zip", "--out", "soup"], "missing1.zip"
    if case == "eval":
        which = draw(st.sampled_from(["workers", "seed", "episodes", "bot", "out"]))
        if which == "workers":
            args, word = draw(_number("--workers", NOT_POSITIVE))
        elif which == "seed":
            args, word = draw(_number("--seed", NEGATIVE))
        elif which == "episodes":
            args, word = draw(_number("--episodes", NOT_POSITIVE))
        elif which == "out":
            args, word = ["--out", "afile.txt"], "--out"
        else:
            bot = draw(st.sampled_from(["missing.onnx", "missing.json", "missing.zip", "nobot", "/no/bot.npz"]))
            return ["eval", bot, "--no-progress"], bot.strip("/").split("/")[-1]
        return ["eval", "random", "--no-progress", *args], word
    if case == "bots":
        return ["bots", "show", draw(st.sampled_from(["ten_thousand/nope", "nope/optimal-duel", "nope"]))], ""
    if case == "export":
        model = draw(st.sampled_from(["missing.zip", "afile.txt"]))
        return ["export", model, "--out", draw(st.sampled_from(["exported", "afile.txt"]))], ""
    if case == "tournament":
        which = draw(st.sampled_from(["games", "workers", "out", "bots"]))
        base = ["tournament", *tt, "--bots", "random,threshold"]
        if which == "games":
            args, word = draw(_number("--games", NOT_POSITIVE))
            return [*base, *args], word
        if which == "workers":
            args, word = draw(_number("--workers", NOT_POSITIVE))
            return [*base, "--games=2", *args], word
        if which == "out":
            return [*base, "--games=2", "--out", "afile.txt"], "--out"
        return ["tournament", *tt, "--bots", "random,nobot", "--games=2"], "nobot"
    flag, values = draw(st.sampled_from([
        ("--steps", NOT_POSITIVE), ("--seed", NEGATIVE), ("--eval-turns", NOT_POSITIVE),
        ("--duel-games", NEGATIVE),
    ]))
    if draw(st.booleans()):
        return ["demo", "--runs-dir", "afile.txt"], "--runs-dir"
    args, word = draw(_number(flag, values))
    return ["demo", *args], word


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding one file and one empty folder; the solver cache points inside."""
    (tmp_path / "afile.txt").write_text("not a table, not a model\n")
    (tmp_path / "adir").mkdir()
    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path / "cache"))
    return tmp_path


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad_invocations())
def test_every_command_refuses_bad_arguments_in_one_line(sandbox: Path, case: tuple[list[str], str]) -> None:
    argv, word = case
    before = _tree(sandbox)
    with _in(sandbox):
        code, err = run_cli(argv)
    lines = err.strip().splitlines()
    assert code == 2, (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    assert len(lines) == 1, (argv, err)
    assert lines[0].startswith("greed "), (argv, err)
    assert word in lines[0], (argv, word, err)
    assert _tree(sandbox) == before, (argv, _tree(sandbox) - before)
