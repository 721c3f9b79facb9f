"""The README's rules tour runs as written, and its two commands match .ci/run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rules_tour_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    block = re.findall(r"```python\n(.*?)```", README, flags=re.S)[0]
    exec(compile(block, "README.md", "exec"), {})
    assert "keep:1,1,1,2,3,4,5,6" in capsys.readouterr().out


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```bash\n(python3 -m venv .*?)\n```", README)
    assert len(commands) == 2, "README must open with the two commands (main job, tests)"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci


def test_the_preset_table_names_every_preset() -> None:
    from greed_env.rules.config import PRESET_SOURCES, PRESETS

    table = README.split("## Presets", 1)[1].split("\n\n", 2)[1]
    named = set(re.findall(r"`([a-z0-9_]+)`", table))
    assert named == set(PRESETS) == set(PRESET_SOURCES), "a new rule book gets a row in the README's preset table"
