"""The ``greed`` command line.

Sub-commands live in ``greed_env.commands.*`` modules; each module exposes
``register(subparsers)`` and imports its heavy dependencies lazily, so ``greed --help``
stays fast. Every sub-command's help is formatted here: wrapped paragraphs with reST markup
removed, defaults shown once (where the help text does not state its own), and an example
from :data:`EXAMPLES`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from greed_env import __version__
from greed_env.commands import (
    benchmark_cmd,
    bots_cmd,
    demo_cmd,
    eval_cmd,
    play_cmd,
    portable_cmd,
    rules_cmd,
    solve_cmd,
    train_cmd,
)
from greed_env.commands.signals import EXIT_STATUS, acknowledge, exit_now, handling, report
from greed_env.progress import reporting

COMMAND_MODULES = (
    rules_cmd,
    play_cmd,
    solve_cmd,
    train_cmd,
    eval_cmd,
    bots_cmd,
    portable_cmd,
    demo_cmd,
    benchmark_cmd,
)
"""Each command module adds its sub-commands with ``register(subparsers)``."""


EXAMPLES: dict[str, str] = {
    "rules": "greed rules progressive",
    "score": "greed score --rules progressive 6 6 6 1 2 3 4 5",
    "play": "greed play --rules ten_thousand --players human,threshold:400 --seed 1",
    "replay": "greed replay game.json --save-gif game.gif",
    "solve": "greed solve --rules ten_thousand --objective turn",
    "advise": "greed advise --rules ten_thousand --objective turn --turn-total 350 --roll 1,5,5,2,3,4",
    "train": "greed train ppo_turn --rules farkle --total-timesteps 200000",
    "train soup": "greed train soup runs/a runs/b --out runs/soup",
    **train_cmd.script_examples(),  # "train NAME": each training script's own example
    "eval": "greed eval optimal-turn --rules farkle --set min_bank=350 --episodes 5000",
    "bots": "greed bots --rules ten_thousand",
    "export": "greed export runs/solo/model.zip --name my-bot --out bots/",
    "export bundle": "greed export bundle --rules progressive --out progressive.bundle.json",
    "export conformance": "greed export conformance --bot progressive/ppo-duel-kick --positions 10000 --out progressive.vectors.json.gz",
    "web": "greed web --port 8000",
    "tournament": "greed tournament --rules ten_thousand --bots random,threshold-300,optimal-turn --games 2000",
    "demo": "greed demo --steps 20000",
    "benchmark": "greed benchmark ten_thousand/turn ten_thousand/ffa4 --bot ten_thousand/ppo-turn",
}
"""One example command line per sub-command (``train`` scripts included), shown in its help;
a test parses each one."""

_REST_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_REST_LITERAL = re.compile(r"``([^`]+)``")
_LIST_ITEM = re.compile(r"\n(?=\s*(?:\d+\.|[-*])\s)")
_ITEM_LEAD = re.compile(r"\s*(?:\d+\.|[-*])\s+")


def plain_text(text: str) -> str:
    """``text`` without reST inline markup: ``x`` and :role:`x` become x."""
    return _REST_LITERAL.sub(r"\1", _REST_ROLE.sub(r"\1", text))


class HelpFormatter(argparse.HelpFormatter):
    """Wraps description paragraphs and list items, keeps indented blocks (examples) as they
    are, drops reST markup, and shows an option's default once: only where its help text does
    not already say what the default is, and never a default of None or False."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for para in re.split(r"\n\s*\n", plain_text(text).strip("\n")):
            lines = para.splitlines()
            verbatim = [line for line in lines[1:] if line.startswith("  ")]
            if lines and len(verbatim) == len(lines) - 1 and (
                lines[0].startswith("  ") or lines[0].endswith(":")
            ):
                blocks.append("\n".join(indent + line for line in lines))
                continue
            items = []
            for item in _LIST_ITEM.split(para):
                lead_match = _ITEM_LEAD.match(item)
                lead = lead_match.group(0).strip() + " " if lead_match else ""
                body = " ".join(item[lead_match.end() if lead_match else 0 :].split())
                items.append(
                    textwrap.fill(
                        body,
                        width,
                        initial_indent=indent + lead,
                        subsequent_indent=indent + " " * len(lead),
                    )
                )
            blocks.append("\n".join(items))
        return "\n\n".join(blocks)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = plain_text(action.help or "")
        if (
            "default" in text.lower()
            or not action.option_strings
            or action.default is None
            or action.default is False
            or action.default == argparse.SUPPRESS
            or isinstance(action, argparse._HelpAction | argparse._VersionAction)
        ):
            return text
        return text + " (default: %(default)s)"


def _subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(name, parser)`` of every sub-command, nested ones named ``"train solo"``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix}{name}"
                yield full, sub
                yield from _subparsers(sub, full + " ")


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (exit status 2):
    ``greed solve: argument --tol: must be a finite number > 0, got '-1'``; the usage
    stays one ``--help`` away. Sub-command parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(2, f"{self.prog}: {text} (see `{self.prog} --help`)\n")


class GreedParser(OneLineParser):
    """The top-level parser: ``greed export bundle`` and ``greed export conformance`` are read
    as sub-commands of their own before ``greed export MODEL``
    (:func:`greed_env.commands.portable_cmd.route`)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        routed = portable_cmd.route(sys.argv[1:] if args is None else args)
        return super().parse_known_args(routed, namespace)


def build_parser() -> argparse.ArgumentParser:
    parser = GreedParser(
        prog="greed",
        description="greed_env: rules, environments, exact solver and bots for the 10,000 dice "
        "games. Run `greed COMMAND --help` for a command's options and an example.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"greed {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    for name, child in _subparsers(parser):
        child.formatter_class = HelpFormatter
        example = EXAMPLES.get(name)
        if example:
            child.epilog = f"example:\n  {example}"
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    # Ctrl-C: one line and status 130, even inside a compiled solve (the watcher of
    # greed_env.commands.signals ends a process whose main thread cannot take it)
    try:
        with handling("interrupted", sys.stderr), reporting(sys.stderr):
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        acknowledge()
        report("interrupted", sys.stderr)
        return EXIT_STATUS
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def run(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``greed`` executable: :func:`main`, then exit with its status.

    After Ctrl-C (status 130) the process ends at once, once the command has cleaned up and
    its line is written: interpreter shutdown would tear down whatever the interrupt cut short
    (an ONNX export inside torch's tracer ended in a segmentation fault there).
    """
    code = main(argv)
    if code == EXIT_STATUS:
        exit_now(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
