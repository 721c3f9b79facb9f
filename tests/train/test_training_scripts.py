"""Every script of ``training/`` at a tiny budget (as the examples are run), checking what it
wrote: the model, its card and evaluation, logs, checkpoints, the exported bot; the chains of
stages; resuming a run killed at a checkpoint."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from training_settings import SHORT_RULES, TINY

from greed_env.bots.export import encode_positions, sample_positions
from greed_env.bots.loader import load as load_bot
from greed_env.bots.numpy_backend import PolicyBot, load_policy
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.evaluation import evaluate
from greed_env.evaluation.policy_value import turn_value
from greed_env.rules import preset
from greed_env.rules.config import rules_from_args


def _card(run: Path) -> dict[str, Any]:
    return json.loads((run / "model.json").read_text())


def _eval_steps(run: Path) -> list[float]:
    lines = (run / "eval.csv").read_text().splitlines()[1:]
    return [float(line.split(",")[0]) for line in lines]


def _actor(state: dict[str, torch.Tensor]) -> list[str]:
    return [k for k in state if "value" not in k]


def _check_regret_estimate(ev: dict[str, Any], scored: int) -> None:
    """A duel evaluation against the optimal bot whose first ``scored`` games were scored: its
    regret estimate is 0.5 less the regret per scored game (mean per decision x decisions)."""
    per_game = ev["mean_regret"] * ev["decisions"] / scored
    assert ev["decisions"] > 0 and per_game > 0.0
    assert ev["regret_estimate"] == pytest.approx(0.5 - per_game, rel=1e-9)


def test_ppo_turn_writes_model_card_logs_checkpoints_and_exports_a_bot(
    ppo_turn: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ppo_turn.Args(
        **TINY, entry_starts=0.5, keep_starts=0.3, eval_exact_positions=100_000,
        runs_dir=str(tmp_path / "runs"), exp_name="smoke", export="tiny-turn", export_dir=str(tmp_path / "bots"),
        export_check_positions=200,
    )  # fmt: skip
    run = ppo_turn.main(args)
    assert run.name.startswith("ten_thousand__turn__smoke__1__")
    card = _card(run)
    rules = preset("ten_thousand")
    assert card["script"] == "training/ppo_turn.py" and card["objective"] == "turn" and card["seed"] == 1
    assert card["steps"] >= 256 and card["rules_fingerprint"] == rules.fingerprint
    assert card["args"]["net_width"] == 16 and (card["entry_starts"], card["keep_starts"]) == (0.5, 0.3)
    assert {"obs_spec_version", "action_catalog_version", "wall_time_s", "cpu_time_s", "versions"} <= set(card)
    ev = card["evaluation"]
    assert ev["episodes"] == 16 and ev["optimal"] == pytest.approx(582.317, abs=1e-3) and ev["units"] == "points per turn"
    policy = load_policy(run / "model.zip", rules)  # the card's exact value is the saved policy's
    assert ev["exact"] == pytest.approx(turn_value(PolicyBot(policy, rules), rules).value, abs=1e-9)
    assert ev["exact_ratio"] == pytest.approx(ev["exact"] / ev["optimal"])
    assert _eval_steps(run)[0] == 0.0 and len(_eval_steps(run)) == 3  # steps 0, 128 and the final one
    assert json.loads((run / "checkpoints" / "latest.json").read_text())["step"] == 256
    (events,) = list((run / "tb").glob("events.out.tfevents.*"))
    acc = EventAccumulator(str(events))
    acc.Reload()
    assert {tag.split("/")[0] for tag in acc.Tags()["scalars"]} == {"charts", "losses", "eval"}
    res = evaluate(str(run / "model.zip"), rules, "turn", episodes=20, seed=0, regret_episodes=0)
    assert res.score.n == 20
    # --export: the ONNX bot and its card in EXPORT_DIR/RULES/, loadable through the registry
    bot_card = json.loads((tmp_path / "bots" / "ten_thousand" / "tiny-turn.json").read_text())
    assert bot_card["id"] == "ten_thousand/tiny-turn" and bot_card["objective"] == "turn"
    assert bot_card["export"]["equivalence_check"] == {**bot_card["export"]["equivalence_check"], "positions": 200, "mismatches": 0}
    assert bot_card["training"]["script"] == "training/ppo_turn.py" and "exact" in bot_card["description"]
    monkeypatch.setenv("GREED_BOTS_PATH", str(tmp_path / "bots"))
    bot = load_bot("ten_thousand/tiny-turn", rules)
    assert isinstance(bot, OnnxBot)
    obs, masks = encode_positions(rules, sample_positions(rules, 500, np.random.default_rng(8)))
    assert np.array_equal(bot.act_batch(obs, masks), policy.act(obs, masks))  # the ONNX plays the model


def test_ppo_turn_refuses_starts_off_the_native_engine_and_leaves_no_folder(
    ppo_turn: ModuleType, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    with pytest.raises(ValueError, match="need --vector native"):
        ppo_turn.main(ppo_turn.Args(**{**TINY, "vector": "dummy"}, runs_dir=str(runs)))
    assert list(runs.iterdir()) == []
    with pytest.raises(FileNotFoundError, match="no run named"):
        ppo_turn.main(ppo_turn.Args(**TINY, runs_dir=str(runs), resume=True))
    (runs / "taken").mkdir()
    with pytest.raises(FileExistsError, match="--resume"):
        ppo_turn.main(ppo_turn.Args(**TINY, runs_dir=str(runs), run_name="taken"))
    with pytest.raises(ValueError, match="--export 'a/b': must be a bot name"):
        ppo_turn.main(ppo_turn.Args(**TINY, runs_dir=str(runs), export="a/b"))
    assert [p.name for p in runs.iterdir()] == ["taken"]


def test_ppo_duel_against_the_optimal_bot_in_numba_with_starts_shaping_and_the_regret_estimate(
    ppo_duel: ModuleType, tmp_path: Path
) -> None:
    args = ppo_duel.Args(
        **TINY, rules_set=SHORT_RULES, shaping="solver", final_round_starts=0.3, final_round_near=0.5,
        final_round_warmup=2, score_starts=0.4, score_starts_warmup=2, score_starts_near=0.5,
        features="margin-cross", final_regret_episodes=6, runs_dir=str(tmp_path),
    )  # fmt: skip
    run = ppo_duel.main(args)
    card = _card(run)
    assert card["script"] == "training/ppo_duel.py" and card["objective"] == "duel" and card["seed"] == 3
    assert (card["opponent"], card["shaping"], card["final_round_starts"], card["score_starts"]) == ("optimal", "solver", 0.3, 0.4)
    ev = card["evaluation"]
    assert ev["opponent"] == "optimal" and ev["optimal"] == 0.5 and ev["episodes"] == 16
    _check_regret_estimate(ev, scored=6)
    rules = rules_from_args("ten_thousand", SHORT_RULES)
    saved = PolicyBot(load_policy(run / "model.zip", rules), rules)
    again = evaluate(saved, rules, "duel", episodes=16, seed=12_345, regret_episodes=6, opponent="optimal")
    assert (again.score.mean, again.decisions) == (ev["mean"], ev["decisions"])  # the saved model's result


def test_ppo_duel_has_no_final_round_starts_where_the_rules_have_no_final_round(
    ppo_duel: ModuleType, tmp_path: Path
) -> None:
    args = ppo_duel.Args(**TINY, rules="farkle5", rules_set=["target=2000"], runs_dir=str(tmp_path), final_regret_episodes=0)
    card = _card(ppo_duel.main(args))
    assert args.final_round_starts == 0.5 and card["final_round_starts"] == 0.0
    assert card["rules"]["name"] == "farkle5" and card["evaluation"]["episodes"] == 16


def test_ppo_duel_warm_starts_soften_bank_or_roll_and_the_critic_warms_up_alone(
    ppo_duel: ModuleType, tmp_path: Path
) -> None:
    common = {**TINY, "num_envs": 2, "num_steps": 64, "opponent": "threshold:300", "rules_set": SHORT_RULES,
              "eval_every": 10_000, "final_regret_episodes": 0}  # fmt: skip
    first = ppo_duel.main(ppo_duel.Args(**common, runs_dir=str(tmp_path / "a")))
    warm = dict(common, init_from=str(first / "model.zip"), vf_width=24, features="margin-final", init_temperature=2.0)
    during = ppo_duel.main(ppo_duel.Args(**warm, vf_warmup=256, runs_dir=str(tmp_path / "b")))
    # three updates: the last one's annealed learning rate is 0, the second one's is not
    past = ppo_duel.main(ppo_duel.Args(**{**warm, "total_timesteps": 384}, vf_warmup=128, runs_dir=str(tmp_path / "c")))
    before, frozen, moved = (MaskablePPO.load(r / "model.zip", device="cpu").policy.state_dict() for r in (first, during, past))
    # the policy kept every weight it had (the added margin inputs start at 0, bank-or-roll
    # logits are softened in the action head) while the critic learnt; past the warm-up it moves
    kept = [k for k in _actor(before) if frozen[k].shape == before[k].shape and "action_net" not in k]
    assert kept and all(torch.equal(before[k], frozen[k]) for k in kept)
    assert not all(torch.equal(frozen[k], moved[k]) for k in _actor(frozen))
    assert frozen["value_net.weight"].shape == (1, 24)
    assert not torch.equal(frozen["value_net.weight"][:, :16], before["value_net.weight"])
    card = _card(during)
    assert card["args"]["vf_warmup"] == 256 and card["args"]["init_temperature"] == 2.0
    assert card["args"]["features"] == "margin-final" and card["args"]["init_from"] == str(first / "model.zip")
    with pytest.raises(ValueError, match="needs a value >= 1 and --init-from"):
        ppo_duel.main(ppo_duel.Args(**{**common, "init_temperature": 2.0}, runs_dir=str(tmp_path / "d")))
    with pytest.raises(ValueError, match="--vf-warmup -1: must be an integer >= 0"):
        ppo_duel.main(ppo_duel.Args(**common, vf_warmup=-1, runs_dir=str(tmp_path / "d")))


def test_ppo_duel_chain_trains_each_stage_from_the_one_before_and_soups_the_branches(
    ppo_duel: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    turn = {k: v for k, v in TINY.items() if k != "progress"}  # the chain passes its own --progress
    monkeypatch.setattr(ppo_duel, "TURN_STAGE", {**turn, "eval_exact": False, "entry_starts": 0.0})
    Stage = ppo_duel.Stage
    monkeypatch.setattr(ppo_duel, "CHAIN", (
        Stage("first", after="turn"),
        Stage("left", after="first", settings={"features": "margin-cross", "learning_rate": 5e-5}, seed_offset=10),
        Stage("right", after="first", settings={"features": "margin-cross", "learning_rate": 5e-5}, seed_offset=20),
        Stage("soup", soup_of=("left", "right")),
    ))  # fmt: skip
    args = ppo_duel.Args(
        **{**TINY, "opponent": "threshold:300"}, rules_set=SHORT_RULES, chain=True, seed=2, runs_dir=str(tmp_path),
        final_regret_episodes=4, export="tiny-duel", export_dir=str(tmp_path / "bots"), export_check_positions=100,
    )  # fmt: skip
    last = ppo_duel.main(args)
    assert last == tmp_path / "ten_thousand__duel__soup__2"
    turn_run = tmp_path / "ten_thousand__turn__chain__2"
    first, left = tmp_path / "ten_thousand__duel__first__2", tmp_path / "ten_thousand__duel__left__2"
    assert _card(turn_run)["script"] == "training/ppo_turn.py" and _card(turn_run)["args"]["net_width"] == 16
    assert _card(first)["args"]["init_from"] == str(turn_run / "model.zip") and _card(first)["seed"] == 2
    assert _card(left)["args"]["init_from"] == str(first / "model.zip") and _card(left)["seed"] == 12
    assert _card(left)["args"]["features"] == "margin-cross" and _card(left)["args"]["learning_rate"] == 5e-5
    soup = _card(last)
    assert [m["seed"] for m in soup["members"]] == [12, 22] and soup["args"]["init_from"] == str(first / "model.zip")
    assert soup["evaluation"]["episodes"] == 16
    _check_regret_estimate(soup["evaluation"], scored=4)
    right = tmp_path / "ten_thousand__duel__right__2"
    weights = [MaskablePPO.load(r / "model.zip", device="cpu").policy.state_dict() for r in (left, right, last)]
    assert set(weights[0]) == set(weights[1]) == set(weights[2])
    assert any(not torch.equal(weights[0][k], weights[1][k]) for k in weights[0])  # the branches differ
    for name, value in weights[2].items():  # the soup is the mean of its branches, weight by weight
        assert torch.allclose(value, (weights[0][name] + weights[1][name]) / 2, atol=1e-6), name
    assert json.loads((tmp_path / "bots" / "ten_thousand" / "tiny-duel.json").read_text())["objective"] == "duel"
    # a finished chain is not trained again
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.glob("*/model.zip")}
    assert ppo_duel.main(dataclasses.replace(args, export="")) == last
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("*/model.zip")} == stamps


def test_ppo_selfplay_fills_the_snapshot_pool(ppo_selfplay: ModuleType, tmp_path: Path) -> None:
    args = ppo_selfplay.Args(
        **{**TINY, "num_envs": 2, "num_steps": 64, "eval_episodes": 6, "final_eval_episodes": 6},
        vector="dummy", num_players=3, snapshot_every=64, eval_opponent="threshold:300", rules_set=SHORT_RULES,
        runs_dir=str(tmp_path),
    )  # fmt: skip
    run = ppo_selfplay.main(args)
    assert len(list((run / "pool").glob("snap_*.npz"))) >= 2
    card = _card(run)
    assert card["script"] == "training/ppo_selfplay.py" and card["objective"] == "selfplay3" and card["num_players"] == 3
    assert card["evaluation"]["optimal"] == pytest.approx(1 / 3) and card["evaluation"]["episodes"] == 6
    with pytest.raises(ValueError, match="optimal bot plays duels only"):
        ppo_selfplay.main(ppo_selfplay.Args(**TINY, num_players=3, runs_dir=str(tmp_path)))


def test_progressive_race_chain_lands_its_stages_on_the_exact_target(
    progressive_race: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    small = {**TINY, "eval_episodes": 4, "final_eval_episodes": 4}
    turn = {k: v for k, v in small.items() if k != "progress"}  # the chain passes its own --progress
    monkeypatch.setattr(progressive_race, "TURN_STAGE", {**turn, "lean_masking": True, "entry_starts": 0.0, "eval_exact": False})
    Stage = progressive_race.Stage
    monkeypatch.setattr(progressive_race, "CHAIN", (
        Stage("race1", after="turn", seed_offset=-1, settings={"race_starts": 0.8, "race_starts_near": 0.0, "vf_warmup": 128}),
        Stage("race2", after="race1", settings={}),
    ))  # fmt: skip
    last = progressive_race.main(progressive_race.Args(**small, chain=True, seed=2, runs_dir=str(tmp_path)))
    assert last == tmp_path / "progressive__race2__2"
    first = _card(tmp_path / "progressive__race1__2")
    assert first["seed"] == 1 and first["args"]["init_from"] == str(tmp_path / "progressive__turn__2" / "model.zip")
    card = _card(last)
    assert card["script"] == "training/progressive_race.py" and card["objective"] == "race"
    assert card["args"]["need_readings"] and card["args"]["lean_masking"] and card["race_starts"] == 0.9
    assert card["evaluation"]["units"] == "turns to target" and card["evaluation"]["optimal"] == pytest.approx(8.972, abs=1e-3)
    with pytest.raises(ValueError, match="--seed 1 is below 2"):
        progressive_race.main(progressive_race.Args(**small, chain=True, seed=1, runs_dir=str(tmp_path)))
    with pytest.raises(ValueError, match="needs rules with an exact target"):
        progressive_race.main(progressive_race.Args(**small, rules="farkle5", runs_dir=str(tmp_path)))


KILL_AT_CHECKPOINT = textwrap.dedent(
    """
    import os, signal, sys
    import greed_env.train.checkpoints as checkpoints
    from greed_env.train.settings import parse_args
    from greed_env.training import ppo_turn

    saved = checkpoints.save_model_atomic
    calls = []

    def save_then_die(model, path):
        saved(model, path)
        calls.append(path)
        if len(calls) == 4:  # inside the fourth checkpoint: its zip written, latest.json not yet
            os.kill(os.getpid(), signal.SIGKILL)

    checkpoints.save_model_atomic = save_then_die
    ppo_turn.main(parse_args(ppo_turn.Args, sys.argv[1:]))
    """
)


def test_a_run_killed_inside_a_checkpoint_resumes_from_the_last_complete_one(
    ppo_turn: ModuleType, tmp_path: Path, repo_root: Path
) -> None:
    runs = tmp_path / "runs"
    argv = [
        "--runs-dir", str(runs), "--run-name", "killed", "--total-timesteps", "100000", "--num-envs", "4",
        "--num-steps", "32", "--minibatch-size", "64", "--update-epochs", "1", "--net-width", "16",
        "--net-depth", "1", "--checkpoint-every", "128", "--eval-every", "100000000", "--eval-episodes", "4",
        "--no-eval-exact", "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    proc = subprocess.run([sys.executable, "-c", KILL_AT_CHECKPOINT, *argv], capture_output=True, text=True, env=env)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    latest = runs / "killed" / "checkpoints" / "latest.json"
    assert json.loads(latest.read_text())["step"] == 384  # checkpoints at 128, 256, 384; the kill inside 512's
    assert (runs / "killed" / "checkpoints" / "step_000000000512.zip").is_file()
    assert not (runs / "killed" / "model.zip").exists()
    args = ppo_turn.Args(
        **{**TINY, "total_timesteps": 640, "final_eval_episodes": 4}, runs_dir=str(runs), run_name="killed",
        resume=True, eval_exact=False,
    )  # fmt: skip
    card = _card(ppo_turn.main(args))
    assert card["sessions"] == 2 and card["steps"] == 640
    assert json.loads(latest.read_text())["step"] == 640
    assert ppo_turn.main(args) == runs / "killed"  # complete: nothing more to train
    assert _card(runs / "killed")["steps"] == 640


def test_greed_train_runs_a_script_and_refuses_bad_settings_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from greed_env.cli import main as greed_main

    argv = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items() if k != "progress"]
    assert greed_main(["train", "ppo_turn", *argv, "--no-progress", "--no-eval-exact", "--runs-dir", str(tmp_path)]) == 0
    (run,) = tmp_path.iterdir()
    assert _card(run)["script"] == "training/ppo_turn.py"
    capsys.readouterr()
    assert greed_main(["train", "ppo_turn", "--num-envs", "0", "--runs-dir", str(tmp_path / "no")]) == 2
    err = capsys.readouterr().err
    assert err == "greed train ppo_turn: --num-envs 0: must be an integer >= 1\n" and not (tmp_path / "no").exists()
    with pytest.raises(SystemExit) as stop:
        greed_main(["train", "ppo_duel", "--no-such-flag"])
    assert stop.value.code == 2
    assert "Unrecognized options: --no-such-flag" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        greed_main(["train", "ppo_duel", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: greed train ppo_duel ") and "--final-round-starts" in text and "--chain" in text
    assert "\n    greed train ppo_duel --chain --seed 3 --export ppo-duel\n" in text  # the docstring's example

