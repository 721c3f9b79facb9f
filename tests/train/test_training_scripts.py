"""Smoke runs of the training scripts (tiny step counts) and resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from greed_env.evaluation import evaluate
from greed_env.rules import preset
from greed_env.train import duel, selfplay, solo

SHORT_RULES = ["target=3000", "entry_threshold=500"]
TINY: dict[str, Any] = dict(
    total_timesteps=256,
    num_envs=2,
    vector="dummy",
    num_steps=64,
    minibatch_size=64,
    update_epochs=1,
    net_width=16,
    net_depth=1,
    eval_every=128,
    eval_episodes=20,
    eval_regret_episodes=10,
    final_eval_episodes=30,
    checkpoint_every=128,
    progress=False,
)


def _args(cls: type, **overrides: Any) -> Any:
    return cls(**{**TINY, **overrides})


def _card(run: Path) -> dict[str, Any]:
    return json.loads((run / "model.json").read_text())


def _eval_steps(run: Path) -> list[float]:
    lines = (run / "eval.csv").read_text().splitlines()[1:]
    return [float(line.split(",")[0]) for line in lines]


def test_solo_turn_run_writes_model_card_logs_and_checkpoints(tmp_path: Path) -> None:
    run = solo.main(_args(solo.Args, runs_dir=str(tmp_path), exp_name="smoke"))
    assert run.name.startswith("ten_thousand__turn__smoke__1__")
    card = _card(run)
    rules = preset("ten_thousand")
    assert card["steps"] >= 256 and card["objective"] == "turn" and card["seed"] == 1
    assert card["rules_fingerprint"] == rules.fingerprint and card["rules"]["name"] == "ten_thousand"
    assert {"obs_spec_version", "action_catalog_version", "args", "wall_time_s", "evaluation"} <= set(card)
    assert card["evaluation"]["episodes"] == 30 and card["evaluation"]["optimal"] > 500
    assert _eval_steps(run)[0] == 0.0 and len(_eval_steps(run)) >= 3
    assert (run / "checkpoints" / "latest.json").is_file()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (events,) = list((run / "tb").glob("events.out.tfevents.*"))
    acc = EventAccumulator(str(events))
    acc.Reload()
    groups = {tag.split("/")[0] for tag in acc.Tags()["scalars"]}
    assert groups == {"charts", "losses", "eval"}
    res = evaluate(str(run / "model.zip"), rules, "turn", episodes=20, seed=0, regret_episodes=5)
    assert res.score.n == 20


def test_solo_race_on_the_native_vector_engine(tmp_path: Path) -> None:
    args = _args(
        solo.Args,
        vector="native",
        num_envs=4,
        objective="race",
        rules_set=SHORT_RULES,
        runs_dir=str(tmp_path),
        features="none",
        eval_episodes=4,
        eval_regret_episodes=2,
        final_eval_episodes=4,
    )
    card = _card(solo.main(args))
    assert card["objective"] == "race" and card["rules"]["target"] == 3000
    assert card["evaluation"]["units"] == "turns to target"
    with pytest.raises(SystemExit, match="--entry-starts needs --objective turn"):
        solo.main(_args(solo.Args, vector="native", objective="race", entry_starts=0.3, runs_dir=str(tmp_path)))


def test_solo_turn_run_with_entry_and_keep_starts(tmp_path: Path) -> None:
    args = _args(
        solo.Args,
        vector="native",
        num_envs=8,
        entry_starts=0.5,
        keep_starts=0.3,
        rules_set=SHORT_RULES,
        runs_dir=str(tmp_path),
    )
    card = _card(solo.main(args))
    assert card["entry_starts"] == 0.5 and card["args"]["entry_starts"] == 0.5
    assert card["keep_starts"] == 0.3 and card["args"]["keep_starts"] == 0.3
    assert card["evaluation"]["episodes"] == 30
    with pytest.raises(SystemExit, match="needs --objective turn and --vector native"):
        solo.main(_args(solo.Args, entry_starts=0.5, runs_dir=str(tmp_path)))
    with pytest.raises(SystemExit, match="--keep-starts needs --objective turn and --vector native"):
        solo.main(_args(solo.Args, keep_starts=0.5, runs_dir=str(tmp_path)))


def test_duel_run_against_a_threshold_bot(tmp_path: Path) -> None:
    args = _args(
        duel.Args,
        opponent="threshold:300",
        rules_set=SHORT_RULES,
        runs_dir=str(tmp_path),
        eval_episodes=6,
        eval_regret_episodes=2,
        final_eval_episodes=6,
    )
    card = _card(duel.main(args))
    assert card["objective"] == "duel" and card["opponent"] == "threshold:300"
    assert card["evaluation"]["opponent"] == "optimal" and card["evaluation"]["optimal"] == 0.5


def test_duel_run_against_the_optimal_bot_in_numba_with_solver_shaping(tmp_path: Path) -> None:
    args = _args(
        duel.Args,
        opponent="optimal",
        vector="native",
        num_envs=8,
        shaping="solver",
        rules_set=SHORT_RULES,
        runs_dir=str(tmp_path),
        eval_episodes=40,
        eval_regret_episodes=2,
        final_eval_episodes=64,
    )
    card = _card(duel.main(args))
    assert card["opponent"] == "optimal" and card["shaping"] == "solver"
    assert card["evaluation"]["episodes"] == 64
    with pytest.raises(SystemExit, match="needs --vector native"):
        duel.main(_args(duel.Args, shaping="solver", rules_set=SHORT_RULES, runs_dir=str(tmp_path)))


def test_duel_run_with_margin_readings_starts_from_a_model_without_them(tmp_path: Path) -> None:
    native = dict(opponent="optimal", vector="native", num_envs=8, rules_set=SHORT_RULES, eval_regret_episodes=0)
    first = duel.main(_args(duel.Args, **native, runs_dir=str(tmp_path / "a"), eval_episodes=16, final_eval_episodes=16))
    args = _args(
        duel.Args,
        **native,
        features="margin-final",
        init_from=str(first / "model.zip"),
        init_temperature=2.0,
        final_round_starts=0.5,
        final_round_near=0.5,
        final_round_warmup=2,
        score_starts=0.4,
        score_starts_warmup=2,
        score_starts_near=0.5,
        runs_dir=str(tmp_path / "b"),
        eval_episodes=16,
        final_eval_episodes=32,
    )
    card = _card(duel.main(args))
    assert card["final_round_starts"] == 0.5 and card["final_round_near"] == 0.5
    assert card["final_round_warmup"] == 2 and card["args"]["init_temperature"] == 2.0
    assert (card["score_starts"], card["score_starts_warmup"], card["score_starts_near"]) == (0.4, 2, 0.5)
    with pytest.raises(ValueError, match="needs a value >= 1 and --init-from"):
        duel.main(_args(duel.Args, init_temperature=2.0, runs_dir=str(tmp_path / "c")))
    assert card["args"]["features"] == "margin-final" and card["evaluation"]["episodes"] == 32


def test_critic_warmup_leaves_the_policy_alone_and_a_wider_critic_continues(tmp_path: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    first = duel.main(_args(duel.Args, opponent="threshold", runs_dir=str(tmp_path / "a")))
    common = dict(opponent="threshold", init_from=str(first / "model.zip"), vf_width=24)
    warm = duel.main(_args(duel.Args, **common, vf_warmup=256, runs_dir=str(tmp_path / "b")))
    # three updates: the last one's annealed learning rate is 0, the second one's is not
    past = duel.main(_args(duel.Args, **common, vf_warmup=128, total_timesteps=384, runs_dir=str(tmp_path / "c")))
    before, during, after = (MaskablePPO.load(r / "model.zip", device="cpu").policy.state_dict() for r in (first, warm, past))
    actor = [k for k in before if "value" not in k]
    assert actor and all(torch.equal(before[k], during[k]) for k in actor)
    assert not all(torch.equal(before[k], after[k]) for k in actor)
    assert during["value_net.weight"].shape == (1, 24)
    assert not torch.equal(during["value_net.weight"][:, :16], before["value_net.weight"])
    assert _card(warm)["args"]["vf_warmup"] == 256
    with pytest.raises(ValueError, match="--vf-warmup -1: must be an integer >= 0"):
        duel.main(_args(duel.Args, vf_warmup=-1, runs_dir=str(tmp_path / "d")))


def test_selfplay_run_fills_the_snapshot_pool(tmp_path: Path) -> None:
    args = _args(
        selfplay.Args,
        num_players=3,
        snapshot_every=64,
        eval_opponent="threshold:300",
        rules_set=SHORT_RULES,
        runs_dir=str(tmp_path),
        eval_episodes=6,
        final_eval_episodes=6,
    )
    run = selfplay.main(args)
    assert len(list((run / "pool").glob("snap_*.npz"))) >= 2
    card = _card(run)
    assert card["num_players"] == 3 and card["evaluation"]["optimal"] == pytest.approx(1 / 3)


def test_bad_runs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no run named"):
        solo.main(_args(solo.Args, runs_dir=str(tmp_path), resume=True))
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="--resume"):
        solo.main(_args(solo.Args, runs_dir=str(tmp_path), run_name="taken"))


def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cmd = [
        sys.executable, "-m", "greed_env.train.solo",
        "--runs-dir", str(runs), "--run-name", "killed", "--total-timesteps", "1000000",
        "--vector", "dummy", "--num-envs", "2", "--num-steps", "64", "--minibatch-size", "64",
        "--update-epochs", "1", "--net-width", "16", "--net-depth", "1",
        "--checkpoint-every", "128", "--eval-every", "100000000", "--eval-episodes", "5",
        "--eval-regret-episodes", "0", "--no-progress",
    ]  # fmt: skip
    latest = runs / "killed" / "checkpoints" / "latest.json"
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if latest.is_file() and json.loads(latest.read_text())["step"] >= 384:
                break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint within two minutes")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    step = json.loads(latest.read_text())["step"]
    assert not (runs / "killed" / "model.zip").exists()
    args = _args(
        solo.Args,
        total_timesteps=step + 256,
        final_eval_episodes=5,
        eval_regret_episodes=0,
        runs_dir=str(runs),
        run_name="killed",
        resume=True,
    )
    run = solo.main(args)
    card = _card(run)
    assert card["sessions"] == 2
    assert card["steps"] == step + 256
    assert json.loads(latest.read_text())["step"] == step + 256
