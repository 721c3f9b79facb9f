"""The vector-engine examples run to completion (small sizes), so they cannot go stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "vector_env.py": ["--envs", "256", "--steps", "20", "--train-envs", "16", "--timesteps", "512"],
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_vector_example_runs(script: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *CASES[script]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "decisions/s" in proc.stdout and "MaskablePPO" in proc.stdout
