"""Generated documentation tables match the code they describe."""

from pathlib import Path

from greed_env.rules.docs import render

ROOT = Path(__file__).resolve().parents[2]


def test_rules_doc_tables_are_current() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert render(text) == text, "regenerate with: python -m greed_env.rules.docs docs/rules.md"
