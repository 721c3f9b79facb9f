"""Command-line parsing from a training script's argument dataclass, checks, and run names.

:func:`build_parser` turns the fields of a dataclass into ``--kebab-case`` options: the help
text of each option is the docstring written under the field (as tyro and CleanRL do), the
default is the field default, ``bool`` fields become ``--flag / --no-flag`` and ``Literal``
fields become choices. No third-party parser is needed.

>>> from dataclasses import dataclass
>>> @dataclass
... class Demo:
...     seed: int = 1
...     '''seed of the experiment'''
...     fast: bool = False
...     '''run the fast way'''
>>> parse_args(Demo, ["--seed", "7", "--fast"])
Demo(seed=7, fast=True)
>>> run_name("ten_thousand", "turn", "ppo", 3, start_time=1700000000)
'ten_thousand__turn__ppo__3__1700000000'
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib.util
import inspect
import itertools
import math
import textwrap
import time
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from greed_env.files import folder_problem, name_problem
from greed_env.rules.config import rules_from_args

__all__ = [
    "EXPORTER_MODULES",
    "add_dataclass_arguments",
    "build_parser",
    "check_args",
    "field_docs",
    "namespace_to",
    "parse_args",
    "rules_from_args",
    "run_name",
]

T = TypeVar("T")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of ``cls`` (empty when the source is unavailable)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        tree = ast.parse(source)
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, nxt in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(tp) if a is not type(None)]
        if len(inner) == 1 and len(get_args(tp)) == 2:
            return inner[0], True
    return tp, False


def add_dataclass_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add one ``--option`` per field of the dataclass ``cls`` to ``parser``."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        flag = f.metadata.get("flag", "--" + f.name.replace("_", "-"))
        if "replaces" in f.metadata:
            parser.add_argument(
                f.metadata["replaces"], action=_replaced_by(flag), nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS
            )
        tp, optional = _unwrap_optional(hints[f.name])
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        help_text = docs.get(f.name, "")
        if tp is bool:
            parser.add_argument(
                flag, dest=f.name, action=argparse.BooleanOptionalAction, default=default, help=help_text
            )
        elif get_origin(tp) is Literal:
            choices = list(get_args(tp))
            parser.add_argument(
                flag, dest=f.name, type=type(choices[0]), choices=choices, default=default, help=help_text
            )
        elif get_origin(tp) is list and get_args(tp) == (str,):
            metavar = f.metadata.get("metavar", "STR")
            parser.add_argument(flag, dest=f.name, action="append", default=default, metavar=metavar, help=help_text)
        elif tp in (int, float, str):
            metavar = "NONE|" + tp.__name__.upper() if optional else tp.__name__.upper()
            conv = _optional(tp) if optional else tp
            parser.add_argument(flag, dest=f.name, type=conv, default=default, metavar=metavar, help=help_text)
        else:
            raise TypeError(f"field {cls.__name__}.{f.name}: unsupported type {tp!r} for the command line")


def _replaced_by(flag: str) -> type[argparse.Action]:
    """An option that refuses itself, naming the ``flag`` that replaced it."""

    class Replaced(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, ns: Any, values: Any, option: str | None = None) -> None:
            parser.error(f"{option} was replaced by {flag} FIELD=VALUE (repeatable, one field per flag)")

    return Replaced


def _optional(tp: type) -> Any:
    def convert(text: str) -> Any:
        return None if text.lower() in ("none", "") else tp(text)

    convert.__name__ = tp.__name__
    return convert


def build_parser(cls: type, prog: str | None = None, description: str | None = None) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` with one option per field of ``cls``."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description if description is not None else inspect.getdoc(cls),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_dataclass_arguments(parser, cls)
    return parser


def namespace_to(cls: type[T], ns: argparse.Namespace) -> T:
    """Build ``cls`` from the matching attributes of a parsed namespace."""
    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in vars(ns).items() if k in names})


def parse_args(cls: type[T], argv: Sequence[str] | None = None, prog: str | None = None) -> T:
    """Parse ``argv`` (default: ``sys.argv[1:]``) into an instance of the dataclass ``cls``."""
    return namespace_to(cls, build_parser(cls, prog=prog).parse_args(argv))


def run_name(rules: str, objective: str, exp_name: str, seed: int, start_time: int | None = None) -> str:
    """``rules__objective__exp__seed__time``, the name of a run's directory."""
    stamp = int(time.time()) if start_time is None else int(start_time)
    return f"{rules}__{objective}__{exp_name}__{seed}__{stamp}"


