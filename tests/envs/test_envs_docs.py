"""Env documentation generated from code stays current; docstrings carry the real numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from greed_env.envs.docs import CATALOG_SIZES_DOC, OBS_TABLE_DOC, render
from greed_env.envs.duel import DuelEnv
from greed_env.envs.solitaire import SolitaireEnv
from greed_env.pettingzoo.greed_v0 import raw_env
from greed_env.rules import preset, preset_names
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import (
    OBS_DIM,
    OBS_SPEC_VERSION,
    OBSERVATION_SPEC,
    check_observation_spec,
    observation_spec,
)

ROOT = Path(__file__).resolve().parents[2]


def test_envs_doc_tables_are_current() -> None:
    text = (ROOT / "docs" / "envs.md").read_text(encoding="utf-8")
    assert render(text) == text, "regenerate with: python scripts/gen_env_docs.py"


def test_docstrings_follow_the_template_and_quote_current_tables() -> None:
    sections = [
        "## Description",
        "## Action Space",
        "## Observation Space",
        "## Rewards",
        "## Starting State",
        "## Episode End",
        "## Arguments",
        "## Version History",
        ">>> ",
    ]
    for cls in (SolitaireEnv, DuelEnv, raw_env):
        doc = cls.__doc__ or ""
        for section in sections:
            assert section in doc, (cls.__name__, section)
        assert CATALOG_SIZES_DOC in doc and OBS_TABLE_DOC in doc
        assert f"({OBS_DIM},)" in doc
    for name in preset_names():
        assert f"| {name} | {ActionCatalog(preset(name)).n} |" in CATALOG_SIZES_DOC


def test_observation_spec_is_versioned_and_contiguous() -> None:
    spec = observation_spec(preset("greed"))
    assert spec["version"] == OBS_SPEC_VERSION and spec["dim"] == OBS_DIM == len(OBSERVATION_SPEC)
    assert [e["index"] for e in spec["entries"]] == list(range(OBS_DIM))
    assert len({e["name"] for e in spec["entries"]}) == OBS_DIM
    check_observation_spec(spec)
    with pytest.raises(ValueError, match="mismatch"):
        check_observation_spec({**spec, "version": OBS_SPEC_VERSION + 1})
