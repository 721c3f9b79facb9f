"""Bots outside Python: ``greed export bundle``, ``greed export conformance`` and ``greed web``.

``greed export bundle`` writes the data a host program needs besides a bot's ``.onnx`` file
(:mod:`greed_env.portable.bundle`); ``greed export conformance`` writes positions of real games
with the observation, legal actions and greedy action a host must reproduce
(:mod:`greed_env.portable.conformance`); ``greed web`` serves the page on which a person plays
any shipped bot in the browser (or writes it as a static site with ``--out``). The two
``export`` forms are read before ``greed export MODEL`` (:func:`route`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from greed_env.bots.errors import BotLoadError
from greed_env.bots.loader import load
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.commands.argtypes import OutputPathError, check_output_file, int_at_least, seed_int
from greed_env.commands.rules_cmd import add_rules_options
from greed_env.portable.bundle import BundleError, write_bundle
from greed_env.portable.conformance import MAX_POSITIONS, conformance_vectors, write_vectors
from greed_env.rules import RulesError
from greed_env.rules.config import rules_from_args

__all__ = ["EXPORT_FORMS", "register", "route"]

EXPORT_FORMS = ("bundle", "conformance")
"""``greed export FORM``: the export sub-commands read before ``greed export MODEL``."""


def route(argv: Sequence[str]) -> list[str]:
    """``export bundle ...`` and ``export conformance ...`` as their own sub-commands."""
    args = list(argv)
    if len(args) >= 2 and args[0] == "export" and args[1] in EXPORT_FORMS:
        return [f"export {args[1]}", *args[2:]]
    return args


def _fail(command: str, message: object) -> int:
    print(f"greed {command}: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


def _bundle(ns: argparse.Namespace) -> int:
    try:
        out = check_output_file(ns.out, "--out", (".json",))
        rules = rules_from_args(ns.rules, ns.set)
        path = write_bundle(rules, out)
    except (OutputPathError, RulesError, BundleError) as exc:
        return _fail("export bundle", exc)
    except OSError as exc:
        return _fail("export bundle", f"cannot write {ns.out!r}: {exc.strerror or exc}")
    print(f"wrote {path} (bundle of {rules.name}, fingerprint {rules.fingerprint})")
    return 0


def _conformance(ns: argparse.Namespace) -> int:
    try:
        out = check_output_file(ns.out, "--out", (".json", ".gz"))
        rules = rules_from_args(ns.rules, ns.set) if ns.rules else None
        bot = load(ns.bot, rules)
        if not isinstance(bot, OnnxBot):
            raise BotLoadError(f"{ns.bot}: conformance vectors are for exported ONNX bots, this is {type(bot).__name__}")
        data = conformance_vectors(bot, ns.positions, ns.seed, rules)
        path = write_vectors(data, out)
    except (OutputPathError, RulesError, BotLoadError, BundleError, ValueError) as exc:
        return _fail("export conformance", exc)
    except OSError as exc:
        return _fail("export conformance", f"cannot write {ns.out!r}: {exc.strerror or exc}")
    print(
        f"wrote {path}: {len(data['positions']):,} positions of {data['games']} games "
        f"({data['rules_name']}, bot {data['bot']['id']}, seed {ns.seed})"
    )
    return 0


def register(subparsers: Any) -> None:
    """Add ``export bundle``, ``export conformance`` and ``web``."""
    b = subparsers.add_parser(
        "export bundle",
        help="write the bot bundle of a rule set: what a host needs besides the .onnx file",
        description="Write the bot bundle of the rules (a preset with --set overrides): the "
        "action catalog, the observation spec, the rules fields of the turn flow and the legal "
        "keeps of every roll, as one JSON file (docs/portable.md describes every key).",
    )
    add_rules_options(b)
    b.add_argument("--out", required=True, metavar="FILE.json", help="the bundle file to write")
    b.set_defaults(func=_bundle)

    c = subparsers.add_parser(
        "export conformance",
        help="write conformance vectors: positions of real games with what a host must compute",
        description="Play seeded games with an exported bot and write N of their decision "
        "positions: the raw state, the observation, the legal actions and the bot's greedy "
        "action (a .gz name is gzipped). A host in another language checks itself against them "
        "(node web/host/cli.mjs conformance FILE).",
    )
    add_rules_options(c, required=False)
    c.set_defaults(rules=None)
    c.add_argument("--bot", required=True, metavar="BOT", help="an exported ONNX bot (registry id or card file)")
    c.add_argument(
        "--positions",
        type=int_at_least(1, MAX_POSITIONS),
        default=10_000,
        metavar="N",
        help="decision positions to write",
    )
    c.add_argument("--seed", type=seed_int, default=0, metavar="S", help="seed of the games")
    c.add_argument("--out", required=True, metavar="FILE", help="the file to write (.json or .json.gz)")
    c.set_defaults(func=_conformance)
