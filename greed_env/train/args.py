"""Command-line parsing from an argument dataclass, and run names.

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

from greed_env.files import folder_problem
from greed_env.rules.config import Rules, RulesError, parse_sets, preset

__all__ = [
    "PPOArgs",
    "add_dataclass_arguments",
    "build_parser",
    "check_args",
    "field_docs",
    "namespace_to",
    "parse_args",
    "rules_from_args",
    "run_name",
    "run_script",
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


def run_script(main: Any, cls: type[T], argv: Sequence[str] | None, prog: str) -> int:
    """Parse ``argv`` into ``cls`` and run ``main``; a refused setting (``ValueError``, a rules
    error, a missing or existing run) ends with one line on stderr and status 2, as in ``greed``."""
    import sys

    args = parse_args(cls, argv, prog=prog)
    try:
        main(args)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"{prog}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0


def rules_from_args(name: str, sets: Sequence[str] = ()) -> Rules:
    """The preset ``name`` with the ``--set FIELD=VALUE`` overrides (the parser of every
    ``greed`` command: :func:`greed_env.rules.config.parse_sets`).

    >>> rules_from_args("ten_thousand", ["target=3000", "entry_threshold=500"]).target
    3000

    Raises:
        RulesError: unknown preset or field, a bad value, or an item without ``=``.
    """
    try:
        items = parse_sets(sets)
    except ValueError as exc:
        raise RulesError(str(exc)) from None
    return preset(name, **items)


def run_name(rules: str, objective: str, exp_name: str, seed: int, start_time: int | None = None) -> str:
    """``rules__objective__exp__seed__time``, the name of a run's directory."""
    stamp = int(time.time()) if start_time is None else int(start_time)
    return f"{rules}__{objective}__{exp_name}__{seed}__{stamp}"


