"""Teacher-assisted PPO ("kickstarting"): MaskablePPO plus a distillation term toward the
exact solver's move distribution at the student's own states (importing this imports torch).

The loss of each minibatch is PPO's (clipped surrogate, value loss, entropy bonus) plus

    w(t) * mean over labelled states of KL(teacher || student)

where the KL runs over the legal moves only: the student's masked distribution puts no mass
on an illegal move, and the teacher (:class:`greed_env.train.teacher.TeacherLabeller`) none
either. Its gradient in the student's logits is ``student - teacher`` per legal move, so a
step raises the logits the teacher prefers over the student's current choice; the weight
``w(t)`` falls linearly from ``weight`` to exactly 0 at step ``until`` (:class:`TeacherSchedule`).
From there on no state is labelled and the update is MaskablePPO's own, operation for
operation (tested), so the policy the run ends with is PPO's.

The pieces:

* :class:`RowRecorder`: a ``VecEnv`` wrapper over the native vector engine that keeps the
  game rows the learner acts from at each step of a rollout (the state behind each
  observation, which the teacher needs and the observation does not fully hold);
* :class:`TeacherRolloutBuffer`: sb3-contrib's masked rollout buffer with the teacher's
  packed distributions beside each step;
* :class:`KickstartPPO`: ``MaskablePPO`` whose ``train`` labels the rollout in one batch
  (grouped by turn context, at most ``max_contexts`` contexts per rollout), then adds the term;
* :func:`distillation_loss`: the term itself, on log-probabilities and packed labels;
* :class:`TeacherStarts`: exploring starts at positions of the teacher's own games
  (:func:`greed_env.train.teacher.teacher_starts`).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer, MaskableRolloutBufferSamples
from stable_baselines3.common.utils import explained_variance
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from torch.nn import functional as F

from greed_env.bots.cards import read_card, write_card
from greed_env.bots.export import export_model
from greed_env.rules import State
from greed_env.train.teacher import TeacherLabeller, TeacherLabels

__all__ = [
    "KickstartPPO",
    "RowRecorder",
    "TeacherRolloutBuffer",
    "TeacherSamples",
    "TeacherSchedule",
    "TeacherStarts",
    "distillation_loss",
    "export_bot",
]


@dataclass(frozen=True)
class TeacherSchedule:
    """Weight of the distillation term: ``weight`` at step 0, falling linearly to exactly 0
    at step ``until`` and 0 after.

    >>> s = TeacherSchedule(2.0, 1000)
    >>> s.at(0), s.at(250), s.at(1000), s.at(5000)
    (2.0, 1.5, 0.0, 0.0)
    """

    weight: float
    until: int

    def __post_init__(self) -> None:
        if not (self.weight >= 0.0 and np.isfinite(self.weight)):
            raise ValueError(f"teacher weight must be a finite number >= 0, got {self.weight!r}")
        if self.until < 0:
            raise ValueError(f"teacher steps must be >= 0, got {self.until!r}")

    def at(self, step: int) -> float:
        """The weight after ``step`` environment steps."""
        if step >= self.until or self.weight == 0.0:
            return 0.0
        return self.weight * (1.0 - step / self.until)


def distillation_loss(
    log_probs: th.Tensor, actions: th.Tensor, probs: th.Tensor, labelled: th.Tensor
) -> th.Tensor:
    """Mean over the labelled rows of ``KL(teacher || student)``.

    Args:
        log_probs: ``(n, A)`` the student's normalised log-probabilities (masked moves at
            a very low value, as sb3-contrib masks them).
        actions, probs: ``(n, k)`` the teacher's packed distribution (``-1`` / 0 padding).
        labelled: ``(n,)`` bool, rows with a teacher distribution.

    Returns:
        A scalar (0 when no row is labelled). Teacher moves of probability 0 add nothing.
    """
    if not bool(labelled.any()):
        return log_probs.sum() * 0.0
    lp = log_probs[labelled]
    idx = actions[labelled]
    p = probs[labelled].to(lp.dtype)
    student = lp.gather(1, idx.clamp(min=0))
    own = th.where(p > 0, p * th.log(th.where(p > 0, p, th.ones_like(p))), th.zeros_like(p))
    kl = (own - p * student).sum(dim=1)
    return kl.mean()


class RowRecorder(VecEnvWrapper):
    """Keeps the native engine's game rows at every ``step_async`` (the positions the
    actions are chosen at), for the teacher to label after the rollout.

    Wrap it outermost (over ``VecMonitor`` and any exploring-start wrapper), so the rows are
    those of the observations the learner saw.

    Raises:
        ValueError: a vector env that is not the native engine.
    """

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.batch = _native_batch(venv, "the teacher's labels")
        self._rows: list[np.ndarray] = []

    def reset(self) -> Any:
        self._rows.clear()
        return self.venv.reset()

    def step_async(self, actions: np.ndarray) -> None:
        self._rows.append(self.batch.S.copy())
        self.venv.step_async(actions)

    def step_wait(self) -> Any:
        return self.venv.step_wait()

    def take(self) -> np.ndarray:
        """``(steps, num_envs, N_COLS)`` rows recorded since the last call (then cleared)."""
        rows = np.stack(self._rows) if self._rows else np.zeros((0, self.num_envs, self.batch.S.shape[1]), np.int64)
        self._rows = []
        return rows


class TeacherStarts(VecEnvWrapper):
    """Starts a share of the native engine's episodes at positions drawn from a pool (the
    turn starts of the teacher's games against itself), played on to the learner's decision.

    Args:
        venv: the native vector env, possibly inside ``VecMonitor``.
        pool: the positions (same number of seats as the episodes, not over).
        fraction: probability that a (re)starting episode is replaced by a pool position.
        seed: seed of the wrapper's own generator (which episodes, which positions).
    """

    def __init__(self, venv: VecEnv, pool: list[State], fraction: float, seed: int) -> None:
        super().__init__(venv)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction}")
        if not pool:
            raise ValueError("teacher starts need a non-empty pool of positions")
        self.batch = _native_batch(venv, "teacher starts")
        self.pool = list(pool)
        self.fraction = float(fraction)
        self.rng = np.random.default_rng(seed)

    def _restart(self, rows: np.ndarray, obs: np.ndarray) -> np.ndarray:
        picked = rows[self.rng.random(rows.size) < self.fraction]
        if picked.size == 0:
            return obs
        draws = self.rng.integers(0, len(self.pool), size=picked.size)
        self.batch.restart_from({int(i): self.pool[int(k)] for i, k in zip(picked, draws, strict=True)})
        obs = np.array(obs, copy=True)
        obs[picked] = self.batch.obs[picked]
        return obs

    def reset(self) -> Any:
        return self._restart(np.arange(self.num_envs), self.venv.reset())

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        return self._restart(np.flatnonzero(dones), obs), rewards, dones, infos


def _native_batch(venv: VecEnv, what: str) -> Any:
    """The :class:`~greed_env.vector.engine.EpisodeBatch` under ``venv``'s wrappers."""
    inner: Any = venv
    while not hasattr(getattr(inner, "env", None), "batch"):
        if not hasattr(inner, "venv"):
            raise ValueError(f"{what} need the native vector env (--vector native)")
        inner = inner.venv
    return inner.env.batch


