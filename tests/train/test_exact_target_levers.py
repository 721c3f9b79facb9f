"""Levers for an exact target (Progressive): the readings of the points still needed (features
version 5), warm starts that place added readings where they belong, and races started from
random banked scores (``--race-starts``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.featurize import FeatureConfig, featurize
from greed_env.rules import Phase, State, preset
from greed_env.spaces.observation import OBS_DIM
from greed_env.vector import kernels as K
from greed_env.vector.sb3 import make_sb3_vec_env


def test_need_readings_read_the_points_still_needed_in_numpy_and_torch() -> None:
    import torch

    from greed_env.envs.solitaire import SolitaireEnv
    from greed_env.train.network import GreedFeatures

    rules = preset("progressive")
    cfg = FeatureConfig(rules.num_dice, rules.target, set_readings=True, need_readings=True)
    assert cfg.need_dim == 61 and cfg.extra_dim == FeatureConfig.for_rules(rules).extra_dim + 61
    env = SolitaireEnv(rules, objective="race")
    module = GreedFeatures(env.observation_space, cfg.to_dict())
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(1)
    needs = set()
    for _ in range(1200):
        f = featurize(obs[None], cfg)
        assert f.shape == (1, cfg.out_dim(OBS_DIM))
        assert np.array_equal(f, module(torch.as_tensor(obs[None])).numpy())
        s = env.state
        need = rules.target - s.scores[0] - s.turn_total
        assert f[0, -61] == pytest.approx(need / 1000, abs=1e-4)
        thermo = f[0, -60:]
        assert thermo.sum() == min(need // 50, 60) and np.array_equal(np.sort(thermo)[::-1], thermo)
        needs.add(need)
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert len(needs) > 50


def test_need_readings_are_version_5_and_only_for_an_exact_target() -> None:
    from training_settings import load_script

    from greed_env.train.network import policy_kwargs

    Args = load_script("ppo_turn").Args  # need readings are off there, on in progressive_race

    old = FeatureConfig.for_rules(preset("progressive")).to_dict()
    old["version"] = 4
    old.pop("need_readings")
    assert not FeatureConfig.from_dict(old).need_readings  # a version-4 model loads as before
    with pytest.raises(ValueError, match="version 4 has no readings of the points needed"):
        FeatureConfig.from_dict({**old, "need_readings": True})
    rules = preset("progressive")
    on = policy_kwargs(Args(rules="progressive", need_readings=True), rules)["features_extractor_kwargs"]["config"]
    off = policy_kwargs(Args(rules="progressive"), rules)["features_extractor_kwargs"]["config"]
    assert on["need_readings"] and not off["need_readings"]  # opt-in: documented recipes unchanged
    with pytest.raises(ValueError, match="exact target"):
        policy_kwargs(Args(need_readings=True), preset("ten_thousand"))
    assert load_script("progressive_race").Args().need_readings


def test_init_from_puts_added_readings_at_their_places(tmp_path: Path) -> None:
    """Margin readings sit before the working-set readings and the readings of the points needed
    after them: a model without either, warm-started into one with both, is the same function
    (actor and critic)."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO
    from training_settings import load_script

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.train.network import policy_class, policy_kwargs
    from greed_env.train.warmstart import init_weights

    duel = load_script("ppo_duel")

    rules = preset("progressive")
    env = gym.make("greed_env/Duel-v0", rules="progressive", opponent="threshold-300")
    plain = duel.Args(rules="progressive", net_width=16, features="greed")
    richer = duel.Args(rules="progressive", net_width=16, features="margin-cross", need_readings=True)
    old = MaskablePPO(policy_class(plain), env, policy_kwargs=policy_kwargs(plain, rules), device="cpu", seed=0)
    with torch.no_grad():
        for p in old.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    old.save(tmp_path / "old.zip")
    new = MaskablePPO(policy_class(richer), env, policy_kwargs=policy_kwargs(richer, rules), device="cpu", seed=1)
    init_weights(new, tmp_path / "old.zip", rules)
    cfg = FeatureConfig.from_dict(new.policy.features_extractor.config)
    assert cfg.margin_cross and cfg.set_readings and cfg.need_readings
    a, b = NumpyPolicy.from_sb3(old), NumpyPolicy.from_sb3(new)
    obs, info = env.reset(seed=3)
    for _ in range(300):
        assert np.allclose(a.logits(obs[None]), b.logits(obs[None]), atol=1e-5)
        with torch.no_grad():
            values = [m.policy.predict_values(torch.as_tensor(obs[None])) for m in (old, new)]
        assert torch.allclose(*values, atol=1e-5)
        obs, _, terminated, truncated, info = env.step(int(a.act(obs[None], info["action_mask"][None])[0]))
        if terminated or truncated:
            obs, info = env.reset()


def test_race_starts_begin_races_from_random_banked_scores() -> None:
    from greed_env.train.curriculum import RaceStarts, race_score
    from greed_env.vector.engine import row_fields

    rules = preset("progressive")

    def started(seed: int) -> tuple[RaceStarts, list[State]]:
        venv = make_sb3_vec_env("greed_env/Solitaire-v0", 64, seed=2, rules=rules, objective="race")
        starts = RaceStarts(venv, 0.75, seed=seed)
        obs = starts.reset()
        assert np.array_equal(obs, starts.batch.obs)
        return starts, [State(**row_fields(starts.batch.S, i, starts.batch.tables)) for i in range(64)]

    starts, states = started(5)
    moved = [s for s in states if s.scores[0]]
    assert 32 < len(moved) < 60  # about three in four (a few draws are 0)
    assert all(s.phase == Phase.KEEP and s.turn_total == 0 and s.entered == (True,) for s in moved)
    assert all(s.scores[0] % 50 == 0 and s.scores[0] < rules.target for s in moved)
    assert [s.scores for s in started(5)[1]] == [s.scores for s in states]  # same seed, same starts
    # every score below the target, 0 included, can be drawn
    rng = np.random.default_rng(0)
    draws = {race_score(rules, rng) for _ in range(20_000)}
    assert draws == {0, *range(rules.entry_threshold or 50, rules.target, 50)}
    assert {race_score(rules, rng, near=2000) for _ in range(5_000)} == set(range(8000, rules.target, 50))
    late = RaceStarts(make_sb3_vec_env("greed_env/Solitaire-v0", 64, seed=2, rules=rules, objective="race"), 1.0, 7, near=1.0)
    late.reset()
    begun = [State(**row_fields(late.batch.S, i, late.batch.tables)).scores[0] for i in range(64)]
    assert sum(b >= 8000 for b in begun) > 56  # the rest ended before the learner decided
    # the return is minus the turns taken from the start, and restarts draw again
    rng = np.random.default_rng(3)
    finished = 0
    for _ in range(150):
        masks = starts.venv.action_masks().astype(bool)
        starts.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        _, rewards, dones, _ = starts.step_wait()
        assert np.all(rewards <= 0) and np.all(rewards == np.round(rewards))
        finished += int(dones.sum())
    assert finished > 0 and (starts.batch.S[:, K.B_SCORE] > 0).sum() > 16
    with pytest.raises(ValueError, match="'race' objective"):
        RaceStarts(make_sb3_vec_env("greed_env/Solitaire-v0", 4, seed=2, rules=rules, objective="turn"), 0.5, 1)
    with pytest.raises(ValueError, match="fraction must be in"):
        RaceStarts(starts.venv, 1.5, 1)
    with pytest.raises(ValueError, match="near must be in"):
        RaceStarts(starts.venv, 0.5, 1, near=-0.5)
