"""The bot registry: ids, prefixes, heuristics for every preset, solver bots, committed agents."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots import registry, solver_backend
from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.bots.errors import CorruptBotError, RulesMismatchError, UnknownBotError
from greed_env.bots.loader import load
from greed_env.bots.play import play_game
from greed_env.bots.spec import parse_spec
from greed_env.cli import main as greed_main
from greed_env.rules import preset, preset_names

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "agents"


@pytest.mark.parametrize("name", preset_names())
def test_heuristics_exist_for_every_preset(name: str) -> None:
    ids = {b.id for b in registry.list_bots(name)}
    for h in registry.HEURISTIC_NAMES:
        assert f"{name}/{h}" in ids
    assert isinstance(load(f"{name}/random"), RandomBot)


@pytest.mark.parametrize(
    ("spec", "bank_at", "keep"),
    [
        ("ten_thousand/threshold-300", 300, "max-score"),
        ("bot:greed/threshold-750-keep-most", 750, "keep-most"),
        ("BOT:farkle/threshold-0-keep-fewest", 0, "keep-fewest"),
        ("threshold-500", 500, "max-score"),
        ("threshold:450", 450, "max-score"),
    ],
)
def test_threshold_specs(spec: str, bank_at: int, keep: str) -> None:
    bot = load(spec)
    assert isinstance(bot, ThresholdBot)
    assert (bot.bank_at, bot.keep) == (bank_at, keep)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("ten_thousand/nonsense", "known for ten_thousand: .*ten_thousand/random"),
        ("yahtzee/random", "no rules preset 'yahtzee'"),
        ("optimal-duel", "give an id <rules>/optimal-duel"),
        ("ten_thousand/optimal-nothing", "no objective .nothing. .it has turn, entry, race, duel"),
        ("", "empty bot spec"),
    ],
)
def test_unknown_specs_raise_lookup_errors(spec: str, match: str) -> None:
    with pytest.raises(UnknownBotError, match=match):
        load(spec)


def test_registry_ids_load_with_the_rules() -> None:
    rules = preset("ten_thousand")
    assert load("bot:ten_thousand/threshold-500", rules).bank_at == 500
    assert load("ten_thousand/threshold-300-keep-most", rules).keep == "keep-most"


def test_heuristic_bots_play_any_rules_deterministically() -> None:
    r = preset("progressive")
    bots = [load("progressive/threshold-300"), load("random")]
    a = play_game(r, bots, np.random.default_rng(3), [np.random.default_rng(1), np.random.default_rng(2)])
    b = play_game(r, bots, np.random.default_rng(3), [np.random.default_rng(1), np.random.default_rng(2)])
    assert a == b and sum(a) == pytest.approx(1.0)


def test_ids_split_into_preset_and_name() -> None:
    spec = parse_spec(" bot:greed/optimal-turn ")
    assert (spec.preset, spec.name, spec.objective) == ("greed", "optimal-turn", "turn")
    assert (parse_spec("random").preset, parse_spec("random").name) == ("", "random")


def test_optimal_bot_ids_resolve_to_the_solver() -> None:
    from greed_env.rules import apply_roll, legal_moves, new_game

    r = preset("ten_thousand")
    assert solver_backend.optimal_available(r, "turn")
    bot = load("ten_thousand/optimal-turn", rules=r)
    s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
    assert bot.act(r, s, np.random.default_rng(0)) in legal_moves(r, s)
    assert "ten_thousand/optimal-turn" in {b.id for b in registry.list_bots("ten_thousand")}
    with pytest.raises(RulesMismatchError, match="target"):
        load("ten_thousand/optimal-turn", rules=r.replace(target=5000))
    with pytest.raises(RulesMismatchError):
        bot.act(r.replace(target=5000), s, np.random.default_rng(0))


def test_optimal_bots_refused_where_the_solver_does_not_model_the_rules() -> None:
    r = preset("ten_thousand", piggyback=True)
    assert not solver_backend.optimal_available(r, "duel")
    with pytest.raises(UnknownBotError, match="no optimal bot"):
        load("optimal-duel", rules=r)


def _committed_cards() -> list[Path]:
    cards = []
    cards += [p for p in sorted(AGENTS.glob("*/*.json")) if p.with_suffix(".onnx").is_file()]
    return cards


@pytest.mark.parametrize("card", _committed_cards(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_committed_bot_cards_are_complete_and_match_their_onnx(card: Path) -> None:
    data = json.loads(card.read_text())
    assert data["id"] == f"{card.parent.name}/{card.stem}"
    onnx_bytes = card.with_suffix(".onnx").read_bytes()
    assert hashlib.sha256(onnx_bytes).hexdigest() == data["onnx"]["sha256"]
    # 1 MB per file, except the eight-dice carry-over bots: their action layer alone is
    # 3,693 x width floats (1.9 MB at 128 units, 7.6 MB for the 512-unit progressive/ppo-duel-kick;
    # the keep parts are folded into it on export)
    assert len(onnx_bytes) < (10_000_000 if data["num_actions"] > 3_000 else 1_000_000)
    assert data["evaluation"], "committed bots carry their measured strength"
    assert data["training"], "committed bots say how they were trained"
    bot = load(str(card), rules=preset(card.parent.name))
    assert bot.name == data["id"]


def test_the_checkout_holds_each_bot_once() -> None:
    """agents/ is the one copy: the package installs it as greed_env.agents (setup.py)."""
    assert not (ROOT / "greed_env" / "data" / "bots").exists()


def test_a_built_wheel_installs_every_bot(tmp_path: Path) -> None:
    """The wheel carries the files of agents/ the registry reads, under greed_env/agents/, and
    nothing of the round robins' reports."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    want = {f"greed_env/agents/{rel.as_posix()}" for rel in registry.shipped_files(AGENTS)}
    assert want and want <= names, sorted(want - names)[:5]
    assert not [n for n in names if n.startswith("greed_env/agents/") and n.endswith((".md", "pairs.csv"))]


@pytest.mark.parametrize("card", _committed_cards(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_committed_cards_name_no_machine_paths(card: Path) -> None:
    text = card.read_text()
    for marker in ('"/', "/tmp/", "/home/", "/root/", "/work/", ":\\\\"):
        assert marker not in text, f"{card} contains a machine path ({marker})"


def test_broken_card_is_listed_with_its_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "ten_thousand"
    d.mkdir()
    (d / "broken.json").write_text("{not json")
    (d / "broken.onnx").write_bytes(b"\x00")
    monkeypatch.setenv(registry.BOTS_PATH_ENV, str(tmp_path))
    info = {b.id: b for b in registry.list_bots("ten_thousand")}["ten_thousand/broken"]
    assert "invalid JSON" in info.problem
    with pytest.raises(CorruptBotError, match="invalid JSON"):
        load("ten_thousand/broken")


def test_greed_bots_lists_and_shows(capsys: pytest.CaptureFixture[str]) -> None:
    assert greed_main(["bots", "--rules", "greed", "--plain"]) == 0
    out = capsys.readouterr().out
    assert "greed/threshold-300" in out and "measured strength" in out
    assert greed_main(["bots", "--rules", "greed", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"id", "rules", "kind", "strength"} <= rows[0].keys()
    assert greed_main(["bots", "show", "greed/random"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "heuristic"
    assert greed_main(["bots", "--rules", "yahtzee"]) == 2
