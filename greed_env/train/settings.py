"""The settings the training scripts share, as dataclasses, and their command line.

A script's ``Args`` is one flat dataclass composed from these (CleanRL's ``Args``, in parts)::

    @dataclass
    class Args(EvalSettings, NetworkSettings, PPOSettings, ExportSettings, RunSettings):
        net_width: int = 512          # this recipe's own default (the help stays the parent's)
        num_envs: int = 256
        \"\"\"parallel environments\"\"\"

Dataclass fields come in the reverse order of the bases, so the run's settings lead the help.
Every field is a flag of its own (``--net-width``, ``--anneal-lr / --no-anneal-lr``), its help
the docstring under it (:func:`parse_args`, with tyro). The helpers of :mod:`greed_env.train`
take the part they read (:func:`greed_env.train.network.policy_kwargs` a
:class:`NetworkSettings`, :func:`ppo_kwargs` a :class:`PPOSettings`), so a misspelt field is an
error of the type checker, not of a run's fortieth minute. :meth:`Settings.check` refuses a
value no run can use, naming its flag.

>>> @dataclass
... class Demo(PPOSettings, RunSettings):
...     '''a script's arguments'''
>>> args = parse_args(Demo, ["--seed", "7", "--no-anneal-lr", "--target-kl", "none"])
>>> args.seed, args.anneal_lr, args.target_kl, args.learning_rate
(7, False, None, 0.0003)
>>> run_name("ten_thousand", "turn", "ppo", 3, start_time=1700000000)
'ten_thousand__turn__ppo__3__1700000000'
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import inspect
import io
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import tyro
from tyro.constructors import PrimitiveConstructorSpec

from greed_env.files import folder_problem, name_problem

__all__ = [
    "EXPORTER_MODULES",
    "EvalSettings",
    "ExportSettings",
    "Features",
    "NetworkSettings",
    "OptionalFloat",
    "OptionalInt",
    "OptionalStr",
    "PPOSettings",
    "RulesOverrides",
    "RunSettings",
    "Settings",
    "TeacherSettings",
    "check_run_folder",
    "parse_args",
    "ppo_kwargs",
    "run_name",
]

T = TypeVar("T")


def _none_or(kind: type, metavar: str) -> PrimitiveConstructorSpec[Any]:
    """One argument read as ``kind``, or None for ``none`` / ``None`` / an empty string."""
    return PrimitiveConstructorSpec(
        nargs=1,
        metavar=f"NONE|{metavar}",
        instance_from_str=lambda a: None if a[0].lower() in ("none", "") else kind(a[0]),
        is_instance=lambda v: v is None or isinstance(v, kind),
        str_from_instance=lambda v: [str(v)],
    )


OptionalFloat = Annotated[float | None, _none_or(float, "FLOAT")]
"""A number or ``none``."""
OptionalInt = Annotated[int | None, _none_or(int, "INT")]
"""A whole number or ``none``."""
OptionalStr = Annotated[str | None, _none_or(str, "STR")]
"""A text or ``none``."""
RulesOverrides = Annotated[
    list[str], tyro.conf.arg(name="set", metavar="FIELD=VALUE"), tyro.conf.UseAppendAction
]
"""``--set FIELD=VALUE``, once per field, as every ``greed`` command takes it."""
Features = Literal["greed", "margin", "margin-final", "margin-cross", "none"]
"""What the policy reads besides the observation (:class:`NetworkSettings`)."""


def _whole(low: int, high: int | None = None) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low and (high is None or v <= high)


def _real(low: float, high: float = math.inf, open_low: bool = False) -> Callable[[Any], bool]:
    return lambda v: (
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        and (v > low if open_low else v >= low) and v <= high
    )  # fmt: skip


_AT_LEAST_1 = (_whole(1), "an integer >= 1")
_AT_LEAST_0 = (_whole(0), "an integer >= 0")
_SEED = (_whole(0, 2**31 - 1), "an integer in 0..2147483647")
_POSITIVE = (_real(0.0, open_low=True), "a finite number > 0")
_NOT_NEGATIVE = (_real(0.0), "a finite number >= 0")
_FRACTION = (_real(0.0, 1.0), "a number in [0, 1]")

RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "total_timesteps": _AT_LEAST_1, "num_envs": _AT_LEAST_1, "num_steps": _AT_LEAST_1,
    "minibatch_size": _AT_LEAST_1, "update_epochs": _AT_LEAST_1, "seed": _SEED, "eval_seed": _SEED,
    "learning_rate": _POSITIVE, "gamma": (_real(0.0, 1.0, open_low=True), "a number in (0, 1]"),
    "gae_lambda": _FRACTION, "clip_coef": _POSITIVE, "ent_coef": _NOT_NEGATIVE, "ent_coef_final": _NOT_NEGATIVE,
    "ent_anneal_fraction": _FRACTION, "vf_coef": _NOT_NEGATIVE, "max_grad_norm": _POSITIVE,
    "net_width": _AT_LEAST_1, "net_depth": _AT_LEAST_1,
    "vf_width": (_whole(0), "an integer >= 0 (0 for the default)"),
    "vf_depth": (_whole(0), "an integer >= 0 (0 for the default)"),
    "vf_warmup": (_whole(0), "an integer >= 0 (0 for the default)"),
    "eval_every": _AT_LEAST_1, "eval_episodes": _AT_LEAST_1, "eval_regret_episodes": _AT_LEAST_0,
    "final_eval_episodes": _AT_LEAST_1, "final_regret_episodes": _AT_LEAST_0, "checkpoint_every": _AT_LEAST_1,
    "torch_threads": _AT_LEAST_1, "reward_scale": _POSITIVE, "export_check_positions": _AT_LEAST_0,
    "export_games": _AT_LEAST_0, "eval_exact_positions": _AT_LEAST_1, "iterations": _AT_LEAST_1,
    "train_batch_size": _AT_LEAST_1, "num_epochs": _AT_LEAST_1, "lr": _POSITIVE,
    "teacher_weight": _NOT_NEGATIVE, "teacher_temperature": _NOT_NEGATIVE,
    "teacher_until": (_real(0.0, 1.0), "a fraction of the run in [0, 1]"), "teacher_starts": _FRACTION,
    "teacher_start_games": _AT_LEAST_1, "teacher_max_contexts": _AT_LEAST_1,
}  # fmt: skip
"""The values each numeric field takes, by name, in whichever dataclass it is a field of."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


