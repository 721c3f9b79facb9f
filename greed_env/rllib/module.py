"""The action-masking PPO module RLlib trains: ``DefaultPPOTorchRLModule`` plus a mask.

The module reads ``batch["obs"]`` as ``{"observations": (B, OBS_DIM), "action_mask": (B, n)}``,
runs RLlib's default PPO encoder and heads on the observations, and adds
``clamp(log(mask), FLOAT_MIN)`` to the action logits, so masked actions are never sampled
(the same construction as RLlib's own ``ActionMaskingTorchRLModule`` example, written against
``DefaultPPOTorchRLModule`` because that example's base class is deprecated in Ray 2.60).
The unmasked logits are ``pi(encoder(obs))``: that is what :mod:`greed_env.rllib.export`
exports to ONNX.

The class is built on first access (``from greed_env.rllib.module import
MaskedPPOTorchRLModule``), so importing greed_env never imports ray or torch; it is then a
normal module attribute, which is what RLlib's checkpoints (class by import path) and pickle
need.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MaskedPPOTorchRLModule"]  # noqa: F822 (built by __getattr__)


def _build_class() -> type:
    import gymnasium as gym
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    def split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            raise ValueError(
                "MaskedPPOTorchRLModule needs dict observations {'observations', 'action_mask'}"
            )
        inner = dict(batch)
        inner[Columns.OBS] = obs["observations"]
        return obs["action_mask"], inner

    def masked(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(
            torch.log(mask), min=FLOAT_MIN
        )
        return out

    class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
        """PPO RLModule over dict observations ``{"observations", "action_mask"}``."""

        def __init__(
            self, *args: Any, observation_space: gym.Space | None = None, **kwargs: Any
        ) -> None:
            if not isinstance(observation_space, gym.spaces.Dict) or set(
                observation_space.spaces
            ) != {
                "observations",
                "action_mask",
            }:
                raise ValueError(
                    "MaskedPPOTorchRLModule needs a Dict observation space with keys "
                    f"'observations' and 'action_mask', got {observation_space}"
                )
            self._space_with_mask = observation_space
            super().__init__(*args, observation_space=observation_space["observations"], **kwargs)

        def setup(self) -> None:
            super().setup()
            self.observation_space = self._space_with_mask

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            mask, inner = split(batch)
            return masked(super()._forward(inner, **kwargs), mask)

        def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            mask, inner = split(batch)
            return masked(super()._forward_train(inner, **kwargs), mask)

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            if embeddings is None:
                _, batch = split(batch)
            return super().compute_values(batch, embeddings)

    MaskedPPOTorchRLModule.__module__ = __name__
    MaskedPPOTorchRLModule.__qualname__ = "MaskedPPOTorchRLModule"
    return MaskedPPOTorchRLModule


def __getattr__(name: str) -> Any:
    if name == "MaskedPPOTorchRLModule":
        cls = _build_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
