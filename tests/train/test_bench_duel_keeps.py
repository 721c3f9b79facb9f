"""scripts/duel_keeps.py: keep regret by situation beside the turn-optimal keeps."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from greed_env.rules import new_game, preset

_spec = importlib.util.spec_from_file_location(
    "duel_keeps", Path(__file__).resolve().parents[2] / "scripts" / "duel_keeps.py"
)
assert _spec is not None and _spec.loader is not None
keeps = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = keeps  # its dataclasses look their module up
_spec.loader.exec_module(keeps)


def test_optimal_bots_bound_the_columns() -> None:
    rules = preset("ten_thousand")
    best = keeps.measure("optimal", rules, 4, seed=11)
    assert sum(best.keeps.values()) > 40 and sum(best.bot.values()) == 0.0 and sum(best.wrong.values()) == 0
    assert all(v >= 0.0 for v in best.turn_optimal.values())
    # a bot that keeps as the turn objective does: its column is the reference column, position by position
    turn = keeps.measure("optimal:turn", rules, 4, seed=11)
    assert turn.bot == pytest.approx(turn.turn_optimal) and sum(turn.bot.values()) >= 0.0
    text = keeps.table(turn)
    assert text.splitlines()[2].startswith("| entry |") and text.splitlines()[-1].startswith("| all |")
    with pytest.raises(ValueError, match="games must be at least 1"):
        keeps.measure("optimal", rules, 0, seed=1)


def test_situations() -> None:
    rules = preset("ten_thousand")
    s = new_game(rules, 2, 0)
    assert keeps.situation(rules, s, 2000) == "entry"
    s = s._replace(entered=(True, True), scores=(3000, 4000))
    assert keeps.situation(rules, s, 2000) == "other"
    assert keeps.situation(rules, s._replace(scores=(3000, 8000)), 2000) == "opponent near"
    assert keeps.situation(rules, s._replace(scores=(8500, 4000)), 2000) == "me near"
    assert keeps.situation(rules, s._replace(scores=(8500, 10050), endgame=True), 2000) == "final round"