class TeacherSamples(NamedTuple):
    """A minibatch: sb3-contrib's fields, then the teacher's packed distributions."""

    observations: th.Tensor
    actions: th.Tensor
    old_values: th.Tensor
    old_log_prob: th.Tensor
    advantages: th.Tensor
    returns: th.Tensor
    action_masks: th.Tensor
    teacher_actions: th.Tensor
    teacher_probs: th.Tensor
    teacher_on: th.Tensor


class TeacherRolloutBuffer(MaskableRolloutBuffer):
    """sb3-contrib's masked rollout buffer with the teacher's labels of each step.

    Without labels (:meth:`set_teacher` not called since the last reset) it yields exactly
    what :class:`MaskableRolloutBuffer` yields, drawing the same permutation.
    """

    def reset(self) -> None:
        super().reset()
        self.teacher: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def set_teacher(self, labels: TeacherLabels) -> None:
        """Attach labels of the ``buffer_size * n_envs`` recorded positions, step-major (the
        rows of step 0 for every environment, then step 1, ...)."""
        n, k = labels.actions.shape
        if n != self.buffer_size * self.n_envs:
            raise ValueError(f"{n} labels for a buffer of {self.buffer_size} x {self.n_envs} positions")
        shape = (self.buffer_size, self.n_envs)
        self.teacher = (
            labels.actions.reshape(*shape, k),
            labels.probs.reshape(*shape, k),
            labels.labelled.reshape(shape),
        )

    def get(self, batch_size: int | None = None) -> Generator[Any, None, None]:  # type: ignore[override]
        if self.teacher is None:
            yield from super().get(batch_size)
            return
        assert self.full, ""
        indices = np.random.permutation(self.buffer_size * self.n_envs)
        if not self.generator_ready:
            for tensor in ["observations", "actions", "values", "log_probs", "advantages", "returns", "action_masks"]:
                self.__dict__[tensor] = self.swap_and_flatten(self.__dict__[tensor])
            acts, probs, on = self.teacher
            self.teacher = (self.swap_and_flatten(acts), self.swap_and_flatten(probs), on.swapaxes(0, 1).reshape(-1))
            self.generator_ready = True
        if batch_size is None:
            batch_size = self.buffer_size * self.n_envs
        start = 0
        while start < self.buffer_size * self.n_envs:
            yield self._teacher_samples(indices[start : start + batch_size])
            start += batch_size

    def _teacher_samples(self, inds: np.ndarray) -> TeacherSamples:
        base: MaskableRolloutBufferSamples = self._get_samples(inds)
        assert self.teacher is not None
        acts, probs, on = self.teacher
        return TeacherSamples(
            *base,
            th.as_tensor(acts[inds], device=self.device),
            th.as_tensor(probs[inds], device=self.device),
            th.as_tensor(on[inds], device=self.device),
        )


