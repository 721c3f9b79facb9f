"""The machinery of teacher-assisted PPO ("kickstarting"; importing this imports torch).

The algorithm is in the teacher scripts (``training/ppo_teacher_turn.py``,
``ppo_teacher_duel.py``): each minibatch's loss is PPO's plus ``w(t) * KL(teacher || student)``
(:func:`distillation_loss`), ``w`` falling linearly to exactly 0; the script's weight schedule
and minibatch loss are what :class:`KickstartPPO` calls. From the step where the weight is 0 no
position is labelled and the update is MaskablePPO's own, operation for operation (tested), so
the policy the run ends with is PPO's. What the scripts take from here:

* :class:`RowRecorder`: a ``VecEnv`` wrapper over the native vector engine that keeps the
  game rows the learner acts from at each step of a rollout (the state behind each
  observation, which the teacher needs and the observation does not fully hold);
* :class:`TeacherRolloutBuffer`: sb3-contrib's masked rollout buffer with the teacher's
  packed distributions beside each step;
* :class:`KickstartPPO`: ``MaskablePPO`` whose ``train`` labels the rollout in one batch
  (:class:`greed_env.train.teacher.TeacherLabeller`, grouped by turn context, at most
  ``max_contexts`` contexts per rollout), then runs MaskablePPO's update with the script's
  minibatch loss in place of PPO's own sum;
* :func:`distillation_loss`: the KL term, on log-probabilities and packed labels;
* :class:`TeacherStarts`: exploring starts at positions of the teacher's own games
  (:func:`greed_env.train.teacher.teacher_starts`);
* :func:`export_bot`: the ONNX bot with a card that records the teacher run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
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
    "MinibatchLoss",
    "PPOLosses",
    "RowRecorder",
    "TeacherRolloutBuffer",
    "TeacherSamples",
    "TeacherStarts",
    "distillation_loss",
    "export_bot",
]


def distillation_loss(
    log_probs: th.Tensor, actions: th.Tensor, probs: th.Tensor, labelled: th.Tensor
) -> th.Tensor:
    """The mean over the labelled positions ``s`` of ``KL(teacher || student)``::

        KL(p || q)(s) = sum over moves a with p(a|s) > 0 of  p(a|s) * (log p(a|s) - log q(a|s))

    with ``p`` the teacher's distribution and ``q`` the student's masked one. Both put no mass
    on an illegal move, so the sum runs over the legal moves. Its gradient in the student's
    logits is ``q - p`` per legal move: a step raises the logits of the moves the teacher
    prefers over the student's current choice.

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


class PPOLosses(NamedTuple):
    """MaskablePPO's loss terms on one minibatch, and the student's log-probabilities."""

    policy: th.Tensor
    """the clipped surrogate objective, negated"""
    value: th.Tensor
    """the value network's squared error"""
    entropy: th.Tensor
    """the entropy bonus, negated"""
    log_probs: th.Tensor
    """``(n, A)`` the student's normalised log-probabilities (masked moves very low)"""


MinibatchLoss = Callable[["KickstartPPO", TeacherSamples, PPOLosses, float], tuple[th.Tensor, th.Tensor]]
"""A teacher script's loss of one minibatch: ``(model, batch, PPO's terms, w)`` to the loss
and the KL term (logged as ``train/teacher_kl``)."""


def _no_teacher(step: int) -> float:
    return 0.0


class KickstartPPO(MaskablePPO):
    """MaskablePPO whose update adds a teacher's term (see the module docstring).

    Args (beyond MaskablePPO's):
        teacher: labels the recorded positions (None: plain MaskablePPO).
        teacher_weight: the term's weight after a number of environment steps, ``w(t)``; an
            update at weight 0 labels nothing and is MaskablePPO's own.
        minibatch_loss: the loss of one minibatch while the weight is above 0.
        recorder: the :class:`RowRecorder` wrapping ``env`` (found in ``env`` by default).
        max_contexts: label at most this many turn contexts per rollout (a duel's context is
            a score pair, whose in-turn pass costs milliseconds); the positions of the others
            go without a label. The contexts are taken in the order of a random permutation
            of the positions, so larger ones tend to come first. None: every context.
    """

    rollout_buffer: TeacherRolloutBuffer  # type: ignore[assignment]

    def __init__(
        self,
        *positional: Any,
        teacher: TeacherLabeller | None = None,
        teacher_weight: Callable[[int], float] = _no_teacher,
        minibatch_loss: MinibatchLoss | None = None,
        recorder: RowRecorder | None = None,
        max_contexts: int | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("rollout_buffer_class", TeacherRolloutBuffer)
        super().__init__(*positional, **options)
        self.attach_teacher(teacher, teacher_weight, minibatch_loss, recorder, max_contexts)

    def attach_teacher(
        self,
        teacher: TeacherLabeller | None,
        teacher_weight: Callable[[int], float],
        minibatch_loss: MinibatchLoss | None,
        recorder: RowRecorder | None = None,
        max_contexts: int | None = None,
    ) -> None:
        """Set the teacher, its weight and the loss (also after :meth:`load`, which saves none)."""
        if teacher is not None and minibatch_loss is None:
            raise ValueError("a teacher needs the minibatch loss its term enters")
        self.teacher = teacher
        self.weight_at = teacher_weight
        self.minibatch_loss = minibatch_loss
        self.max_contexts = max_contexts
        if recorder is None and teacher is not None and self.env is not None:
            recorder = _find_recorder(self.env)
        self.recorder = recorder
        self.label_seconds = 0.0
        self._label_rng = np.random.default_rng(int(self.seed or 0) + 7)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "teacher", "weight_at", "minibatch_loss", "recorder", "_label_rng"]

    def teacher_weight(self) -> float:
        """The term's weight at the current step count."""
        if self.teacher is None:
            return 0.0
        return self.weight_at(self.num_timesteps)

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
        """One PPO update; while the weight is above 0, with the script's minibatch loss."""
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
        """MaskablePPO's ``train`` with the script's loss of each minibatch in place of PPO's sum."""
        assert self.minibatch_loss is not None
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
                terms = PPOLosses(policy_loss, value_loss, entropy_loss, log_probs)
                loss, distill = self.minibatch_loss(self, data, terms, weight)
                kls.append(distill.item())
                on = data.teacher_on.bool()
                if bool(on.any()):
                    with th.no_grad():
                        best = data.teacher_actions[on].gather(1, data.teacher_probs[on].argmax(dim=1, keepdim=True))
                        agree.append(float((log_probs[on].argmax(dim=1, keepdim=True) == best).float().mean()))
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
