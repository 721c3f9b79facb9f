"""The figures the docs quote are those of the files that hold them: the generated tables are
current, and the figures quoted in prose about shipped bots are the ones in their cards."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from greed_env.bots.registry import list_bots

ROOT = Path(__file__).resolve().parents[2]


def _figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "docs" / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIGURES = _figures()


def _card(bot_id: str) -> dict:  # type: ignore[type-arg]
    return json.loads((ROOT / "agents" / f"{bot_id}.json").read_text(encoding="utf-8"))


def _text(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


@pytest.mark.parametrize("rel", FIGURES.FILES)
def test_the_generated_tables_are_current(rel: str) -> None:
    text = _text(rel)
    assert FIGURES.BLOCK.search(text), f"{rel} has no figures block"
    assert FIGURES.render(text) == text, "regenerate with: python docs/figures.py"


def test_a_stale_figure_is_rewritten() -> None:
    text = _text("docs/results.md")
    stale = text.replace("| `ppo-turn` | `training/ppo_turn.py` | 99.78% (exact) |", "| `ppo-turn` | `training/ppo_turn.py` | 99.99% (exact) |")
    assert stale != text
    assert FIGURES.render(stale) == text


def test_every_shipped_bot_is_in_the_tables() -> None:
    cards = sorted(p.relative_to(ROOT / "agents").with_suffix("").as_posix() for p in (ROOT / "agents").glob("*/*.onnx"))
    assert len(cards) >= 13
    readme, results = _text("agents/README.md"), _text("docs/results.md")
    for bot_id in cards:
        rules, name = bot_id.split("/")
        assert f"| `{bot_id}` |" in readme, bot_id
        block = results.split(f"<!-- figures:bots:{rules} -->", 1)[1].split("<!-- /figures", 1)[0]
        assert f"| `{name}` |" in block, bot_id


def test_the_elo_in_the_docs_is_what_greed_bots_prints() -> None:
    doc = _text("docs/bots.md").split("<!-- figures:tournament:ten_thousand -->", 1)[1]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| \d+ \| ([\w-]+) \| ([^|]+) \|", doc, re.M)}
    listed = {b.name: b.strength.split(";")[0] for b in list_bots("ten_thousand") if b.strength.startswith("Elo")}
    assert set(rows) <= set(listed) and len(rows) == 6
    for name, elo in rows.items():
        printed = listed[name].removeprefix("Elo ").replace(" (95%)", "").replace("±", "± ")
        assert elo.strip() == printed, name


# (doc, figure as the doc quotes it, card, the same figure as the card states it)
PROSE = [
    ("docs/results.md", "495.06 points per turn, 4.3 CPU-minutes", "greed/ppo-turn", "exact 495.06 of 503.49 points per turn (98.33%), 4.3 CPU-min"),
    ("docs/results.md", "581.06 points per turn, 7.5 CPU-minutes", "ten_thousand/ppo-turn", "exact 581.06 of 582.32 points per turn (99.78%), 7.5 CPU-min"),
    ("docs/results.md", "479.13 points per turn, 5.0 CPU-minutes", "farkle/ppo-turn", "exact 479.13 of 479.89 points per turn (99.84%), 5.0 CPU-min"),
    ("docs/results.md", "321.30 points per turn, 3.9 CPU-minutes", "farkle5/ppo-turn", "exact 321.30 of 321.46 points per turn (99.95%), 3.9 CPU-min"),
    ("docs/results.md", "622.50 points of one turn (of 623.02), 7.0 CPU-minutes", "zilch/ppo-turn", "exact 622.50 of 623.02 points per turn (99.92%), 7.0 CPU-min"),
    ("docs/results.md", "2,068.52 points per turn (95.38%)", "progressive/ppo-turn", "exact 2068.52 of the optimal 2168.77 (95.38%)"),
    ("docs/results.md", "49.46% ± 0.06 against `optimal-duel` by the regret estimate", "ten_thousand/ppo-duel", "49.46% +- 0.06 over 2,000 games"),
    ("docs/results.md", "Cost: 123.5 CPU-minutes", "ten_thousand/ppo-duel", "123.5 CPU-minutes"),
    ("docs/results.md", "22.2 ±\n  1.0 turns to finish a race from 0", "progressive/ppo-duel", "22.2 +- 1.0 turns to finish a race from 0"),
    ("docs/results.md", "12.50% ± 1.72", "progressive/ppo-duel", "regret estimate 12.50% +- 1.72"),
    ("docs/results.md", "Cost: 27.8 CPU-minutes of turn stage and 32 of race stages", "progressive/ppo-duel", "27.8 + 32 CPU-minutes"),
    ("docs/results.md", "28.2% of the optimal turn", "trippn/ppo-turn", "(28.2% of the optimal turn value, exact)"),
    ("docs/results.md", "1,262.8 ± 25.8 simulated over 2,000 turns", "trippn/ppo-turn", "1262.8 +- 25.8 simulated points per turn (2,000 turns)"),
    ("agents/README.md", "123.5\n  CPU-minutes in all", "ten_thousand/ppo-duel", "123.5 CPU-minutes"),
    ("agents/README.md", "(22.2 turns to finish a race, the optimum 8.97)", "progressive/ppo-duel", "22.2 +- 1.0 turns to finish a race from 0 (optimal 8.97"),
]


@pytest.mark.parametrize(("rel", "quoted", "bot", "stated"), PROSE, ids=[f"{p[0]}:{p[2]}" for p in PROSE])
def test_prose_figures_are_the_cards(rel: str, quoted: str, bot: str, stated: str) -> None:
    assert quoted in _text(rel)
    card = _card(bot)
    assert stated in card.get("notes", "") + " " + card["description"]


def test_the_trippn_card_s_cpu_minutes_and_the_zilch_duel_are_quoted_as_measured() -> None:
    from greed_env.rules import preset
    from greed_env.solver import load_table

    trippn = _card("trippn/ppo-turn")["training"]
    assert f"{trippn['cpu_time_s'] / 60:.1f} CPU-minutes" == "4.8 CPU-minutes"
    assert "4.8 CPU-minutes" in _text("docs/results.md")
    # the Zilch duel ships: the figure quoted in its section is the shipped table's headline
    results = _text("docs/results.md")
    headline = load_table(preset("zilch"), "duel", solve_if_missing=False).headline
    assert f"the duel, {headline:.6f} (shipped;" in results
