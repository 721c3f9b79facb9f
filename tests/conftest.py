"""Fixtures shared by the test folders (one per part of the package: rules, solver, envs,
vector, bots, evaluation, train, cli, docs).

* ``repo_root``: the checkout's root folder.
* ``run_script``: run a script of the checkout (``examples/``, ``scripts/``) in a fresh
  Python process from the root, and fail with the end of its stderr when it exits non-zero.
* ``random_game``: one seeded game where every seat plays uniformly random legal moves (or the
  bots given): its decision positions and the position it ended in (the random-game loop
  several test files need).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from greed_env.rules import (
    Rules,
    State,
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    sample_roll,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


def _run_script(
    script: str | Path, *args: str, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, f"{script} {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-2000:]}"
    return proc


@pytest.fixture(scope="session")
def run_script() -> Callable[..., subprocess.CompletedProcess[str]]:
    return _run_script


def play_random_game(
    rules: Rules, num_players: int, seed: int, bots: Sequence[Any] | None = None, limit: int = 100_000
) -> tuple[list[State], State]:
    """The decision positions of one game (at most ``limit``) and its last position; dice and
    random choices from ``seed``."""
    rng = np.random.default_rng(seed)
    s = new_game(rules, num_players, first_player=0)
    out: list[State] = []
    while not is_over(s) and len(out) < limit:
        if is_chance(s):
            s = apply_roll(rules, s, sample_roll(rules, s, rng))
            continue
        out.append(s)
        if bots is None:
            moves = legal_moves(rules, s)
            move = moves[int(rng.integers(len(moves)))]
        else:
            move = bots[s.player % len(bots)].act(rules, s, rng)
        s = apply(rules, s, move)
    return out, s


@pytest.fixture(scope="session")
def random_game() -> Callable[..., tuple[list[State], State]]:
    return play_random_game
