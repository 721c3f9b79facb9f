"""The bot examples run to completion; the ONNX one with torch blocked."""

from __future__ import annotations

from collections.abc import Callable


def test_play_against_bot(run_script: Callable) -> None:  # type: ignore[type-arg]
    proc = run_script("examples/play_against_bot.py", "--turns", "8")
    out = proc.stdout
    assert "refused" in out, "the scripted human's illegal inputs are answered"
    assert "seat 1:" in out and "after" in out


def test_play_against_a_heuristic_bot_of_another_preset(run_script: Callable) -> None:  # type: ignore[type-arg]
    proc = run_script("examples/play_against_bot.py", "--bot", "farkle/threshold-500", "--turns", "4")
    assert "seat 1:" in proc.stdout


def test_load_onnx_bot_without_torch(run_script: Callable) -> None:  # type: ignore[type-arg]
    proc = run_script("examples/load_onnx_bot_without_torch.py", "--decisions", "6")
    assert "plays " in proc.stdout
    assert "torch imported: False" in proc.stdout