class Settings:
    """The base of the settings dataclasses: :meth:`check` before anything is made."""

    def check(self) -> None:
        """Refuse values no run can use, naming the flag; a part with more to check extends it.

        Raises:
            ValueError: ``--FLAG VALUE: must be ...``.
        """
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            if field.name in RANGES:
                ok, allowed = RANGES[field.name]
                value = getattr(self, field.name)
                if not ok(value):
                    raise ValueError(f"{_flag(field.name)} {value!r}: must be {allowed}")


@dataclass
class RunSettings(Settings):
    """The run: its rules, seed, folder and length, resuming, checkpoints, the machine."""

    exp_name: str = "ppo"
    """name of this experiment (the third part of the run name)"""
    seed: int = 1
    """seed of the network, PPO's sampling and the environments"""
    rules: str = "ten_thousand"
    """rules preset to train on"""
    rules_set: RulesOverrides = dataclasses.field(default_factory=list)
    """override one rules field of the preset, e.g. --set target=3000"""
    runs_dir: str = "runs"
    """folder holding one sub-folder per run"""
    run_name: OptionalStr = None
    """explicit run name (default: RULES__OBJECTIVE__EXP__SEED__TIME)"""
    resume: bool = False
    """continue the latest run of this rules/exp/seed (or --run-name) from its last checkpoint"""
    checkpoint_every: int = 250_000
    """environment steps between checkpoints (written atomically; --resume restarts there)"""
    progress: bool = True
    """show a progress bar with steps/s and the latest evaluation"""
    torch_threads: int = 1
    """torch intra-op threads (1 leaves the other core to the environments)"""
    torch_deterministic: bool = True
    """use deterministic torch algorithms"""
    total_timesteps: int = 1_000_000
    """environment steps (decisions of the learner) of the run"""

    def check(self) -> None:
        super().check()
        check_run_folder(self.runs_dir, self.run_name)


EXPORTER_MODULES = ("onnx", "onnxscript", "onnxruntime")
"""What ``--export`` needs besides torch: the ONNX exporter (``torch.onnx`` with ``onnx`` and
``onnxscript``) and onnxruntime for the check of the exported bot; the ``train`` extra has them."""


