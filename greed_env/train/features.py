"""The torch features extractor of the training scripts (``--features greed``).

:class:`GreedFeatures` is :func:`greed_env.train.featurize.featurize` in torch: the
observation followed by exact readings of dice counts, dice in hand, turn total and scores. It
has no parameters, so it adds nothing to learn and nothing to drift; the numpy reference and
this module are checked against each other by the tests. Importing this module imports torch.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from greed_env.train.featurize import (
    I_IN_HAND,
    I_SCORE,
    I_SHOWING,
    I_TURN_TOTAL,
    FeatureConfig,
)

__all__ = ["GreedFeatures"]


class GreedFeatures(BaseFeaturesExtractor):
    """``obs -> [obs, readings]`` (see :mod:`greed_env.train.featurize`).

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
        return torch.cat(
            [x, showing.float(), in_hand.float(), total / 1000.0, total_lv.float(), score_lv.float()],
            dim=1,
        )
