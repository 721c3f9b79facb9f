"""Where the turn value is printed, it says that the come-in threshold is not applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from greed_env.cli import main


def test_greed_solve_turn_says_the_entry_threshold_is_not_applied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["solve", "--rules", "ten_thousand", "--objective", "turn", "--out", str(tmp_path / "t.npz")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("expected points per turn: 582.31721")
    assert "come-in threshold of 1,000 is not applied" in lines[2] and "--objective entry" in lines[2]
    assert lines[-1] == "582.317213808"
    assert main(["solve", "--rules", "zilch", "--objective", "turn", "--out", str(tmp_path / "z.npz")]) == 0
    assert "come-in threshold" not in capsys.readouterr().out  # zilch has none (its 300 minimum bank applies)


def test_the_docs_say_it_too(repo_root: Path) -> None:
    solver = " ".join((repo_root / "docs" / "solver.md").read_text(encoding="utf-8").split())
    assert "the come-in threshold is not applied" in solver
