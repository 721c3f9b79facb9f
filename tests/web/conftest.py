"""The JavaScript host under ``web/host/`` is checked against Python by node scripts in this
folder: ``run_node`` runs one and returns the JSON it prints. A machine without ``node`` fails
these tests with the line that says how to install it (they are never skipped)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
NODE_MISSING = "node is not installed: install Node.js 20 or later (apt-get install nodejs, or https://nodejs.org)"


def _run_node(script: str, *args: str, timeout: float = 120) -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.fail(NODE_MISSING, pytrace=False)
    proc = subprocess.run(
        [node, str(HERE / script), *args], capture_output=True, text=True, timeout=timeout, cwd=HERE
    )
    assert proc.returncode == 0, f"node {script} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def run_node() -> Callable[..., Any]:
    return _run_node
