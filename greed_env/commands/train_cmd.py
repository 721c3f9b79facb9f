"""``greed train solo|duel|selfplay`` (PPO training), ``greed train rllib`` (Ray RLlib self-play,
:mod:`greed_env.train.rllib_selfplay`), ``greed train soup`` (average the weights of runs fine-tuned
from one model, :mod:`greed_env.train.soup`) and ``greed train recipe NAME`` (the seeds of a
published recipe, :mod:`greed_env.train.recipes`). ``greed eval`` is :mod:`greed_env.commands.eval_cmd`.

The training options are generated from each script's argument dataclass
(:mod:`greed_env.train.solo`, :mod:`~greed_env.train.duel`, :mod:`~greed_env.train.selfplay`,
:mod:`greed_env.train.rllib_selfplay`); rules overrides are ``--set FIELD=VALUE`` as in every command.
torch is imported only when a command runs. User errors (missing or corrupt model file, rules
mismatch, unknown bot, existing run directory) exit with status 2 and a message on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

__all__ = ["register"]

_TRAIN_SCRIPTS = {
    "solo": ("greed_env.train.solo", "Solitaire-v0: one turn or a race to the target"),
    "duel": ("greed_env.train.duel", "Duel-v0: a whole game against an opponent bot"),
    "selfplay": ("greed_env.train.selfplay", "2-8 players against a pool of past snapshots"),
    "rllib": ("greed_env.train.rllib_selfplay", "Ray RLlib self-play, exported to an ONNX bot (the ray extra)"),
}


def _user_errors() -> tuple[type[BaseException], ...]:
    from greed_env.bots.errors import BotLoadError
    from greed_env.rules import IllegalMove, RulesError
    from greed_env.solver.model import SolverError
    from greed_env.solver.table import TableError

    return (BotLoadError, RulesError, IllegalMove, FileNotFoundError, FileExistsError, SolverError, TableError)


def _fail(exc: BaseException, command: str = "eval") -> int:
    text = " ".join(str(exc).split())
    print(f"greed {command}: {text}", file=sys.stderr)
    return 2


def _run_train(ns: argparse.Namespace) -> int:
    from greed_env.train.args import namespace_to

    module = importlib.import_module(_TRAIN_SCRIPTS[ns.script][0])
    try:
        args = namespace_to(module.Args, ns)
        module.main(args)
    except (*_user_errors(), ValueError) as exc:
        return _fail(exc, f"train {ns.script}")
    except SystemExit as exc:
        if isinstance(exc.code, str):  # a script's own check of its flags
            return _fail(Exception(exc.code), f"train {ns.script}")
        raise
    return 0


def _run_recipe(ns: argparse.Namespace) -> int:
    from greed_env.train.recipes import RECIPES

    module = importlib.import_module(RECIPES[ns.recipe][0])
    return int(module.main(list(ns.recipe_args), prog=f"greed train recipe {ns.recipe}"))


def _run_soup(ns: argparse.Namespace) -> int:
    from greed_env.train.soup import run

    try:
        run(ns)
    except (*_user_errors(), ValueError) as exc:
        return _fail(exc, "train soup")
    return 0


def register(subparsers: Any) -> None:
    """Add ``train`` (with ``solo``, ``duel``, ``selfplay``, ``soup``, ``rllib``, ``recipe``) to the CLI."""
    from greed_env.train.args import add_dataclass_arguments

    train = subparsers.add_parser(
        "train",
        help="train a PPO agent (solo, duel, selfplay, rllib), average runs (soup) or run a recipe",
        description="Train MaskablePPO agents; every run writes TensorBoard logs, evaluations "
        "against the exact solver, checkpoints (--resume) and a model with its JSON card.",
    )
    scripts = train.add_subparsers(dest="script", metavar="SCRIPT")
    for name, (module_name, help_text) in _TRAIN_SCRIPTS.items():
        module = importlib.import_module(module_name)
        sub = scripts.add_parser(
            name,
            help=help_text,
            description=module.Args.__doc__,
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        add_dataclass_arguments(sub, module.Args)
        sub.set_defaults(func=_run_train, script=name)
    from greed_env.train import soup

    sub = scripts.add_parser("soup", help="average the weights of runs fine-tuned from one model", description=soup.DESCRIPTION)
    soup.add_arguments(sub)
    sub.set_defaults(func=_run_soup)
    from greed_env.train.recipes import RECIPES

    sub = scripts.add_parser(
        "recipe",
        help="train the seeds of a published recipe (docs/results.md) and print their table",
        description="Run a recipe behind docs/results.md. `greed train recipe NAME --help` lists its "
        "options; arguments after -- go to its greed train runs.",
    )
    names = sub.add_subparsers(dest="recipe", metavar="NAME")
    for name, (_, text) in RECIPES.items():
        one = names.add_parser(name, help=text, add_help=False, prefix_chars="+")  # all to the recipe
        one.add_argument("recipe_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        one.set_defaults(func=_run_recipe)
    sub.set_defaults(func=lambda ns: sub.print_help() or 0)
    train.set_defaults(func=lambda ns: train.print_help() or 0)
