"""``greed bots`` (list and show registered bots), ``greed export`` and ``greed tournament``.

* ``greed bots [--rules NAME] [--wide | --json]``: every registered bot with its kind and
  measured strength (card evaluations, tournament Elo), in at most :data:`WIDTH` columns;
  ``--wide`` adds the descriptions, one line per bot; ``greed bots show ID`` prints one card.
* ``greed export MODEL --out DIR``: an SB3 MaskablePPO ``.zip`` to ``DIR/NAME.onnx`` plus its
  card ``DIR/NAME.json`` (:func:`greed_env.bots.export.export_model`).
* ``greed tournament --rules NAME --bots a,b,c --games N``: round robin with Elo
  (:func:`greed_env.bots.tournament.run_tournament`).

Torch (export) and the solver (optimal bots) are imported when a command needs them.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from greed_env.bots.cards import read_card, summarize_evaluation
from greed_env.bots.errors import BotLoadError
from greed_env.bots.export import export_model
from greed_env.bots.registry import find_card, list_bots
from greed_env.bots.spec import parse_spec
from greed_env.bots.tournament import run_tournament
from greed_env.cluster import ClusterError
from greed_env.commands.argtypes import (
    OutputPathError,
    add_address_option,
    check_output_dir,
    nonneg_int,
    positive_int,
    seed_int,
)
from greed_env.commands.debug import add_debug_flag, show_traceback
from greed_env.commands.rules_cmd import CommandError, add_rules_options
from greed_env.interrupts import deferred
from greed_env.rules.config import RulesError, rules_from_args

__all__ = ["WIDTH", "register"]

WIDTH = 100
"""Columns the default plain listing of ``greed bots`` fits in (``--wide`` lines do not)."""


def _fail(command: str, message: str) -> int:
    print(f"greed {command}: {message}", file=sys.stderr)
    return 2


def _bots(args: argparse.Namespace) -> int:
    if args.action == "show":
        return _show(args)
    if args.id is not None:
        return _fail("bots", f"unexpected argument {args.id!r} (did you mean `greed bots show {args.id}`?)")
    try:
        bots = list_bots(args.rules)
    except BotLoadError as exc:
        return _fail("bots", str(exc))
    if args.json:
        print(json.dumps([b.__dict__ for b in bots], indent=2))
        return 0
    rows = [
        (b.id, b.kind, (f"BROKEN: {b.problem}" if b.problem else b.strength) or "-", b.description)
        for b in bots
    ]
    header = ["id", "kind", "measured strength", "description"]
    if args.wide:
        _table(header, rows, plain=True)
    elif not args.plain and sys.stdout.isatty():
        _table(header, rows, plain=False)
    else:
        for line in _narrow_lines([r[:3] for r in rows], WIDTH):
            print(line)
        print("(descriptions, one line per bot: greed bots --wide; a card: greed bots show ID)")
    return 0


def _narrow_lines(rows: list[tuple[str, ...]], width: int) -> list[str]:
    """``(id, kind, strength)`` rows as plain lines of at most ``width`` columns.

    Each ``;``-separated strength figure starts a line of its own in the last column, wrapped
    between words; when the id and kind leave fewer than 30 columns, the figures go on the
    lines below, indented by four. Columns are counted in UTF-8 bytes (what ``awk length``
    counts in the C locale), so ``±`` counts two. Only an id or kind longer than ``width`` can
    overflow.
    """
    idw = max([len("id"), *(len(r[0]) for r in rows)])
    kindw = max([len("kind"), *(len(r[1]) for r in rows)])
    left = idw + 2 + kindw + 2
    beside = width - left >= 30
    indent = left if beside else 4
    if beside:
        out = [f"{'id'.ljust(idw)}  {'kind'.ljust(kindw)}  measured strength"]
    else:
        out = [f"{'id'.ljust(idw)}  kind", "    measured strength"]
    for bot_id, kind, strength in rows:
        text: list[str] = []
        for part in strength.split("; "):
            text += _wrap_bytes(part, width - indent)
        head = f"{bot_id.ljust(idw)}  {kind.ljust(kindw)}  "
        if beside:
            out.append((head + text[0]).rstrip())
            rest = text[1:]
        else:
            out.append(head.rstrip())
            rest = text
        out += [(" " * indent + t).rstrip() for t in rest]
    return out


def _wrap_bytes(text: str, width: int) -> list[str]:
    """``text`` wrapped between words into lines of at most ``width`` UTF-8 bytes (continuation
    lines indented by two); a single word longer than that stays whole."""
    lines = [text]
    for w in range(width, 10, -1):
        lines = textwrap.wrap(text, w, subsequent_indent="  ", break_long_words=False) or [""]
        if all(len(line.encode()) <= width for line in lines):
            break
    return lines


def _table(
    header: list[str], rows: list[tuple[str, ...]], plain: bool, console: Any = None
) -> None:
    """Rows under ``header``: a rich table on a terminal (or on ``console``), else plain lines.

    In the rich table the first column (ids) never wraps; the other columns wrap between
    words, and ``;``-separated strength figures each start a line.
    """
    if not plain and (console is not None or sys.stdout.isatty()):
        from rich.console import Console
        from rich.table import Table

        table = Table(show_edge=False, pad_edge=False)
        for i, h in enumerate(header):
            if i == 0:
                table.add_column(h, no_wrap=True, min_width=max(len(r[0]) for r in rows) if rows else None)
            elif i == 1:
                table.add_column(h, no_wrap=True)
            else:
                table.add_column(h, overflow="fold", ratio=1)
        for r in rows:
            table.add_row(*r[:2], *(c.replace("; ", "\n") for c in r[2:]))
        (console or Console()).print(table)
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    widths[-1] = 0
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _show(args: argparse.Namespace) -> int:
    if not args.id:
        return _fail("bots", "show needs a bot id, e.g. `greed bots show ten_thousand/optimal-duel`")
    try:
        spec = parse_spec(args.id)
    except BotLoadError as exc:
        return _fail("bots", str(exc))
    rules_name, name = spec.preset, spec.name
    if not rules_name:
        return _fail("bots", f"give a full id <rules>/{name}")
    card = find_card(f"{rules_name}/{name}")
    if card is not None:
        try:
            data: Any = read_card(card)
        except BotLoadError as exc:
            return _fail("bots", str(exc))
        data = {"card_path": str(card), **data}
        print(json.dumps(data, indent=2))
        return 0
    try:
        match = [b for b in list_bots(rules_name) if b.id == f"{rules_name}/{name}"]
    except LookupError as exc:
        return _fail("bots", str(exc))
    if not match:
        return _fail("bots", f"unknown bot {args.id!r}; see `greed bots --rules {rules_name}`")
    print(json.dumps(match[0].__dict__, indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args.rules, args.set) if args.rules else None
        check_output_dir(args.out, "--out")
    except (CommandError, RulesError, OutputPathError) as exc:
        return _fail("export", str(exc))
    opponents = [o.strip() for o in args.opponents.split(",") if o.strip()] if args.opponents else None
    try:
        # deferred: a KeyboardInterrupt raised inside torch's tracer or an extension's import
        # (onnx) can crash the process; Ctrl-C ends the export within seconds all the same
        with deferred():
            res = export_model(
                args.model,
                args.out,
                name=args.name,
                rules=rules,
                description=args.description,
                objective=args.objective,
                check_positions=args.check_positions,
                seed=args.seed,
                evaluate_games=args.evaluate,
                evaluate_opponents=opponents,
                workers=args.workers,
                notes=args.notes,
                log=lambda line: print(f"greed export: {line}", file=sys.stderr, flush=True),
            )
    except (BotLoadError, ValueError, LookupError) as exc:
        return _fail("export", str(exc))
    except ImportError as exc:
        return _fail("export", f"{exc} (export needs pip install 'greed-env[train]')")
    print(f"wrote {res.onnx_path} ({res.onnx_path.stat().st_size:,} bytes) and {res.card_path}")
    print(
        f"check: ONNX greedy actions equal MaskablePPO.predict(deterministic=True) on "
        f"{res.positions - res.mismatches}/{res.positions} random positions "
        f"(max |logit diff| {res.max_abs_logit_diff:.2e})"
    )
    if res.card.get("evaluation"):
        print("evaluation: " + summarize_evaluation(res.card["evaluation"]))
    return 0


def _tournament(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args.rules, args.set)
        if args.out is not None:
            check_output_dir(args.out, "--out")
    except (CommandError, RulesError, OutputPathError) as exc:
        return _fail("tournament", str(exc))
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    try:
        result = run_tournament(
            rules,
            bots,
            args.games,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            anchor=args.anchor,
            trust_code=args.trust_code,
            address=args.address,
        )
    except (BotLoadError, ValueError, LookupError, ClusterError) as exc:
        show_traceback(exc, args.debug)
        return _fail("tournament", str(exc))
    print(result.markdown())
    if args.out is not None:
        try:
            paths = result.write(args.out)
        except OSError as exc:
            return _fail("tournament", f"cannot write to {args.out!r}: {exc.strerror or exc}")
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def register(subparsers: Any) -> None:
    """Add the ``bots``, ``export`` and ``tournament`` sub-commands."""
    b = subparsers.add_parser(
        "bots",
        help="list registered bots with their measured strength",
        description="List the bot registry (heuristics, exact-solver bots, exported policies) "
        f"with their measured strength in {WIDTH} columns (--wide: with descriptions, one line "
        "per bot; --json: every field), or print one bot's card with `greed bots show ID`.",
    )
    b.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    b.add_argument("id", nargs="?", default=None, metavar="ID", help="bot id for `show`")
    b.add_argument("--rules", default=None, metavar="NAME", help="only this preset")
    shape = b.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="every field of every bot, as JSON")
    shape.add_argument(
        "--wide", action="store_true", help="one line per bot with its description (wider than 100 columns)"
    )
    b.add_argument("--plain", action="store_true", help=f"plain text in {WIDTH} columns even on a terminal")
    b.set_defaults(func=_bots)

    e = subparsers.add_parser(
        "export",
        help="export a MaskablePPO model to an ONNX bot with a JSON card",
        description="Export the policy logits of an SB3 MaskablePPO .zip to DIR/NAME.onnx and "
        "write its card DIR/NAME.json (rules, observation-spec and action-catalog versions, "
        "training run, evaluation, sha256). The ONNX bot's greedy masked actions are checked "
        "against MaskablePPO.predict(deterministic=True) on random positions first.",
    )
    e.add_argument("model", metavar="MODEL", help="SB3 MaskablePPO model (.zip)")
    e.add_argument("--out", required=True, metavar="DIR", help="output folder, e.g. agents/ten_thousand")
    e.add_argument("--name", default=None, help="bot name (default ppo-<objective>)")
    e.add_argument("--rules", default=None, metavar="NAME", help="rules preset, if the training card does not say")
    e.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="rules override (repeatable)")
    e.add_argument("--description", default=None, help="one-line description for `greed bots`")
    e.add_argument("--objective", default=None, help="what the policy was trained for (turn, race, duel)")
    e.add_argument("--notes", default=None, help="free text stored in the card")
    e.add_argument("--check-positions", type=positive_int, default=2000, metavar="N", help="positions for the equivalence check")
    e.add_argument("--evaluate", type=nonneg_int, default=0, metavar="GAMES", help="games per opponent to measure and store (0: none)")
    e.add_argument("--opponents", default=None, metavar="A,B", help="evaluation opponents (default random, threshold-300, optimal-duel)")
    e.add_argument("--workers", type=positive_int, default=1, metavar="K", help="processes for the evaluation")
    e.add_argument("--seed", type=seed_int, default=0, metavar="S", help="seed of the check and the evaluation")
    e.set_defaults(func=_export)

    t = subparsers.add_parser(
        "tournament",
        help="round robin between bots: win rates with 95%% CIs and Elo",
        description="Every pair of bots plays GAMES two-player games with alternating seats. "
        "Prints standings (Elo by maximum likelihood, anchored at random = 1000 when present) "
        "and a cross table; --out writes tournament.md, standings.csv and pairs.csv.",
    )
    add_rules_options(t)
    t.add_argument("--bots", required=True, metavar="A,B,C", help="bot specs (registry ids, bare names, files)")
    t.add_argument("--games", type=positive_int, required=True, metavar="N", help="games per pair")
    t.add_argument("--workers", type=positive_int, default=1, metavar="K", help="processes")
    add_address_option(t, "games")
    t.add_argument("--seed", type=seed_int, default=0, metavar="S", help="root seed (results depend only on it)")
    t.add_argument("--out", default=None, metavar="DIR", help="write Markdown and CSV here")
    t.add_argument("--anchor", default=None, metavar="BOT", help="bot fixed at Elo 1000 (default random)")
    t.add_argument(
        "--trust-code",
        action="store_true",
        help="load bots that run code as they load: an SB3 .zip (pickle) or py:MODULE:ATTR; refused without it",
    )
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_debug_flag(t)
    t.set_defaults(func=_tournament)
