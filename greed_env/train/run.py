"""A training run: its folder, resuming it, and the model and card it ends with.

Run directory layout::

    runs/<rules>__<objective>__<exp>__<seed>__<time>/
        args.json            arguments of the first session
        tb/                  TensorBoard event files (:mod:`greed_env.train.tensorboard`)
        eval.csv             one row per evaluation (:data:`~greed_env.train.callback.EVAL_FIELDS`)
        checkpoints/         step_N.zip (the last two) and latest.json (:mod:`greed_env.train.checkpoints`)
        model.zip            final model (stable-baselines3 / sb3-contrib)
        model.json           its card (:func:`model_card`)

A training script (``training/*.py``) opens its run with :func:`start_run`, builds its
environments and its ``MaskablePPO`` (or, on ``--resume``, :meth:`Run.load_checkpoint`), calls
``model.learn`` with a :class:`~greed_env.train.callback.TrainingCallback`, and ends with
:meth:`Run.finish`, which evaluates the final policy and writes ``model.zip`` and its card::

    with start_run(args, objective="turn") as run:
        if run.complete:
            return run.dir
        ...
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
        run.finish(model, callback, final_evaluation, script=..., rules=rules, objective="turn")

The ``with`` block removes the folder of a fresh run that fails before its first checkpoint, so
a refused setting leaves nothing behind; a run with a checkpoint stays for ``--resume``.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, overload

import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.evaluation import EvalResult
from greed_env.files import atomic_write_text, strict_json
from greed_env.rules import Rules
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_SPEC_VERSION
from greed_env.train.callback import TrainingCallback, eval_text, truncate_eval_csv
from greed_env.train.checkpoints import Checkpointer, RunState, save_model_atomic
from greed_env.train.settings import RunSettings, run_name

__all__ = ["CARD_FORMAT", "CARD_VERSION", "Run", "model_card", "prepare_run", "start_run"]

Model = TypeVar("Model", bound=MaskablePPO)

CARD_FORMAT = "greed_env/training-card"
CARD_VERSION = 1


@dataclasses.dataclass
class Run:
    """A run being trained in this process.

    Attributes:
        dir: the run folder.
        settings: the script's arguments (its ``Args``, whose run part this reads).
        state: where the run stands, this session counted (step 0 for a fresh run; the
            checkpoint's step, clocks and sessions on ``--resume``).
        resumed: the run continues from a checkpoint.
        session_start: ``time.perf_counter()`` when this session began.
        complete: a resumed run that already has its final model (nothing left to train).
    """

    dir: Path
    settings: RunSettings
    state: RunState
    resumed: bool
    session_start: float
    complete: bool = False

    @property
    def step(self) -> int:
        """Environment steps done before this session."""
        return self.state.step

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None and not self.resumed and not (self.dir / "checkpoints" / "latest.json").is_file():
            shutil.rmtree(self.dir, ignore_errors=True)  # failed before its first checkpoint

    @overload
    def load_checkpoint(self, venv: VecEnv, seed: int) -> MaskablePPO: ...
    @overload
    def load_checkpoint(self, venv: VecEnv, seed: int, model_class: type[Model]) -> Model: ...

    def load_checkpoint(self, venv: VecEnv, seed: int, model_class: type[MaskablePPO] = MaskablePPO) -> MaskablePPO:
        """The model of the checkpoint this run resumes from, on ``venv`` (loaded as
        ``model_class``: a subclass such as the teacher scripts' ``KickstartPPO``)."""
        path = Checkpointer(self.dir).dir / self.state.model_file
        model = model_class.load(path, env=venv, device="cpu", seed=seed)
        truncate_eval_csv(self.dir / "eval.csv", self.state.step)
        print(f"resuming {self.dir.name} from step {model.num_timesteps:,} ({path.name})")
        return model

    def remaining(self, model: MaskablePPO) -> int:
        """Steps still to learn for a run of ``--total-timesteps``."""
        return max(0, self.settings.total_timesteps - model.num_timesteps)

    def finish(
        self,
        model: MaskablePPO,
        callback: TrainingCallback,
        final_evaluation: Callable[[NumpyPolicy], EvalResult],
        *,
        script: str,
        rules: Rules,
        objective: str,
        card_extra: dict[str, Any] | None = None,
    ) -> Path:
        """Checkpoint, evaluate the final policy, and write ``model.zip`` and ``model.json``.

        The card's CPU and wall times cover training and its periodic evaluations, not the
        final evaluation. Returns the run folder.
        """
        steps = model.num_timesteps
        callback.checkpoint(steps)
        cpu_s, wall_s = callback.cpu_s(), callback.wall_s()
        final = final_evaluation(NumpyPolicy.from_sb3(model))
        callback.record_eval(steps, final)
        save_model_atomic(model, self.dir / "model.zip")
        card = model_card(
            self.settings, script, rules, objective, steps, wall_s, cpu_s, callback.state.sessions,
            final.summary(), card_extra,
        )  # fmt: skip
        text = json.dumps(card, indent=1, default=_json_default)
        atomic_write_text(self.dir / "model.json", json.dumps(strict_json(json.loads(text)), indent=1, allow_nan=False))
        model.logger.close()
        print(
            f"saved {self.dir / 'model.zip'}: {steps:,} steps, {wall_s:.0f} s wall, {cpu_s:.0f} s CPU; "
            f"final {eval_text(final)}"
        )
        return self.dir


def start_run(args: RunSettings, objective: str) -> Run:
    """Check ``args`` (every part of the script's ``Args``: :meth:`~greed_env.train.settings.Settings.check`),
    then create the run folder (writing ``args.json``) or, with ``--resume``, find the run and
    its last intact checkpoint.

    Raises:
        ValueError: a setting no run can use (naming the flag).
        FileNotFoundError: ``--resume`` and no such run, or no checkpoint in it.
        FileExistsError: a fresh run whose folder exists.
    """
    args.check()
    session_start = time.perf_counter()
    run_dir, resumed = prepare_run(args, objective)
    state = resumed or RunState()
    state = dataclasses.replace(state, sessions=state.sessions + 1)
    complete = (
        resumed is not None and (run_dir / "model.zip").is_file() and resumed.step >= args.total_timesteps
    )
    if complete:
        print(f"{run_dir} is already complete ({resumed.step if resumed else 0} steps)")
    return Run(run_dir, args, state, resumed is not None, session_start, complete)


def prepare_run(args: RunSettings, objective: str) -> tuple[Path, RunState | None]:
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
            raise FileNotFoundError(
                f"--resume: {run_dir} has no checkpoint yet (it stopped before its first one, so "
                f"nothing was saved): delete it (rm -r {run_dir}) and run the same command without --resume"
            )
        return run_dir, ckpt.usable(state)
    name = args.run_name or run_name(args.rules, objective, args.exp_name, args.seed)
    run_dir = runs / name
    if run_dir.exists():
        raise FileExistsError(f"run directory {run_dir} exists: pass --resume to continue it, or another --run-name")
    run_dir.mkdir(parents=True)
    atomic_write_text(run_dir / "args.json", json.dumps(dataclasses.asdict(args), indent=1))
    return run_dir, None


def model_card(
    args: RunSettings,
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
    """The JSON training card saved beside ``model.zip`` (``greed_env/training-card`` v1)."""
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


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON-able: {value!r}")
