"""The machinery the training scripts share (imports torch and stable-baselines3).

* :func:`prepare_run` picks or creates the run directory and reads the last checkpoint for
  ``--resume``;
* :func:`make_vec_env` builds the vector environment (the one switch point for new backends,
  see :data:`VECTOR_BACKENDS`);
* :class:`Checkpointer` writes ``checkpoints/step_N.zip`` then ``checkpoints/latest.json``,
  each atomically (write to a temporary file, then ``os.replace``), so a run killed at any
  moment resumes from a complete checkpoint;
* :func:`make_logger` writes TensorBoard scalars grouped as ``charts/``, ``losses/`` and
  ``eval/`` (stable-baselines3's ``rollout/``, ``train/`` and ``time/`` keys are renamed);
* :class:`TrainingCallback` drives the progress bar, the entropy schedule, the periodic
  evaluation against the solver (``eval.csv`` and ``eval/`` scalars) and the checkpoints;
* :func:`run_training` is the loop every script calls: build or resume the model, learn,
  evaluate, save ``model.zip`` with its JSON card ``model.json``.

Run directory layout::

    runs/<rules>__<objective>__<exp>__<seed>__<time>/
        args.json            arguments of the first session
        tb/                  TensorBoard event files
        eval.csv             one row per evaluation
        checkpoints/         step_N.zip (the last two) and latest.json
        model.zip            final model (stable-baselines3 / sb3-contrib)
        model.json           its card
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import platform
import resource
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor
from tqdm.auto import tqdm

from greed_env.bots.featurize import FeatureConfig, action_features
from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import OBS_SPEC_VERSION
from greed_env.evaluation import EvalResult
from greed_env.files import atomic_write_text, atomic_write_with
from greed_env.rules import Rules
from greed_env.train.args import PPOArgs, run_name

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "EVAL_FIELDS",
    "VECTOR_BACKENDS",
    "CheckpointError",
    "Checkpointer",
    "GroupedTensorBoard",
    "RunState",
    "TrainingCallback",
    "atomic_write_text",
    "check_args",
    "make_logger",
    "make_vec_env",
    "model_card",
    "prepare_run",
    "run_training",
]

CARD_FORMAT = "greed_env/training-card"
CARD_VERSION = 1

EnvFn = Callable[[], gym.Env]


# ------------------------------------------------------------------------------------------
# files


def save_model_atomic(model: MaskablePPO, path: Path) -> None:
    """``model.save(path)`` through a temporary file, so ``path`` is always complete (written
    with the permissions of :func:`greed_env.files.atomic_write_bytes`)."""
    atomic_write_with(path, model.save)


# ------------------------------------------------------------------------------------------
# run directories and checkpoints


@dataclasses.dataclass
class RunState:
    """Where a run stands: restored from ``latest.json`` on resume.

    Attributes:
        step: environment steps done at the checkpoint.
        model_file: the checkpoint's model zip (relative to the checkpoint directory).
        wall_s: training seconds summed over every session up to the checkpoint.
        cpu_s: CPU seconds (this process and its finished children, periodic evaluations
            included) summed over every session up to the checkpoint.
        sessions: sessions so far (1 for a fresh run).
        extra: script-specific state (the self-play pool, for instance).
    """

    step: int = 0
    model_file: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    sessions: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


class CheckpointError(ValueError):
    """A checkpoint index (``latest.json``) or model zip that cannot be read."""


class Checkpointer:
    """Atomic checkpoints in ``run_dir/checkpoints`` (the last ``keep`` model zips).

    Each ``step_N.zip`` has its run state beside it (``step_N.json``) and ``latest.json``
    names the newest, so a resumed run whose newest zip turns out corrupt falls back to the
    one kept before it, with the state that goes with it.
    """

    def __init__(self, run_dir: Path, keep: int = 2) -> None:
        self.dir = run_dir / "checkpoints"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.keep = keep

    def _read_state(self, path: Path) -> RunState:
        try:
            state = RunState(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise CheckpointError(f"checkpoint index {path} is corrupt ({' '.join(str(exc).split())})") from None
        if not isinstance(state.model_file, str) or not isinstance(state.step, int):
            raise CheckpointError(f"checkpoint index {path} is corrupt (bad model_file or step)")
        return state

    def latest(self) -> RunState | None:
        """The last complete checkpoint, or None.

        Raises:
            CheckpointError: ``latest.json`` is not a checkpoint index (the message names it).
            FileNotFoundError: the model zip it names is missing.
        """
        path = self.dir / "latest.json"
        if not path.is_file():
            return None
        state = self._read_state(path)
        if not (self.dir / state.model_file).is_file():
            raise FileNotFoundError(f"checkpoint {self.dir / state.model_file} named by {path} is missing")
        return state

    def usable(self, state: RunState) -> RunState:
        """``state`` when its model zip is intact, else the newest intact one kept before it
        (each skipped file named on stderr).

        Raises:
            CheckpointError: no kept checkpoint is intact.
        """
        candidates = [state]
        for side in sorted(self.dir.glob("step_*.json"), reverse=True):
            try:
                older = self._read_state(side)
            except CheckpointError:
                continue
            if older.step < state.step:
                candidates.append(older)
        problems = []
        for cand in candidates:
            path = self.dir / cand.model_file
            why = _zip_problem(path)
            if not why:
                return cand
            problems.append(f"{path} ({why})")
            print(f"checkpoint {path} is unusable ({why}); trying the one kept before it", file=sys.stderr)
        raise CheckpointError("--resume: no intact checkpoint: " + "; ".join(problems))

    def save(self, model: MaskablePPO, state: RunState) -> Path:
        """Write the model zip and its state, then point ``latest.json`` at it; prune older zips."""
        name = f"step_{state.step:012d}.zip"
        save_model_atomic(model, self.dir / name)
        state = dataclasses.replace(state, model_file=name)
        text = json.dumps(dataclasses.asdict(state), indent=1)
        atomic_write_text(self.dir / name.replace(".zip", ".json"), text)
        atomic_write_text(self.dir / "latest.json", text)
        zips = sorted(self.dir.glob("step_*.zip"))
        for old in zips[: -self.keep]:
            old.unlink(missing_ok=True)
            old.with_suffix(".json").unlink(missing_ok=True)
        return self.dir / name


def _zip_problem(path: Path) -> str:
    """Why ``path`` is not an intact stable-baselines3 zip ('' when it is)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
            names = set(zf.namelist())
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    if bad is not None:
        return f"member {bad} fails its CRC check"
    if "data" not in names or "policy.pth" not in names:
        return "not a stable-baselines3 model"
    return ""


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


