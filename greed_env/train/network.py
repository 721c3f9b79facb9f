"""The training scripts' policy network, and how a script's :class:`NetworkSettings` build it
(importing this module imports torch).

* :func:`policy_class` and :func:`policy_kwargs` turn the network settings (``--net-width``,
  ``--features``, ``--policy-head``, ``--lean-masking`` ...) into the ``policy`` and
  ``policy_kwargs`` of ``MaskablePPO``.
* :class:`GreedFeatures` (``--features greed``) is :func:`greed_env.bots.featurize.featurize`
  in torch: the observation followed by exact readings of dice counts, dice in hand, turn total
  and scores. It has no parameters; the numpy reference and this module are checked against
  each other by the tests.
* :class:`StructuredActionHead` (``--policy-head structured``) scores action ``a`` as
  ``free(latent)[a] + shared(latent) . phi[a]`` with the fixed action descriptions ``phi`` of
  :func:`~greed_env.bots.featurize.action_features` (a keep's points and dice count): still a
  linear map of the latent (:meth:`StructuredActionHead.effective`), so exported policies and
  :class:`~greed_env.bots.numpy_backend.NumpyPolicy` see an ordinary linear layer.
* :class:`GreedActorCriticPolicy` is sb3-contrib's masked actor-critic with that head, and
  optionally (``lean_masking``) with :class:`LeanMaskableCategorical`, the same masked
  distribution computed with one log-softmax instead of sb3-contrib's three normalisations,
  which dominate a PPO update when there are thousands of actions (Progressive: 3,696).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from greed_env.bots.featurize import (
    CROSS_SLACK,
    I_BAR,
    I_FINAL_ROUND,
    I_IN_HAND,
    I_MY_TURN,
    I_PRESENT,
    I_SCORE,
    I_SET,
    I_SHOWING,
    I_TURN_TOTAL,
    MARGIN_CLIP,
    MAX_SEATS,
    FeatureConfig,
    action_features,
)
from greed_env.rules import Rules
from greed_env.train.settings import NetworkSettings

__all__ = [
    "GreedActorCriticPolicy",
    "GreedFeatures",
    "LeanMaskableCategorical",
    "LeanMaskableCategoricalDistribution",
    "StructuredActionHead",
    "policy_class",
    "policy_kwargs",
]


class GreedFeatures(BaseFeaturesExtractor):
    """``obs -> [obs, readings]`` (see :mod:`greed_env.bots.featurize`).

    Args:
        observation_space: the environment's ``Box``.
        config: :meth:`FeatureConfig.to_dict` of the rules trained on.
    """

    def __init__(self, observation_space: gym.spaces.Box, config: dict[str, Any]) -> None:
        cfg = FeatureConfig.from_dict(config)
        obs_dim = int(observation_space.shape[0])
        super().__init__(observation_space, cfg.out_dim(obs_dim))
        self.config = cfg.to_dict()
        self.num_dice = float(cfg.num_dice)
        self.target = float(cfg.target)
        self.register_buffer("dice_lv", torch.as_tensor(cfg.dice_levels()), persistent=False)
        self.register_buffer("point_lv", torch.as_tensor(cfg.point_levels()), persistent=False)
        self.register_buffer("score_lv", torch.as_tensor(cfg.score_levels()), persistent=False)
        self.margin = bool(cfg.margin_step)
        self.margin_final = bool(cfg.margin_final)
        self.margin_cross = bool(cfg.margin_cross)
        self.register_buffer("margin_lv", torch.as_tensor(cfg.margin_levels()), persistent=False)
        self.bar_readings = bool(cfg.bar_readings)
        self.set_readings = bool(cfg.set_readings)
        self.need_readings = bool(cfg.need_readings)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.float()
        b = x.shape[0]
        counts = x[:, I_SHOWING : I_SHOWING + 6] * self.num_dice
        showing = (counts.unsqueeze(2) >= self.dice_lv.view(1, 1, -1)).reshape(b, -1)
        in_hand = x[:, I_IN_HAND : I_IN_HAND + 1] * self.num_dice >= self.dice_lv.view(1, -1)
        total = x[:, I_TURN_TOTAL : I_TURN_TOTAL + 1] * self.target
        total_lv = total >= self.point_lv.view(1, -1)
        scores = x[:, I_SCORE : I_SCORE + 2] * self.target
        score_lv = (scores.unsqueeze(2) >= self.score_lv.view(1, 1, -1)).reshape(b, -1)
        parts = [
            x,
            showing.float(),
            in_hand.float(),
            total / 1000.0,
            total_lv.float(),
            score_lv.float(),
        ]
        if self.margin:
            margin = self._margin(x)
            lin = torch.clamp(margin / 1000.0, -MARGIN_CLIP, MARGIN_CLIP)
            lv = (margin >= self.margin_lv.view(1, -1)).float()
            final = x[:, I_FINAL_ROUND : I_FINAL_ROUND + 1] > 0.5
            gate = final.float() if self.margin_final else torch.ones_like(lin)
            parts += [lin * gate, lv * gate]
            if self.margin_cross:
                cross = (~final & (self._banked_after(x) >= self.target - CROSS_SLACK)).float()
                parts += [lin * cross, lv * cross]
        if self.bar_readings:
            bar = x[:, I_BAR : I_BAR + 1] * self.target
            parts += [bar / 1000.0, (bar >= self.point_lv.view(1, -1)).float()]
        if self.set_readings:
            sets = x[:, I_SET : I_SET + 6] * self.num_dice
            parts.append((sets.unsqueeze(2) >= self.dice_lv.view(1, 1, -1)).reshape(b, -1).float())
        if self.need_readings:
            need = self.target - self._banked_after(x)
            parts += [need / 1000.0, (need >= self.point_lv.view(1, -1)).float()]
        return torch.cat(parts, dim=1)

    def _margin(self, x: torch.Tensor) -> torch.Tensor:
        """:func:`greed_env.bots.featurize.margin_points` in torch."""
        scores = x[:, I_SCORE : I_SCORE + MAX_SEATS] * self.target
        present = x[:, I_PRESENT + 1 : I_PRESENT + MAX_SEATS] > 0.5
        floor = torch.full_like(scores[:, 1:], -1e9)
        others = torch.where(present, scores[:, 1:], floor).max(dim=1, keepdim=True).values
        others = torch.where(others > -1e8, others, torch.zeros_like(others))
        return self._banked_after(x) - others

    def _banked_after(self, x: torch.Tensor) -> torch.Tensor:
        """:func:`greed_env.bots.featurize.banked_after` in torch."""
        turn = x[:, I_MY_TURN : I_MY_TURN + 1] * x[:, I_TURN_TOTAL : I_TURN_TOTAL + 1] * self.target
        return x[:, I_SCORE : I_SCORE + 1] * self.target + turn


class StructuredActionHead(torch.nn.Module):
    """Logits ``free(latent) + shared(latent) @ phi.T`` for fixed action descriptions ``phi``."""

    def __init__(self, latent_dim: int, phi: np.ndarray) -> None:
        super().__init__()
        n, k = phi.shape
        self.free = torch.nn.Linear(latent_dim, n)
        self.shared = torch.nn.Linear(latent_dim, k)
        self.register_buffer("phi", torch.as_tensor(np.asarray(phi, dtype=np.float32)))
        for layer in (self.free, self.shared):
            torch.nn.init.orthogonal_(layer.weight, gain=0.01)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.free(latent) + self.shared(latent) @ self.phi.T

    def effective(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(weight, bias)`` of the equivalent ``Linear(latent_dim, n_actions)``."""
        weight = self.free.weight + self.phi @ self.shared.weight
        bias = self.free.bias + self.phi @ self.shared.bias
        return weight, bias


