"""``greed bots`` fits a 100-column terminal; ``--wide`` and ``--json`` hold the full record."""

from __future__ import annotations

import json

import pytest

from greed_env.bots.registry import list_bots
from greed_env.cli import main
from greed_env.commands.bots_cmd import WIDTH, _narrow_lines


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_the_default_listing_fits_100_columns_and_names_every_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert WIDTH == 100
    lines = _out(capsys, ["bots"]).splitlines()
    too_wide = [line for line in lines if len(line.encode()) > WIDTH]
    assert not too_wide, too_wide[:3]
    firsts = [line.split()[0] for line in lines if line and not line.startswith(" ")]
    bots = list_bots(None)
    assert firsts[0] == "id" and firsts[1 : 1 + len(bots)] == [b.id for b in bots]
    text = "\n".join(lines)
    # every figure of a card is there, wrapped or not
    duel = next(b for b in bots if b.id == "ten_thousand/ppo-duel")
    for part in duel.strength.split("; "):
        assert " ".join(part.split()) in " ".join(text.split())
    assert "greed bots --wide" in lines[-1]


def test_wide_is_one_line_per_bot_with_its_description(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _out(capsys, ["bots", "--rules", "farkle", "--wide"]).splitlines()
    bots = list_bots("farkle")
    assert len(lines) == 1 + len(bots)
    for line, bot in zip(lines[1:], bots, strict=True):
        assert line.startswith(bot.id + " ")
        assert bot.description in line
        assert (bot.strength or "-") in line
    assert max(len(line) for line in lines) > WIDTH  # the full record does not fit, by design


def test_json_is_every_field_and_excludes_wide(capsys: pytest.CaptureFixture[str]) -> None:
    rows = json.loads(_out(capsys, ["bots", "--rules", "greed", "--json"]))
    assert [r["id"] for r in rows] == [b.id for b in list_bots("greed")]
    assert {"id", "rules", "name", "kind", "description", "strength", "source", "problem"} <= rows[0].keys()
    with pytest.raises(SystemExit) as stop:
        main(["bots", "--json", "--wide"])
    assert stop.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_a_long_id_puts_the_figures_below_it() -> None:
    long_id = "ten_thousand/" + "x" * 70
    figures = "Elo 1799 ±79 (95%); vs optimal-duel 48.5% [43.6-53.4] (n=400); " + "word " * 40
    lines = _narrow_lines([(long_id, "onnx-policy", figures), ("greed/random", "heuristic", "-")], WIDTH)
    assert all(len(line.encode()) <= WIDTH for line in lines), lines
    assert lines[1] == "    measured strength"
    at = next(i for i, line in enumerate(lines) if line.startswith(long_id))
    assert lines[at].split() == [long_id, "onnx-policy"]
    assert lines[at + 1] == "    Elo 1799 ±79 (95%)"
    assert lines[-2].split() == ["greed/random", "heuristic"] and lines[-1] == "    -"
