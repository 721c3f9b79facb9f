"""Game records: building, JSON round trip, atomic save, and load refusing bad files."""

from __future__ import annotations

import copy
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.rules import (
    GameRecord,
    IllegalMove,
    Recorder,
    RecordError,
    Rules,
    load,
    preset,
    preset_names,
    record_game,
    replay,
    save,
)
from greed_env.rules.record import RECORD_FORMAT, RECORD_VERSION


def _game(seed: int = 3, name: str = "ten_thousand", horizon: int = 400) -> GameRecord:
    return copy.deepcopy(_cached_game(seed, name, horizon))


@lru_cache(maxsize=8)
def _cached_game(seed: int, name: str, horizon: int) -> GameRecord:
    rules = preset(name, horizon_rounds=horizon)
    bots = [ThresholdBot(bank_at=400), RandomBot()]
    return record_game(
        rules,
        [b.act for b in bots],
        np.random.default_rng(seed),
        seed=seed,
        players=["threshold:400", "random"],
    )


def test_record_game_is_a_pure_function_of_its_arguments() -> None:
    a, b = _game(), _game()
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != _game(seed=4).to_dict()
    assert a.final is not None and a.final["phase"] == "OVER"
    assert a.events[0] == {"player": 0, "roll": a.events[0]["roll"]}
    assert any("move" in e for e in a.events)


def test_document_layout() -> None:
    doc = _game().to_dict()
    assert doc["format"] == RECORD_FORMAT and doc["version"] == RECORD_VERSION
    assert Rules.from_dict(doc["rules"]) == preset("ten_thousand")
    assert doc["num_players"] == 2 and doc["first_player"] is None and doc["seed"] == 3
    assert doc["players"] == ["threshold:400", "random"]
    json.dumps(doc)


def test_save_load_replay_round_trip(tmp_path: Path) -> None:
    rec = _game(name="progressive", horizon=8)
    path = save(rec, tmp_path / "game.json")
    loaded = load(path)
    assert loaded.to_dict() == rec.to_dict()
    states = replay(loaded)
    assert len(states) == len(rec.events) + 1 and states[-1].phase == 7
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while saving leaves the old file whole and no temporary file behind."""
    path = tmp_path / "game.json"
    save(_game(), path)
    before = path.read_text()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        save(_game(seed=9), path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_recorder_logs_only_legal_steps() -> None:
    rules = preset("ten_thousand")
    rec = Recorder(rules, 2, first_player=1)
    rec.roll((1, 1, 1, 2, 3, 5))
    with pytest.raises(IllegalMove):
        rec.move("bank")
    with pytest.raises(IllegalMove):
        rec.roll((1, 2))
    rec.move("keep:1,1,1")
    assert rec.events == [
        {"player": 1, "roll": [1, 1, 1, 2, 3, 5]},
        {"player": 1, "move": "keep:1,1,1"},
    ]
    assert replay(rec.record()) == rec.states


def _write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    return path


def _doc() -> dict[str, object]:
    return _game().to_dict()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="chess.pgn"), "not a greed_env game record"),
        (lambda d: d.pop("format"), "not a greed_env game record"),
        (lambda d: d.update(version=99), "version 99 is not supported"),
        (lambda d: d.update(version="1"), "version must be an integer"),
        (lambda d: d.pop("events"), "no 'events'"),
        (lambda d: d.update(events={}), "'events' must be a list"),
        (lambda d: d["rules"].update(num_dice=9), "rules are invalid"),
        (lambda d: d["rules"].update(colour="red"), "unknown rules field 'colour'"),
        (lambda d: d.update(num_players="two"), "'num_players' must be an integer"),
        (lambda d: d["events"].append({"player": 0}), "neither a roll nor a move"),
        (lambda d: d["events"].append({"roll": [1]}), "no integer 'player'"),
        (lambda d: d["events"].__setitem__(0, {"player": 0, "roll": "12"}), "list of faces"),
        (lambda d: d.update(players=[1, 2]), "list of strings"),
    ],
)
def test_load_refuses_malformed_records(tmp_path: Path, change: object, message: str) -> None:
    doc = _doc()
    change(doc)  # type: ignore[operator]
    with pytest.raises(RecordError, match=message) as info:
        load(_write(tmp_path, doc))
    assert "bad.json" in str(info.value)


def test_load_refuses_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read game record"):
        load(tmp_path / "missing.json")
    good = save(_game(), tmp_path / "cut.json")
    good.write_text(good.read_text()[:200])
    with pytest.raises(RecordError, match="not valid JSON"):
        load(good)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(RecordError, match=r"not UTF-8|not valid JSON"):
        load(tmp_path / "bin.json")
    with pytest.raises(RecordError, match="JSON object"):
        load(_write(tmp_path, [1, 2, 3]))


def test_replay_refuses_tampered_events(tmp_path: Path) -> None:
    doc = _doc()
    doc["final"]["scores"] = [1, 2]  # type: ignore[index]
    with pytest.raises(RecordError, match=r"does not reproduce.*scores"):
        replay(load(_write(tmp_path, doc)))
    doc = _doc()
    first_move = next(i for i, e in enumerate(doc["events"]) if "move" in e)  # type: ignore[arg-type]
    doc["events"][first_move]["move"] = "bank"  # type: ignore[index]
    with pytest.raises(RecordError, match=rf"event {first_move} .*illegal"):
        replay(doc)
    doc = _doc()
    doc["events"][0]["player"] = 1  # type: ignore[index]
    with pytest.raises(RecordError, match=r"event 0 .* by player 1"):
        replay(doc)


@pytest.mark.parametrize("name", preset_names())
def test_rules_survive_the_json_round_trip(name: str) -> None:
    """A record stores Rules.to_dict(); reading it back gives the same rules (name included)."""
    rules = preset(name)
    back = Rules.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert back == rules and back.name == name and hash(back) == hash(rules)
    assert back.straights == rules.straights


def test_failed_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        save(_game(), tmp_path / "game.json")
    assert list(tmp_path.iterdir()) == []
