"""``import greed_env.rules`` loads the pure game only, and the Gymnasium ids are registered
whichever of greed_env and Gymnasium is imported first."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_the_rules_load_neither_gymnasium_nor_the_environments() -> None:
    out = _run(
        "import greed_env.rules, sys; "
        "print(sorted(m for m in ('gymnasium', 'greed_env.envs', 'torch', 'numba') if m in sys.modules))"
    )
    assert out == "[]"


@pytest.mark.parametrize(
    "imports",
    ["import greed_env; import gymnasium as gym", "import gymnasium as gym; import greed_env"],
)
def test_the_ids_register_in_either_import_order(imports: str) -> None:
    out = _run(f"{imports}; print(gym.make('greed_env/Duel-v0').reset(seed=1)[0].shape)")
    assert out == "(106,)"


def test_the_parts_import_on_first_use() -> None:
    assert _run("import greed_env; print(len(greed_env.envs.ENV_IDS), greed_env.spaces.OBS_DIM)") == "2 106"
