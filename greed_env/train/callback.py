"""The stable-baselines3 callback of the training scripts: progress bar, entropy schedule,
periodic evaluation against the solver (``eval.csv`` and ``eval/`` scalars), value-network
warm-up, checkpoints and the run's CPU and wall clocks.

A script passes it to ``model.learn``; it reads the script's ``Args`` fields
``total_timesteps``, ``ent_coef``, ``ent_coef_final``, ``ent_anneal_fraction``,
``eval_every``, ``checkpoint_every``, ``progress`` and, where it has one, ``vf_warmup``."""

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
from greed_env.train.runs import EVAL_FIELDS, Checkpointer, RunState, eval_row
from greed_env.train.warmstart import is_critic

__all__ = ["RunView", "TrainingCallback", "cpu_seconds", "eval_text"]


class RunView(Protocol):
    """What the callback reads of a run (:class:`greed_env.train.session.Run` has it)."""

    dir: Path
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
        args: Any,
        run: RunView,
        evaluate_policy: Callable[[NumpyPolicy], EvalResult],
        *,
        extra_state: Callable[[], dict[str, Any]] | None = None,
        on_iteration: Callable[[MaskablePPO, int], None] | None = None,
    ) -> None:
        """
        Args:
            args: the script's arguments.
            run: the run being trained (its folder, where it stands, when this session began).
            evaluate_policy: the periodic evaluation of a policy snapshot.
            extra_state: script state saved with each checkpoint (e.g. the self-play pool).
            on_iteration: called at the start of every rollout with the model and its steps.
        """
        super().__init__()
        self.args = args
        self.run_dir = run.dir
        self.evaluate_policy = evaluate_policy
        self.state = run.state
        self.session_start = run.session_start
        self.cpu_start = cpu_seconds()
        self.extra_state = extra_state
        self.on_iteration = on_iteration
        self.checkpointer = Checkpointer(run.dir)
        self.eval_csv = run.dir / "eval.csv"
        self.next_eval = 0 if run.state.step == 0 else run.state.step + args.eval_every
        self.next_ckpt = run.state.step + args.checkpoint_every
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
        warmup = getattr(self.args, "vf_warmup", 0)
        if warmup:
            frozen = step < warmup
            for name, param in self.model.policy.named_parameters():
                if not is_critic(name):
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