def prepare_run(args: PPOArgs, objective: str) -> tuple[Path, RunState | None]:
    """The run directory and, with ``--resume``, its last checkpoint.

    A fresh run gets ``runs_dir/<run name>``. ``--resume`` takes ``--run-name`` if given, else
    the newest directory named ``<rules>__<objective>__<exp>__<seed>__*``.

    Raises:
        FileNotFoundError: ``--resume`` and no such run, or a run without a checkpoint.
        FileExistsError: a fresh run whose directory already exists.
    """
    runs = Path(args.runs_dir)
    if args.resume:
        if args.run_name:
            run_dir = runs / args.run_name
        else:
            prefix = f"{args.rules}__{objective}__{args.exp_name}__{args.seed}__"
            found = sorted(
                (p for p in runs.glob(prefix + "*") if p.is_dir()), key=lambda p: p.stat().st_mtime
            )
            if not found:
                raise FileNotFoundError(f"--resume: no run named {prefix}* in {runs}")
            # the newest run with a checkpoint (one that failed at its start has none)
            with_ckpt = [p for p in found if (p / "checkpoints" / "latest.json").is_file()]
            run_dir = with_ckpt[-1] if with_ckpt else found[-1]
        if not run_dir.is_dir():
            raise FileNotFoundError(f"--resume: run directory {run_dir} does not exist")
        ckpt = Checkpointer(run_dir)
        state = ckpt.latest()
        if state is None:
            raise FileNotFoundError(f"--resume: {run_dir} has no checkpoint yet (checkpoints/latest.json)")
        return run_dir, ckpt.usable(state)
    name = args.run_name or run_name(args.rules, objective, args.exp_name, args.seed)
    run_dir = runs / name
    if run_dir.exists():
        raise FileExistsError(f"run directory {run_dir} exists: pass --resume to continue it, or another --run-name")
    run_dir.mkdir(parents=True)
    atomic_write_text(run_dir / "args.json", json.dumps(dataclasses.asdict(args), indent=1))
    return run_dir, None


