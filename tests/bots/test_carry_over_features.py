"""Carry-over rules' policy inputs: the working-set readings (features version 4) and the keep
parts of the structured action head, numpy and torch alike."""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.bots.featurize import READINGS, FeatureConfig, action_features, featurize
from greed_env.rules import preset
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM


def test_only_carry_over_rules_get_the_set_readings() -> None:
    cfg = FeatureConfig.for_rules(preset("progressive"))
    assert cfg.set_readings and cfg.set_dim == 48
    assert FeatureConfig.for_rules(preset("progressive"), margin=True).set_readings
    for name in ("ten_thousand", "greed", "farkle", "zilch"):
        cfg = FeatureConfig.for_rules(preset(name))
        assert not cfg.set_readings and cfg.set_dim == 0


def test_version_3_configs_load_without_the_set_readings() -> None:
    old = FeatureConfig.for_rules(preset("progressive")).to_dict()
    old.pop("set_readings")
    old["version"] = 3
    cfg = FeatureConfig.from_dict(old)
    assert not cfg.set_readings
    assert cfg.extra_dim == FeatureConfig.for_rules(preset("progressive")).extra_dim - 48
    old["set_readings"] = True
    with pytest.raises(ValueError, match="version 3 has no working-set readings"):
        FeatureConfig.from_dict(old)


def test_set_readings_are_exact_in_numpy_and_torch() -> None:
    import torch

    from greed_env.envs.solitaire import SolitaireEnv
    from greed_env.train.network import GreedFeatures

    rules = preset("progressive")
    cfg = FeatureConfig.for_rules(rules)
    env = SolitaireEnv(rules)
    module = GreedFeatures(env.observation_space, cfg.to_dict())
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(1500):
        f = featurize(obs[None], cfg)
        assert f.shape == (1, cfg.out_dim(OBS_DIM))
        assert np.array_equal(f, module(torch.as_tensor(obs[None])).numpy())
        thermo = f[0, -cfg.set_dim :].reshape(6, rules.num_dice)
        assert thermo.sum(axis=1).tolist() == list(env.state.carry.sets)
        seen.add(env.state.carry.sets)
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert len(seen) > 5


def test_keep_parts_describe_every_progressive_keep() -> None:
    rules = preset("progressive")
    cat = ActionCatalog(rules)
    phi = action_features(rules)
    nd = rules.num_dice
    assert phi.shape == (cat.n, 1 + 7 * nd + len(READINGS))
    for entry in cat.entries:
        row = phi[entry.index]
        if entry.kind != "keep":
            assert not row.any()
            continue
        faces = row[1 : 1 + 6 * nd].reshape(6, nd)
        assert faces.sum(axis=1).tolist() == [entry.dice.count(f) for f in range(1, 7)]
        assert np.array_equal(np.sort(faces, axis=1)[:, ::-1], faces)  # thermometers
        assert np.flatnonzero(row[1 + 6 * nd : 1 + 7 * nd]).tolist() == [len(entry.dice) - 1]
        assert np.flatnonzero(row[1 + 7 * nd :]).tolist() == [READINGS.index(entry.reading)]
    # no two keeps share a description but an alternate fill keep and its sibling (same dice,
    # same reading), which the head's free per-action term tells apart
    keeps = phi[[e.index for e in cat.entries if e.kind == "keep" and not e.fills]]
    assert len(np.unique(keeps, axis=0)) == len(keeps)
    for e in cat.entries:
        if e.fills:
            assert np.array_equal(phi[e.index], phi[cat.primary_of(e.index)])


def test_structured_head_on_keep_parts_is_a_linear_layer() -> None:
    import torch

    from greed_env.train.network import StructuredActionHead

    phi = action_features(preset("progressive"))
    head = StructuredActionHead(16, phi)
    with torch.no_grad():
        for p in head.parameters():
            p.add_(torch.randn_like(p))
        latent = torch.randn(5, 16)
        weight, bias = head.effective()
        assert torch.allclose(head(latent), latent @ weight.T + bias, atol=1e-4)


def test_lean_masked_distribution_matches_sb3_contrib() -> None:
    import torch
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    from greed_env.train.network import LeanMaskableCategorical

    gen = torch.Generator().manual_seed(0)
    raw = torch.randn(64, 300, generator=gen)
    masks = torch.rand(64, 300, generator=gen) < 0.05
    masks[:, 7] = True
    actions = torch.stack([torch.multinomial(m.float(), 1).squeeze() for m in masks])
    results = []
    for cls in (MaskableCategorical, LeanMaskableCategorical):
        logits = raw.clone().requires_grad_(True)
        dist = cls(logits=logits)
        dist.apply_masking(masks)
        lp, ent = dist.log_prob(actions), dist.entropy()
        (lp.sum() + 0.1 * ent.sum()).backward()
        results.append((lp.detach(), ent.detach(), dist.probs.detach(), logits.grad))
    for ref, lean in zip(*results, strict=True):
        assert torch.allclose(ref, lean, atol=1e-5)
    lean_dist = LeanMaskableCategorical(raw)
    lean_dist.apply_masking(masks)
    torch.manual_seed(1)
    draws = lean_dist.sample()
    assert masks[torch.arange(64), draws].all()
    lean_dist.apply_masking(None)
    assert torch.allclose(lean_dist.probs.sum(-1), torch.ones(64))


def test_lean_masking_policy_learns_and_saves(tmp_path: object) -> None:
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.train.network import GreedActorCriticPolicy, LeanMaskableCategoricalDistribution

    env = gym.make("greed_env/Solitaire-v0", rules="ten_thousand")
    kwargs = {"net_arch": {"pi": [16], "vf": [16]}, "lean_masking": True}
    model = MaskablePPO(GreedActorCriticPolicy, env, policy_kwargs=kwargs, n_steps=64, batch_size=32,
                        n_epochs=1, device="cpu", seed=0)  # fmt: skip
    assert isinstance(model.policy.action_dist, LeanMaskableCategoricalDistribution)
    model.learn(64)
    path = f"{tmp_path}/m.zip"
    model.save(path)
    again = MaskablePPO.load(path, device="cpu")
    assert isinstance(again.policy.action_dist, LeanMaskableCategoricalDistribution)
    obs, info = env.reset(seed=4)
    mask = info["action_mask"]
    action, _ = again.predict(obs, action_masks=mask, deterministic=True)
    assert mask[int(action)]
    assert int(NumpyPolicy.from_sb3(again).act(obs[None], mask[None])[0]) == int(action)


def test_no_set_readings_leaves_the_working_sets_out_of_a_run() -> None:
    from greed_env.train.network import policy_kwargs
    from greed_env.train.settings import NetworkSettings

    rules = preset("progressive")
    on = policy_kwargs(NetworkSettings(), rules)["features_extractor_kwargs"]["config"]
    off = policy_kwargs(NetworkSettings(set_readings=False), rules)["features_extractor_kwargs"]["config"]
    assert on["set_readings"] and not off["set_readings"]
    assert FeatureConfig.from_dict(off).extra_dim == FeatureConfig.from_dict(on).extra_dim - 48
