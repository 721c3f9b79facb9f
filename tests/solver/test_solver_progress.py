"""Progress of a solve: the kernels' counter, the bar and its time left, the CLI stream."""

from __future__ import annotations

import io
import re
import threading
import time
from pathlib import Path
from unittest import mock

import pytest

from greed_env import progress
from greed_env.cli import main
from greed_env.progress import (
    advance,
    begin,
    counter,
    default_stream,
    end,
    finish,
    fraction,
    plan,
    reporting,
    showing,
    snapshot,
)
from greed_env.rules import Rules, preset
from greed_env.solver import solve
from greed_env.solver.kernels import newton_sweeps_left


def test_stages_add_up_to_one_monotone_fraction() -> None:
    begin()
    assert fraction() is None
    plan(("a", 1.0), ("b", 3.0))
    assert fraction() == 0.0
    counter()[:] = (5.0, 10.0)
    assert fraction() == pytest.approx(0.125)
    advance()
    assert fraction() == pytest.approx(0.25)
    counter()[:] = (1.0, 3.0)
    assert fraction() == pytest.approx(0.5)
    counter()[:] = (1.0, 30.0)  # a total re-estimated upwards holds the bar
    assert fraction() == pytest.approx(0.5)
    finish()
    assert fraction() == 1.0
    end()
    assert fraction() is None


def test_zilch_sweeps_left_follow_the_quadratic_fall_of_the_changes() -> None:
    # Zilch's duel at target 800 (floor -500) changes by 0.47, 0.36, 7.1e-3, 1.8e-6, 3e-15
    assert newton_sweeps_left(2, 0.361, 0.468, 1e-12, 5) == 3.0  # too early to read: the guess
    assert newton_sweeps_left(3, 7.1e-3, 0.361, 1e-12, 5) == 2.0
    assert newton_sweeps_left(4, 1.84e-6, 7.1e-3, 1e-12, 5) == 1.0
    assert newton_sweeps_left(4, 0.2, 0.25, 1e-12, 5) > 10.0  # slow: the geometric rate


def _solve_watched(rules: Rules, objective: str, **opts: float) -> list[tuple[float, str, float]]:
    """Solve, sampling from another thread every millisecond: (fraction, stage, work done in
    the stage) triples, read together (compiling a kernel happens before its stage counts: it
    delays the bar, never fills it)."""
    samples: list[tuple[float, str, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.001):
            f, stage, work = snapshot()
            if f is not None:
                samples.append((f, stage, work))

    def end_after_reading() -> None:  # the solve's last reading, 1 once finished
        samples.append(snapshot())  # type: ignore[arg-type]
        end()

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        with mock.patch.object(progress, "end", end_after_reading):
            solve(rules, objective, **opts)
    finally:
        stop.set()
        thread.join()
    return samples


@pytest.mark.parametrize(
    ("name", "objective", "target", "opts"),
    [("ten_thousand", "duel", 1000, {}), ("ten_thousand", "race", 10_000, {}), ("zilch", "race", 1000, {}),
     ("progressive", "race", 600, {}), ("progressive", "duel", 1000, {}),
     ("zilch", "duel", 800, {"floor": -500})],
)
def test_the_kernels_count_their_work_to_the_end(name: str, objective: str, target: int, opts: dict) -> None:
    """The counter ends full, the fraction never goes back and ends at 1, and the bar is not
    full long before the work is: at every reading of the last stage, the share of the stage
    the bar shows is at most 1.5 times the share of the stage's final work done, and while it
    shows 95% or more at least half of that work is done (a total underestimated twofold
    breaks both). The last stage of each solve here lasts tens of milliseconds at least, so it
    is read many times; readings are checked against work, never against the clock."""
    rules = preset(name).replace(target=target)
    samples = _solve_watched(rules, objective, **opts)
    done, total = counter()
    assert total > 0 and done == pytest.approx(total)
    fractions = [f for f, _, _ in samples]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    last_stage = next((stage for _, stage, _ in reversed(samples) if stage), "")
    last = [(f, work) for f, stage, work in samples if stage == last_stage and f < 1.0]
    assert len(last) >= 3, samples  # the check below reads the stage, it cannot pass unread
    start = last[0][0]  # the bar where the stage was first read: at or after the stage's start
    for f, work in last:
        assert (f - start) / (1.0 - start) <= 1.5 * work / total + 1e-9, (f, start, work, total)
        if f >= 0.95:
            assert work >= 0.5 * total, (f, work, total, samples)
    for f, stage, _ in samples:
        assert f < 0.95 or f == 1.0 or stage == last_stage, (f, stage, samples)


def test_a_captured_stream_gets_a_line_per_tenth_with_the_time_left() -> None:
    stream = io.StringIO()
    rules = preset("zilch").replace(target=1500)
    solve(rules, "race", progress=stream)
    what = f"solving the race table for zilch ({rules.fingerprint})"
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith(f"{what} (about ") and lines[0].endswith(" ...")
    assert lines[-1].startswith(f"{what}: done in")
    # the lines between, driven stage by stage (rich's refresh never ticks in a minute):
    # twenty equal stages cross each tenth once, and every line after the first known
    # fraction has a time left
    stream = io.StringIO()
    with showing(what, stream, interval=60.0):
        begin()
        plan(*((f"stage {i}", 1.0) for i in range(20)))
        for _ in range(19):
            time.sleep(0.01)
            advance()
        finish()
        end()
    lines = stream.getvalue().splitlines()
    assert lines[0] == f"{what} ..." and lines[-1].startswith(f"{what}: done in ")
    middle = lines[1:-1]
    assert [int(re.search(r" (\d+)% ", ln).group(1)) for ln in middle] == list(range(10, 100, 10)), lines  # type: ignore[union-attr]
    assert all(ln.startswith(f"{what}: ") for ln in middle), lines
    assert all(re.search(r"\d:\d\d:\d\d left \(stage \d+\)$", ln) for ln in middle), lines
    assert "\x1b" not in stream.getvalue()  # no terminal codes in a log


def test_a_terminal_gets_a_bar_redrawn_in_place_and_one_line_at_the_end() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    with showing("solving x", stream, about="about 9 positions", interval=0.01):
        begin()
        plan(("one", 1.0))
        counter()[:] = (1.0, 4.0)
        time.sleep(0.1)
        finish()
        end()
    out = stream.getvalue()
    assert "25%" in out and "about 9 positions" in out and "\x1b[" in out  # drawn by rich, in place
    assert out.rstrip().split("\x1b[2K")[-1].startswith("solving x: done in ")  # the bar erased, then the line


def test_the_cli_reports_on_stderr_and_restores_silence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path))
    assert main(["solve", "--rules", "farkle5", "--set", "target=600", "--objective", "race",
                 "--out", str(tmp_path / "t.npz")]) == 0
    err = capsys.readouterr().err
    assert "solving the race table for farkle5" in err and "done in" in err
    assert default_stream() is None
    with reporting(None):
        solve(preset("farkle5").replace(target=700), "race")
    assert capsys.readouterr().err == ""