# ------------------------------------------------------------------------------------------
# environments


def _subproc(env_fns: Sequence[EnvFn]) -> VecEnv:
    return SubprocVecEnv(list(env_fns), start_method="spawn")


def _dummy(env_fns: Sequence[EnvFn]) -> VecEnv:
    return DummyVecEnv(list(env_fns))


def _native(env_fns: Sequence[EnvFn]) -> VecEnv:
    from greed_env.vector.sb3 import sb3_vec_env_from_env_fns

    return sb3_vec_env_from_env_fns(env_fns)


VECTOR_BACKENDS: dict[str, Callable[[Sequence[EnvFn]], VecEnv]] = {
    "subproc": _subproc,
    "dummy": _dummy,
    "native": _native,
}
"""Vector-environment builders by ``--vector`` name: each takes the per-environment factories
and returns a stable-baselines3 ``VecEnv`` with an ``action_masks`` env method. ``native`` is
the batched engine of :mod:`greed_env.vector` (``Solitaire-v0`` and ``Duel-v0`` only; it
reads the ids and keyword arguments of the ``gym.make`` factories)."""


def make_vec_env(env_fns: Sequence[EnvFn], backend: str, seed: int) -> VecEnv:
    """Vector environment of ``env_fns`` with episode statistics, seeded ``seed, seed+1, ...``.

    Raises:
        ValueError: unknown backend.
    """
    try:
        build = VECTOR_BACKENDS[backend]
    except KeyError:
        raise ValueError(f"unknown --vector {backend!r}; available: {', '.join(VECTOR_BACKENDS)}") from None
    venv = VecMonitor(build(env_fns))
    venv.seed(seed)
    return venv


# ------------------------------------------------------------------------------------------
# logging

_RENAMES = {
    "rollout/ep_rew_mean": "charts/episodic_return",
    "rollout/ep_len_mean": "charts/episodic_length",
    "time/fps": "charts/SPS",
    "train/learning_rate": "charts/learning_rate",
    "train/clip_range": "charts/clip_range",
    "train/n_updates": "charts/updates",
    "train/value_loss": "losses/value_loss",
    "train/policy_gradient_loss": "losses/policy_loss",
    "train/entropy_loss": "losses/entropy",
    "train/approx_kl": "losses/approx_kl",
    "train/clip_fraction": "losses/clipfrac",
    "train/explained_variance": "losses/explained_variance",
    "train/loss": "losses/total_loss",
}


class GroupedTensorBoard(KVWriter):
    """TensorBoard writer with CleanRL's groups: ``charts/``, ``losses/``, ``eval/``.

    stable-baselines3's keys are renamed (``rollout/ep_rew_mean`` -> ``charts/episodic_return``,
    ``train/value_loss`` -> ``losses/value_loss``, ...); ``losses/entropy`` is the policy
    entropy (stable-baselines3 logs its negative); other ``time/`` keys are dropped.
    """

    def __init__(self, folder: str | Path) -> None:
        self.inner = TensorBoardOutputFormat(str(folder))

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        out: dict[str, Any] = {}
        excluded: dict[str, tuple[str, ...]] = {}
        for key, value in key_values.items():
            new = _RENAMES.get(key, key)
            if new.startswith("time/"):
                continue
            if key == "train/entropy_loss":
                value = -value
            out[new] = value
            excluded[new] = key_excluded.get(key, ())
        self.inner.write(out, excluded, step)

    def close(self) -> None:
        self.inner.close()


