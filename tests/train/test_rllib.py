"""Ray RLlib self-play (``training/rllib_selfplay.py``): one training iteration in this process,
checkpoint, learning-curve point, export to a bot in the run folder and to a registry folder.

The environment runs with ``illegal_action='raise'``, so a single masked action sampled by
the policy would fail the iteration: the masking module is checked by the run itself. The
exported ONNX bot must act as the RLlib module does (checked inside the export) and play legal
moves through the bot protocol.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import ray

from greed_env.benchmark import get_task, run_task
from greed_env.bots.loader import load as load_bot
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.rules import apply_roll, legal_moves, new_game, preset
from greed_env.train.rllib_curve import curve_tasks


@pytest.fixture(scope="module")
def local_ray() -> object:
    """A local Ray; started a second time if the first start times out (Ray gives its raylet a
    fixed 30 s to register, which a machine busy with other jobs can exceed)."""
    try:
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    except Exception as exc:
        if "timed out during startup" not in str(exc):
            raise
        ray.shutdown()
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_one_selfplay_iteration_checkpoints_and_exports_a_bot(
    rllib_selfplay: ModuleType, tmp_path: Path, local_ray: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = rllib_selfplay.Args(
        rules="ten_thousand",
        num_players=3,
        illegal_action="raise",
        iterations=1,
        max_minutes=0.0,
        num_env_runners=0,
        num_envs_per_env_runner=1,
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
        export="tiny-rllib",
        export_dir=str(tmp_path / "registry"),
    )
    run_dir = rllib_selfplay.main(args)
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["history"][0]["env_steps"] >= 256
    assert (run_dir / summary["checkpoint"] / "rllib_checkpoint.json").is_file()
    (point,) = summary["curve"]
    assert point["task"] == "ten_thousand/ffa3-threshold-v1" and point["fair_share"] == pytest.approx(1 / 3)
    assert point["games"] == 6 and (point["low"], point["high"]) == (
        point["share"] - point["ci95"], point["share"] + point["ci95"]
    )
    assert (run_dir / "curve.csv").read_text().splitlines()[0].startswith("iteration,env_steps")
    card_path = run_dir / summary["bot_card"]
    card = json.loads(card_path.read_text())
    assert card["id"] == "ten_thousand/rllib-selfplay"
    assert card["export"]["equivalence_check"]["mismatches"] == 0
    assert card["evaluation"] == summary["evaluation"] and card["evaluation"][0]["games"] == 2
    assert card_path.parent == run_dir / "bots" / "ten_thousand"
    bot = OnnxBot.from_card(card_path, rules=preset("ten_thousand"))
    # the point is the run's policy (one iteration: the checkpoint the bot was exported from)
    # on the task's first six games, replayed here with the task's own seeds
    again = run_task(dataclasses.replace(get_task(point["task"]), games=6), str(card_path.with_suffix(".onnx")))
    assert (again.value, again.ci95) == pytest.approx((point["share"], point["ci95"]), abs=1e-12)
    monkeypatch.setenv("GREED_BOTS_PATH", str(run_dir / "bots"))
    assert isinstance(load_bot("ten_thousand/rllib-selfplay"), OnnxBot)
    rules = bot.rules
    state = apply_roll(rules, new_game(rules, 3, first_player=0), (1, 1, 2, 3, 5, 6))
    assert bot.act(rules, state, np.random.default_rng(0)) in legal_moves(rules, state)
    registry = json.loads((tmp_path / "registry" / "ten_thousand" / "tiny-rllib.json").read_text())
    assert registry["id"] == "ten_thousand/tiny-rllib" and registry["evaluation"] == summary["evaluation"]
    assert registry["training"]["script"] == "training/rllib_selfplay.py"


def test_curve_tasks_must_match_the_trained_game() -> None:
    with pytest.raises(ValueError, match="needs field tasks of ten_thousand with 3 seats"):
        curve_tasks("ten_thousand", 3, "ten_thousand/ffa4-threshold", 500)
    with pytest.raises(ValueError, match="--curve-games must be at least 1"):
        curve_tasks("ten_thousand", 3, "", 0)
    assert [t.id for t in curve_tasks("ten_thousand", 3, "", 500)] == ["ten_thousand/ffa3-threshold-v1"]


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
