"""Fixed input features computed from the observation inside the policy (numpy reference).

The environment's observation scales points by the target (a 50-point step of the turn total is
0.005 in ``ten_thousand``) and dice counts by the number of dice, which a small network resolves
slowly. :func:`featurize` appends exact, parameter-free readings of the same entries:

* per face, a thermometer of the dice showing (``count >= k`` for ``k = 1 .. num_dice``);
* a thermometer of the dice in hand;
* the turn total in thousands of points, and its thermometer every ``points_step`` points up
  to ``points_max``;
* thermometers of my banked score and the next seat's every ``score_step`` points up to the
  target.

The torch module :class:`greed_env.train.features.GreedFeatures` computes the same thing inside
the policy network, so saved models, exported ONNX graphs and :class:`NumpyPolicy` all see the
observation of the environment unchanged. Thresholds sit half a step below each value, so float
rounding of the scaled observation never moves a reading.

>>> from greed_env.rules import preset
>>> from greed_env.envs.observation import OBS_DIM
>>> cfg = FeatureConfig.for_rules(preset("ten_thousand"))
>>> cfg.extra_dim, cfg.out_dim(OBS_DIM) - OBS_DIM
(183, 183)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import OBS_INDEX
from greed_env.rules import IllegalKeep, Rules, read_keep

__all__ = ["FEATURES_VERSION", "FeatureConfig", "action_features", "featurize"]

FEATURES_VERSION = 1

I_SHOWING = OBS_INDEX["showing_1"]
I_IN_HAND = OBS_INDEX["dice_in_hand"]
I_TURN_TOTAL = OBS_INDEX["turn_total"]
I_SCORE = OBS_INDEX["score_0"]


@dataclass(frozen=True)
class FeatureConfig:
    """Parameters of the feature readings (all in points or dice)."""

    num_dice: int
    target: int
    points_step: int = 50
    points_max: int = 3000
    score_step: int = 250
    version: int = FEATURES_VERSION

    @classmethod
    def for_rules(cls, rules: Rules) -> FeatureConfig:
        return cls(num_dice=rules.num_dice, target=rules.target)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureConfig:
        if int(data.get("version", 0)) != FEATURES_VERSION:
            raise ValueError(f"feature version {data.get('version')!r} is not {FEATURES_VERSION}")
        return cls(**data)

    def dice_levels(self) -> np.ndarray:
        return np.arange(1, self.num_dice + 1, dtype=np.float32) - 0.5

    def point_levels(self) -> np.ndarray:
        steps = np.arange(self.points_step, self.points_max + 1, self.points_step, dtype=np.float32)
        return steps - self.points_step / 2

    def score_levels(self) -> np.ndarray:
        steps = np.arange(self.score_step, self.target + 1, self.score_step, dtype=np.float32)
        return steps - self.score_step / 2

    @property
    def extra_dim(self) -> int:
        return 7 * self.num_dice + 1 + len(self.point_levels()) + 2 * len(self.score_levels())

    def out_dim(self, obs_dim: int) -> int:
        return obs_dim + self.extra_dim


def featurize(obs: np.ndarray, cfg: FeatureConfig) -> np.ndarray:
    """``[obs, readings]`` for a batch ``(B, OBS_DIM)`` of observations, float32."""
    x = np.asarray(obs, dtype=np.float32)
    nd = np.float32(cfg.num_dice)
    target = np.float32(cfg.target)
    dice_lv = cfg.dice_levels()
    counts = x[:, I_SHOWING : I_SHOWING + 6] * nd
    showing = (counts[:, :, None] >= dice_lv[None, None, :]).reshape(len(x), -1)
    in_hand = x[:, I_IN_HAND : I_IN_HAND + 1] * nd >= dice_lv[None, :]
    total = x[:, I_TURN_TOTAL : I_TURN_TOTAL + 1] * target
    total_lv = total >= cfg.point_levels()[None, :]
    scores = x[:, I_SCORE : I_SCORE + 2] * target
    score_lv = (scores[:, :, None] >= cfg.score_levels()[None, None, :]).reshape(len(x), -1)
    parts = [x, showing, in_hand, total / np.float32(1000.0), total_lv, score_lv]
    return np.concatenate([p.astype(np.float32) for p in parts], axis=1)


def action_features(rules: Rules) -> np.ndarray:
    """A fixed description of every action id, shape ``(n_actions, 2 + 2 * num_dice)``.

    Row of a keep: ``[1, points / 1000, one-hot of the dice kept, points / 1000 at that
    one-hot]``, where the points are the keep's own reading (order-free rules score a multiset
    of faces the same in every position). Non-keep moves, and every action under tap-order
    rules (where a keep's points depend on what is working), get a zero row. The structured
    policy head scores actions partly through these rows, so a rarely seen keep inherits what
    was learnt about keeps of the same size and points.

    >>> from greed_env.rules import preset
    >>> phi = action_features(preset("ten_thousand"))
    >>> cat = ActionCatalog("ten_thousand")
    >>> phi[cat.labels.index("keep 1,1,1,1,1")][:3].tolist()
    [1.0, 4.0, 0.0]
    """
    catalog = ActionCatalog(rules)
    nd = rules.num_dice
    out = np.zeros((catalog.n, 2 + 2 * nd), dtype=np.float32)
    if rules.carry_over:
        return out
    for entry in catalog.entries:
        if entry.kind != "keep":
            continue
        score = None
        for fresh in (False, True):
            try:
                score = read_keep(rules, entry.dice, fresh=fresh).score
                break
            except IllegalKeep:
                continue
        if score is None:
            continue
        k = len(entry.dice)
        out[entry.index, 0] = 1.0
        out[entry.index, 1] = score / 1000.0
        out[entry.index, 1 + k] = 1.0
        out[entry.index, 1 + nd + k] = score / 1000.0
    return out
