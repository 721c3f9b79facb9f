"""Bot files that contradict themselves are refused with one line, and nothing is written by an
export whose arguments fail: greed export checks every argument first, a card with an unknown
kind or objective, a rules name or an id that its rules, name or place contradict is refused
where it is read, and ``greed bots`` lists a bot whose ONNX file is edited or cut short with the
reason instead of a strength."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from greed_env.bots import load
from greed_env.bots.cards import read_card
from greed_env.bots.errors import BotLoadError, CorruptBotError
from greed_env.bots.export import export_model
from greed_env.bots.registry import BOTS_PATH_ENV, list_bots
from greed_env.cli import main as greed_main
from greed_env.rules import preset

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "agents" / "farkle" / "ppo-turn"


def _copy(folder: Path, name: str, edit: dict[str, Any] | None = None, cut: bool = False, flip: bool = False) -> Path:
    """``farkle/ppo-turn`` copied into ``folder/farkle/name.{json,onnx}``, its card edited."""
    card = json.loads(SHIPPED.with_suffix(".json").read_text())
    card.update(name=name, id=f"farkle/{name}", onnx={**card["onnx"], "file": f"{name}.onnx"})
    card.update(edit or {})
    data = SHIPPED.with_suffix(".onnx").read_bytes()
    if cut:
        data = data[: len(data) // 2]
    if flip:
        data = data[:-10] + bytes([data[-10] ^ 1]) + data[-9:]
    out = folder / "farkle"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.onnx").write_bytes(data)
    path = out / f"{name}.json"
    path.write_text(json.dumps(card))
    return path


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        ({"objective": "fly"}, "objective 'fly' is none of"),
        ({"kind": "python"}, "kind 'python' is not 'onnx-policy'"),
        ({"rules_name": "ten_thousand"}, "rules_name 'ten_thousand' does not match its rules"),
        ({"id": "farkle/other"}, "id 'farkle/other' does not match its rules and name"),
        ({"id": "ten_thousand/edited"}, "id 'ten_thousand/edited' does not match"),
    ],
)
def test_a_card_that_contradicts_itself_is_refused(tmp_path: Path, edit: dict[str, Any], match: str) -> None:
    path = _copy(tmp_path, "edited", edit)
    with pytest.raises(CorruptBotError, match=match):
        read_card(path)
    with pytest.raises(CorruptBotError, match=match):
        load(str(path))


def test_a_card_in_another_place_is_refused_by_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole card of farkle/ppo-turn saved as farkle/wrongid: its own fields agree."""
    _copy(tmp_path, "wrongid")
    card_path = tmp_path / "farkle" / "wrongid.json"
    card = json.loads(card_path.read_text())
    card.update(name="ppo-turn", id="farkle/ppo-turn", onnx={**card["onnx"], "file": "wrongid.onnx"})
    card_path.write_text(json.dumps(card))
    monkeypatch.setenv(BOTS_PATH_ENV, str(tmp_path))
    with pytest.raises(CorruptBotError, match="'farkle/ppo-turn', not the id of its place"):
        load("farkle/wrongid", preset("farkle"))
    assert "does not match its place" in {b.id: b for b in list_bots("farkle")}["farkle/wrongid"].problem


def test_greed_bots_lists_an_edited_or_truncated_onnx_as_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy(tmp_path, "truncated", cut=True)
    _copy(tmp_path, "flipped", flip=True)
    _copy(tmp_path, "healthy")
    monkeypatch.setenv(BOTS_PATH_ENV, str(tmp_path))
    listed = {b.id: b for b in list_bots("farkle")}
    for name in ("truncated", "flipped"):
        info = listed[f"farkle/{name}"]
        assert "checksum mismatch" in info.problem and info.strength == ""
    assert listed["farkle/healthy"].problem == "" and "points per turn" in listed["farkle/healthy"].strength
    assert greed_main(["bots", "--rules", "farkle", "--plain"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("farkle/truncated")]
    assert lines and "BROKEN: bot farkle/truncated: checksum mismatch" in lines[0]


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained MaskablePPO for farkle with its training card."""
    from sb3_contrib import MaskablePPO

    from greed_env.envs.solitaire import SolitaireEnv

    rules = preset("farkle")
    folder = tmp_path_factory.mktemp("model")
    model = MaskablePPO("MlpPolicy", SolitaireEnv(rules, objective="turn"), seed=3, device="cpu", n_steps=32,
                        batch_size=32, policy_kwargs={"net_arch": [16]})
    path = folder / "model.zip"
    model.save(path)
    card = {"rules": rules.to_dict(), "rules_fingerprint": rules.fingerprint, "objective": "turn"}
    (folder / "model.json").write_text(json.dumps(card))
    return path


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--evaluate", "2", "--opponents", "nosuch"], "unknown bot 'nosuch'"),
        (["--objective", "fly"], "objective 'fly' is none of"),
    ],
)
def test_export_checks_every_argument_before_writing(
    model_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], match: str
) -> None:
    import onnxscript  # noqa: F401  (the export needs it: the dev extra installs it)
    out = tmp_path / "farkle"
    out.mkdir()
    shutil.copy(SHIPPED.with_suffix(".onnx"), out / "ppo-turn.onnx")
    shutil.copy(SHIPPED.with_suffix(".json"), out / "ppo-turn.json")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert greed_main(["export", str(model_path), "--out", str(out), "--check-positions", "50", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and match in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_export_refuses_an_opponent_it_cannot_play(model_path: Path, tmp_path: Path) -> None:
    with pytest.raises((BotLoadError, ValueError), match="'optimal-3p'"):
        export_model(model_path, tmp_path, evaluate_games=2, evaluate_opponents=["optimal-3p"])
    assert list(tmp_path.iterdir()) == []