class LeanMaskableCategorical:
    """sb3-contrib's ``MaskableCategorical`` (masked logits at -1e8) with one log-softmax.

    sb3-contrib builds a torch ``Categorical`` from the raw logits and again from the masked
    ones, each normalising them, and its entropy takes a softmax on top: with 3,696 actions and
    2,048 positions per minibatch that is most of a PPO update. Here the masked logits are
    normalised once, lazily; ``log_prob``, ``entropy``, ``probs`` and ``sample`` read them.
    The values are the same up to float rounding.
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self._original_logits = logits
        self.masks: torch.Tensor | None = None
        self._masked = logits
        self._log_p: torch.Tensor | None = None

    def apply_masking(self, masks: Any) -> None:
        if masks is None:
            self.masks, self._masked = None, self._original_logits
        else:
            logits = self._original_logits
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            self._masked = torch.where(self.masks, logits, torch.tensor(-1e8, dtype=logits.dtype))
        self._log_p = None

    @property
    def logits(self) -> torch.Tensor:
        """Normalised log-probabilities (as ``Categorical.logits``)."""
        if self._log_p is None:
            self._log_p = torch.log_softmax(self._masked, dim=-1)
        return self._log_p

    @property
    def probs(self) -> torch.Tensor:
        return self.logits.exp()

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        log_p = self.logits
        p_log_p = log_p.exp() * log_p
        if self.masks is not None:
            p_log_p = torch.where(self.masks, p_log_p, torch.zeros((), dtype=p_log_p.dtype))
        return -p_log_p.sum(-1)

    def sample(self) -> torch.Tensor:
        return torch.multinomial(self.probs, 1).squeeze(-1)


class LeanMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's masked categorical distribution, computed by :class:`LeanMaskableCategorical`."""

    def proba_distribution(self, action_logits: torch.Tensor) -> LeanMaskableCategoricalDistribution:
        self.distribution = LeanMaskableCategorical(action_logits.view(-1, self.action_dim))  # type: ignore[assignment]
        return self


