"""The vector-engine examples run to completion (small sizes), so they cannot go stale."""

from __future__ import annotations

from collections.abc import Callable

import pytest

CASES = {
    "vector_env.py": ["--envs", "256", "--steps", "20", "--train-envs", "16", "--timesteps", "512"],
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_vector_example_runs(script: str, run_script: Callable) -> None:  # type: ignore[type-arg]
    proc = run_script(f"examples/{script}", *CASES[script])
    assert "decisions/s" in proc.stdout and "MaskablePPO" in proc.stdout