def make_logger(run_dir: Path) -> Logger:
    """A stable-baselines3 logger writing grouped TensorBoard scalars under ``run_dir/tb``."""
    return Logger(str(run_dir / "tb"), [GroupedTensorBoard(run_dir / "tb")])


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its children that have ended."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


EVAL_FIELDS = (
    "step",
    "wall_s",
    "cpu_s",
    "value",
    "ci95",
    "optimal",
    "ratio",
    "regret_estimate",
    "regret_estimate_ci95",
    "mean_regret",
    "worst_regret",
    "optimal_share",
    "exact",
    "exact_ratio",
)


def _eval_row(step: int, wall_s: float, cpu_s: float, res: EvalResult) -> dict[str, float]:
    row = {
        "step": float(step),
        "wall_s": round(wall_s, 2),
        "cpu_s": round(cpu_s, 2),
        "value": res.score.mean,
        "ci95": res.score.half_width,
        "optimal": res.optimal,
        "ratio": res.ratio,
        "mean_regret": res.mean_regret,
        "worst_regret": res.worst_regret,
        "optimal_share": res.optimal_share,
    }
    if res.regret_estimate is not None:
        row["regret_estimate"] = res.regret_estimate.mean
        row["regret_estimate_ci95"] = res.regret_estimate.half_width
    if res.exact is not None:
        row["exact"] = res.exact
        row["exact_ratio"] = float(res.exact_ratio or 0.0)
    return row


def _truncate_eval_csv(path: Path, step: int) -> None:
    """Drop evaluation rows logged after ``step`` (a session killed after its checkpoint)."""
    if not path.is_file():
        return
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if float(r["step"]) <= step]
    text = ",".join(EVAL_FIELDS) + "\n" + "".join(
        ",".join(r.get(k, "") or "" for k in EVAL_FIELDS) + "\n" for r in rows
    )
    atomic_write_text(path, text)


# ------------------------------------------------------------------------------------------
# the callback


class TrainingCallback(BaseCallback):
    """Progress bar, entropy schedule, evaluations and checkpoints, between PPO iterations.

    Evaluations and checkpoints happen at the start of a rollout, when the parameters and the
    step count agree (the previous update is complete).
    """

    def __init__(
        self,
        args: PPOArgs,
        run_dir: Path,
        evaluate_policy: Callable[[NumpyPolicy], EvalResult],
        state: RunState,
        session_start: float,
        extra_state: Callable[[], dict[str, Any]] | None = None,
        on_iteration: Callable[[MaskablePPO, int], None] | None = None,
    ) -> None:
        super().__init__()
        self.args = args
        self.run_dir = run_dir
        self.evaluate_policy = evaluate_policy
        self.state = state
        self.session_start = session_start
        self.cpu_start = cpu_seconds()
        self.extra_state = extra_state
        self.on_iteration = on_iteration
        self.checkpointer = Checkpointer(run_dir)
        self.eval_csv = run_dir / "eval.csv"
        self.next_eval = 0 if state.step == 0 else state.step + args.eval_every
        self.next_ckpt = state.step + args.checkpoint_every
        self.last_eval: EvalResult | None = None
        self.bar: Any = None

    def wall_s(self) -> float:
        return self.state.wall_s + time.perf_counter() - self.session_start

    def cpu_s(self) -> float:
        return self.state.cpu_s + cpu_seconds() - self.cpu_start

    def ent_coef_at(self, step: int) -> float:
        a = self.args
        span = max(1.0, a.ent_anneal_fraction * a.total_timesteps)
        frac = min(1.0, step / span)
        return a.ent_coef + frac * (a.ent_coef_final - a.ent_coef)

    def _on_training_start(self) -> None:
        self.bar = tqdm(
            total=self.args.total_timesteps,
            initial=self.model.num_timesteps,
            unit="step",
            unit_scale=True,
            dynamic_ncols=True,
            disable=not self.args.progress,
            desc=self.run_dir.name[:40],
        )

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return True

    def _on_rollout_start(self) -> None:
        step = self.model.num_timesteps
        self.model.ent_coef = self.ent_coef_at(step)
        self.logger.record("charts/ent_coef", self.model.ent_coef)
        if self.args.vf_warmup:
            frozen = step < self.args.vf_warmup
            for name, param in self.model.policy.named_parameters():
                if not _is_critic(name):
                    param.requires_grad_(not frozen)
            self.logger.record("charts/policy_frozen", float(frozen))
        if self.on_iteration is not None:
            self.on_iteration(self.model, step)
        if step >= self.next_eval:
            self.run_eval(step)
            self.next_eval = step + self.args.eval_every
        if step >= self.next_ckpt:
            self.checkpoint(step)
            self.next_ckpt = step + self.args.checkpoint_every

    def run_eval(self, step: int) -> EvalResult:
        """Evaluate the current policy and record it."""
        res = self.evaluate_policy(NumpyPolicy.from_sb3(self.model))
        self.record_eval(step, res)
        return res

    def record_eval(self, step: int, res: EvalResult) -> None:
        """Log ``eval/`` scalars and an ``eval.csv`` row; show the result on the progress bar."""
        self.last_eval = res
        row = _eval_row(step, self.wall_s(), self.cpu_s(), res)
        for key, value in row.items():
            if key not in ("step", "wall_s", "cpu_s") and np.isfinite(value):
                self.logger.record(f"eval/{key}", value)
        self.logger.dump(step)
        new = not self.eval_csv.is_file()
        with self.eval_csv.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=EVAL_FIELDS)
            if new:
                writer.writeheader()
            writer.writerow(row)
        if self.bar is not None:
            self.bar.set_postfix_str(_eval_text(res))

    def checkpoint(self, step: int) -> None:
        extra = self.extra_state() if self.extra_state else {}
        self.state = dataclasses.replace(
            self.state, step=step, wall_s=self.wall_s(), cpu_s=self.cpu_s(), extra=extra
        )
        self.session_start = time.perf_counter()
        self.cpu_start = cpu_seconds()
        self.checkpointer.save(self.model, self.state)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ------------------------------------------------------------------------------------------
