"""A local Ray cluster for the tests of tests/ray_cluster: a head and one worker node on this host
(127.0.0.1), one CPU and a 150 MB object store each, started once for the module of these tests
(they are one file) as a user starts one (``ray start --head``, ``ray start --address``: ``scripts/local_ray_cluster.py``).

Bounded in time: the nodes must be up within :data:`START_S` seconds, and a watchdog stops the
cluster :data:`SESSION_S` seconds after it started, so a test stuck on a Ray call fails instead
of hanging the suite. Always torn down: the fixture's finalizer ends every process the cluster
started (and only those), whether the tests passed or not.

The test process itself is a driver of the cluster while these tests run (the API tests reuse
the connection and its worker processes), and disconnects after them: a later test in the same
xdist worker starts a Ray of its own (tests/train/test_rllib.py), which a driver still
connected here would refuse; ``RAY_ADDRESS`` points command-line tests'
``--address auto`` at this cluster and not at another Ray of the host. Each node compiles
numba kernels into a cache folder of its own, as each xdist worker does (tests/conftest.py),
kept between runs whichever xdist worker runs these tests (only one does: they are one file).
"""

from __future__ import annotations

import getpass
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_S = 90.0
"""Seconds the nodes have to start."""
SESSION_S = 600.0
"""Seconds after which the watchdog stops the cluster, whatever the tests are doing."""
NODES = 2


def _launcher() -> Any:
    spec = importlib.util.spec_from_file_location("local_ray_cluster", ROOT / "scripts" / "local_ray_cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _node_env(i: int) -> dict[str, str]:
    folder = Path(tempfile.gettempdir()) / f"greed_env-numba-{getpass.getuser()}" / f"ray-node{i}"
    folder.mkdir(parents=True, exist_ok=True)
    return {"NUMBA_CACHE_DIR": str(folder)}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """The running cluster (``.address``, ``.env``); this process is connected to it."""
    import ray

    local = _launcher().LocalRayCluster(
        nodes=NODES, num_cpus=1, object_store_bytes=150_000_000, start_timeout=START_S, node_env=_node_env
    )
    saved = os.environ.get("RAY_ADDRESS")
    watchdog = threading.Timer(SESSION_S, local.stop)
    watchdog.daemon = True
    try:
        local.start()
        watchdog.start()
        os.environ["RAY_ADDRESS"] = local.address
        ray.init(address=local.address, log_to_driver=False, logging_level="WARNING")
        yield local
    finally:
        watchdog.cancel()
        try:
            ray.shutdown()
        finally:
            local.stop()
            if saved is None:
                os.environ.pop("RAY_ADDRESS", None)
            else:
                os.environ["RAY_ADDRESS"] = saved
