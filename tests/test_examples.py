"""Every example script in examples/ that this file names runs to completion (none goes stale)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "step_env_by_hand.py": [],
    "train_maskable_ppo.py": ["--steps", "1024", "--episodes", "20"],
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs(script: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *CASES[script]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), "the example printed nothing"