# the loop


def model_card(
    args: PPOArgs,
    script: str,
    rules: Rules,
    objective: str,
    steps: int,
    wall_s: float,
    cpu_s: float,
    sessions: int,
    evaluation: dict[str, Any] | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON card saved beside ``model.zip``."""
    import sb3_contrib
    import stable_baselines3

    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "format_version": CARD_VERSION,
        "algorithm": "MaskablePPO",
        "script": script,
        "rules": rules.to_dict(),
        "rules_fingerprint": rules.fingerprint,
        "objective": objective,
        "obs_spec_version": OBS_SPEC_VERSION,
        "action_catalog_version": ActionCatalog(rules).version,
        "args": dataclasses.asdict(args),
        "seed": args.seed,
        "steps": steps,
        "wall_time_s": round(wall_s, 1),
        "cpu_time_s": round(cpu_s, 1),
        "cpu_time_note": "CPU seconds of training, periodic evaluations included, final evaluation excluded",
        "sessions": sessions,
        "evaluation": evaluation,
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__,
        },
    }
    if extra:
        card.update(extra)
    return card


def _policy_kwargs(args: PPOArgs, rules: Rules) -> dict[str, Any]:
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation]
    layers = [args.net_width] * args.net_depth
    critic = [args.vf_width or args.net_width] * (args.vf_depth or args.net_depth)
    kwargs: dict[str, Any] = {"net_arch": {"pi": layers, "vf": critic}, "activation_fn": act}
    if args.features in ("greed", "margin", "margin-final", "margin-cross"):
        from greed_env.train.features import GreedFeatures

        cfg = FeatureConfig.for_rules(
            rules,
            margin=args.features.startswith("margin"),
            final_only=args.features in ("margin-final", "margin-cross"),
            cross=args.features == "margin-cross",
        )
        kwargs["features_extractor_class"] = GreedFeatures
        kwargs["features_extractor_kwargs"] = {"config": cfg.to_dict()}
    if args.policy_head == "structured":
        kwargs["action_features"] = action_features(rules).tolist()
    return kwargs


def _policy_class(args: PPOArgs) -> Any:
    if args.policy_head == "structured":
        from greed_env.train.features import GreedActorCriticPolicy

        return GreedActorCriticPolicy
    return "MlpPolicy"


def _init_weights(model: MaskablePPO, path: Path, rules: Rules) -> None:
    """Copy the policy weights of the model at ``path`` into ``model``.

    Raises:
        ModelFileError: missing file, another network shape, or a card naming other rules.
    """
    from greed_env.bots.cards import check_training_card as check_card
    from greed_env.bots.cards import read_training_card as read_card
    from greed_env.bots.errors import BotLoadError as ModelFileError

    if not path.is_file():
        raise ModelFileError(f"--init-from: model file {path} does not exist")
    card = read_card(path)
    if card is not None:
        check_card(card, rules, f"--init-from {path}")
    # a failed strict load still copies the tensors that fit, so keep the initial weights apart
    initial = {key: value.clone() for key, value in model.policy.state_dict().items()}
    try:
        model.set_parameters(str(path), exact_match=True, device="cpu")
        return
    except Exception as exc:
        error = str(exc)
    from stable_baselines3.common.save_util import load_from_zip_file

    try:
        _, params, _ = load_from_zip_file(str(path), device="cpu")
        fitted = _fit_weights(model, (params or {}).get("policy", {}), initial)
    except Exception as exc:
        raise ModelFileError(f"--init-from {path}: cannot read its weights: {exc}") from None
    if fitted is None:
        raise ModelFileError(f"--init-from {path}: its weights do not fit this network: {error}")
    state, fresh_critic = fitted
    model.policy.load_state_dict(state, strict=True)
    if fresh_critic:
        print(f"--init-from {path}: policy weights loaded; the value network has another depth and starts afresh")


def _soften(model: MaskablePPO, temperature: float, rules: Rules) -> None:
    """Divide the policy's logits of every move but keeps by ``temperature``.

    Those moves (bank, roll on, ...) are only ever legal among themselves, never beside a
    keep, so each such decision is softened and no keep decision changes. Their rows of the
    structured head's action features are zero, so scaling the free rows is enough.
    """
    if temperature < 1.0:
        raise ValueError(f"--init-temperature must be >= 1, got {temperature}")
    if temperature == 1.0:
        return
    rows = torch.as_tensor([e.index for e in ActionCatalog(rules).entries if e.kind != "keep"])
    head = model.policy.action_net
    layer = head.free if hasattr(head, "free") else head
    if hasattr(head, "phi") and bool(head.phi[rows].abs().sum() > 0):
        raise ValueError("non-keep moves with action features cannot be softened")
    with torch.no_grad():
        layer.weight[rows] /= temperature
        layer.bias[rows] /= temperature


_CRITIC_KEYS = ("mlp_extractor.value_net.", "value_net.")


def _is_critic(key: str) -> bool:
    return key.startswith(_CRITIC_KEYS)


def _fit_weights(
    model: MaskablePPO, old: dict[str, torch.Tensor], new: dict[str, torch.Tensor]
) -> tuple[dict[str, torch.Tensor], bool] | None:
    """``old`` fitted to ``model``'s policy whose initial weights are ``new``, and whether its
    value network starts afresh; None when the policy (actor) does not fit.

    Three differences are bridged. Margin readings (or crossing readings) the old network lacks
    are the last inputs of the first layers; a network without them is the same function as one
    whose weights on them are zero, so those columns start at zero. A wider value network
    (``--vf-width``, same depth) is the same function as the old one: the old units keep their
    weights and see only the old inputs, the new units start from the new model's initial
    weights and their outgoing weights are zero (so they learn from the first update on). A value network of another depth
    keeps the new model's initial weights, all of it, never a mix of layers. The optimizer
    starts afresh either way.
    """
    extractor = model.policy.features_extractor
    cfg = FeatureConfig.from_dict(extractor.config) if hasattr(extractor, "config") else None
    # the margin readings, and the crossing readings after them, may be missing at the end
    pads = {cfg.margin_dim, 2 * cfg.margin_dim if cfg.margin_cross else 0} - {0} if cfg else set()

    def fit(key: str) -> torch.Tensor | None:
        src, target = old.get(key), new[key]
        if src is None:
            return None
        if src.shape == target.shape:
            return src.to(target.dtype)
        if src.dim() == 2 and src.shape[0] == target.shape[0] and target.shape[1] - src.shape[1] in pads:
            wide = torch.zeros_like(target)
            wide[:, : src.shape[1]] = src
            return wide
        return None

    if {k for k in old if not _is_critic(k)} != {k for k in new if not _is_critic(k)}:
        return None
    out: dict[str, torch.Tensor] = {}
    for key in new:
        if not _is_critic(key):
            value = fit(key)
            if value is None:
                return None
            out[key] = value

    def widen(key: str) -> torch.Tensor | None:
        src, target = old.get(key), new[key]
        if src is None or src.dim() != target.dim():
            return None
        if any(a > b for a, b in zip(src.shape, target.shape, strict=True)):
            return None
        out = target.clone()
        if src.dim() == 2:
            out[: src.shape[0]] = 0
            out[: src.shape[0], : src.shape[1]] = src.to(target.dtype)
        else:
            out[: src.shape[0]] = src.to(target.dtype)
        return out

    critic = {key: widen(key) for key in new if _is_critic(key)}
    fresh = {k for k in old if _is_critic(k)} != set(critic) or any(v is None for v in critic.values())
    for key, value in critic.items():
        out[key] = value if value is not None and not fresh else new[key]
    return out, fresh


def _lr_schedule(args: PPOArgs) -> Any:
    if not args.anneal_lr:
        return args.learning_rate
    lr = args.learning_rate
    return lambda progress_remaining: progress_remaining * lr


def run_training(
    args: PPOArgs,
    *,
    script: str,
    rules: Rules,
    objective: str,
    env_fns: Callable[[int, Path], Sequence[EnvFn]],
    evaluate_policy: Callable[[NumpyPolicy], EvalResult],
    final_evaluate: Callable[[NumpyPolicy], EvalResult],
    card_extra: dict[str, Any] | None = None,
    extra_state: Callable[[], dict[str, Any]] | None = None,
    restore_extra: Callable[[dict[str, Any]], None] | None = None,
    on_iteration: Callable[[MaskablePPO, int], None] | None = None,
    wrap_venv: Callable[[VecEnv], VecEnv] | None = None,
) -> Path:
    """Train (or resume) a MaskablePPO run and save ``model.zip`` with ``model.json``.

    Args:
        args: the script's arguments.
        script: the script's name for the card.
        rules, objective: what is trained (the objective is part of the run name).
        env_fns: ``(seed, run directory) -> environment factories``.
        evaluate_policy: periodic evaluation of a policy snapshot.
        final_evaluate: the evaluation written into the card.
        card_extra: more card fields.
        extra_state / restore_extra: save and restore script state with each checkpoint.
        on_iteration: called at the start of every rollout with the model and the step count.
        wrap_venv: applied to the vector environment (after its ``VecMonitor``, so episode
            statistics stay the environment's own rewards), e.g. reward shaping.

    Returns:
        The run directory.
    """
    check_args(args)
    session_start = time.perf_counter()
    run_dir, resumed = prepare_run(args, objective)
    try:
        return _train(args, script, rules, objective, env_fns, evaluate_policy, final_evaluate, card_extra,
                      extra_state, restore_extra, on_iteration, wrap_venv, session_start, run_dir, resumed)
    except Exception:
        if resumed is None and not (run_dir / "checkpoints" / "latest.json").is_file():
            shutil.rmtree(run_dir, ignore_errors=True)  # failed before its first checkpoint
        raise


def _train(
    args: PPOArgs,
    script: str,
    rules: Rules,
    objective: str,
    env_fns: Callable[[int, Path], Sequence[EnvFn]],
    evaluate_policy: Callable[[NumpyPolicy], EvalResult],
    final_evaluate: Callable[[NumpyPolicy], EvalResult],
    card_extra: dict[str, Any] | None,
    extra_state: Callable[[], dict[str, Any]] | None,
    restore_extra: Callable[[dict[str, Any]], None] | None,
    on_iteration: Callable[[MaskablePPO, int], None] | None,
    wrap_venv: Callable[[VecEnv], VecEnv] | None,
    session_start: float,
    run_dir: Path,
    resumed: RunState | None,
) -> Path:
    state = resumed or RunState()
    state = dataclasses.replace(state, sessions=state.sessions + 1)
    if resumed is not None and (run_dir / "model.zip").is_file() and resumed.step >= args.total_timesteps:
        print(f"{run_dir} is already complete ({resumed.step} steps)")
        return run_dir

    # seeding: the network and PPO's sampling from the seed; environments from seed + steps
    # done, so a resumed session does not replay the episodes of the first one
    torch.manual_seed(args.seed + state.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + state.step

    if resumed is not None and restore_extra is not None:
        restore_extra(resumed.extra)
    venv = make_vec_env(env_fns(env_seed, run_dir), args.vector, env_seed)
    if wrap_venv is not None:
        venv = wrap_venv(venv)
    ppo_kwargs = dict(
        n_steps=args.num_steps,
        batch_size=args.minibatch_size,
        n_epochs=args.update_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_coef,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        target_kl=args.target_kl,
    )
    if resumed is not None:
        ckpt = Checkpointer(run_dir).dir / resumed.model_file
        model = MaskablePPO.load(ckpt, env=venv, device="cpu", seed=env_seed)
        _truncate_eval_csv(run_dir / "eval.csv", resumed.step)
        print(f"resuming {run_dir.name} from step {model.num_timesteps:,} ({ckpt.name})")
    else:
        model = MaskablePPO(
            _policy_class(args),
            venv,
            learning_rate=_lr_schedule(args),
            policy_kwargs=_policy_kwargs(args, rules),
            seed=args.seed,
            device="cpu",
            verbose=0,
            **ppo_kwargs,
        )
        if args.init_from:
            _init_weights(model, Path(args.init_from), rules)
            _soften(model, args.init_temperature, rules)
    model.set_logger(make_logger(run_dir))
    callback = TrainingCallback(
        args, run_dir, evaluate_policy, state, session_start, extra_state, on_iteration
    )
    remaining = args.total_timesteps - model.num_timesteps
    try:
        if remaining > 0:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                reset_num_timesteps=resumed is None,
                progress_bar=False,
            )
    finally:
        with contextlib.suppress(Exception):
            venv.close()
    steps = model.num_timesteps
    callback.checkpoint(steps)
    train_cpu_s = callback.cpu_s()
    final = final_evaluate(NumpyPolicy.from_sb3(model))
    callback.record_eval(steps, final)
    save_model_atomic(model, run_dir / "model.zip")
    card = model_card(
        args,
        script,
        rules,
        objective,
        steps,
        callback.wall_s(),
        train_cpu_s,
        state.sessions,
        final.summary(),
        card_extra,
    )
    atomic_write_text(run_dir / "model.json", json.dumps(card, indent=1, default=_json_default))
    model.logger.close()
    print(
        f"saved {run_dir / 'model.zip'}: {steps:,} steps, {card['wall_time_s']:.0f} s wall, "
        f"{card['cpu_time_s']:.0f} s CPU; final {_eval_text(final)}"
    )
    return run_dir


def _eval_text(res: EvalResult) -> str:
    """One line: the measured value, the regret-based estimate, and the optimal value."""
    text = f"{res.score.fmt(4 if res.objective == 'duel' else 1)} {res.units}"
    if res.regret_estimate is not None:
        text += f", optimal-regret {res.regret_estimate.fmt(4 if res.objective == 'duel' else 2)}"
    if res.exact is not None:
        text += f", exact {res.exact:.2f} ({100 * (res.exact_ratio or 0.0):.2f}%)"
    return text + f" (optimal {res.optimal:.4g})"


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON-able: {value!r}")
