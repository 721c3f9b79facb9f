"""``greed train NAME`` (run the training script ``training/NAME.py``) and ``greed train soup``
(average the weights of runs fine-tuned from one model, :mod:`greed_env.train.soup`).
``greed eval`` is :mod:`greed_env.commands.eval_cmd`.

Every file ``training/NAME.py`` with a dataclass ``Args`` and a ``main(args)`` is a script of
``greed train`` (:mod:`greed_env.train.recipes` finds them; nothing registers them).
``greed train NAME ARGS`` runs the file as ``python training/NAME.py ARGS`` does, so its options
and help are the script's own, and ``greed --help`` runs no script. User errors (missing or
corrupt model file, rules mismatch, unknown bot, existing run directory, a refused setting) exit
with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from greed_env.bots.errors import BotLoadError
from greed_env.rules import IllegalMove, RulesError
from greed_env.train import soup
from greed_env.train.recipes import ScriptError, run_script, script_docstring, script_names
from greed_env.train.soup import run

__all__ = ["register"]


def _user_errors() -> tuple[type[BaseException], ...]:
    from greed_env.solver.model import SolverError
    from greed_env.solver.table import TableError

    return (BotLoadError, RulesError, IllegalMove, FileNotFoundError, FileExistsError, SolverError, TableError)


def _fail(exc: BaseException, command: str) -> int:
    text = " ".join(str(exc).split())
    print(f"greed {command}: {text}", file=sys.stderr)
    return 2


def _run_script(ns: argparse.Namespace) -> int:
    """Run the script with its own options ``ns.script_args`` (:func:`run_script`)."""

    command = f"train {ns.script}"
    try:
        run_script(ns.script, ns.script_args)
    except ModuleNotFoundError as exc:  # the train extra is missing
        return _fail(Exception(f"{exc} (training needs pip install 'greed-env[train]')"), command)
    except (*_user_errors(), ValueError, LookupError) as exc:
        return _fail(exc, command)
    return 0


def script_examples() -> dict[str, str]:
    """``{"train NAME": example}`` for every training script: the first line of its docstring
    that runs it with ``greed train NAME``, else ``greed train NAME``."""

    out: dict[str, str] = {}
    try:
        names = script_names()
    except ScriptError:  # an install without the scripts: no train NAME sub-commands
        return out
    for name in names:
        lines = [line.strip() for line in script_docstring(name).splitlines()]
        example = next((line for line in lines if line.startswith(f"greed train {name} ")), f"greed train {name}")
        out[f"train {name}"] = example.split("  #")[0].rstrip(" \\")
    return out


def _run_soup(ns: argparse.Namespace) -> int:
    try:
        run(ns)
    except (*_user_errors(), ValueError) as exc:
        return _fail(exc, "train soup")
    return 0


def register(subparsers: Any) -> None:
    """Add ``train`` (one sub-command per training script, and ``soup``) to the CLI."""

    train = subparsers.add_parser(
        "train",
        help="run a training script (training/NAME.py) or average runs (soup)",
        description="Run a training script: one readable file per recipe in training/ (MaskablePPO "
        "or RLlib), each writing a run folder with TensorBoard logs, evaluations against the exact "
        "solver, checkpoints (--resume) and a model with its JSON card. `greed train NAME --help` "
        "lists a script's options.",
    )
    scripts = train.add_subparsers(dest="script", metavar="SCRIPT")
    try:
        names = script_names()
    except ScriptError:
        names = []
    for name in names:
        doc = script_docstring(name)
        sub = scripts.add_parser(
            name,
            help=doc.split("\n\n")[0].replace("\n", " "),
            description=doc,
            add_help=False,  # every option, --help included, goes to the script's own parser
            prefix_chars="+",
        )
        sub.add_argument("script_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        sub.set_defaults(func=_run_script, script=name)

    sub = scripts.add_parser("soup", help="average the weights of runs fine-tuned from one model", description=soup.DESCRIPTION)
    soup.add_arguments(sub)
    sub.set_defaults(func=_run_soup)
    train.set_defaults(func=lambda ns: train.print_help() or 0)
