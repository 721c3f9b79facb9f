"""Ctrl-C in every long-running command: status 130, one line ``interrupted``, nothing written.

Each command starts as a process of its own session (a terminal's Ctrl-C reaches the whole
process group: the command and its worker processes) at a size that runs for minutes, and gets
SIGINT as soon as its first line of work appears on stderr (a solve's first progress line, the
plan of ``eval``/``benchmark``/``export``, the first progress bar of ``tournament``/``train``),
never after a fixed sleep. The mechanism (:mod:`greed_env.commands.signals`, and the safe
points of :mod:`greed_env.interrupts`) is tested at the end: deferred regions, and the watcher
that ends a process whose main thread sits in a compiled loop, removing the temporary file of
the write it was making.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from greed_env import interrupts
from greed_env.commands import signals
from greed_env.rules import preset

ROOT = Path(__file__).resolve().parents[2]
BOOT = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from greed_env.cli import run; run(sys.argv[1:])"
)
"""Start ``greed`` (its console script runs :func:`greed_env.cli.run`) with Python's own SIGINT
handler even when the test runner was started with SIGINT ignored (a background job of a
script), as a terminal would start it."""

MARKER_TIMEOUT_S = 300.0  # imports of torch and numba on a busy machine
EXIT_TIMEOUT_S = 60.0  # the watcher ends a stuck process within seconds; this is a backstop


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["GREED_ENV_CACHE"] = str(tmp / "cache")
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def _interrupt(
    argv: list[str], marker: str, tmp: Path, script: str = BOOT, settle: float = 0.0
) -> tuple[int, str, float]:
    """Run ``greed argv`` (or ``script``), SIGINT its process group ``settle`` seconds after the
    line holding ``marker`` has been written whole on stderr; return the exit status, the whole
    stderr and the seconds from SIGINT to exit."""
    proc = subprocess.Popen(
        [sys.executable, "-X", "faulthandler", "-c", script, *argv], cwd=tmp, env=_env(tmp), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, start_new_session=True,
    )
    seen = threading.Event()
    chunks: list[bytes] = []

    def read() -> None:
        assert proc.stderr is not None
        while True:
            data = proc.stderr.read1(4096)  # type: ignore[attr-defined]
            if not data:
                break
            chunks.append(data)
            text = b"".join(chunks)
            at = text.find(marker.encode())
            # the marker's line written whole: a printed line ends with a newline, a tqdm bar with "]"
            if at >= 0 and any(end in text[at:] for end in (b"\n", b"]")):
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + MARKER_TIMEOUT_S
        while not seen.wait(0.05):
            if proc.poll() is not None or time.monotonic() > deadline:
                reader.join(5)
                pytest.fail(f"{marker!r} never appeared (status {proc.poll()}):\n{b''.join(chunks).decode()[-3000:]}")
        time.sleep(settle)
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        code = proc.wait(EXIT_TIMEOUT_S)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(5)
    return code, b"".join(chunks).decode(errors="replace"), took


def _ended_cleanly(code: int, err: str) -> None:
    assert code == 130, err[-3000:]
    assert "Traceback" not in err and "Exception ignored" not in err, err[-3000:]
    last = err.rstrip().splitlines()[-1].split("\r")[-1].strip()
    assert last == "interrupted", err[-3000:]
    assert err.count("interrupted") == 1, err[-3000:]


def _files(folder: Path, inputs: set[Path] = frozenset()) -> list[Path]:  # type: ignore[assignment]
    """Every file under ``folder`` but the inputs: what an interrupted command left behind."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p not in inputs)


def test_solve(tmp_path: Path) -> None:
    argv = ["solve", "--rules", "ten_thousand", "--set", "target=20000", "--objective", "duel",
            "--out", str(tmp_path / "t.npz")]
    code, err, _ = _interrupt(argv, "solving the duel table", tmp_path)
    _ended_cleanly(code, err)  # within EXIT_TIMEOUT_S: the compiled passes (minutes) do not hold it
    assert _files(tmp_path) == []


