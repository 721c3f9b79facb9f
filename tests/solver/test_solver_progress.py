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


def _solve_watched(rules: Rules, objective: str, **opts: float) -> tuple[list[tuple[float, float]], float]:
    """Solve, sampling the fraction every 5 ms: (time, fraction) pairs and the time taken
    (compiling a kernel happens before its stage counts: it delays the bar, never fills it)."""
    samples: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    with watching(lambda f: samples.append((time.perf_counter() - t0, f)), interval=0.005):
        solve(rules, objective, **opts)
    return [(t, f) for t, f in samples if f is not None], time.perf_counter() - t0


@pytest.mark.parametrize(
    ("name", "objective", "target", "opts"),
    [("ten_thousand", "duel", 1000, {}), ("ten_thousand", "race", 1500, {}), ("zilch", "race", 1000, {}),
     ("progressive", "race", 600, {}), ("progressive", "duel", 1000, {}),
     ("zilch", "duel", 800, {"floor": -500})],
)
def test_the_kernels_count_their_work_to_the_end(name: str, objective: str, target: int, opts: dict) -> None:
    rules = preset(name).replace(target=target)
    samples, elapsed = _solve_watched(rules, objective, **opts)
    done, total = counter()
    assert total > 0 and done == pytest.approx(total)
    fractions = [f for _, f in samples]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    if objective == "duel":  # the bar moves with the work: it is not full long before the end
        first_full = min(t for t, f in samples if f >= 0.95)
        assert first_full > 0.5 * elapsed, samples


def test_a_captured_stream_gets_a_line_per_tenth_with_the_time_left() -> None:
    stream = io.StringIO()
    rules = preset("zilch").replace(target=1500)
    solve(rules, "race")  # compile first: the reported run is the kernels' own
    with solving(rules, "race", stream, interval=0.002):
        solve(rules, "race")
    lines = stream.getvalue().splitlines()
    assert lines[0] == f"solving the race table for zilch ({rules.fingerprint}) ..."
    assert lines[-1].startswith(f"solving the race table for zilch ({rules.fingerprint}): done in")
    assert any("%" in ln and "left" in ln for ln in lines[1:-1]), lines


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