def check_args(args: Any) -> None:
    """Refuse, before any run folder is made, settings no run can use (naming the flag).

    ``args`` is a training script's ``Args``; each check applies to the fields it has.

    Raises:
        ValueError: ``--FLAG VALUE: must be ...``.
    """

    def whole(low: int, high: int | None = None) -> Callable[[Any], bool]:
        return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low and (high is None or v <= high)

    def real(low: float, high: float = math.inf, open_low: bool = False) -> Callable[[Any], bool]:
        return lambda v: (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                          and (v > low if open_low else v >= low) and v <= high)

    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("total_timesteps", whole(1), "an integer >= 1"),
        ("num_envs", whole(1), "an integer >= 1"),
        ("num_steps", whole(1), "an integer >= 1"),
        ("minibatch_size", whole(1), "an integer >= 1"),
        ("update_epochs", whole(1), "an integer >= 1"),
        ("seed", whole(0, 2**31 - 1), "an integer in 0..2147483647"),
        ("eval_seed", whole(0, 2**31 - 1), "an integer in 0..2147483647"),
        ("learning_rate", real(0.0, open_low=True), "a finite number > 0"),
        ("gamma", real(0.0, 1.0, open_low=True), "a number in (0, 1]"),
        ("gae_lambda", real(0.0, 1.0), "a number in [0, 1]"),
        ("clip_coef", real(0.0, open_low=True), "a finite number > 0"),
        ("ent_coef", real(0.0), "a finite number >= 0"),
        ("ent_coef_final", real(0.0), "a finite number >= 0"),
        ("ent_anneal_fraction", real(0.0, 1.0), "a number in [0, 1]"),
        ("vf_coef", real(0.0), "a finite number >= 0"),
        ("max_grad_norm", real(0.0, open_low=True), "a finite number > 0"),
        ("net_width", whole(1), "an integer >= 1"),
        ("net_depth", whole(1), "an integer >= 1"),
        ("vf_width", whole(0), "an integer >= 0 (0 for the default)"),
        ("vf_depth", whole(0), "an integer >= 0 (0 for the default)"),
        ("vf_warmup", whole(0), "an integer >= 0 (0 for the default)"),
        ("eval_every", whole(1), "an integer >= 1"),
        ("eval_episodes", whole(1), "an integer >= 1"),
        ("eval_regret_episodes", whole(0), "an integer >= 0"),
        ("final_eval_episodes", whole(1), "an integer >= 1"),
        ("checkpoint_every", whole(1), "an integer >= 1"),
        ("torch_threads", whole(1), "an integer >= 1"),
        ("reward_scale", real(0.0, open_low=True), "a finite number > 0"),
        ("final_regret_episodes", whole(0), "an integer >= 0"),
        ("export_check_positions", whole(0), "an integer >= 0"),
        ("eval_exact_positions", whole(1), "an integer >= 1"),
        ("iterations", whole(1), "an integer >= 1"),
        ("train_batch_size", whole(1), "an integer >= 1"),
        ("num_epochs", whole(1), "an integer >= 1"),
        ("lr", real(0.0, open_low=True), "a finite number > 0"),
    ]
    for name, ok, allowed in checks:
        if hasattr(args, name) and not ok(getattr(args, name)):
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} {getattr(args, name)!r}: must be {allowed}")
    target_kl = getattr(args, "target_kl", None)
    if target_kl is not None and not real(0.0, open_low=True)(target_kl):
        raise ValueError(f"--target-kl {target_kl!r}: must be a finite number > 0 (or none)")
    temperature = getattr(args, "init_temperature", 1.0)
    if temperature < 1.0 or (temperature != 1.0 and not getattr(args, "init_from", None)):
        raise ValueError(f"--init-temperature {temperature}: needs a value >= 1 and --init-from")
    init_from = getattr(args, "init_from", None)
    if init_from and not getattr(args, "chain", False) and not Path(init_from).is_file():
        raise ValueError(f"--init-from {init_from}: no such model file")
    export = getattr(args, "export", "")
    if export and not _single_name(export):
        raise ValueError(f"--export {export!r}: must be a bot name (no '/', no spaces around it)")
    if export:
        _check_exporter(export)
        _check_folder("--export-dir", getattr(args, "export_dir", "agents"))
    name = getattr(args, "run_name", None)
    if name and not _single_name(name):
        raise ValueError(f"--run-name {name!r}: must be a folder name inside --runs-dir (no '/', not '..')")
    _check_folder("--runs-dir", args.runs_dir)
    too_long = name_problem(Path(args.runs_dir) / name) if name else ""
    if too_long:
        raise ValueError(f"--run-name: {too_long}")


def _single_name(name: str) -> bool:
    """Whether ``name`` names one file or folder: no separator, not ``.`` or ``..``, no spaces
    around it."""
    return "/" not in name and "\\" not in name and name not in (".", "..") and name == name.strip()


EXPORTER_MODULES = ("onnx", "onnxscript", "onnxruntime")
"""What ``--export`` needs besides torch: the ONNX exporter (``torch.onnx`` with ``onnx`` and
``onnxscript``) and onnxruntime for the check of the exported bot; the ``train`` extra has them."""


def _check_exporter(export: str) -> None:
    """Refuse ``--export`` before training when the exporter is not installed."""
    missing = [m for m in EXPORTER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ValueError(
            f"--export {export!r}: the ONNX exporter needs {', '.join(missing)}, not installed "
            "(pip install 'greed-env[train]')"
        )


def _check_folder(flag: str, folder: str) -> None:
    """Refuse a folder that no file can be written in (a file in its place or on its way, no
    permission), tried before anything is made."""
    path = Path(folder)
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise ValueError(f"{flag} {folder!r}: {part} is a file, not a folder")
            break
    unwritable = folder_problem(path)
    if unwritable:
        raise ValueError(f"{flag} {folder!r}: {unwritable}")