@dataclass
class ExportSettings(Settings):
    """The final policy as an ONNX bot with its card, in a bot registry folder."""

    export: str = ""
    """also export the final policy as the ONNX bot NAME with its card into --export-dir/RULES/"""
    export_dir: str = "agents"
    """folder of the bot registry that --export writes into"""
    export_check_positions: int = 10_000
    """random positions on which the exported ONNX bot must act as the model does"""

    def check(self) -> None:
        super().check()
        if not self.export:
            return
        if not _single_name(self.export):
            raise ValueError(f"--export {self.export!r}: must be a bot name (no '/', no spaces around it)")
        missing = [m for m in EXPORTER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            raise ValueError(
                f"--export {self.export!r}: the ONNX exporter needs {', '.join(missing)}, not installed "
                "(pip install 'greed-env[train]')"
            )
        _check_folder("--export-dir", self.export_dir)


@dataclass
class PPOSettings(Settings):
    """MaskablePPO's hyperparameters, in CleanRL's names (:func:`ppo_kwargs` maps them to SB3's)."""

    learning_rate: float = 3e-4
    """Adam learning rate (at the start, see --anneal-lr)"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to zero over the run"""
    num_steps: int = 64
    """steps per environment per rollout (a rollout is num_envs * num_steps decisions)"""
    minibatch_size: int = 2048
    """minibatch size of the PPO update"""
    update_epochs: int = 4
    """epochs over each rollout"""
    gamma: float = 1.0
    """discount factor (1: the return is the episode's result)"""
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
    target_kl: OptionalFloat = None
    """stop an update early once the approximate KL exceeds this (none: never)"""

    def check(self) -> None:
        super().check()
        if self.target_kl is not None and not _real(0.0, open_low=True)(self.target_kl):
            raise ValueError(f"--target-kl {self.target_kl!r}: must be a finite number > 0 (or none)")

    def ent_coef_at(self, step: int, total_timesteps: int) -> float:
        """The entropy coefficient after ``step`` of ``total_timesteps``: from ``ent_coef``
        linearly to ``ent_coef_final`` at ``ent_anneal_fraction`` of the run, then held."""
        span = max(1.0, self.ent_anneal_fraction * total_timesteps)
        return self.ent_coef + min(1.0, step / span) * (self.ent_coef_final - self.ent_coef)


def ppo_kwargs(ppo: PPOSettings) -> dict[str, Any]:
    """MaskablePPO's keyword arguments for ``ppo``: the learning rate (a linear schedule to 0
    with ``anneal_lr``), rollout, minibatch and epochs, and the loss coefficients."""
    start = float(ppo.learning_rate)
    return {
        "learning_rate": (lambda progress_remaining: progress_remaining * start) if ppo.anneal_lr else start,
        "n_steps": ppo.num_steps,
        "batch_size": ppo.minibatch_size,
        "n_epochs": ppo.update_epochs,
        "gamma": ppo.gamma,
        "gae_lambda": ppo.gae_lambda,
        "clip_range": ppo.clip_coef,
        "ent_coef": ppo.ent_coef,
        "vf_coef": ppo.vf_coef,
        "max_grad_norm": ppo.max_grad_norm,
        "target_kl": ppo.target_kl,
    }


@dataclass
class NetworkSettings(Settings):
    """The policy: what it reads, its action head, its layers, the weights it starts from
    (:mod:`greed_env.train.network` builds it)."""

    features: Features = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, turn total and scores
    (greed_env.bots.featurize); 'margin' adds the margin after banking over the best other seat;
    'margin-final' reads it in final rounds only; 'margin-cross' adds a copy read only when
    banking would reach the target before a final round; 'none' feeds the observation alone"""
    set_readings: bool = True
    """read the working sets as per-face thermometers (carry-over rules such as progressive)"""
    need_readings: bool = False
    """under an exact target: also read the points still needed to land on it"""
    policy_head: Literal["structured", "plain"] = "structured"
    """action logits: 'structured' adds a term shared by keeps made of the same parts (rare keeps
    learn from common ones); 'plain' is one linear layer"""
    lean_masking: bool = False
    """the masked action distribution in one log-softmax (the same values, a fraction of the
    update time with thousands of actions, as in progressive and trippn)"""
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
    init_from: OptionalStr = None
    """start from the weights of this model zip (same rules; readings it lacks start at weight 0)"""

    def check(self) -> None:
        super().check()
        if self.init_from and not Path(self.init_from).is_file():
            raise ValueError(f"--init-from {self.init_from}: no such model file")


@dataclass
class EvalSettings(Settings):
    """The evaluations against the solver: how often, how many episodes, which ones."""

    eval_every: int = 250_000
    """environment steps between evaluations"""
    eval_episodes: int = 1000
    """episodes per periodic evaluation (greedy masked actions)"""
    final_eval_episodes: int = 5000
    """episodes of the final evaluation written into the model card"""
    eval_seed: int = 12_345
    """seed of the evaluation episodes (the same episodes at every evaluation)"""


@dataclass
class TeacherSettings(Settings):
    """The solver as a teacher: the weight of KL(teacher || student) and how it falls."""

    teacher_weight: float = 1.0
    """weight of KL(teacher || student) at the start of the run (0: MaskablePPO alone)"""
    teacher_until: float = 0.6
    """fraction of the run at which that weight reaches 0 (linearly); PPO alone after"""
    teacher_temperature: float = 1.0
    """temperature of the teacher's softmax over the moves' values (0: argmax, ties split)"""


def parse_args(cls: type[T], argv: Sequence[str] | None = None) -> T:
    """Parse ``argv`` (default: ``sys.argv[1:]``) into the dataclass ``cls``, one flag per field.

    The help shows the docstring of the module that defines ``cls`` (a training script's, which
    names its recipes), each flag with the docstring under its field and its default; the
    program name is ``sys.argv[0]`` (``greed train NAME`` when ``greed`` runs the script). A
    flag or value the script does not take ends it with one line on stderr, as every ``greed``
    command does: ``PROG: Unrecognized options: --nope (see `PROG --help`)``.

    Raises:
        SystemExit: ``--help`` (status 0) or a flag or value the script does not take (2).
    """
    module = sys.modules.get(cls.__module__)
    description = (module.__doc__ if module is not None else None) or inspect.getdoc(cls) or ""
    prog = sys.argv[0]
    said = io.StringIO()  # tyro's error box, made one line below
    try:
        with contextlib.redirect_stderr(said):
            args = tyro.cli(cls, args=argv, prog=prog, description=_paragraphs(inspect.cleandoc(description)))
    except SystemExit as stop:
        if stop.code not in (0, None) and said.getvalue().strip():
            print(f"{prog}: {_one_line(said.getvalue())} (see `{prog} --help`)", file=sys.stderr)
            raise SystemExit(2) from None
        sys.stderr.write(said.getvalue())
        raise
    sys.stderr.write(said.getvalue())
    return args


def _one_line(box: str) -> str:
    """tyro's error box as one line: its message, and the flags it suggests. The box is drawn
    in Unicode (the title in its top border) or, on a plain stream, in ASCII (the title on a
    line of its own above a rule)."""
    sections: list[list[str]] = [[]]
    for raw in box.splitlines():
        line = raw.strip().strip("│|").strip()
        if not line or line[0] in "╭╰":
            continue
        if set(line) <= set("─-"):
            sections.append([])
        else:
            sections[-1].append(line)
    if "╭" not in box and len(sections) > 1:
        sections = sections[1:]  # the ASCII title
    message = " ".join(sections[0])
    for section in sections[1:]:
        if section and section[0].startswith("Perhaps you meant"):
            flags = [line.split()[0] for line in section[1:] if line.startswith("-")]
            message += f"; perhaps {', '.join(flags)}" if flags else ""
    return " ".join(message.split())


def _paragraphs(text: str) -> str:
    """``text`` with each paragraph of prose on one line (the terminal wraps it) and indented
    blocks (commands) kept line by line, which is how the help shows a description."""
    blocks = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        blocks.append(block if lines and lines[0].startswith(" ") else " ".join(line.strip() for line in lines))
    return "\n\n".join(blocks)


def run_name(rules: str, objective: str, exp_name: str, seed: int, start_time: int | None = None) -> str:
    """``rules__objective__exp__seed__time``, the name of a run's directory."""
    stamp = int(time.time()) if start_time is None else int(start_time)
    return f"{rules}__{objective}__{exp_name}__{seed}__{stamp}"


def check_run_folder(runs_dir: str, name: str | None) -> None:
    """Refuse a ``--runs-dir`` where no folder can be made, or a ``--run-name`` that is not one
    folder name inside it.

    Raises:
        ValueError: naming the flag.
    """
    if name and not _single_name(name):
        raise ValueError(f"--run-name {name!r}: must be a folder name inside --runs-dir (no '/', not '..')")
    _check_folder("--runs-dir", runs_dir)
    too_long = name_problem(Path(runs_dir) / name) if name else ""
    if too_long:
        raise ValueError(f"--run-name: {too_long}")


def _single_name(name: str) -> bool:
    """Whether ``name`` names one file or folder: no separator, not ``.`` or ``..``, no spaces
    around it."""
    return "/" not in name and "\\" not in name and name not in (".", "..") and name == name.strip()


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
