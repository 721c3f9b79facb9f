"""Fixtures shared by the test folders (one per part of the package: rules, solver, envs,
vector, bots, evaluation, train, cli, docs, web, ray_cluster).

A folder with a ``conftest.py`` of its own must sort after ``conftest.py`` (``ray_cluster``,
``web``): ``--doctest-modules`` collects this file as a module too, and a folder conftest
imported before it under the same name makes that collection fail ("import file mismatch").

* ``repo_root``: the checkout's root folder.
* ``run_script``: run a script of the checkout (``examples/``, ``scripts/``) in a fresh
  Python process from the root, and fail with the end of its stderr when it exits non-zero.
* ``random_game``: one seeded game where every seat plays uniformly random legal moves (or the
  bots given): its decision positions and the position it ended in (the random-game loop
  several test files need).

Isolation (the suite runs on pytest-xdist workers, ``-n auto`` in pyproject.toml; ``-n 0`` runs
it in one process):

* tables solved on demand (:func:`greed_env.solver.load_table`) go to a fresh folder of each
  test process (``GREED_ENV_CACHE``), never to the user's cache, so no test depends on what an
  earlier run or another worker left there; subprocesses the tests start inherit it;
* each xdist worker compiles numba kernels into a cache folder of its own
  (``NUMBA_CACHE_DIR``, kept between runs under the temporary directory): two processes
  writing one function's cache index at once can pair an index entry with the other's code.
"""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import sys
import tempfile
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
MAX_WORKERS = 4
"""Most xdist workers ``-n auto`` starts (each holds up to ~2 GB of tables and models)."""

_SAVED_ENV: dict[str, str | None] = {}
_TABLE_CACHE: list[Path] = []


def _set_env(name: str, value: str) -> None:
    _SAVED_ENV.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def pytest_configure(config: pytest.Config) -> None:
    table_cache = Path(tempfile.mkdtemp(prefix="greed_env_tables_"))
    _TABLE_CACHE.append(table_cache)
    _set_env("GREED_ENV_CACHE", str(table_cache))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        numba_cache = Path(tempfile.gettempdir()) / f"greed_env-numba-{getpass.getuser()}" / worker
        numba_cache.mkdir(parents=True, exist_ok=True)
        _set_env("NUMBA_CACHE_DIR", str(numba_cache))
        if "numba" in sys.modules:  # read at import: set the live value too
            sys.modules["numba"].config.CACHE_DIR = str(numba_cache)


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, value in _SAVED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _SAVED_ENV.clear()
    while _TABLE_CACHE:
        shutil.rmtree(_TABLE_CACHE.pop(), ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per CPU this process may use, at most :data:`MAX_WORKERS`."""
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


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
