"""Progress of a solve: the kernels' counter, the bar and its time left, the CLI stream."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from greed_env.cli import main
from greed_env.rules import preset
from greed_env.solver import solve
from greed_env.solver.progress import bar, counter, default_stream, reporting, solving


def test_bar_shows_the_fraction_and_the_time_left() -> None:
    assert bar(1.0, 4.0, 10.0, width=8) == "[##......]  25%  10 s, about 30 s left"
    assert bar(4.0, 4.0, 12.0, width=4) == "[####] 100%  12 s"
    assert bar(0.0, 0.0, 3.4) == "3 s"


@pytest.mark.parametrize(
    ("name", "objective", "target"),
    [("ten_thousand", "duel", 1000), ("ten_thousand", "race", 1500), ("zilch", "race", 1000),
     ("progressive", "race", 600), ("progressive", "duel", 400)],
)
def test_the_kernels_count_their_work_to_the_end(name: str, objective: str, target: int) -> None:
    counter()[:] = 0.0
    solve(preset(name).replace(target=target), objective)
    done, total = counter()
    assert total > 0 and done == pytest.approx(total)


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
