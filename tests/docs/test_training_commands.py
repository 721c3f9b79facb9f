"""Training commands quoted in the user docs name real scripts and real options."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

from greed_env.train.recipes import script_names
from greed_env.train.settings import parse_args

_COMMAND = re.compile(r"(?:python training/(\w+)\.py|greed train (\w+))(.*)")


def _code_lines(text: str) -> list[str]:
    """Every line of inline code and fenced blocks, continuation lines joined."""
    lines: list[str] = []
    for match in re.finditer(r"```[^\n]*\n(.*?)```|`([^`\n]*(?:\n[^`\n]*)*?)`", text, re.S):
        block = (match.group(1) or match.group(2) or "").replace("\\\n", " ")
        if match.group(1) is not None:
            lines.extend(block.splitlines())
        else:
            lines.append(" ".join(block.split()))
    return lines


def _documented_commands(root: Path) -> list[tuple[str, str, list[str]]]:
    files = [root / "README.md", root / "agents" / "README.md", root / "training" / "README.md"]
    files += sorted((root / "docs").glob("*.md"))
    found = []
    for path in files:
        for line in _code_lines(path.read_text()):
            match = _COMMAND.search(line)
            if not match:
                continue
            name = match.group(1) or match.group(2)
            if name.isupper() or name == "soup":  # a placeholder (NAME, SCRIPT), or not a script
                continue
            argv = shlex.split(match.group(3).split("#")[0])
            found.append((path.name, name, [a for a in argv if a not in ("...", "--help")]))
    return found


def test_every_documented_training_command_parses(repo_root: Path) -> None:
    commands = _documented_commands(repo_root)
    names = set(script_names())
    assert len(commands) >= 8
    for where, name, argv in commands:
        assert name in names, f"{where}: no script {name!r}"
        parse_args(importlib.import_module(f"greed_env.training.{name}").Args, argv)
