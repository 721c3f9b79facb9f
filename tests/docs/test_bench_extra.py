"""The ``bench`` extra installs what ``scripts/`` imports: the speed scripts run with their
PettingZoo baseline (connect_four_v3 needs pygame)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_extra_declares_pygame_and_dev_includes_it() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    bench = re.search(r"^bench = \[(.*?)\]$", text, re.M | re.S)
    dev = re.search(r"^dev = \[(.*?)\n\]", text, re.M | re.S)
    assert bench and '"pygame-ce' in bench.group(1)
    assert dev and re.search(r'"greed-env\[[^"]*\bbench\b', dev.group(1))


def test_bench_vector_runs_with_its_connect_four_baseline(run_script: Callable) -> None:  # type: ignore[type-arg]
    proc = run_script(
        "scripts/bench_vector.py",
        "--repeats", "1", "--decisions", "500", "--baseline-decisions", "200",
        "--batches", "8", "--subproc-envs", "2", "--ppo-steps", "0",
    )
    assert "pettingzoo_connect_four_v3" in proc.stdout


def test_bench_envs_runs_with_its_connect_four_baseline(run_script: Callable) -> None:  # type: ignore[type-arg]
    proc = run_script("scripts/bench_envs.py", "--repeats", "1", "--seconds", "0.2", "--presets", "farkle")
    assert "connect_four_v3" in proc.stdout


def test_bench_speed_prints_every_figure_against_its_reference(run_script: Callable) -> None:  # type: ignore[type-arg]
    """The one entry point of the speed page: every row, each with its reference and ratio (a
    small target for the table: no published reference, the headline instead). The rules
    engine's reference is OpenSpiel's pig where ``open_spiel`` is installed (the suite does not
    install it), the loop's Python Pig floor otherwise."""
    proc = run_script(
        "scripts/bench_speed.py",
        "--repeats", "1", "--games", "2", "--decisions", "20000", "--single-decisions", "300",
        "--set", "target=1000",
    )
    out = proc.stdout
    assert re.search(r"load average [\d.]+ -> [\d.]+", out)
    for name in ("ten_thousand", "progressive"):
        assert re.search(rf"rules engine, {name} .*(OpenSpiel pig|Python Pig floor).* [\d,]+ +[\d.]+x", out), out
    assert re.search(r"single Gymnasium env loop.*connect_four_v3 [\d,]+ steps/CPU-s +[\d.]+x", out), out
    assert re.search(r"two threads \(decisions/s\) +[\d,]+ +one thread, each repeat +[\d.]+", out), out
    assert re.search(r"--rules progressive --objective duel \(wall s\), target=1000 +[\d.]+ +headline 0\.\d+", out), out
