"""Bot and training cards: one builder whose output is byte for byte the shipped cards, one
checker for training cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greed_env.bots.cards import (
    build_card,
    card_rules,
    check_compatible,
    check_training_card,
    read_training_card,
    summarize_card,
    training_card_path,
    write_card,
)
from greed_env.bots.errors import (
    CatalogMismatchError,
    CorruptBotError,
    ObsSpecMismatchError,
    RulesMismatchError,
)
from greed_env.rules import preset
from greed_env.spaces.catalog import ActionCatalog

AGENTS = Path(__file__).resolve().parents[2] / "agents"
CARDS = sorted(p for p in AGENTS.glob("*/*.json") if p.with_suffix(".onnx").is_file())


@pytest.mark.parametrize("path", CARDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_builder_writes_the_shipped_cards_byte_for_byte(path: Path, tmp_path: Path) -> None:
    card = json.loads(path.read_text(encoding="utf-8"))
    built = build_card(
        name=card["name"],
        rules=card_rules(card),
        onnx_bytes=(path.parent / card["onnx"]["file"]).read_bytes(),
        description=card["description"],
        objective=card["objective"],
        training=card["training"],
        num_actions=card["num_actions"],  # tap-order bots made on catalog v2 keep its 3,693
    )
    assert built["onnx"]["sha256"] == card["onnx"]["sha256"]
    # the two ten_thousand cards state 336,323 bytes for a 326,282-byte file whose sha256 they match
    built["onnx"]["bytes"] = card["onnx"]["bytes"]
    built["rules"] = card["rules"]  # cards exported before a later Rules field lack it (same fingerprint)
    built["obs_spec_version"] = card["obs_spec_version"]  # an older spec version this greed_env still reads
    built["evaluation"], built["export"] = card["evaluation"], card["export"]
    built.update({k: v for k, v in card.items() if k not in built})
    out = write_card(tmp_path / path.name, built)
    assert out.read_bytes() == path.read_bytes()


def test_a_card_records_the_catalog_version_of_its_network(tmp_path: Path) -> None:
    """A tap-order network of the version-2 catalog's 3,693 logits gets a version-2 card; it
    loads under today's catalog, whose ids extend it; a size no catalog has is refused."""
    rules = preset("trippn")
    common = {"name": "x", "rules": rules, "onnx_bytes": b"", "description": "", "objective": "turn", "training": {}}
    assert (build_card(**common)["action_catalog_version"], build_card(**common)["num_actions"]) == (3, 3696)
    old = build_card(**common, num_actions=3693)
    assert (old["action_catalog_version"], old["num_actions"]) == (2, 3693)
    assert check_compatible(old) == rules
    with pytest.raises(CatalogMismatchError, match="v2"):
        check_compatible({**old, "num_actions": 3696})
    with pytest.raises(ValueError, match="3694 actions"):
        build_card(**common, num_actions=3694)
    with pytest.raises(ValueError, match="no action catalog"):
        build_card(**{**common, "rules": preset("ten_thousand")}, num_actions=3693)


def test_training_cards_are_checked_field_by_field(tmp_path: Path) -> None:
    rules = preset("farkle")
    model = tmp_path / "model.zip"
    assert training_card_path(model) == tmp_path / "model.json"
    assert read_training_card(model) is None
    training_card_path(model).write_text(json.dumps({"rules": rules.to_dict(), "rules_fingerprint": rules.fingerprint}))
    card = read_training_card(model)
    assert card is not None and check_training_card(card, None, "m") == rules
    assert check_training_card({"rules": "farkle"}, rules, "m") == rules
    assert check_training_card({}, None, "m") is None
    with pytest.raises(RulesMismatchError, match=r"trained for other rules .*'farkle'"):
        check_training_card(card, preset("greed"), "m")
    with pytest.raises(CorruptBotError, match="does not match its rules"):
        check_training_card({**card, "rules_fingerprint": "0" * 16}, None, "m")
    with pytest.raises(ObsSpecMismatchError, match="observation spec v0"):
        check_training_card({"obs_spec_version": 0}, rules, "m")
    with pytest.raises(CatalogMismatchError, match="action catalog v99"):
        check_training_card({"action_catalog_version": 99}, rules, "m")
    assert check_training_card({"action_catalog_version": ActionCatalog(rules).version}, rules, "m") == rules
    training_card_path(model).write_text("{not json")
    with pytest.raises(CorruptBotError, match="not valid JSON"):
        read_training_card(model)


def test_summaries_state_the_measured_strength() -> None:
    card = {
        "training": {"evaluation": {"objective": "turn", "mean": 512.3, "ci95": 4.1, "units": "points", "optimal": 520.5}},
        "evaluation": [{"opponent": "random", "score_rate": 0.9, "ci95": [0.85, 0.94], "games": 200}],
    }
    assert summarize_card(card) == "turn: 512 ± 4.1 points (optimal 520.5); vs random 90.0% [85.0-94.0] (n=200)"
