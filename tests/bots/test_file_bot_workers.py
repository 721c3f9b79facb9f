"""A bot of a ``py:path/to/file.py:ATTR`` spec plays in worker processes: the workers import the
file under the module name the parent gave it (greed_env.bots.workers, greed_env.bots.loader).
Before, they failed to unpickle its class and the pool restarted them for ever."""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from greed_env.bots import load
from greed_env.bots.loader import file_modules
from greed_env.bots.workers import spawn_pool

ROOT = Path(__file__).resolve().parents[2]

BOT_FILE = textwrap.dedent("""
    from greed_env.bots.base import ThresholdBot


    class Cautious(ThresholdBot):
        def __init__(self):
            super().__init__(bank_at=350, name="cautious")

        def __repr__(self):
            return "Cautious from a file"
""")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_a_pool_worker_unpickles_a_file_bot(tmp_path: Path) -> None:
    path = tmp_path / "my_bot.py"
    path.write_text(BOT_FILE)
    bot = load(f"py:{path}:Cautious")
    assert str(path.resolve()) in file_modules().values()
    with spawn_pool(1) as pool:
        try:
            shown = pool.map_async(repr, [bot]).get(timeout=120)
        except mp.TimeoutError:
            raise AssertionError("the worker could not unpickle the bot of a .py file") from None
    assert shown == ["Cautious from a file"]


def test_greed_eval_of_a_file_bot_with_two_workers(tmp_path: Path) -> None:
    (tmp_path / "my_bot.py").write_text(BOT_FILE)
    argv = ["eval", "py:./my_bot.py:Cautious", "--rules", "farkle", "--workers", "2", "--episodes", "400",
            "--regret-episodes", "0", "--trust-code", "--no-progress"]
    code = "import sys; from greed_env.cli import run; run(sys.argv[1:])"
    try:
        done = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path, env=_env(), capture_output=True,
                              text=True, timeout=300)
    except subprocess.TimeoutExpired:
        raise AssertionError("greed eval of a .py bot with --workers 2 did not finish") from None
    assert done.returncode == 0, done.stderr[-2000:]
    assert "points per turn" in done.stdout
    assert "ModuleNotFoundError" not in done.stderr
