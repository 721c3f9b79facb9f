"""``greed --version``, the help of every sub-command, ``greed bots`` at 120 columns, and
``greed play`` / ``greed replay --save-gif``."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest
from PIL import Image
from rich.console import Console

import greed_env
from greed_env.cli import EXAMPLES, _subparsers, build_parser, main
from greed_env.commands import bots_cmd


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"greed {greed_env.__version__}"


def _helps() -> dict[str, str]:
    return {name: sub.format_help() for name, sub in _subparsers(build_parser())}


def test_every_subcommand_has_a_clean_help_with_an_example_that_parses() -> None:
    helps = _helps()
    assert set(helps) == set(EXAMPLES), "one example per sub-command, train scripts included"
    parser = build_parser()
    for name, text in helps.items():
        assert f"example:\n  {EXAMPLES[name]}" in text, name
        assert "``" not in text and ":class:" not in text, f"{name}: reST markup in the help"
        assert "%%" not in text, name
        assert "(default: None)" not in text and "(default: False)" not in text, name
        flat = " ".join(text.split())
        assert not re.search(r"\(default[^)]*\) \(default", flat), f"{name}: default said twice"
        parser.parse_args(shlex.split(EXAMPLES[name])[1:])


def test_eval_help_states_each_default_once() -> None:
    text = " ".join(_helps()["eval"].split())
    assert "95% CI beside the optimal value" in text
    assert "--workers WORKERS processes playing episodes in parallel (default: 2)" in text
    assert "--seed SEED master seed of the episode seeds (default: 0)" in text
    assert "(default: the model card's, else ten_thousand)" in text


def test_bots_table_keeps_ids_whole_at_120_columns() -> None:
    from greed_env.bots.registry import list_bots

    bots = list_bots(None)
    rows = [(b.id, b.kind, b.strength or "-", b.description) for b in bots]
    buf = io.StringIO()
    console = Console(file=buf, width=120)
    bots_cmd._table(["id", "kind", "measured strength", "description"], rows, False, console)
    lines = buf.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 120
    first_cells = {line.split("│")[0].strip() for line in lines if "│" in line}
    assert {b.id for b in bots} <= first_cells, "an id was wrapped"


def test_play_and_replay_save_a_gif(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gif, record = tmp_path / "game.gif", tmp_path / "game.json"
    argv = ["play", "--rules", "farkle5", "--players", "threshold,threshold:500", "--seed", "2", "--plain"]
    assert main([*argv, "--record", str(record), "--save-gif", str(gif), "--gif-fps", "4"]) == 0
    assert f"animation saved to {gif}" in capsys.readouterr().out
    with Image.open(gif) as im:
        frames, size = im.n_frames, im.size
    assert frames > 10
    again = tmp_path / "again.gif"
    assert main(["replay", str(record), "--plain", "--save-gif", str(again)]) == 0
    with Image.open(again) as im:
        assert (im.n_frames, im.size) == (frames, size)
    missing = tmp_path / "nowhere" / "x.gif"
    assert main([*argv, "--save-gif", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "--save-gif" in err and "does not exist" in err
    assert not missing.parent.exists()
