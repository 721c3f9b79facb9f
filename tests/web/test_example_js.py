"""examples/play_one_move.mjs, the JavaScript example of docs/portable.md, plays the move the
same bot plays in Python on the same dice."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from greed_env.bots import load
from greed_env.portable import PortableRng
from greed_env.rules import apply_roll, is_chance, new_game, preset, sample_roll

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("rules_name", "bot_id", "seed"), [("progressive", "progressive/ppo-duel-kick", 7), ("ten_thousand", "ten_thousand/ppo-duel", 3)])
def test_the_example_plays_pythons_move(
    bundle_file: Callable[[str], Path], node: str, rules_name: str, bot_id: str, seed: int
) -> None:
    onnx = ROOT / "agents" / f"{bot_id}.onnx"
    proc = subprocess.run(
        [node, str(ROOT / "examples" / "play_one_move.mjs"), str(bundle_file(rules_name)), str(onnx), str(seed)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rules = preset(rules_name)
    rng = PortableRng(seed)
    state = new_game(rules, 2, first_player=0)
    while is_chance(state):
        state = apply_roll(rules, state, sample_roll(rules, state, rng))
    move = load(bot_id).act(rules, state, rng)
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{rules_name}: seat 0 rolled {','.join(map(str, state.roll))}"
    assert f"taps {','.join(map(str, move.taps))})" in lines[-1] if move.kind == "keep" else move.kind in lines[-1]
