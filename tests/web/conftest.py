"""The JavaScript host under ``web/host/`` is checked against Python by node scripts in this
folder: ``run_node`` runs one and returns the JSON it prints; ``host_cli`` runs the host's own
command line (``web/host/cli.mjs``); ``bundle_file`` writes the bundle of some rules once per
session. A machine without ``node`` fails these tests with the line that says how to install
it (they are never skipped)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from greed_env.portable.bundle import write_bundle
from greed_env.rules import Rules, resolve_rules

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HOST_CLI = ROOT / "web" / "host" / "cli.mjs"
NODE_MISSING = "node is not installed: install Node.js 20 or later (apt-get install nodejs, or https://nodejs.org)"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(NODE_MISSING, pytrace=False)
    return node


def _run_node(script: str, *args: str, timeout: float = 120) -> Any:
    node = _node()
    proc = subprocess.run(
        [node, str(HERE / script), *args], capture_output=True, text=True, timeout=timeout, cwd=HERE
    )
    assert proc.returncode == 0, f"node {script} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def node() -> str:
    """The path of ``node`` (a missing node fails the test with the line that says how to
    install it)."""
    return _node()


@pytest.fixture(scope="session")
def run_node() -> Callable[..., Any]:
    return _run_node


def _host_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_node(), str(HOST_CLI), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


@pytest.fixture(scope="session")
def host_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``host_cli(*args)``: ``node web/host/cli.mjs ARGS`` run from the repository root; the
    completed process (its exit status is the caller's to check)."""
    return _host_cli


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (POSIX; elsewhere no lock, and a bundle may be
    written twice)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def bundle_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Rules | str], Path]:
    """``bundle_file(rules)``: the path of the bundle of ``rules`` (a preset name or Rules),
    written by Python the first time any xdist worker of the run asks for it (Progressive's
    takes ~10 s), into a folder the workers share."""
    run = tmp_path_factory.getbasetemp()  # under xdist, one folder per worker in the run's
    folder = (run.parent if os.environ.get("PYTEST_XDIST_WORKER") else run) / "host-bundles"
    folder.mkdir(exist_ok=True)

    def bundle(rules: Rules | str) -> Path:
        resolved = resolve_rules(rules)
        path = folder / f"{resolved.name}-{resolved.fingerprint}.bundle.json"
        with _locked(path.with_suffix(".lock")):
            if not path.is_file():
                write_bundle(resolved, path)
        return path

    return bundle
