"""Export to ONNX: equivalence with MaskablePPO.predict, refusal of mismatched or corrupt bots,
and running an exported bot with torch unavailable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots import registry
from greed_env.bots.errors import (
    CatalogMismatchError,
    CorruptBotError,
    ObsSpecMismatchError,
    RulesMismatchError,
)
from greed_env.bots.export import encode_positions, export_model, sample_positions
from greed_env.bots.loader import load
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.bots.play import play_game
from greed_env.bots.sb3_backend import PPOBot
from greed_env.cli import main as greed_main
from greed_env.rules import is_chance, legal_moves, preset
from greed_env.spaces.observation import OBS_SPEC_VERSION

RULES = preset("ten_thousand")
EQUIVALENCE_POSITIONS = 10_000


def _untrained_model(rules, seed: int):
    from sb3_contrib import MaskablePPO

    from greed_env.envs.solitaire import SolitaireEnv

    env = SolitaireEnv(rules, objective="turn")
    return MaskablePPO(
        "MlpPolicy", env, seed=seed, device="cpu", n_steps=32, batch_size=32,
        policy_kwargs={"net_arch": [32, 32]},
    )


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained (seeded) MaskablePPO for ten_thousand with a training card beside it."""
    d = tmp_path_factory.mktemp("model")
    model = _untrained_model(RULES, seed=7)
    path = d / "model.zip"
    model.save(path)
    card = {
        "rules": RULES.to_dict(),
        "rules_fingerprint": RULES.fingerprint,
        "obs_spec_version": 1,
        "action_catalog_version": 1,
        "objective": "turn",
        "total_timesteps": 0,
    }
    (d / "model.json").write_text(json.dumps(card))
    return path


