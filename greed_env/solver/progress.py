"""A progress line on a stream while a table is solved on first use (``advise``, ``play --hints``).

The solver's kernels report nothing while they run, so the line shows the seconds elapsed and,
where a shipped table of the same preset and objective exists, an estimate scaled from the time
recorded in its metadata by the number of banked-score positions (none for ``turn`` and
``entry``, the target for ``race``, its square for ``duel``). On a terminal the line is
redrawn every second; elsewhere one line is written when solving starts and one when it ends.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import zipfile
from collections.abc import Iterator
from typing import TextIO

from greed_env.rules.config import PRESETS, Rules
from greed_env.solver.table import SolverTable, package_table_dir

__all__ = ["estimate_seconds", "solving"]


def estimate_seconds(rules: Rules, objective: str) -> float | None:
    """Expected solving time from the shipped table of the preset with the same name, or None."""
    base = PRESETS.get(rules.name)
    if base is None:
        return None
    path = package_table_dir() / SolverTable(base, objective, {}).filename()
    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read("meta.json"))
        seconds = float(meta["elapsed_s"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    power = {"race": 1, "duel": 2}.get(objective, 0)
    return seconds * (rules.target / base.target) ** power


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def solving(rules: Rules, objective: str, stream: TextIO) -> Iterator[None]:
    """Report on ``stream`` while the body solves ``objective`` under ``rules``."""
    estimate = estimate_seconds(rules, objective)
    about = f", about {estimate:.0f} s" if estimate is not None else ""
    what = f"solving the {objective} table for {rules.name} ({rules.fingerprint}) on first use"
    t0 = time.perf_counter()
    stop = threading.Event()
    tty = _isatty(stream)

    def tick() -> None:
        while not stop.wait(1.0):
            elapsed = time.perf_counter() - t0
            stream.write(f"\r{what}: {elapsed:.0f} s{about} ")
            stream.flush()

    thread = threading.Thread(target=tick, daemon=True) if tty else None
    if tty:
        stream.write(f"{what}: 0 s{about} ")
        stream.flush()
    else:
        guess = f" (about {estimate:.0f} s)" if estimate is not None else ""
        print(f"{what}{guess} ...", file=stream, flush=True)
    if thread is not None:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join()
        elapsed = time.perf_counter() - t0
        ending = f"{what}: done in {elapsed:.0f} s (written to the cache)"
        if tty:
            stream.write(f"\r{ending}\n")
            stream.flush()
        else:
            print(ending, file=stream, flush=True)