class GreedActorCriticPolicy(MaskableActorCriticPolicy):
    """sb3-contrib's ``MaskableActorCriticPolicy`` with a :class:`StructuredActionHead`.

    Args:
        action_features: the ``(n_actions, k)`` matrix of
            :func:`~greed_env.bots.featurize.action_features` (as nested lists, so the model
            zip stores it as data); None keeps the plain linear head.
        lean_masking: compute the masked action distribution with
            :class:`LeanMaskableCategorical` (the same values, a fraction of the time with
            thousands of actions).
    """

    def __init__(
        self,
        *positional: Any,
        action_features: list[list[float]] | None = None,
        lean_masking: bool = False,
        **options: Any,
    ) -> None:
        self.action_features = action_features
        self.lean_masking = lean_masking
        super().__init__(*positional, **options)
        if lean_masking:
            self.action_dist = LeanMaskableCategoricalDistribution(int(self.action_space.n))

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        if self.action_features is None:
            return
        phi = np.asarray(self.action_features, dtype=np.float32)
        self.action_net = StructuredActionHead(self.mlp_extractor.latent_dim_pi, phi)
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),
            **self.optimizer_kwargs,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["action_features"] = self.action_features
        data["lean_masking"] = self.lean_masking
        return data


def policy_kwargs(net: NetworkSettings, rules: Rules) -> dict[str, Any]:
    """``MaskablePPO(policy_kwargs=...)`` for the network settings ``net`` on ``rules``.

    Raises:
        ValueError: ``need_readings`` on rules without an exact target.
    """
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[net.activation]
    layers = [net.net_width] * net.net_depth
    critic = [net.vf_width or net.net_width] * (net.vf_depth or net.net_depth)
    kwargs: dict[str, Any] = {"net_arch": {"pi": layers, "vf": critic}, "activation_fn": act}
    if net.features != "none":
        cfg = FeatureConfig.for_rules(
            rules,
            margin=net.features.startswith("margin"),
            final_only=net.features in ("margin-final", "margin-cross"),
            cross=net.features == "margin-cross",
        )
        if not net.set_readings:
            cfg = dataclasses.replace(cfg, set_readings=False)
        if net.need_readings:
            if not rules.exact_target:
                raise ValueError(f"--need-readings needs rules with an exact target; {rules.name!r} has none")
            cfg = dataclasses.replace(cfg, need_readings=True)
        kwargs["features_extractor_class"] = GreedFeatures
        kwargs["features_extractor_kwargs"] = {"config": cfg.to_dict()}
    if net.policy_head == "structured":
        kwargs["action_features"] = action_features(rules).tolist()
    if net.lean_masking:
        kwargs["lean_masking"] = True
    return kwargs


def policy_class(net: NetworkSettings) -> type[MaskableActorCriticPolicy] | str:
    """:class:`GreedActorCriticPolicy` (structured keep head, lean masking) or SB3's ``"MlpPolicy"``."""
    if net.policy_head == "structured" or net.lean_masking:
        return GreedActorCriticPolicy
    return "MlpPolicy"
