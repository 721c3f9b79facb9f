"""``--debug``: the traceback behind a command's one-line error.

Commands end an error with one line on stderr and status 2. A bot of your own that fails in
play (:class:`~greed_env.bots.errors.BotPlayError`: it raised, or returned no legal move) is
one of those lines too; ``--debug`` prints the traceback first, the bot's own included (from a
worker process, as that process saw it).
"""

from __future__ import annotations

import argparse
import sys
import traceback

__all__ = ["add_debug_flag", "show_traceback"]


def add_debug_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--debug`` to a command that plays bots."""
    parser.add_argument(
        "--debug",
        action="store_true",
        help="when a bot fails (raises, or returns no legal move), print the traceback before the one-line error",
    )


def show_traceback(exc: BaseException, debug: bool) -> None:
    """With ``debug``, print ``exc``'s traceback (and its causes) on stderr."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
