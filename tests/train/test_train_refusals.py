"""A training run refuses, before it trains, what would lose its work at the end or put it
elsewhere: an ``--export`` the install cannot make, an ``--export-dir`` nothing can be written
in, a ``--run-name`` outside ``--runs-dir``; and the ``train`` extra installs the exporter."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from greed_env.cli import main as greed_main
from greed_env.train import settings

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--total-timesteps", "64", "--num-envs", "1", "--num-steps", "64", "--minibatch-size", "64",
        "--eval-every", "1000000", "--eval-episodes", "5", "--final-eval-episodes", "5"]  # fmt: skip


@pytest.mark.parametrize("name", ["../../escape", "a/b", "..", " padded"])
def test_a_run_name_outside_the_runs_folder_is_refused(
    ppo_turn: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    runs = tmp_path / "deep" / "er" / "runs"
    assert greed_main(["train", "ppo_turn", "--runs-dir", str(runs), "--run-name", name, *TINY]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--run-name" in err
    assert [p for p in tmp_path.rglob("*")] == []  # nothing made, inside or outside


def test_export_without_the_exporter_is_refused_before_training(
    ppo_turn: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    found = importlib.util.find_spec

    def without_onnxscript(name: str, *more: Any) -> Any:
        return None if name == "onnxscript" else found(name, *more)

    monkeypatch.setattr(settings.importlib.util, "find_spec", without_onnxscript)
    argv = ["train", "ppo_turn", "--runs-dir", str(tmp_path / "runs"), "--export", "mine",
            "--export-dir", str(tmp_path / "bots"), *TINY]  # fmt: skip
    assert greed_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "onnxscript" in err and "greed-env[train]" in err
    assert not (tmp_path / "runs").exists()


def test_an_export_dir_that_takes_no_file_is_refused_before_training(
    ppo_turn: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "bots"
    blocker.write_text("a file where the bot folder should be")
    argv = ["train", "ppo_turn", "--runs-dir", str(tmp_path / "runs"), "--export", "mine",
            "--export-dir", str(blocker / "sub"), *TINY]  # fmt: skip
    assert greed_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "--export-dir" in err and "is a file, not a folder" in err
    assert not (tmp_path / "runs").exists()


def test_the_train_extra_installs_the_exporter_with_a_bounded_torch() -> None:
    train = re.search(r"^train = \[(.*?)\n\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S)
    assert train
    requirements = re.findall(r'"([^"]+)"', train.group(1))
    names = {re.split(r"[<>=\[ ]", req, maxsplit=1)[0]: req for req in requirements}
    assert set(settings.EXPORTER_MODULES) <= names.keys()
    assert names["torch"] == "torch>=2.8,<2.14"
