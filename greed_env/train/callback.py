"""The stable-baselines3 callback of the training scripts: progress bar, entropy schedule,
periodic evaluation against the solver (``eval.csv`` and ``eval/`` scalars), value-network
warm-up, checkpoints and the run's CPU and wall clocks.

A script passes it to ``model.learn``; it reads the run's :class:`RunSettings` (length,
checkpoints, progress bar), the entropy schedule of its :class:`PPOSettings` and how often its
:class:`EvalSettings` evaluate."""

from __future__ import annotations

import csv
import dataclasses
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from tqdm.auto import tqdm

from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.evaluation import EvalResult
from greed_env.files import atomic_write_text
from greed_env.train.checkpoints import Checkpointer, RunState
from greed_env.train.settings import EvalSettings, PPOSettings, RunSettings
from greed_env.train.warmstart import is_critic

__all__ = ["EVAL_FIELDS", "RunView", "TrainingCallback", "cpu_seconds", "eval_row", "eval_text", "truncate_eval_csv"]


class RunView(Protocol):
    """What the callback reads of a run (:class:`greed_env.train.run.Run` has it)."""

    dir: Path
    settings: RunSettings
    state: RunState
    session_start: float


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its children that have ended."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class TrainingCallback(BaseCallback):
    """Progress bar, entropy schedule, evaluations and checkpoints, between PPO iterations.

    Evaluations and checkpoints happen at the start of a rollout, when the parameters and the
    step count agree (the previous update is complete).
    """

    def __init__(
        self,
        run: RunView,
        evaluate_policy: Callable[[NumpyPolicy], EvalResult],
        *,
        ppo: PPOSettings,
        evaluation: EvalSettings,
        vf_warmup: int = 0,
        extra_state: Callable[[], dict[str, Any]] | None = None,
        on_iteration: Callable[[MaskablePPO, int], None] | None = None,
    ) -> None:
        """
        Args:
            run: the run being trained (its settings and folder, where it stands, when this
                session began).
            evaluate_policy: the periodic evaluation of a policy snapshot.
            ppo: the entropy schedule (``ent_coef`` to ``ent_coef_final``).
            evaluation: how often to evaluate (``eval_every``).
            vf_warmup: environment steps at the start during which only the value network learns.
            extra_state: script state saved with each checkpoint (e.g. the self-play pool).
            on_iteration: called at the start of every rollout with the model and its steps.
        """
        super().__init__()
        self.settings = run.settings
        self.ppo = ppo
        self.eval_every = evaluation.eval_every
        self.vf_warmup = vf_warmup
        self.run_dir = run.dir
        self.evaluate_policy = evaluate_policy
        self.state = run.state
        self.session_start = run.session_start
        self.cpu_start = cpu_seconds()
        self.extra_state = extra_state
        self.on_iteration = on_iteration
        self.checkpointer = Checkpointer(run.dir)
        self.eval_csv = run.dir / "eval.csv"
        self.next_eval = 0 if run.state.step == 0 else run.state.step + self.eval_every
        self.next_ckpt = run.state.step + self.settings.checkpoint_every
        self.last_eval: EvalResult | None = None
        self.bar: Any = None

    def wall_s(self) -> float:
        return self.state.wall_s + time.perf_counter() - self.session_start

    def cpu_s(self) -> float:
        return self.state.cpu_s + cpu_seconds() - self.cpu_start

    def _on_training_start(self) -> None:
        self.bar = tqdm(
            total=self.settings.total_timesteps,
            initial=self.model.num_timesteps,
            unit="step",
            unit_scale=True,
            dynamic_ncols=True,
            disable=not self.settings.progress,
            desc=self.run_dir.name[:40],
        )

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return True

    def _on_rollout_start(self) -> None:
        step = self.model.num_timesteps
        self.model.ent_coef = self.ppo.ent_coef_at(step, self.settings.total_timesteps)
        self.logger.record("charts/ent_coef", self.model.ent_coef)
        if self.vf_warmup:
            frozen = step < self.vf_warmup
            for name, param in self.model.policy.named_parameters():
                if not is_critic(name):
                    param.requires_grad_(not frozen)
            self.logger.record("charts/policy_frozen", float(frozen))
        if self.on_iteration is not None:
            self.on_iteration(self.model, step)
        if step >= self.next_eval:
            self.run_eval(step)
            self.next_eval = step + self.eval_every
        if step >= self.next_ckpt:
            self.checkpoint(step)
            self.next_ckpt = step + self.settings.checkpoint_every

    def run_eval(self, step: int) -> EvalResult:
        """Evaluate the current policy and record it."""
        res = self.evaluate_policy(NumpyPolicy.from_sb3(self.model))
        self.record_eval(step, res)
        return res

    def record_eval(self, step: int, res: EvalResult) -> None:
        """Log ``eval/`` scalars and an ``eval.csv`` row; show the result on the progress bar."""
        self.last_eval = res
        row = eval_row(step, self.wall_s(), self.cpu_s(), res)
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
            self.bar.set_postfix_str(eval_text(res))

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


def eval_text(res: EvalResult) -> str:
    """One line: the measured value, the regret-based estimate, and the optimal value."""
    text = f"{res.score.fmt(4 if res.objective == 'duel' else 1)} {res.units}"
    if res.regret_estimate is not None:
        text += f", optimal-regret {res.regret_estimate.fmt(4 if res.objective == 'duel' else 2)}"
    if res.exact is not None:
        text += f", exact {res.exact:.2f} ({100 * (res.exact_ratio or 0.0):.2f}%)"
    return text + f" (optimal {res.optimal:.4g})"


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
"""The columns of a run's ``eval.csv``, one row per evaluation."""


def eval_row(step: int, wall_s: float, cpu_s: float, res: EvalResult) -> dict[str, float]:
    """The ``eval.csv`` row of an evaluation after ``step`` steps."""
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


def truncate_eval_csv(path: Path, step: int) -> None:
    """Drop evaluation rows logged after ``step`` (a session killed after its checkpoint)."""
    if not path.is_file():
        return
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if float(r["step"]) <= step]
    text = ",".join(EVAL_FIELDS) + "\n" + "".join(
        ",".join(r.get(k, "") or "" for k in EVAL_FIELDS) + "\n" for r in rows
    )
    atomic_write_text(path, text)
