"""``greed train NAME`` (run the training script ``training/NAME.py``) and ``greed train soup``
(average the weights of runs fine-tuned from one model, :mod:`greed_env.train.soup`).
``greed eval`` is :mod:`greed_env.commands.eval_cmd`.

Every file ``training/NAME.py`` with a dataclass ``Args`` and a ``main(args)`` is a script of
``greed train`` (:mod:`greed_env.train.scripts` finds them; nothing registers them); its options
are generated from ``Args`` when it runs, so ``greed --help`` imports no script. The old names
``solo``, ``duel``, ``selfplay`` and ``rllib`` are aliases of ``ppo_turn``, ``ppo_duel``,
``ppo_selfplay`` and ``rllib_selfplay``. User errors (missing or corrupt model file, rules
mismatch, unknown bot, existing run directory, a refused setting) exit with status 2 and one line
on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["register"]

SCRIPT_ALIASES = {"solo": "ppo_turn", "duel": "ppo_duel", "selfplay": "ppo_selfplay", "rllib": "rllib_selfplay"}
"""Old ``greed train`` names, kept as aliases of the scripts that replaced them."""


def _user_errors() -> tuple[type[BaseException], ...]:
    from greed_env.bots.errors import BotLoadError
    from greed_env.rules import IllegalMove, RulesError
    from greed_env.solver.model import SolverError
    from greed_env.solver.table import TableError

    return (BotLoadError, RulesError, IllegalMove, FileNotFoundError, FileExistsError, SolverError, TableError)


def _fail(exc: BaseException, command: str) -> int:
    text = " ".join(str(exc).split())
    print(f"greed {command}: {text}", file=sys.stderr)
    return 2


def _run_script(ns: argparse.Namespace) -> int:
    """Parse the script's own options from ``ns.script_args`` and run its ``main``."""
    from greed_env.train.args import add_dataclass_arguments, namespace_to
    from greed_env.train.scripts import load_script

    command = f"train {ns.script}"
    try:
        module = load_script(ns.script)
    except ImportError as exc:  # the train extra is missing
        return _fail(Exception(f"{exc} (training needs pip install 'greed-env[train]')"), command)
    stub: argparse.ArgumentParser = ns.stub
    parser = type(stub)(
        prog=stub.prog, description=module.__doc__, epilog=stub.epilog, formatter_class=stub.formatter_class
    )
    add_dataclass_arguments(parser, module.Args)
    args = namespace_to(module.Args, parser.parse_args(ns.script_args))
    try:
        module.main(args)
    except (*_user_errors(), ValueError, LookupError) as exc:
        return _fail(exc, command)
    return 0


def script_examples() -> dict[str, str]:
    """``{"train NAME": example}`` for every training script (and alias): the first line of its
    docstring that runs it with ``greed train NAME``, else ``greed train NAME``."""
    from greed_env.train.scripts import ScriptError, script_docstring, script_names

    out: dict[str, str] = {}
    try:
        names = script_names()
    except ScriptError:  # an install without the scripts: no train NAME sub-commands
        return out
    for name in names:
        lines = [line.strip() for line in script_docstring(name).splitlines()]
        example = next((line for line in lines if line.startswith(f"greed train {name} ")), f"greed train {name}")
        out[f"train {name}"] = example.split("  #")[0].rstrip(" \\")
    for alias, name in SCRIPT_ALIASES.items():
        if f"train {name}" in out:
            out[f"train {alias}"] = out[f"train {name}"]
    return out


def _run_soup(ns: argparse.Namespace) -> int:
    from greed_env.train.soup import run

    try:
        run(ns)
    except (*_user_errors(), ValueError) as exc:
        return _fail(exc, "train soup")
    return 0


def register(subparsers: Any) -> None:
    """Add ``train`` (one sub-command per training script, and ``soup``) to the CLI."""
    from greed_env.train import soup
    from greed_env.train.scripts import ScriptError, script_docstring, script_names

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
    aliases: dict[str, list[str]] = {}
    for alias, name in SCRIPT_ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    for name in names:
        doc = script_docstring(name)
        sub = scripts.add_parser(
            name,
            aliases=aliases.get(name, []),
            help=doc.split("\n\n")[0].replace("\n", " "),
            description=doc,
            add_help=False,  # every option, --help included, goes to the script's own parser
            prefix_chars="+",
        )
        sub.add_argument("script_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        sub.set_defaults(func=_run_script, script=name, stub=sub)

    sub = scripts.add_parser("soup", help="average the weights of runs fine-tuned from one model", description=soup.DESCRIPTION)
    soup.add_arguments(sub)
    sub.set_defaults(func=_run_soup)
    train.set_defaults(func=lambda ns: train.print_help() or 0)
