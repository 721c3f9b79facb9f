"""Progress of a solve: the kernels' counter, the bar and its time left, the CLI stream."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from greed_env.cli import main
from greed_env.rules import Rules, preset
from greed_env.solver import solve
from greed_env.solver.kernels import newton_sweeps_left
from greed_env.solver.progress import (
    advance,
    bar,
    begin,
    counter,
    default_stream,
    end,
    finish,
    fraction,
    plan,
    reporting,
    solving,
    status,
    watching,
)


def test_bar_shows_the_fraction_and_the_time_left() -> None:
    assert bar(0.25, 10.0, 30.0, width=8) == "[##......]  25%  10 s, about 30 s left"
    assert bar(1.0, 12.0, 0.0, width=4) == "[####] 100%  12 s"
    assert bar(None, 3.4) == "3 s"


def test_stages_add_up_to_one_monotone_fraction() -> None:
    seen: list[float | None] = []
    begin()
    with watching(seen.append, interval=60.0):
        assert fraction() is None
        plan(("a", 1.0), ("b", 3.0))
        counter()[:] = (5.0, 10.0)
        assert fraction() == pytest.approx(0.125)
        advance()
        counter()[:] = (1.0, 3.0)
        assert fraction() == pytest.approx(0.5)
        counter()[:] = (1.0, 30.0)  # a total re-estimated upwards holds the bar
        assert fraction() == pytest.approx(0.5)
        finish()
        end()
        assert fraction() is None
    assert seen == [0.0, 0.25, 1.0]


def test_zilch_sweeps_left_follow_the_quadratic_fall_of_the_changes() -> None:
    # Zilch's duel at target 800 (floor -500) changes by 0.47, 0.36, 7.1e-3, 1.8e-6, 3e-15
    assert newton_sweeps_left(2, 0.361, 0.468, 1e-12, 5) == 3.0  # too early to read: the guess
    assert newton_sweeps_left(3, 7.1e-3, 0.361, 1e-12, 5) == 2.0
    assert newton_sweeps_left(4, 1.84e-6, 7.1e-3, 1e-12, 5) == 1.0
    assert newton_sweeps_left(4, 0.2, 0.25, 1e-12, 5) > 10.0  # slow: the geometric rate


def _solve_watched(rules: Rules, objective: str, **opts: float) -> list[tuple[float, str, float]]:
    """Solve, sampling every millisecond: (fraction, stage, work done in the stage) triples,
    read together under the progress lock (compiling a kernel happens before its stage counts:
    it delays the bar, never fills it)."""
    samples: list[tuple[float, str, float]] = []

    def sample(f: float | None) -> None:
        if f is not None:
            samples.append((f, status(), float(counter()[0])))

    with watching(sample, interval=0.001):
        solve(rules, objective, **opts)
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
    with solving(rules, "race", stream, interval=60.0):
        solve(rules, "race")
    lines = stream.getvalue().splitlines()
    assert lines[0] == f"solving the race table for zilch ({rules.fingerprint}) ..."
    assert lines[-1].startswith(f"solving the race table for zilch ({rules.fingerprint}): done in")
    # the lines between, driven stage by stage (the clock thread never ticks in a minute):
    # twenty equal stages cross each tenth once, and every line after the first known
    # fraction has a time left
    stream = io.StringIO()
    with solving(rules, "race", stream, interval=60.0):
        begin()
        plan(*((f"stage {i}", 1.0) for i in range(20)))
        for _ in range(19):
            time.sleep(0.001)
            advance()
        finish()
        end()
    lines = stream.getvalue().splitlines()
    middle = lines[1:-1]
    assert [int(ln.split("]")[1].split("%")[0]) for ln in middle] == list(range(10, 100, 10)), lines
    assert all("left" in ln for ln in middle), lines


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
