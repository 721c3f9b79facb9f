"""Rewrite the generated tables of ``docs/envs.md`` from the code.

Usage::

    python scripts/gen_env_docs.py            # rewrite docs/envs.md in place
    python scripts/gen_env_docs.py --check    # exit 1 if the file is out of date

The tables (catalog sizes, action ids, the observation index table) come from
:func:`greed_env.envs.docs.generated_block`; the benchmark figures in the same file are measured
with ``scripts/bench_envs.py`` and pasted by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from greed_env.envs.docs import render

DOC = Path(__file__).resolve().parents[1] / "docs" / "envs.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the tables of docs/envs.md.")
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    parser.add_argument("path", nargs="?", type=Path, default=DOC, help="the Markdown file")
    args = parser.parse_args(argv)
    text = args.path.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(f"{args.path} is out of date: run python scripts/gen_env_docs.py")
            return 1
        return 0
    if new != text:
        args.path.write_text(new, encoding="utf-8")
        print(f"rewrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
