"""The reroll-all bar readings of the policy features (version 3), numpy and torch alike."""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.bots.featurize import FeatureConfig, featurize
from greed_env.rules import preset
from greed_env.spaces.observation import OBS_DIM


def test_only_rules_with_a_bar_to_beat_get_the_readings() -> None:
    assert FeatureConfig.for_rules(preset("greed")).bar_readings
    assert FeatureConfig.for_rules(preset("greed"), margin=True, cross=True, final_only=True).bar_readings
    for name in ("ten_thousand", "farkle", "farkle5", "zilch"):
        cfg = FeatureConfig.for_rules(preset(name))
        assert not cfg.bar_readings and cfg.bar_dim == 0
    cfg = FeatureConfig.for_rules(preset("greed"))
    assert cfg.extra_dim == FeatureConfig.for_rules(preset("ten_thousand")).extra_dim + 61


def test_saved_configs_of_earlier_versions_still_load() -> None:
    old = FeatureConfig.for_rules(preset("ten_thousand"), margin=True).to_dict()
    old.pop("bar_readings")
    old["version"] = 2
    assert not FeatureConfig.from_dict(old).bar_readings
    old["bar_readings"] = True
    with pytest.raises(ValueError, match="version 2 has no bar readings"):
        FeatureConfig.from_dict(old)


def test_bar_readings_are_exact_in_numpy_and_torch() -> None:
    import torch

    from greed_env.envs.solitaire import SolitaireEnv
    from greed_env.train.network import GreedFeatures

    cfg = FeatureConfig.for_rules(preset("greed"))
    env = SolitaireEnv(preset("greed"))
    module = GreedFeatures(env.observation_space, cfg.to_dict())
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(0)
    bars = set()
    for _ in range(3000):
        s = env.state
        f = featurize(obs[None], cfg)
        assert f.shape == (1, cfg.out_dim(OBS_DIM))
        assert np.array_equal(f, module(torch.as_tensor(obs[None])).numpy())
        lin, thermo = f[0, -cfg.bar_dim], f[0, -cfg.bar_dim + 1 :]
        bar = max(s.bar, 0)
        assert lin == pytest.approx(bar / 1000, abs=1e-5)
        assert int(thermo.sum()) == min(bar // 50, 60)
        bars.add(bar)
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert len(bars) > 3
