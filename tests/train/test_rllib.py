"""Ray RLlib self-play: one training iteration in this process, checkpoint, export to a bot.

The environment runs with ``illegal_action='raise'``, so a single masked action sampled by
the policy would fail the iteration: the masking module is checked by the run itself. The
exported ONNX bot must act as the RLlib module does (checked inside the export) and play legal
moves through the bot protocol.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from greed_env.bots.loader import load as load_bot  # noqa: E402
from greed_env.bots.onnx_backend import OnnxBot  # noqa: E402
from greed_env.rules import apply_roll, legal_moves, new_game, preset  # noqa: E402


def _script() -> object:
    from greed_env.train import rllib_selfplay as selfplay

    return selfplay


@pytest.fixture(scope="module")
def local_ray() -> object:
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_one_selfplay_iteration_checkpoints_and_exports_a_bot(
    tmp_path: Path, local_ray: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script()
    args = script.Args(  # type: ignore[attr-defined]
        rules="ten_thousand",
        num_players=3,
        illegal_action="raise",
        iterations=1,
        train_batch_size=256,
        minibatch_size=128,
        num_epochs=1,
        net_width=32,
        net_depth=1,
        export_check_positions=200,
        eval_every=1,
        curve_games=6,
        eval_games=2,
        runs_dir=str(tmp_path),
        run_name="smoke",
    )
    run_dir = script.main(args)  # type: ignore[attr-defined]
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["history"][0]["env_steps"] >= 256
    assert (run_dir / summary["checkpoint"] / "rllib_checkpoint.json").is_file()
    (point,) = summary["curve"]
    assert point["task"] == "ten_thousand/ffa3-threshold-v1"
    assert point["games"] == 6 and point["low"] <= point["share"] <= point["high"]
    assert (run_dir / "curve.csv").read_text().splitlines()[0].startswith("iteration,env_steps")
    card_path = run_dir / summary["bot_card"]
    card = json.loads(card_path.read_text())
    assert card["id"] == "ten_thousand/rllib-selfplay"
    assert card["export"]["equivalence_check"]["mismatches"] == 0
    assert card["evaluation"] == summary["evaluation"] and card["evaluation"][0]["games"] == 2
    assert card_path.parent == run_dir / "bots" / "ten_thousand"
    bot = OnnxBot.from_card(card_path, rules=preset("ten_thousand"))
    monkeypatch.setenv("GREED_BOTS_PATH", str(run_dir / "bots"))
    assert isinstance(load_bot("ten_thousand/rllib-selfplay"), OnnxBot)
    rules = bot.rules
    state = apply_roll(rules, new_game(rules, 3, first_player=0), (1, 1, 2, 3, 5, 6))
    assert bot.act(rules, state, np.random.default_rng(0)) in legal_moves(rules, state)


def test_curve_tasks_must_match_the_trained_game() -> None:
    script = _script()
    with pytest.raises(ValueError, match="needs field tasks of ten_thousand with 3 seats"):
        script._curve_tasks(script.Args(num_players=3, eval_every=5, curve_tasks="ten_thousand/ffa4-threshold"))  # type: ignore[attr-defined]
    tasks = script._curve_tasks(script.Args(num_players=3, eval_every=5))  # type: ignore[attr-defined]
    assert [t.id for t in tasks] == ["ten_thousand/ffa3-threshold-v1"]


def test_one_iteration_on_the_native_engine(local_ray: object) -> None:
    from greed_env.rllib.config import selfplay_config

    algo = selfplay_config(
        {"rules": "ten_thousand", "num_players": 3},
        native_games=8,
        train_batch_size=256,
        minibatch_size=128,
        num_epochs=1,
        hidden=(16,),
    ).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    runners = result["env_runners"]
    decisions = sum(runners["num_agent_steps_sampled_lifetime"].values())
    assert 256 <= decisions < 512 and runners["num_env_steps_sampled_lifetime"] < decisions
