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
