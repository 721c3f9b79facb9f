"""Every training script takes the flags and has the defaults it had before its arguments were
composed from the shared settings dataclasses (:mod:`greed_env.train.settings`).

``data/script_flags.json`` was written from the scripts as they stood before that change: per
script, the flags ``greed train NAME --help`` lists, the values of each flag with choices, and
the arguments parsed from an empty command line. A flag, a default or a choice that changes
fails here; a deliberate change rewrites the snapshot in the same commit.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from greed_env.cli import main as greed_main
from greed_env.train.recipes import script_names
from greed_env.train.settings import parse_args

SNAPSHOT: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "script_flags.json").read_text())


def _help_flags(text: str) -> list[str]:
    """The flags of a help text: the option strings that start its option lines."""
    flags: set[str] = set()
    for line in text.splitlines():
        line = line.strip().strip("│|").strip()
        if line.startswith("-"):
            head = re.split(r"\s{2,}", line)[0]
            flags.update(re.findall(r"(?<![\w-])-{1,2}[a-zA-Z][\w-]*", head))
    return sorted(flags)


def _args(name: str) -> type:
    return importlib.import_module(f"greed_env.training.{name}").Args


def test_the_snapshot_covers_every_script() -> None:
    assert sorted(SNAPSHOT) == script_names()


@pytest.mark.parametrize("name", sorted(SNAPSHOT))
def test_help_lists_the_same_flags(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        greed_main(["train", name, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert f"greed train {name}" in text  # the usage names the command the user typed
    assert _help_flags(text) == SNAPSHOT[name]["flags"]


@pytest.mark.parametrize("name", sorted(SNAPSHOT))
def test_defaults_and_choices_are_unchanged(name: str) -> None:
    args_class = _args(name)
    parsed = dataclasses.asdict(parse_args(args_class, []))
    assert parsed == SNAPSHOT[name]["defaults"]
    assert dataclasses.asdict(args_class()) == parsed  # built in Python, the same recipe
    fields = {"--" + f.name.replace("_", "-"): f.name for f in dataclasses.fields(args_class)}
    for flag, choices in SNAPSHOT[name]["choices"].items():
        for choice in choices:
            assert getattr(parse_args(args_class, [flag, choice]), fields[flag]) == choice
        with pytest.raises(SystemExit):
            parse_args(args_class, [flag, "no-such-choice"])


def test_values_users_type_parse_as_before() -> None:
    """``none`` for an optional value, ``--set`` once per field, ``--flag=value``, ``--no-flag``."""
    args = parse_args(_args("ppo_turn"), [
        "--target-kl", "none", "--run-name", "", "--init-from", "None", "--set", "target=3000",
        "--set=entry_threshold=500", "--seed=7", "--no-anneal-lr", "--target-kl", "0.02",
    ])  # fmt: skip
    assert (args.run_name, args.init_from, args.target_kl) == (None, None, 0.02)
    assert args.rules_set == ["target=3000", "entry_threshold=500"]
    assert (args.seed, args.anneal_lr) == (7, False)
    assert parse_args(_args("rllib_selfplay"), ["--local-cpus", "none"]).local_cpus is None
    assert parse_args(_args("rllib_selfplay"), ["--local-cpus", "3"]).local_cpus == 3
