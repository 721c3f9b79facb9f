"""The bot examples run to completion; the ONNX one with torch blocked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_play_against_bot() -> None:
    proc = _run("play_against_bot.py", "--turns", "8")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "refused" in out, "the scripted human's illegal inputs are answered"
    assert "seat 1:" in out and "after" in out


def test_play_against_a_heuristic_bot_of_another_preset() -> None:
    proc = _run("play_against_bot.py", "--bot", "farkle/threshold-500", "--turns", "4")
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_load_onnx_bot_without_torch() -> None:
    pytest.importorskip("onnxruntime")
    proc = _run("load_onnx_bot_without_torch.py", "--decisions", "6")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "plays " in proc.stdout
    assert "torch imported: False" in proc.stdout
