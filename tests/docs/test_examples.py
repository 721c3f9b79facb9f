"""Every example script in examples/ that this file names runs to completion (none goes stale)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

CASES = {
    "step_env_by_hand.py": ("step_env_by_hand.py", []),
    "train_maskable_ppo.py": ("train_maskable_ppo.py", ["--steps", "1024", "--episodes", "20"]),
    "tianshou_dqn.py solitaire": (
        "tianshou_dqn.py",
        ["--env", "solitaire", "--steps", "256", "--eval-episodes", "2"],
    ),
    "tianshou_dqn.py pettingzoo": (
        "tianshou_dqn.py",
        ["--env", "pettingzoo", "--steps", "200", "--eval-episodes", "1"],
    ),
    "torchrl_dqn.py solitaire": (
        "torchrl_dqn.py",
        ["--env", "solitaire", "--steps", "256", "--eval-episodes", "2"],
    ),
    "torchrl_dqn.py pettingzoo": (
        "torchrl_dqn.py",
        ["--env", "pettingzoo", "--steps", "128", "--eval-episodes", "1"],
    ),
}
"""Case id: (script, arguments). The Tianshou and TorchRL examples print how many masked
actions were played, which must be zero."""


@pytest.mark.parametrize("case", sorted(CASES))
def test_example_runs(case: str, run_script: Callable) -> None:  # type: ignore[type-arg]
    script, args = CASES[case]
    proc = run_script(f"examples/{script}", *args)
    assert proc.stdout.strip(), "the example printed nothing"
    if "dqn" in script:
        counts = re.findall(r"masked actions[^:]*: (\d+)", proc.stdout)
        assert counts and all(c == "0" for c in counts), proc.stdout
