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
import functools
import http.server
import json
import sys
import tempfile
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from greed_env.bots.errors import BotLoadError
from greed_env.bots.loader import load
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.commands.argtypes import (
    OutputPathError,
    check_output_dir,
    check_output_file,
    int_at_least,
    seed_int,
)
from greed_env.commands.rules_cmd import add_rules_options
from greed_env.portable.bundle import BundleError, write_bundle
from greed_env.portable.conformance import MAX_POSITIONS, conformance_vectors, write_vectors
from greed_env.portable.site import build_site
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


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of the site, with the types module scripts and models need, and no log
    line per request."""

    extensions_map = {  # noqa: RUF012 (the base class's attribute, replaced)
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".onnx": "application/octet-stream",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _site_summary(site: Path) -> str:
    index = json.loads((site / "bots" / "index.json").read_text(encoding="utf-8"))
    bots = sum(len(p["bots"]) for p in index["presets"])
    presets = len(index["presets"])
    text = f"{bots} bot{'s' * (bots != 1)} of {presets} preset{'s' * (presets != 1)}"
    for skipped in index["skipped"]:
        print(f"greed web: left out {skipped['id']}: {skipped['reason']}", file=sys.stderr)
    return text


def _serve(site: Path, host: str, port: int, open_browser: bool) -> None:
    handler = functools.partial(_SiteHandler, directory=str(site))
    with http.server.ThreadingHTTPServer((host, port), handler) as server:
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{server.server_address[1]}/"
        print(f"serving the page at {url} ({_site_summary(site)}); Ctrl-C ends", flush=True)
        if open_browser:
            webbrowser.open(url)
        server.serve_forever()


def _web(ns: argparse.Namespace) -> int:
    presets = [p.strip() for p in ns.presets.split(",") if p.strip()] if ns.presets is not None else None
    if ns.out is not None:
        try:
            out = check_output_dir(ns.out, "--out")
            site = build_site(out, presets)
        except (OutputPathError, BundleError, FileNotFoundError) as exc:
            return _fail("web", exc)
        except OSError as exc:
            return _fail("web", f"cannot write {ns.out!r}: {exc.strerror or exc}")
        print(
            f"wrote {site} ({_site_summary(site)}): host the folder on any static web server, "
            f"e.g. python -m http.server -d {site}"
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="greed-web-") as tmp:
        try:
            site = build_site(tmp, presets)
        except (BundleError, FileNotFoundError) as exc:
            return _fail("web", exc)
        except OSError as exc:
            return _fail("web", f"cannot build the site: {exc.strerror or exc}")
        try:
            _serve(site, ns.host, ns.port, ns.open)
        except OSError as exc:
            return _fail("web", f"cannot serve on {ns.host}:{ns.port}: {exc.strerror or exc}")
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

    w = subparsers.add_parser(
        "web",
        help="play any shipped bot in the browser: serve the page (or write it with --out)",
        description="Build the page on which a person plays a shipped ONNX bot in the browser "
        "(every preset, its bots with their measured strength, seeded dice, the game record to "
        "download) and serve it on HOST:PORT until Ctrl-C; with --out, write it as a static "
        "site that any web server can host, and exit. Everything runs in the browser.",
    )
    w.add_argument("--host", default="127.0.0.1", help="the address to serve on")
    w.add_argument("--port", type=int_at_least(0, 65535), default=8000, help="the port (0: any free port)")
    opening = w.add_mutually_exclusive_group()
    opening.add_argument("--open", dest="open", action="store_true", default=True, help="open the page in a browser (default)")
    opening.add_argument("--no-browser", dest="open", action="store_false", help="only print the page's address")
    w.add_argument("--out", metavar="DIR", help="write the static site into DIR and exit (serves nothing)")
    w.add_argument("--presets", metavar="LIST", help="comma-separated rules presets to offer (default: all)")
    w.set_defaults(func=_web)
