"""The MaskablePPO policy a training script builds from its arguments.

:func:`policy_class` and :func:`policy_kwargs` turn the network fields of a script's ``Args``
(``net_width``, ``net_depth``, ``activation``, ``vf_width``, ``vf_depth``, ``features``,
``set_readings``, ``need_readings``, ``policy_head``, ``lean_masking``) into the ``policy`` and
``policy_kwargs`` of ``MaskablePPO``; :func:`learning_rate` is the learning rate or its linear
schedule (``anneal_lr``). The network itself is :mod:`greed_env.train.features`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch

from greed_env.bots.featurize import FeatureConfig, action_features
from greed_env.rules import Rules
from greed_env.train.features import GreedActorCriticPolicy, GreedFeatures

__all__ = ["learning_rate", "policy_class", "policy_kwargs"]


def policy_kwargs(args: Any, rules: Rules) -> dict[str, Any]:
    """``MaskablePPO(policy_kwargs=...)`` for a script's network fields.

    Raises:
        ValueError: ``need_readings`` on rules without an exact target.
    """
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation]
    layers = [args.net_width] * args.net_depth
    critic = [args.vf_width or args.net_width] * (args.vf_depth or args.net_depth)
    kwargs: dict[str, Any] = {"net_arch": {"pi": layers, "vf": critic}, "activation_fn": act}
    if args.features in ("greed", "margin", "margin-final", "margin-cross"):
        cfg = FeatureConfig.for_rules(
            rules,
            margin=args.features.startswith("margin"),
            final_only=args.features in ("margin-final", "margin-cross"),
            cross=args.features == "margin-cross",
        )
        if not args.set_readings:
            cfg = dataclasses.replace(cfg, set_readings=False)
        if args.need_readings:
            if not rules.exact_target:
                raise ValueError(f"--need-readings needs rules with an exact target; {rules.name!r} has none")
            cfg = dataclasses.replace(cfg, need_readings=True)
        kwargs["features_extractor_class"] = GreedFeatures
        kwargs["features_extractor_kwargs"] = {"config": cfg.to_dict()}
    if args.policy_head == "structured":
        kwargs["action_features"] = action_features(rules).tolist()
    if args.lean_masking:
        kwargs["lean_masking"] = True
    return kwargs


def policy_class(args: Any) -> Any:
    """``GreedActorCriticPolicy`` (structured keep head, lean masking) or SB3's ``"MlpPolicy"``."""
    if args.policy_head == "structured" or args.lean_masking:
        return GreedActorCriticPolicy
    return "MlpPolicy"


def learning_rate(args: Any) -> float | Callable[[float], float]:
    """``args.learning_rate``, annealed linearly to 0 over the run when ``args.anneal_lr``."""
    if not args.anneal_lr:
        return float(args.learning_rate)
    start = float(args.learning_rate)
    return lambda progress_remaining: progress_remaining * start