@dataclasses.dataclass
class PPOArgs:
    """Arguments every training script shares: run bookkeeping, vector envs and PPO settings."""

    exp_name: str = "ppo"
    """name of this experiment (the third part of the run name)"""
    seed: int = 1
    """seed of the experiment (environments, network initialisation, evaluation episodes)"""
    rules: str = "ten_thousand"
    """rules preset to train on"""
    rules_set: list[str] = dataclasses.field(
        default_factory=list, metadata={"flag": "--set", "metavar": "FIELD=VALUE", "replaces": "--rules-set"}
    )
    """override one rules field of the preset (repeatable), e.g. --set target=3000 --set entry_threshold=500"""
    total_timesteps: int = 500_000
    """total environment steps (decisions of the learner) of the run"""
    num_envs: int = 2
    """parallel environments"""
    vector: Literal["subproc", "dummy", "native"] = "subproc"
    """vector environment: 'subproc' (one process per environment), 'dummy' (in this process) or
    'native' (the batched numba engine of greed_env.vector; Solitaire-v0 and Duel-v0)"""
    learning_rate: float = 3e-4
    """Adam learning rate (at the start, see --anneal-lr)"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to zero over the run"""
    num_steps: int = 512
    """steps per environment per rollout (rollout size = num_envs * num_steps)"""
    minibatch_size: int = 256
    """minibatch size of the PPO update"""
    update_epochs: int = 4
    """epochs over each rollout"""
    gamma: float = 1.0
    """discount factor (1: every objective here is an undiscounted episodic total)"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    clip_coef: float = 0.2
    """PPO surrogate clipping coefficient"""
    ent_coef: float = 0.01
    """entropy bonus coefficient at the start of the run"""
    ent_coef_final: float = 0.0
    """entropy bonus coefficient reached at --ent-anneal-fraction of the run (then held)"""
    ent_anneal_fraction: float = 0.8
    """fraction of the run over which the entropy coefficient is annealed linearly"""
    vf_coef: float = 0.5
    """value-loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float | None = None
    """stop an update early once the approximate KL exceeds this (None: never)"""
    features: Literal["greed", "margin", "margin-final", "margin-cross", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of dice counts, dice in hand, turn total and
    scores to the observation (greed_env.bots.featurize); 'margin' adds readings of the margin
    after banking over the best other seat (for games against opponents); 'margin-final' reads
    it in final rounds only (zero before); 'margin-cross' adds to those a copy read only when
    banking would reach the target before a final round; 'none' feeds the observation alone"""
    policy_head: Literal["structured", "plain"] = "structured"
    """action logits: 'structured' adds a shared term driven by each keep's points and dice count
    (rare keeps learn from common ones; greed_env.train.features), 'plain' is one linear layer"""
    set_readings: bool = True
    """with --features greed or margin*: read the working sets as per-face thermometers (carry-over
    rules such as progressive; features version 4); --no-set-readings leaves them out"""
    need_readings: bool = False
    """with --features greed or margin* under an exact target (progressive): also read the points
    still needed to land on the target after banking now (features version 5)"""
    lean_masking: bool = False
    """compute the masked action distribution with one log-softmax (greed_env.train.features
    LeanMaskableCategorical: the same values, a fraction of sb3-contrib's update time when there
    are thousands of actions, as in progressive)"""
    net_width: int = 128
    """units per hidden layer (policy and value networks are separate MLPs)"""
    net_depth: int = 2
    """hidden layers"""
    activation: Literal["tanh", "relu"] = "tanh"
    """hidden-layer activation"""
    vf_width: int = 0
    """units per hidden layer of the value network (0: --net-width)"""
    vf_depth: int = 0
    """hidden layers of the value network (0: --net-depth)"""
    vf_warmup: int = 0
    """environment steps at the start of the run during which only the value network learns
    (the policy is frozen), e.g. to fit a new critic (--vf-width / --vf-depth) to an --init-from
    policy before its advantages move that policy"""
    init_from: str | None = None
    """start a fresh run from the weights of this model zip (same rules and network shape; a
    model without the margin readings can start a --features margin(-final) run, their weights
    at 0; a wider value network (--vf-width) starts as the same function, one of another depth
    (--vf-depth) afresh)"""
    init_temperature: float = 1.0
    """divide the --init-from policy's logits of the moves other than keeps (bank, roll on, ...)
    by this (>= 1): its greedy moves stay the same, but bank-or-roll choices it had all but
    ruled out are sampled again, so PPO can find where they pay (a turn policy never banks
    with six dice; in a duel's final round with the lead in hand that wins outright)"""
    eval_every: int = 25_000
    """environment steps between evaluations against the solver"""
    eval_episodes: int = 2000
    """episodes per periodic evaluation (deterministic masked actions)"""
    eval_regret_episodes: int = 2000
    """episodes of each evaluation whose decisions are scored by the solver (regret)"""
    final_eval_episodes: int = 20_000
    """episodes of the final evaluation written into the model card"""
    eval_seed: int = 12_345
    """seed of the evaluation episodes (the same episodes at every evaluation)"""
    checkpoint_every: int = 25_000
    """environment steps between checkpoints (written atomically; --resume restarts there)"""
    runs_dir: str = "runs"
    """directory holding one sub-directory per run"""
    run_name: str | None = None
    """explicit run name (default: rules__objective__exp__seed__time)"""
    resume: bool = False
    """continue the latest run of this rules/objective/exp/seed (or --run-name) from its last checkpoint"""
    progress: bool = True
    """show a progress bar with steps/s and the latest evaluation"""
    torch_threads: int = 1
    """torch intra-op threads (1 leaves the other cores to the environments)"""
    torch_deterministic: bool = True
    """use deterministic torch algorithms"""


def check_args(args: PPOArgs) -> None:
    """Refuse, before any run folder is made, settings no run can use (naming the flag).

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
    ]
    for name, ok, allowed in checks:
        if hasattr(args, name) and not ok(getattr(args, name)):
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} {getattr(args, name)!r}: must be {allowed}")
    if args.target_kl is not None and not real(0.0, open_low=True)(args.target_kl):
        raise ValueError(f"--target-kl {args.target_kl!r}: must be a finite number > 0 (or none)")
    if args.init_temperature < 1.0 or (args.init_temperature != 1.0 and not args.init_from):
        raise ValueError(f"--init-temperature {args.init_temperature}: needs a value >= 1 and --init-from")
    runs = Path(args.runs_dir)
    for part in (runs, *runs.parents):
        if part.exists():
            if not part.is_dir():
                raise ValueError(f"--runs-dir {args.runs_dir!r}: {part} is a file, not a folder")
            break
    unwritable = folder_problem(runs)  # tried, before the run folder is made
    if unwritable:
        raise ValueError(f"--runs-dir {args.runs_dir!r}: {unwritable}")