def test_eval(tmp_path: Path) -> None:
    argv = ["eval", "random", "--episodes", "2000000", "--workers", "1", "--out", str(tmp_path / "report")]
    code, err, _ = _interrupt(argv, "greed eval: random on ten_thousand", tmp_path)
    _ended_cleanly(code, err)
    assert _files(tmp_path) == [] and not (tmp_path / "report").exists()


def test_eval_with_worker_processes(tmp_path: Path) -> None:
    # the workers leave Ctrl-C to the parent: no traceback of theirs, and none left running
    argv = ["eval", "random", "--episodes", "2000000", "--workers", "2"]
    code, err, _ = _interrupt(argv, "greed eval: random on ten_thousand", tmp_path)
    _ended_cleanly(code, err)
    assert "KeyboardInterrupt" not in err
    assert _files(tmp_path) == []


def test_ending_at_once_releases_the_pools_semaphores() -> None:
    """exit_now skips interpreter shutdown; the semaphores of a spawn pool are unlinked anyway, so
    multiprocessing's resource tracker finds none leaked and prints nothing after 'interrupted'."""
    code = textwrap.dedent("""
        import multiprocessing as mp
        from greed_env.commands.signals import exit_now
        if __name__ == "__main__":
            pool = mp.get_context("spawn").Pool(2)
            pool.map(abs, [1, 2])
            print("interrupted", flush=True)
            exit_now(130)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (130, "interrupted\n", "")


def test_benchmark(tmp_path: Path) -> None:
    argv = ["benchmark", "ten_thousand/turn", "--bot", "random", "--out", str(tmp_path / "bench")]
    code, err, _ = _interrupt(argv, "greed benchmark: random on 1 task", tmp_path)
    _ended_cleanly(code, err)
    assert _files(tmp_path) == [] and not (tmp_path / "bench").exists()


def test_tournament(tmp_path: Path) -> None:
    argv = ["tournament", "--rules", "greed", "--bots", "random,threshold", "--games", "2000000",
            "--out", str(tmp_path / "tour")]
    code, err, _ = _interrupt(argv, "0%", tmp_path)
    _ended_cleanly(code, err)
    assert _files(tmp_path) == [] and not (tmp_path / "tour").exists()


def test_train(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    argv = ["train", "ppo_turn", "--entry-starts", "0", "--runs-dir", str(runs), "--run-name", "stopped", "--total-timesteps", "100000000",
            "--vector", "dummy", "--num-envs", "2", "--num-steps", "64", "--minibatch-size", "64",
            "--update-epochs", "1", "--net-width", "16", "--net-depth", "1", "--checkpoint-every", "100000000",
            "--eval-every", "100000000", "--eval-episodes", "5", "--eval-regret-episodes", "0"]  # fmt: skip
    code, err, _ = _interrupt(argv, "0%", tmp_path)
    _ended_cleanly(code, err)
    assert not (runs / "stopped").exists()  # stopped before its first checkpoint: nothing to resume
    assert _files(tmp_path) == []


def test_export(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from greed_env.envs.solitaire import SolitaireEnv

    rules = preset("ten_thousand")
    model = MaskablePPO("MlpPolicy", SolitaireEnv(rules, objective="turn"), seed=3, device="cpu",
                            n_steps=32, batch_size=32, policy_kwargs={"net_arch": [16]})
    path = tmp_path / "model.zip"
    model.save(path)
    card = {"rules": rules.to_dict(), "rules_fingerprint": rules.fingerprint, "obs_spec_version": 1,
            "action_catalog_version": 1, "objective": "turn", "total_timesteps": 0}
    (tmp_path / "model.json").write_text(json.dumps(card))
    argv = ["export", str(path), "--out", str(tmp_path / "bots"), "--check-positions", "300000"]
    code, err, _ = _interrupt(argv, "greed export: ", tmp_path)
    _ended_cleanly(code, err)
    assert _files(tmp_path, {path, tmp_path / "model.json"}) == [] and not (tmp_path / "bots").exists()


# ------------------------------------------------------------------------------------------
# the mechanism


STUCK = textwrap.dedent(
    """
    import math, signal, sys
    from numba import njit
    from greed_env.files import atomic_write_with
    from greed_env.commands.signals import handling

    signal.signal(signal.SIGINT, signal.default_int_handler)

    @njit(nogil=True, cache=False)
    def spin(n):
        s = 0.0
        for i in range(n):
            s += math.sin(i)
        return s

    spin(10)
    def writer(tmp):
        print("writing", file=sys.stderr, flush=True)
        tmp.write_text(str(spin(10**12)))

    try:
        with handling("interrupted", sys.stderr):
            atomic_write_with(sys.argv[1], writer)
    except KeyboardInterrupt:
        print("caught", file=sys.stderr)
        sys.exit(3)
    """
)


def test_the_watcher_ends_a_process_stuck_in_compiled_code(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    # a second after "writing", the main thread is inside the compiled loop (an interrupt that
    # came before it entered would be raised in Python and caught: not what is tested here)
    code, err, _ = _interrupt([str(target)], "writing", tmp_path, script=STUCK, settle=1.0)
    _ended_cleanly(code, err)
    assert "caught" not in err  # the loop never returned: the watcher ended the process
    assert _files(tmp_path) == []  # the temporary file of the write was removed


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the test (the runner may have been started with SIGINT
    ignored), restored afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


PATIENT = {"grace": 600.0, "settle": 600.0}
"""In this process the watcher must never end the test run: it waits far longer than a test."""


def _wait_for(seconds: float) -> None:
    for _ in range(int(seconds / 0.01)):
        time.sleep(0.01)


def test_deferred_regions_raise_at_their_end_under_handling(python_sigint: None) -> None:
    reached = []
    with pytest.raises(KeyboardInterrupt), signals.handling(**PATIENT):
        with interrupts.deferred():
            os.kill(os.getpid(), signal.SIGINT)
            _wait_for(1.0)  # the handler runs in this thread: it records and returns
            reached.append(interrupts.requested())
        reached.append("not reached")  # pragma: no cover
    assert reached == [True]
    assert not interrupts.requested()  # the record ends with its handling block
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_outside_a_deferred_region_the_interrupt_is_raised_at_once(python_sigint: None) -> None:
    with pytest.raises(KeyboardInterrupt), signals.handling(**PATIENT):
        os.kill(os.getpid(), signal.SIGINT)
        _wait_for(5.0)
        pytest.fail("no KeyboardInterrupt")  # pragma: no cover


def test_without_handling_nothing_changes(python_sigint: None) -> None:
    interrupts.check()  # nothing recorded: no exception
    with interrupts.deferred():
        pass
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)  # Python's own handler
        _wait_for(5.0)


def test_handling_leaves_an_ignored_sigint_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals.handling(**PATIENT):
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended and not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_workers_end_when_their_parent_is_killed() -> None:
    """A parent killed by SIGTERM never reaches its ``with pool:`` exit; its workers notice the
    parent is gone and end within seconds instead of playing on at full speed."""
    code = textwrap.dedent("""
        import time
        from greed_env.bots.workers import spawn_pool
        if __name__ == "__main__":
            pool = spawn_pool(2)
            pool.map(abs, [1, 2])
            print(*(p.pid for p in pool._pool), flush=True)
            pool.apply_async(time.sleep, (600,))
            time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env(Path(".")))
    try:
        assert proc.stdout is not None
        workers = [int(w) for w in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(_running(w) for w in workers)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == -signal.SIGTERM
        deadline = time.monotonic() + 20
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_running(w) for w in workers), "a worker outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ending_at_once_leaves_no_replacement_workers() -> None:
    """A pool replaces a worker that ended; the workers exit_now ends must stay ended (a
    replacement started just before the process goes finds its parent gone and prints a
    traceback): after ending them, no child process is running, even a moment later."""
    code = textwrap.dedent("""
        import multiprocessing as mp
        import os
        import time
        from greed_env.commands.signals import _end_children
        if __name__ == "__main__":
            pool = mp.get_context("spawn").Pool(2)
            pool.map(abs, [1, 2])
            _end_children(mp)
            time.sleep(0.5)
            print(len(mp.active_children()), flush=True)
            os._exit(0)  # as exit_now does: the pool's own finalizer is not run
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout.strip()) == (0, "0"), r.stderr
