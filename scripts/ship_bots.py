"""Copy the bots of ``agents/`` (the source) into the package data ``greed_env/data/bots/``.

``agents/`` is where exports, ladders and round robins are written and reviewed; the package
ships the files of it the registry reads (cards, ONNX policies, ladders, ratings:
:data:`greed_env.bots.registry.SHIPPED_PATTERNS`), so that an installed greed_env plays the
same bots. Run this after adding or changing a bot in ``agents/``; ``--check`` changes nothing
and lists the differences (a test runs it).

Usage::

    python scripts/ship_bots.py            # make greed_env/data/bots/ a copy of agents/
    python scripts/ship_bots.py --check    # exit 1 listing what differs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from greed_env.bots.registry import shipped_files
from greed_env.files import atomic_write_bytes

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "agents"
SHIPPED = ROOT / "greed_env" / "data" / "bots"


def differences(source: Path = SOURCE, shipped: Path = SHIPPED) -> list[str]:
    """One line per file that differs: missing from the package, different, or shipped without
    a source in ``agents/``; empty when the package data is the copy it should be."""
    want = set(shipped_files(source))
    have = set(shipped_files(shipped)) if shipped.is_dir() else set()
    out = [f"{rel}: in agents/, not shipped" for rel in sorted(want - have)]
    out += [f"{rel}: shipped, not in agents/" for rel in sorted(have - want)]
    out += [
        f"{rel}: differs from agents/"
        for rel in sorted(want & have)
        if (source / rel).read_bytes() != (shipped / rel).read_bytes()
    ]
    return out


def ship(source: Path = SOURCE, shipped: Path = SHIPPED) -> list[str]:
    """Make ``shipped`` a copy of the registry's files of ``source``; returns what changed."""
    changed = differences(source, shipped)
    want = set(shipped_files(source))
    for rel in want:
        data = (source / rel).read_bytes()
        target = shipped / rel
        if not target.is_file() or target.read_bytes() != data:
            atomic_write_bytes(target, data)
    for rel in set(shipped_files(shipped)) - want:
        (shipped / rel).unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 listing what differs")
    args = parser.parse_args(argv)
    if args.check:
        found = differences()
        for line in found:
            print(line, file=sys.stderr)
        return 1 if found else 0
    for line in ship():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
