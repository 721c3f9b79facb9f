"""The afterstate policy head (``--policy-head afterstate``): its readings agree with the rules
engine, and torch, numpy (NumpyPolicy, saved .npz) and the exported ONNX graph compute the same
logits; a structured model starts it unchanged (``--init-from``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.export import encode_positions, sample_positions
from greed_env.envs.catalog import ActionCatalog
from greed_env.rules import Phase, apply, preset
from greed_env.train import duel
from greed_env.train.featurize import (
    AfterstateConfig,
    afterstate_index,
    afterstate_term,
    keep_readings,
)

RULES = preset("ten_thousand")


@pytest.mark.parametrize("name", ["ten_thousand", "greed", "farkle"])
def test_afterstate_readings_match_the_rules_engine(name: str) -> None:
    """Every legal keep's afterstate (turn total after it, dice left to roll) as the head reads
    it from the observation equals the state the rules engine moves to."""
    rules = preset(name)
    cfg = AfterstateConfig.for_rules(rules)
    catalog = ActionCatalog(rules)
    states = [s for s in sample_positions(rules, 1500, np.random.default_rng(3)) if s.phase == Phase.KEEP]
    assert len(states) > 300
    obs, masks = encode_positions(rules, states)
    total, flat = afterstate_index(obs, cfg)
    left = flat // cfg.width
    checked = 0
    for i, s in enumerate(states):
        _, moves = catalog.legal(s)
        for a in np.flatnonzero(masks[i]):
            if catalog.entries[a].kind != "keep":
                continue
            after = apply(rules, s, moves[int(a)])
            if after.phase == Phase.KEEP or after.player != s.player:  # the turn ended on this keep
                continue
            assert total[i, a] == pytest.approx(after.turn_total, abs=0.01), (s, moves[int(a)])
            assert left[i, a] == after.dice, (s, moves[int(a)])
            reached = flat[i, a] % cfg.width
            assert reached == int(np.sum(np.asarray(cfg.levels) <= after.turn_total))
            checked += 1
    assert checked > 1000


def test_afterstate_term_is_the_curve_read_at_the_afterstate() -> None:
    cfg = AfterstateConfig.for_rules(RULES)
    rng = np.random.default_rng(0)
    states = [s for s in sample_positions(RULES, 400, rng) if s.phase == Phase.KEEP]
    obs, masks = encode_positions(RULES, states)
    values = rng.normal(size=(len(obs), cfg.out_dim)).astype(np.float32)
    term = afterstate_term(obs, values, cfg)
    total, flat = afterstate_index(obs, cfg)
    dice = keep_readings(RULES)[1]
    assert not term[:, dice == 0].any()
    curves = values.reshape(len(obs), cfg.num_dice + 1, cfg.width)
    for i in range(len(obs)):
        for a in np.flatnonzero(masks[i]):
            n_left, reached = divmod(int(flat[i, a]), cfg.width)
            u = curves[i, n_left]
            want = u[:reached].sum() + u[-1] * total[i, a] / 1000.0
            assert term[i, a] == pytest.approx(want, rel=1e-5, abs=1e-4)


def test_afterstate_config_refuses_tap_order_rules_and_bad_files() -> None:
    with pytest.raises(ValueError, match="order-free keeps"):
        AfterstateConfig.for_rules(preset("progressive"))
    data = AfterstateConfig.for_rules(RULES).to_dict()
    assert AfterstateConfig.from_dict(json.loads(json.dumps(data))) == AfterstateConfig.for_rules(RULES)
    with pytest.raises(ValueError, match="not an afterstate head config"):
        AfterstateConfig.from_dict({k: v for k, v in data.items() if k != "levels"})
    with pytest.raises(ValueError, match="lengths differ"):
        AfterstateConfig.from_dict({**data, "dice": data["dice"][:-1]})


def _models(tmp_path: Path):
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.train.common import _init_weights, _policy_class, _policy_kwargs

    env = gym.make("greed_env/Duel-v0", rules="ten_thousand", opponent="threshold")
    structured = duel.Args(net_width=16, features="margin-cross")
    after = duel.Args(net_width=16, features="margin-cross", policy_head="afterstate")
    old = MaskablePPO(_policy_class(structured), env, policy_kwargs=_policy_kwargs(structured, RULES), device="cpu")
    with torch.no_grad():
        for p in old.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    old.save(tmp_path / "old.zip")
    new = MaskablePPO(_policy_class(after), env, policy_kwargs=_policy_kwargs(after, RULES), device="cpu", seed=1)
    _init_weights(new, tmp_path / "old.zip", RULES)
    return env, old, new


def test_init_from_a_structured_model_keeps_its_play_then_the_head_counts(tmp_path: Path) -> None:
    import torch

    from greed_env.train.policy import NumpyPolicy

    _, old, new = _models(tmp_path)
    a, b = NumpyPolicy.from_sb3(old), NumpyPolicy.from_sb3(new)
    assert a.afterstate is None and b.afterstate is not None
    states = sample_positions(RULES, 500, np.random.default_rng(5), players=(2,))
    obs, _ = encode_positions(RULES, states)
    assert np.allclose(a.logits(obs), b.logits(obs), atol=1e-5)
    with torch.no_grad():
        new.policy.action_net.after.weight.normal_(0.0, 0.5)
    c = NumpyPolicy.from_sb3(new)
    keeps = np.asarray(keep_readings(RULES)[1]) > 0
    diff = np.abs(c.logits(obs) - a.logits(obs))
    assert diff[:, keeps].max() > 0.1 and diff[:, ~keeps].max() < 1e-5


def test_numpy_policy_and_its_file_match_maskable_ppo_predict(tmp_path: Path) -> None:
    import torch

    from greed_env.train.policy import ModelFileError, NumpyPolicy

    env, _, model = _models(tmp_path)
    with torch.no_grad():
        for p in model.policy.action_net.after.parameters():
            p.normal_(0.0, 0.5)
    pol = NumpyPolicy.from_sb3(model)
    pol.save(tmp_path / "pol.npz")
    loaded = NumpyPolicy.load(tmp_path / "pol.npz")
    obs, info = env.reset(seed=4)
    moves = 0
    for _ in range(400):
        mask = info["action_mask"]
        mine = int(pol.act(obs[None], mask[None])[0])
        theirs, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mine == int(theirs) == int(loaded.act(obs[None], mask[None])[0])
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.as_tensor(obs[None]), action_masks=mask[None])
        legal = mask.astype(bool)
        ours = pol.logits(obs[None])[0][legal]
        log_probs = ours - ours.max() - np.log(np.exp(ours - ours.max()).sum())
        assert np.allclose(dist.distribution.logits.numpy()[0][legal], log_probs, atol=1e-4)
        moves += int(not (mask[0] or mask[1]))
        obs, _, terminated, truncated, info = env.step(mine)
        if terminated or truncated:
            obs, info = env.reset()
    assert moves > 100
    with np.load(tmp_path / "pol.npz") as data:
        arrays = {k: data[k] for k in data.files if k != "after_w"}
    np.savez(tmp_path / "broken.npz", **arrays)
    with pytest.raises(ModelFileError, match="not a readable policy"):
        NumpyPolicy.load(tmp_path / "broken.npz")


def test_onnx_export_of_an_afterstate_model_matches_predict(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    import torch

    from greed_env.bots.export import export_model
    from greed_env.bots.policy_bots import OnnxBot, PPOBot

    _, _, model = _models(tmp_path)
    with torch.no_grad():
        for p in model.policy.action_net.after.parameters():
            p.normal_(0.0, 0.5)
    model.save(tmp_path / "model.zip")
    card = {
        "rules": RULES.to_dict(),
        "rules_fingerprint": RULES.fingerprint,
        "obs_spec_version": 1,
        "action_catalog_version": 1,
        "objective": "duel",
        "total_timesteps": 0,
    }
    (tmp_path / "model.json").write_text(json.dumps(card))
    res = export_model(tmp_path / "model.zip", tmp_path / "bots" / "ten_thousand", check_positions=500, seed=1)
    assert res.mismatches == 0
    states = sample_positions(RULES, 2000, np.random.default_rng(11), players=(2,))
    obs, masks = encode_positions(RULES, states)
    ours = OnnxBot.from_card(res.card_path).act_batch(obs, masks)
    theirs = PPOBot(tmp_path / "model.zip").act_batch(obs, masks)
    assert np.array_equal(ours, theirs)
