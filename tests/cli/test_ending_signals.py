"""The three-player solve ends on Ctrl-C and answers a huge target at once; SIGTERM ends a
command with worker processes quietly, status 143, its workers with it.

Each command runs as a process of its own session; SIGINT goes to its process group as a
terminal's Ctrl-C does, SIGTERM to the command alone as ``kill`` does (its workers then lose
the parent they report to).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from greed_env.rules import preset

ROOT = Path(__file__).resolve().parents[2]
BOOT = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from greed_env.cli import run; run(sys.argv[1:])"
)
"""``greed`` with Python's own SIGINT handler, even under a runner started with SIGINT ignored."""

START_TIMEOUT_S = 300.0  # imports of torch and numba on a busy machine


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["GREED_ENV_CACHE"] = str(tmp / "cache")
    return env


def _workers(pid: int) -> list[int]:
    """The pool workers started by process ``pid`` (spawned children, not the resource tracker)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == pid and b"spawn_main" in cmdline:
            out.append(int(stat.parent.name))
    return out


def _running(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _signal_when(
    argv: list[str], tmp: Path, ready: Callable[[subprocess.Popen[bytes], str], bool], sig: int, group: bool
) -> tuple[int, str, float, list[int]]:
    """Run ``greed argv``, send ``sig`` once ``ready(proc, stderr so far)`` holds (to the process
    group when ``group``); return the status, the whole stderr (read until every process holding
    it has ended), the seconds from the signal to the exit, and the workers seen."""
    proc = subprocess.Popen([sys.executable, "-c", BOOT, *argv], cwd=tmp, env=_env(tmp), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    chunks: list[bytes] = []

    def read() -> None:
        assert proc.stderr is not None
        while data := proc.stderr.read1(4096):  # type: ignore[attr-defined]
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    workers: list[int] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready(proc, b"".join(chunks).decode(errors="replace")):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"never ready (status {proc.poll()}):\n{b''.join(chunks).decode()[-3000:]}")
            time.sleep(0.1)
        workers = _workers(proc.pid)
        (os.killpg if group else os.kill)(proc.pid, sig)
        sent = time.monotonic()
        code = proc.wait(60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(30)
    return code, b"".join(chunks).decode(errors="replace"), took, workers


def _quiet_end(code: int, err: str, workers: list[int]) -> None:
    assert code == 128 + signal.SIGTERM, err[-3000:]
    for noise in ("Traceback", "BrokenPipeError", "leaked semaphore", "Exception ignored"):
        assert noise not in err, err[-3000:]
    deadline = time.monotonic() + 20
    while any(_running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(w) for w in workers), "a worker outlived its parent"


def test_a_three_player_solve_ends_on_ctrl_c(tmp_path: Path) -> None:
    argv = ["solve", "--rules", "farkle", "--objective", "3p", "--set", "target=20000", "--out", str(tmp_path / "t.npz")]
    started: list[float] = []

    def solving(proc: subprocess.Popen[bytes], err: str) -> bool:
        if "solving the 3p table" in err and not started:
            started.append(time.monotonic())
        return bool(started) and time.monotonic() - started[0] > 1.0

    code, err, took, _ = _signal_when(argv, tmp_path, solving, signal.SIGINT, group=True)
    assert code == 130, err[-3000:]
    assert err.rstrip().splitlines()[-1].strip() == "interrupted" and "Traceback" not in err
    assert took < 30.0
    assert not (tmp_path / "t.npz").exists()


def test_a_three_player_solve_of_a_huge_target_is_refused_at_once(tmp_path: Path) -> None:
    argv = ["solve", "--rules", "farkle", "--objective", "3p", "--set", "target=1000000000", "--out", str(tmp_path / "t.npz")]
    try:
        done = subprocess.run([sys.executable, "-c", BOOT, *argv], cwd=tmp_path, env=_env(tmp_path),
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the size estimate of a three-player solve did not answer")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "would hold about" in done.stderr


def _workers_busy(proc: subprocess.Popen[bytes], err: str, since: list[float]) -> bool:
    """Two workers running for two seconds: they have results to send when the parent goes."""
    if len(_workers(proc.pid)) < 2:
        return False
    since.append(time.monotonic())
    return time.monotonic() - since[0] > 2.0


def test_sigterm_ends_a_tournament_and_its_workers_quietly(tmp_path: Path) -> None:
    argv = ["tournament", "--rules", "farkle", "--bots", "random,threshold-300,threshold-500", "--games", "2000000",
            "--workers", "2", "--no-progress"]
    since: list[float] = []
    code, err, _, workers = _signal_when(argv, tmp_path, lambda p, e: _workers_busy(p, e, since), signal.SIGTERM, False)
    assert len(workers) == 2
    _quiet_end(code, err, workers)


def test_sigterm_ends_an_export_evaluating_with_workers_quietly(tmp_path: Path) -> None:
    import onnxscript  # noqa: F401  (the export needs it: the dev extra installs it)
    from sb3_contrib import MaskablePPO

    from greed_env.envs.solitaire import SolitaireEnv

    rules = preset("farkle")
    model = MaskablePPO("MlpPolicy", SolitaireEnv(rules, objective="turn"), seed=3, device="cpu", n_steps=32,
                        batch_size=32, policy_kwargs={"net_arch": [16]})
    path = tmp_path / "model.zip"
    model.save(path)
    card = {"rules": rules.to_dict(), "rules_fingerprint": rules.fingerprint, "objective": "turn"}
    (tmp_path / "model.json").write_text(json.dumps(card))
    argv = ["export", str(path), "--out", str(tmp_path / "bots"), "--check-positions", "50", "--evaluate", "2000000",
            "--opponents", "random", "--workers", "2"]
    since: list[float] = []
    code, err, _, workers = _signal_when(argv, tmp_path, lambda p, e: _workers_busy(p, e, since), signal.SIGTERM, False)
    assert len(workers) == 2
    _quiet_end(code, err, workers)
