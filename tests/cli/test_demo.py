"""The README's main job (`greed demo`) runs end to end at a tiny size."""

from __future__ import annotations

from pathlib import Path

import pytest

from greed_env.cli import main


def test_demo_plays_solves_trains_and_evaluates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        ["demo", "--steps", "512", "--eval-turns", "200", "--runs-dir", str(tmp_path), "--turns-shown", "3",
         "--duel-games", "400"]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "optimal expected points per turn: 582.3" in out
    assert "PPO agent" in out and "optimal bot (solver)" in out
    assert "against optimal-duel" in out
    assert list(tmp_path.glob("*/model.zip")), "the trained model was not saved"


def test_demo_refuses_unknown_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--rules", "yahtzee"]) == 2
    assert "unknown rules preset 'yahtzee'" in capsys.readouterr().err
