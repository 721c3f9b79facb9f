"""The README's main job (`greed demo`) runs end to end at a tiny size."""

from __future__ import annotations

from pathlib import Path

import pytest

from greed_env.cli import main


def test_demo_plays_solves_trains_and_evaluates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's main job on its quick budget: every step runs and prints what it must."""
    rc = main(["demo", "--quick", "--runs-dir", str(tmp_path), "--turns-shown", "3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "quick run" in out and "Training MaskablePPO on greed_env/Solitaire-v0 (1,024 steps)" in out
    assert "turn   1  P" in out and "final scores" in out
    assert "optimal expected points per turn: 582.3" in out
    assert "best probability of coming in within one turn: 32.73%" in out
    assert "fewest expected turns to reach the target from 0: 18.57" in out
    assert "Evaluation against the solver (200 turns each, seeded)" in out
    assert "PPO agent" in out and "optimal bot (solver)" in out
    assert "Whole games against the solver's duel bot (200 games, seats balanced)" in out
    assert "against optimal-duel" in out and "played in Python" in out
    assert list(tmp_path.glob("*/model.zip")), "the trained model was not saved"


def test_the_demo_budget_is_the_main_jobs_unless_quick_or_given() -> None:
    from greed_env.cli import build_parser
    from greed_env.commands.demo_cmd import budget

    def parsed(*argv: str) -> tuple[int, int, int]:
        return budget(build_parser().parse_args(["demo", *argv]))

    assert parsed() == (60_000, 10_000, 20_000)
    assert parsed("--quick") == (1_024, 200, 200)
    assert parsed("--quick", "--steps", "512", "--duel-games", "0") == (512, 200, 0)
    assert parsed("--eval-turns", "300") == (60_000, 300, 20_000)


def test_demo_refuses_unknown_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--rules", "yahtzee"]) == 2
    assert "unknown rules preset 'yahtzee'" in capsys.readouterr().err