@pytest.fixture(scope="module")
def exported(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The exported card path (``<root>/ten_thousand/ppo-turn.json``)."""
    root = tmp_path_factory.mktemp("bots")
    res = export_model(model_path, root / "ten_thousand", check_positions=300, seed=1)
    assert res.mismatches == 0
    return res.card_path


def test_export_writes_card_and_onnx(exported: Path) -> None:
    card = json.loads(exported.read_text())
    onnx_path = exported.with_suffix(".onnx")
    assert card["id"] == "ten_thousand/ppo-turn"
    assert card["rules_fingerprint"] == RULES.fingerprint
    assert card["obs_spec_version"] == OBS_SPEC_VERSION and card["action_catalog_version"] == 1
    assert card["training"]["objective"] == "turn"
    assert card["export"]["equivalence_check"]["mismatches"] == 0
    assert onnx_path.stat().st_size < 1_000_000
    assert not [p for p in exported.parent.iterdir() if p.name.endswith(".tmp")]


def test_onnx_equals_maskable_ppo_predict_on_10000_positions(model_path: Path, exported: Path) -> None:
    states = sample_positions(RULES, EQUIVALENCE_POSITIONS, np.random.default_rng(2024))
    assert len(states) == EQUIVALENCE_POSITIONS
    obs, masks = encode_positions(RULES, states)
    onnx_bot = OnnxBot.from_card(exported)
    ppo = PPOBot(model_path)
    ours = onnx_bot.act_batch(obs, masks)
    theirs = ppo.act_batch(obs, masks)
    assert np.array_equal(ours, theirs), f"{int(np.sum(ours != theirs))} mismatches"
    assert masks[np.arange(len(ours)), ours].all()
    rng = np.random.default_rng(0)
    for s in states[:200]:
        assert onnx_bot.act(RULES, s, rng) == ppo.act(RULES, s, rng)


def test_onnx_bot_plays_legal_moves_and_is_deterministic(exported: Path) -> None:
    bot = load(str(exported))
    other = load("threshold-300")
    first = play_game(RULES, [bot, other], np.random.default_rng(5), [np.random.default_rng(1), np.random.default_rng(2)])
    again = play_game(RULES, [bot, other], np.random.default_rng(5), [np.random.default_rng(9), np.random.default_rng(8)])
    assert first == again
    assert sum(first) == pytest.approx(1.0)


def test_registry_finds_bots_on_the_search_path(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.BOTS_PATH_ENV, str(exported.parent.parent))
    bot = load("bot:ten_thousand/ppo-turn")
    assert isinstance(bot, OnnxBot)
    assert load("ppo-turn", rules=RULES).name == "ten_thousand/ppo-turn"
    ids = {b.id: b for b in registry.list_bots("ten_thousand")}
    assert "ten_thousand/ppo-turn" in ids and not ids["ten_thousand/ppo-turn"].problem
    with pytest.raises(RulesMismatchError, match="fingerprint"):
        load("ten_thousand/ppo-turn", rules=preset("farkle"))


def test_onnx_bot_refuses_other_rules_at_play_time(exported: Path) -> None:
    bot = OnnxBot.from_card(exported)
    farkle = preset("farkle")
    s = _a_decision(farkle)
    with pytest.raises(RulesMismatchError, match="farkle"):
        bot.act(farkle, s, np.random.default_rng(0))
    with pytest.raises(RulesMismatchError, match="target"):
        OnnxBot.from_card(exported, rules=RULES.replace(target=5000))


def _a_decision(rules):
    from greed_env.rules import apply_roll, new_game

    return apply_roll(rules, new_game(rules, 2, first_player=0), (1, 1, 1, 2, 3, 5) if rules.num_dice == 6 else (1, 1, 1, 2, 3))


def _copy_bot(src: Path, dst_dir: Path) -> Path:
    dst_dir.mkdir(parents=True, exist_ok=True)
    card = dst_dir / src.name
    card.write_bytes(src.read_bytes())
    card.with_suffix(".onnx").write_bytes(src.with_suffix(".onnx").read_bytes())
    return card


def _edit_card(card: Path, **changes: object) -> None:
    data = json.loads(card.read_text())
    data.update(changes)
    card.write_text(json.dumps(data))


def test_refuses_truncated_onnx(exported: Path, tmp_path: Path) -> None:
    card = _copy_bot(exported, tmp_path)
    onnx_path = card.with_suffix(".onnx")
    onnx_path.write_bytes(onnx_path.read_bytes()[:4000])
    with pytest.raises(CorruptBotError, match="checksum mismatch"):
        OnnxBot.from_card(card)
    import hashlib

    data = json.loads(card.read_text())
    data["onnx"]["sha256"] = hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    card.write_text(json.dumps(data))
    with pytest.raises(CorruptBotError, match="does not parse"):
        OnnxBot.from_card(card)


def test_refuses_invalid_or_incomplete_card(exported: Path, tmp_path: Path) -> None:
    card = _copy_bot(exported, tmp_path)
    text = card.read_text()
    card.write_text(text[: len(text) // 2])
    with pytest.raises(CorruptBotError, match="invalid JSON"):
        OnnxBot.from_card(card)
    data = json.loads(text)
    del data["obs_spec_version"]
    card.write_text(json.dumps(data))
    with pytest.raises(CorruptBotError, match="missing fields obs_spec_version"):
        OnnxBot.from_card(card)
    data = json.loads(text)
    data["onnx"]["file"] = "nowhere.onnx"
    card.write_text(json.dumps(data))
    with pytest.raises(CorruptBotError, match=r"nowhere\.onnx is missing"):
        OnnxBot.from_card(card)


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"obs_spec_version": 99}, ObsSpecMismatchError, "observation spec v99"),
        ({"obs_dim": 7}, ObsSpecMismatchError, r"\(7 entries\)"),
        ({"action_catalog_version": 99}, CatalogMismatchError, "action catalog v99"),
        ({"num_actions": 3}, CatalogMismatchError, r"\(3 actions\)"),
        ({"rules_fingerprint": "0000000000000000"}, CorruptBotError, "does not match its rules"),
    ],
)
def test_refuses_version_and_fingerprint_mismatch(
    exported: Path, tmp_path: Path, changes: dict, error: type, match: str
) -> None:
    card = _copy_bot(exported, tmp_path)
    _edit_card(card, **changes)
    with pytest.raises(error, match=match):
        OnnxBot.from_card(card)


def test_card_for_other_rules_is_refused_for_this_preset(exported: Path, tmp_path: Path) -> None:
    card = _copy_bot(exported, tmp_path / "farkle")
    with pytest.raises(RulesMismatchError, match="ten_thousand"):
        OnnxBot.from_card(card, rules=preset("farkle"))
    _edit_card(card, id="farkle/ppo-turn")  # its id now contradicts its rules
    with pytest.raises(CorruptBotError, match="ten_thousand"):
        OnnxBot.from_card(card, rules=preset("farkle"))


def test_export_refuses_rules_other_than_the_training_card(model_path: Path, tmp_path: Path) -> None:
    with pytest.raises(RulesMismatchError, match="farkle"):
        export_model(model_path, tmp_path, rules=preset("farkle"), check_positions=0)
    assert not list(tmp_path.iterdir())


def test_export_refuses_corrupt_model(model_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(model_path.read_bytes()[:2000])
    with pytest.raises(CorruptBotError, match=r"bad\.zip"):
        export_model(bad, tmp_path / "out", rules=RULES, check_positions=0)


def test_greed_export_command(model_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ten_thousand"
    code = greed_main(["export", str(model_path), "--out", str(out), "--name", "tiny", "--check-positions", "200"])
    assert code == 0
    text = capsys.readouterr().out
    assert "200/200" in text
    assert (out / "tiny.onnx").is_file() and (out / "tiny.json").is_file()
    assert greed_main(["export", str(tmp_path / "nope.zip"), "--out", str(out)]) == 2


def test_exported_bot_runs_without_torch(exported: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "import numpy as np\n"
        "from greed_env.bots import load\n"
        "from greed_env.bots.play import play_game\n"
        "from greed_env.rules import preset\n"
        f"bot = load({str(exported)!r})\n"
        "r = preset('ten_thousand')\n"
        "shares = play_game(r, [bot, load('random')], np.random.default_rng(0), "
        "[np.random.default_rng(1), np.random.default_rng(2)])\n"
        "assert sys.modules['torch'] is None\n"
        "assert not [m for m in sys.modules if m.startswith(('torch.', 'stable_baselines3', 'sb3_contrib'))]\n"
        "print('ok', shares)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok")


def test_sampling_onnx_bot_uses_the_callers_generator(exported: Path) -> None:
    bot = OnnxBot.from_card(exported, temperature=1.0)
    s = _a_decision(RULES)
    assert not is_chance(s)
    picks = [bot.act(RULES, s, np.random.default_rng(k)) for k in range(20)]
    assert picks == [bot.act(RULES, s, np.random.default_rng(k)) for k in range(20)]
    assert all(m in legal_moves(RULES, s) for m in picks)


def test_committed_onnx_bots_carry_no_exporter_source_paths() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for path in root.glob("agents/*/*.onnx"):
        assert b"stack_trace" not in path.read_bytes(), path
