"""The ``greed`` command line.

Sub-commands live in ``greed_env.commands.*`` modules; each module exposes
``register(subparsers)`` and imports its heavy dependencies lazily, so ``greed --help``
stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

COMMAND_MODULES = (
    "greed_env.commands.rules_cmd",
    "greed_env.commands.play_cmd",
    "greed_env.commands.solve_cmd",
    "greed_env.commands.train_cmd",
    "greed_env.commands.bots_cmd",
    "greed_env.commands.demo_cmd",
)


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (exit status 2):
    ``greed solve: argument --tol: must be a finite number > 0, got '-1'``; the usage
    stays one ``--help`` away. Sub-command parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"{self.prog}: {text} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="greed",
        description="greed_env: rules, environments, exact solver and bots for the 10,000 dice games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # sub-command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
