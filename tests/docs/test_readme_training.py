"""The README's learner runs as written (on a smaller budget), on the batched engine whose
cost the README states."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md"])
def test_the_learner_of_the_tour_runs(page: str) -> None:
    import sb3_contrib  # noqa: F401  (the tour needs it: the dev extra installs it)
    text = (ROOT / page).read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "MaskablePPO" in b)
    assert "make_sb3_vec_env" in block, "the tour trains on the batched engine (seconds, not minutes)"
    assert ".learn(50_000)" in block and "about 15 s" in text  # the budget and its stated cost
    namespace: dict[str, object] = {}
    exec(compile(block.replace(".learn(50_000)", ".learn(1_024)"), page, "exec"), namespace)
    assert namespace["model"].num_timesteps >= 1_024  # type: ignore[attr-defined]
