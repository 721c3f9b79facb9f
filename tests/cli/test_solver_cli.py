"""``greed solve`` and ``greed advise``."""

from __future__ import annotations

from pathlib import Path

import pytest

from greed_env.cli import main
from greed_env.solver import SolverTable


def test_solve_writes_the_table_and_ends_with_the_headline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["solve", "--rules", "farkle5", "--set", "target=500", "--set", "entry_threshold=500", "--objective", "race",
               "--out", str(tmp_path)])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    table = SolverTable.load(next(tmp_path.glob("*.npz")))
    assert table.rules.target == 500 and table.objective == "race"
    assert float(lines[-1]) == pytest.approx(table.headline, rel=1e-11)
    assert lines[-1].strip() == lines[-1] and " " not in lines[-1]


def test_solve_refuses_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--rules", "farkle5", "--set", "target=-5", "--objective", "race"]) == 2
    assert "target" in capsys.readouterr().err
    assert main(["solve", "--rules", "farkle", "--set", "piggyback=true", "--objective", "turn"]) == 2
    assert "piggyback" in capsys.readouterr().err


def test_advise_values_every_legal_move(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path))
    assert main(["advise", "--rules", "farkle5", "--objective", "entry", "--roll", "1,1,5,2,3"]) == 0
    head, *lines = capsys.readouterr().out.strip().splitlines()
    assert head.startswith("advise (entry: chance to come in")
    moves = [ln[2:].split()[0] for ln in lines]
    assert sorted(moves) == sorted(["keep:5", "keep:1", "keep:1,5", "keep:1,1", "keep:1,1,5"])
    percents = [float(ln.split()[-3 if ln.endswith("pp") else -2].rstrip("%")) for ln in lines]
    assert percents == sorted(percents, reverse=True), "ranked best first"
    assert lines[0].startswith("* keep:1 ") and lines[0].endswith("best")
    assert all(ln.endswith(" pp") for ln in lines[1:])
    assert main(["advise", "--rules", "farkle5", "--objective", "turn", "--scores", "700,0",
                 "--turn-total", "350", "--dice", "2"]) == 0
    out = capsys.readouterr().out
    assert "bank" in out and "roll" in out


def test_advise_shows_the_progress_of_a_table_it_solves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path))
    argv = ["advise", "--rules", "ten_thousand", "--set", "target=1000", "--objective", "duel", "--scores", "300,0"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    what = "solving the duel table for ten_thousand ("
    assert err.splitlines()[0].startswith(what) and err.splitlines()[0].endswith(") ...")
    assert err.splitlines()[-1].startswith(what) and ": done in " in err.splitlines()[-1]
    assert out.startswith("value at the start of this turn: ") and "solving" not in out
    assert main(argv) == 0  # solved once: the cached table answers quietly
    assert capsys.readouterr().err == ""
