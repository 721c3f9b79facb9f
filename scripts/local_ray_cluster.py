"""A throwaway Ray cluster on this host: a head and worker nodes started as a user starts them.

``ray start --head`` and ``ray start --address`` for each further node, every node with a small
``--num-cpus`` and ``--object-store-memory``, all on the loopback address and in a folder of
their own. Stopping it ends exactly the processes it started (each ``ray start`` runs in a
session of its own, and every Ray process it launches stays in that session), never with
``ray stop``, which would end every Ray cluster of the host.

Run a command on one (its exit status is the command's; the cluster is stopped however it ends):

    python scripts/local_ray_cluster.py --nodes 2 --num-cpus 1 -- \\
        greed benchmark ten_thousand/duel-v1 --bot ten_thousand/ppo-duel --address auto

The command sees ``RAY_ADDRESS``, so ``--address auto`` finds this cluster and not another one
of the host. ``tests/ray_cluster`` and ``scripts/bench_cluster.py`` use :class:`LocalRayCluster`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["LocalRayCluster", "main"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_cli() -> str:
    """The ``ray`` command of this Python's environment."""
    here = Path(sys.executable).parent / "ray"
    return str(here) if here.exists() else "ray"


class LocalRayCluster:
    """``nodes`` Ray nodes on this host (the first the head), each of ``num_cpus`` CPUs and
    an object store of ``object_store_bytes``; a context manager, stopped on exit.

    Attributes:
        address: the head's ``127.0.0.1:PORT``.
        env: the environment the cluster runs in, with ``RAY_ADDRESS`` set: give it to a
            driver process so that ``--address auto`` finds this cluster.

    ``node_env(i)``: variables added to node ``i``'s environment (the tests give each node a
    numba cache folder of its own, as each test process has).
    """

    def __init__(
        self,
        nodes: int = 2,
        num_cpus: int = 1,
        object_store_bytes: int = 200_000_000,
        start_timeout: float = 90.0,
        node_env: Callable[[int], Mapping[str, str]] | None = None,
    ) -> None:
        if nodes < 1 or num_cpus < 1:
            raise ValueError("a cluster needs at least one node of one CPU")
        self.nodes = nodes
        self.num_cpus = num_cpus
        self.object_store_bytes = object_store_bytes
        self.start_timeout = start_timeout
        self.folder = Path(tempfile.mkdtemp(prefix="gr-ray-", dir="/tmp"))  # short: socket paths
        self.address = f"127.0.0.1:{_free_port()}"
        self.client_port = _free_port()
        """The head's Ray Client port: ``ray://127.0.0.1:PORT`` reaches the cluster as from outside."""
        self.env = dict(os.environ, RAY_ADDRESS=self.address, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
        self.sessions: list[int] = []
        self.started_s = 0.0
        self.node_env = node_env

    def _start_node(self, i: int, args: Sequence[str], log: str) -> None:
        common = [
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.num_cpus}",
            f"--object-store-memory={self.object_store_bytes}",
            "--disable-usage-stats",
        ]
        env = dict(self.env, **(self.node_env(i) if self.node_env else {}))
        with open(self.folder / log, "w") as out:
            proc = subprocess.Popen(
                [_ray_cli(), "start", *args, *common], stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )
            self.sessions.append(proc.pid)
            try:
                code = proc.wait(timeout=self.start_timeout)
            except subprocess.TimeoutExpired:
                code = None
        if code != 0:
            text = (self.folder / log).read_text(errors="replace")[-2000:]
            raise RuntimeError(f"`ray start {' '.join(args)}` failed ({code}):\n{text}")

    def start(self) -> LocalRayCluster:
        t0 = time.perf_counter()
        port = self.address.rsplit(":", 1)[1]
        try:
            self._start_node(
                0,
                ["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={self.folder / 'ray'}",
                 f"--ray-client-server-port={self.client_port}"],
                "head.log",
            )
            for i in range(1, self.nodes):
                self._start_node(i, [f"--address={self.address}"], f"worker{i}.log")
        except BaseException:
            self.stop()
            raise
        self.started_s = time.perf_counter() - t0
        return self

    def pids(self) -> list[int]:
        """The live processes of the cluster: those in the sessions of its ``ray start`` calls."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if os.getsid(int(entry.name)) in self.sessions:
                    found.append(int(entry.name))
        return found

    def stop(self, grace: float = 3.0) -> None:
        """End every process the cluster started: SIGTERM, then SIGKILL after ``grace`` s."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.pids()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            end = time.monotonic() + grace
            while time.monotonic() < end and any(_alive(p) for p in pids):
                time.sleep(0.1)
        if not any(_alive(p) for p in self.pids()):  # zombies wait for their parent, not for us
            self.sessions = []
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LocalRayCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, waiting for its parent to read its status, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=2, help="nodes, the head included")
    ap.add_argument("--num-cpus", type=int, default=1, help="CPUs of each node")
    ap.add_argument("--object-store-mb", type=int, default=200, help="object store of each node, MB")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command to run on it (after --)")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("give the command to run after --")
    with LocalRayCluster(args.nodes, args.num_cpus, args.object_store_mb * 1_000_000) as ray_cluster:
        print(f"local Ray cluster at {ray_cluster.address}: {args.nodes} nodes of {args.num_cpus} CPU "
              f"(started in {ray_cluster.started_s:.1f} s)", file=sys.stderr, flush=True)
        return subprocess.run(command, env=ray_cluster.env).returncode


if __name__ == "__main__":
    sys.exit(main())
