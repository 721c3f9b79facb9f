"""What every recipe does with its seeds: train them in subprocesses a few at a time, then
print one Markdown row per seed (and write the rows as JSON when asked)."""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from greed_env.files import atomic_write_text

__all__ = ["report", "run_seeds", "split_passthrough", "spread"]


def split_passthrough(argv: list[str] | None) -> tuple[list[str], list[str]]:
    """The script's own arguments and those after ``--`` (passed to ``greed train``)."""
    argv = sys.argv[1:] if argv is None else argv
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1 :]
    return argv, []


def report(heading: str, table_text: str, rows: list[dict[str, Any]], json_path: str | None) -> None:
    """Print the heading and the Markdown table; also write the rows as JSON when asked."""
    print()
    print(heading)
    print()
    print(table_text)
    if json_path:
        atomic_write_text(Path(json_path), json.dumps(rows, indent=1))


def run_seeds(seeds: list[int], jobs: int, run: Callable[[int], tuple[int, float]]) -> int:
    """``run(seed) -> (exit code, wall seconds)`` for every seed, ``jobs`` at once; prints one
    line per seed and returns the first failure's exit code (0 if none)."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {seed: pool.submit(run, seed) for seed in seeds}
        for seed, fut in futures.items():
            rc, wall = fut.result()
            status = "ok" if rc == 0 else f"FAILED (exit {rc}; see the .log beside the run)"
            print(f"seed {seed}: {status}, {wall / 60:.1f} min wall", flush=True)
            if rc != 0:
                return rc
    return 0


def spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.2f}% ± {sd:.2f} (sd), worst {min(values):.2f}%"