class KickstartPPO(MaskablePPO):
    """MaskablePPO with a distillation term toward a teacher (see the module docstring).

    Args (beyond MaskablePPO's):
        teacher: labels the recorded positions (None: plain MaskablePPO).
        schedule: the term's weight over the run.
        recorder: the :class:`RowRecorder` wrapping ``env`` (found in ``env`` by default).
        max_contexts: label at most this many turn contexts per rollout (a duel's context is
            a score pair, whose in-turn pass costs milliseconds); the positions of the others
            go without a label. The contexts are taken in the order of a random permutation
            of the positions, so larger ones tend to come first. None: every context.
    """

    rollout_buffer: TeacherRolloutBuffer  # type: ignore[assignment]

    def __init__(
        self,
        *args: Any,
        teacher: TeacherLabeller | None = None,
        schedule: TeacherSchedule | None = None,
        recorder: RowRecorder | None = None,
        max_contexts: int | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("rollout_buffer_class", TeacherRolloutBuffer)
        super().__init__(*args, **kwargs)
        self.attach_teacher(teacher, schedule or TeacherSchedule(0.0, 0), recorder, max_contexts)

    def attach_teacher(
        self,
        teacher: TeacherLabeller | None,
        schedule: TeacherSchedule,
        recorder: RowRecorder | None = None,
        max_contexts: int | None = None,
    ) -> None:
        """Set the teacher (also after :meth:`load`, which does not save it)."""
        self.teacher = teacher
        self.teacher_schedule = schedule
        self.max_contexts = max_contexts
        if recorder is None and teacher is not None and self.env is not None:
            recorder = _find_recorder(self.env)
        self.recorder = recorder
        self.label_seconds = 0.0
        self._label_rng = np.random.default_rng(int(self.seed or 0) + 7)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "teacher", "recorder", "_label_rng"]

    def teacher_weight(self) -> float:
        """The term's weight at the current step count."""
        if self.teacher is None:
            return 0.0
        return self.teacher_schedule.at(self.num_timesteps)

    def _label_rollout(self) -> TeacherLabels:
        assert self.teacher is not None and self.recorder is not None
        rows = self.recorder.take()
        n_steps, n_envs = self.rollout_buffer.buffer_size, self.rollout_buffer.n_envs
        if rows.shape[:2] != (n_steps, n_envs):
            raise RuntimeError(f"recorded {rows.shape[:2]} positions for a rollout of {(n_steps, n_envs)}")
        flat = rows.reshape(n_steps * n_envs, -1)
        masks = self.rollout_buffer.action_masks.reshape(n_steps * n_envs, -1)
        t0 = time.process_time()
        labels = self.teacher.label(flat, masks, max_contexts=self.max_contexts, rng=self._label_rng)
        self.label_seconds += time.process_time() - t0
        return labels

    def train(self) -> None:
        """One PPO update; while the weight is above 0, with the distillation term."""
        weight = self.teacher_weight()
        self.logger.record("train/teacher_weight", weight)
        if weight == 0.0:
            if self.recorder is not None:
                self.recorder.take()
            super().train()
            return
        t0 = time.process_time()
        labels = self._label_rollout()
        self.rollout_buffer.set_teacher(labels)
        self.logger.record("charts/teacher_label_cpu_s", time.process_time() - t0)
        self.logger.record("charts/teacher_labelled", float(labels.labelled.mean()))
        self._train_with_teacher(weight)

    def _evaluate(self, obs: th.Tensor, actions: th.Tensor, masks: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor, th.Tensor]:
        """``evaluate_actions`` that also returns the normalised log-probabilities."""
        policy = self.policy
        features = policy.extract_features(obs)
        if policy.share_features_extractor:
            latent_pi, latent_vf = policy.mlp_extractor(features)
        else:
            pi_features, vf_features = features
            latent_pi = policy.mlp_extractor.forward_actor(pi_features)
            latent_vf = policy.mlp_extractor.forward_critic(vf_features)
        dist = policy._get_action_dist_from_latent(latent_pi)
        dist.apply_masking(masks)
        log_prob = dist.log_prob(actions)
        values = policy.value_net(latent_vf)
        return values, log_prob, dist.entropy(), dist.distribution.logits

    def _train_with_teacher(self, weight: float) -> None:
        """MaskablePPO's ``train`` with ``weight * distillation_loss`` added to each minibatch."""
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        if self.clip_range_vf is not None:
            clip_range_vf = self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]
        entropy_losses, pg_losses, value_losses, clip_fractions, kls, agree = [], [], [], [], [], []
        continue_training = True
        approx_kl_divs: list[float] = []
        for _epoch in range(self.n_epochs):
            approx_kl_divs = []
            for data in self.rollout_buffer.get(self.batch_size):
                actions = data.actions
                if isinstance(self.action_space, spaces.Discrete):
                    actions = data.actions.long().flatten()
                values, log_prob, entropy, log_probs = self._evaluate(data.observations, actions, data.action_masks)
                values = values.flatten()
                advantages = data.advantages
                if self.normalize_advantage:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                ratio = th.exp(log_prob - data.old_log_prob)
                policy_loss_1 = advantages * ratio
                policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
                policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
                pg_losses.append(policy_loss.item())
                clip_fractions.append(th.mean((th.abs(ratio - 1) > clip_range).float()).item())
                if self.clip_range_vf is None:
                    values_pred = values
                else:
                    values_pred = data.old_values + th.clamp(values - data.old_values, -clip_range_vf, clip_range_vf)
                value_loss = F.mse_loss(data.returns, values_pred)
                value_losses.append(value_loss.item())
                entropy_loss = -th.mean(-log_prob) if entropy is None else -th.mean(entropy)
                entropy_losses.append(entropy_loss.item())
                on = data.teacher_on.bool()
                distill = distillation_loss(log_probs, data.teacher_actions.long(), data.teacher_probs, on)
                kls.append(distill.item())
                if bool(on.any()):
                    with th.no_grad():
                        best = data.teacher_actions[on].gather(1, data.teacher_probs[on].argmax(dim=1, keepdim=True))
                        agree.append(float((log_probs[on].argmax(dim=1, keepdim=True) == best).float().mean()))
                loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss + weight * distill
                with th.no_grad():
                    log_ratio = log_prob - data.old_log_prob
                    approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                    approx_kl_divs.append(float(approx_kl_div))
                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    break
                self.policy.optimizer.zero_grad()
                loss.backward()
                th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()
            self._n_updates += 1
            if not continue_training:
                break
        explained_var = explained_variance(self.rollout_buffer.values.flatten(), self.rollout_buffer.returns.flatten())
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/teacher_kl", np.mean(kls))
        if agree:
            self.logger.record("train/teacher_agreement", np.mean(agree))
        self.logger.record("train/loss", loss.item())
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)


def _find_recorder(env: VecEnv) -> RowRecorder | None:
    inner: Any = env
    while inner is not None:
        if isinstance(inner, RowRecorder):
            return inner
        inner = getattr(inner, "venv", None)
    return None


def export_bot(
    model_path: Path,
    out_dir: Path,
    name: str,
    description: str,
    notes: str,
    *,
    check_positions: int = 10_000,
    seed: int = 1,
    games: int = 200,
) -> Path:
    """Export a trained model as an ONNX bot (``out_dir/name.onnx`` and its card), checked
    against the model on ``check_positions`` random positions, with ``games`` games against
    each of the rules' default opponents in the card; returns the card path.

    A card never names a machine path (the run's arguments: see
    :func:`greed_env.bots.export.portable_args`); the source model is recorded as
    ``runs/<run>/model.zip``.
    """
    result = export_model(model_path, out_dir, name=name, description=description,
                          check_positions=check_positions, seed=seed, notes=notes, evaluate_games=games)
    card = read_card(result.card_path)
    card["export"]["source_model"] = f"runs/{model_path.parent.name}/{model_path.name}"
    write_card(result.card_path, card)
    print(f"exported {result.onnx_path} and {result.card_path} "
          f"({result.positions} positions checked, {result.mismatches} mismatches)")
    return Path(result.card_path)
