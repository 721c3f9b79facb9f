"""Regression tests of issue 21: every item the bad-input review found, one test each.

The generated sweep over every sub-command is ``tests/cli/test_cli_bad_input.py``; these tests pin
the particular cases, the library calls behind them, and the work that must not be lost.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from greed_env.cli import main
from greed_env.rules import (
    IllegalMove,
    RulesError,
    apply,
    apply_roll,
    legal_moves,
    new_game,
    preset,
)
from greed_env.solver import SolverError, SolverTable, TableError, load_table, not_converged, solve

BOTS = Path(__file__).resolve().parents[2] / "agents"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def _one_line(err: str, *words: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("GREED_ENV_CACHE", str(folder))
    return folder


# ------------------------------------------------------------------------------------------
# the wrong answer


def test_a_capped_turn_table_is_never_served_as_the_optimum(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["solve", "--rules", "ten_thousand", "--set", "target=5000", "--objective", "turn", "--cap", "55"]
    code, _, err = _run(argv, capsys)
    assert code == 0 and "not the converged optimum" in err
    written = list(cache.glob("*.npz"))
    assert [p.name.endswith("-turn-cap55.npz") for p in written] == [True]
    capped = SolverTable.load(written[0])
    assert capped.headline == pytest.approx(410.686728395) and not_converged(capped)
    rules = preset("ten_thousand", target=5000)
    with pytest.raises(TableError, match="no turn table"):
        load_table(rules, "turn", solve_if_missing=False)
    assert load_table(rules, "turn", solve_if_missing=False, cap=55).headline == capped.headline
    code, _, err = _run(["advise", "--rules", "ten_thousand", "--set", "target=5000", "--objective", "turn",
                         "--no-solve", "--turn-total", "300"], capsys)
    assert code == 2 and "--set target=5000" in _one_line(err, "no turn table")
    # the same file under the default name (copied by hand, or written by an older version)
    default = cache / SolverTable(rules, "turn", {}).filename()
    capped.meta.pop("solve_options")
    capped.save(default)
    with pytest.raises(TableError, match="not the converged optimum"):
        load_table(rules, "turn")
    assert load_table(rules, "turn", cap=55, solve_if_missing=False).headline == pytest.approx(410.686728395)


def test_a_converged_table_loads_and_the_options_are_checked(cache: Path) -> None:
    rules = preset("farkle5", target=500, entry_threshold=500)
    table = load_table(rules, "turn")
    # the turn objective ignores the target: the shipped farkle5 table's optimum
    assert not not_converged(table) and table.headline == pytest.approx(load_table("farkle5", "turn").headline)
    with pytest.raises(SolverError, match="tol must be a finite number > 0"):
        solve(rules, "turn", tol=float("nan"))
    with pytest.raises(SolverError, match="tol must be a finite number > 0"):
        solve(rules, "turn", tol=-1)
    with pytest.raises(SolverError, match="cap must be a whole number >= 1"):
        solve(rules, "turn", cap=-100)
    with pytest.raises(SolverError, match="floor"):
        solve(preset("zilch"), "race", floor=50)


# ------------------------------------------------------------------------------------------
# tracebacks and impossible questions on the command line


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["play", "--rules", "ten_thousand", "--players", "random,random", "--seed=-1"], ["--seed"]),
        (["advise", "--scores", "20000,0", "--no-solve"], ["--scores", "20000"]),
        (["advise", "--objective", "race", "--scores", "11000", "--no-solve"], ["--scores", "11000"]),
        (["advise", "--turn-total", "300", "--dice", "9", "--no-solve"], ["--dice", "9"]),
        (["advise", "--roll", "1,1,1,1,1,1,1", "--no-solve"], ["--roll", "7 dice"]),
        (["advise", "--dice", "0"], ["--dice"]),
        (["advise", "--dice=-2"], ["--dice"]),
        (["advise", "--scores=-5,0", "--no-solve"], ["--scores", "-5"]),
        (["advise", "--turn-total=-5"], ["--turn-total"]),
        (["advise", "--turn-total", "300", "--streak", "1", "--no-solve"], ["--streak"]),
        (["advise", "--rules", "zilch", "--objective", "turn", "--turn-total", "300", "--streak", "3"], ["--streak", "0..2"]),
        (["solve", "--cap=-100", "--objective", "turn"], ["--cap"]),
        (["solve", "--tol=-1"], ["--tol"]),
        (["solve", "--tol", "nan"], ["--tol"]),
        (["train", "ppo_turn", "--total-timesteps", "0"], ["--total-timesteps"]),
        (["train", "ppo_turn", "--total-timesteps=-5"], ["--total-timesteps"]),
        (["train", "ppo_turn", "--num-envs", "0"], ["--num-envs"]),
        (["eval", "random", "--workers", "0"], ["--workers"]),
        (["eval", "random", "--workers=-1"], ["--workers"]),
        (["tournament", "--rules", "greed", "--bots", "random,threshold", "--games", "2", "--workers", "0"], ["--workers"]),
    ],
)
def test_issue_commands_end_in_one_line_naming_the_flag(
    argv: list[str], words: list[str], cache: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(argv, capsys)
    assert code == 2 and out == ""
    _one_line(err, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no runs/, no cache written


def test_solve_out_paths_are_checked_before_solving(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "FILE"
    blocker.write_text("a file")
    for out, word in ((blocker / "table.npz", "is a file, not a folder"), (tmp_path / "x.txt", ".npz")):
        code, _, err = _run(["solve", "--rules", "farkle5", "--objective", "entry", "--out", str(out)], capsys)
        assert code == 2
        _one_line(err, "--out", word)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]  # no folder named x.txt
    code, _, _ = _run(["solve", "--rules", "farkle5", "--objective", "entry", "--out", str(tmp_path / "t.npz")], capsys)
    assert code == 0 and SolverTable.load(tmp_path / "t.npz").objective == "entry"


# ------------------------------------------------------------------------------------------
# the rules and the engine


def test_the_rules_refuse_impossible_settings() -> None:
    with pytest.raises(RulesError, match=r"'target'.*1_000_000_000"):
        preset("ten_thousand", target=10**12)
    assert preset("ten_thousand", target=10**9).target == 10**9
    with pytest.raises(RulesError, match=r"'entry_threshold' = 6000.*0\.\.target"):
        preset("ten_thousand", target=5000, entry_threshold=6000)
    assert preset("ten_thousand", target=1000).entry_threshold == 1000
    with pytest.raises(RulesError, match="'bust_penalty_after' = 0"):
        preset("zilch", bust_penalty_after=0)
    assert preset("zilch", bust_penalty=0, bust_penalty_after=0).bust_penalty == 0


def test_a_state_refuses_the_rules_of_another_game() -> None:
    ten, farkle = preset("ten_thousand"), preset("farkle")
    s = new_game(ten, 2, first_player=0)
    with pytest.raises(IllegalMove, match="'ten_thousand' rules, not 'farkle'") as info:
        apply_roll(farkle, s, (1, 1, 1, 2, 3, 4))
    assert info.value.rule == "other-rules"
    s = apply_roll(ten, s, (1, 1, 1, 2, 3, 4))
    with pytest.raises(IllegalMove, match="'ten_thousand' rules, not 'farkle'"):
        legal_moves(farkle, s)
    with pytest.raises(IllegalMove, match="'ten_thousand' rules"):
        apply(farkle, s, legal_moves(ten, s)[0])
    # a variant derived from the same rule book (one player, another target) still plays it
    assert legal_moves(ten.replace(min_players=1, target=5000), s) == legal_moves(ten, s)


# ------------------------------------------------------------------------------------------
# work lost or checked too late


def test_play_checks_the_record_path_before_the_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["play", "--rules", "greed", "--players", "random,random", "--seed", "1",
                           "--record", str(tmp_path)], capsys)
    assert code == 2 and out == ""
    _one_line(err, "--record", "is a folder")


def test_tournament_checks_its_out_before_playing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "results.md"
    existing.write_text("keep me")
    code, out, err = _run(["tournament", "--rules", "greed", "--bots", "random,threshold", "--games", "50",
                           "--out", str(existing), "--no-progress"], capsys)
    assert code == 2 and out == ""
    _one_line(err, "--out", "is a file")
    assert existing.read_text() == "keep me"


def test_ctrl_c_in_play_saves_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    class Interrupting(io.StringIO):
        def readline(self, *args: object) -> str:
            raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stdin", Interrupting())
    record = tmp_path / "game.json"
    code, out, _ = _run(["play", "--rules", "greed", "--players", "human,random", "--seed", "3",
                         "--first-player", "0", "--plain", "--record", str(record)], capsys)
    assert code == 130 and "interrupted" in out and "record saved" in out
    data = json.loads(record.read_text())
    assert data["seed"] == 3 and data["events"]


def test_eval_accepts_exported_bots_and_plays_the_cards_rules(capsys: pytest.CaptureFixture[str]) -> None:
    from greed_env.bots.loader import spec_rules
    from greed_env.evaluation import resolve_bot

    farkle = preset("farkle")
    for path in (BOTS / "farkle" / "ppo-turn.onnx", BOTS / "farkle" / "ppo-turn.json"):
        bot = resolve_bot(str(path), farkle, "turn")
        assert type(bot).__name__ == "OnnxBot"
        assert spec_rules(str(path)) == farkle
    assert spec_rules("farkle/ppo-turn") == farkle
    assert spec_rules("greed/optimal-duel") == preset("greed")
    assert spec_rules("threshold-300") is None
    code, out, err = _run(["eval", "farkle/ppo-turn", "--episodes", "20", "--regret-episodes", "0",
                           "--no-progress", "--json"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["rules"] == "farkle" and summary["objective"] == "turn"


def test_bot_loading_messages_name_the_file_and_drop_unrelated_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "bot.onnx"
    code, _, err = _run(["play", "--rules", "greed", "--players", f"random,{missing}"], capsys)
    line = _one_line(err, "bot file", str(missing), "does not exist")
    assert code == 2 and "no rules preset" not in line and "built-in kinds" not in line
    code, _, err = _run(["play", "--rules", "greed", "--players", "random,farkle/ppo-turn"], capsys)
    line = _one_line(err, "farkle")
    assert code == 2 and "built-in kinds" not in line
    code, _, err = _run(["play", "--rules", "greed", "--players", "random,nosuchbot"], capsys)
    assert code == 2 and "built-in kinds" in _one_line(err, "nosuchbot")


def test_solving_on_first_use_reports_progress_on_stderr(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["advise", "--rules", "farkle5", "--set", "target=500", "--set", "entry_threshold=500",
                           "--objective", "race", "--turn-total", "300"], capsys)
    assert code == 0 and out
    assert "solving the race table for farkle5" in err and "done in" in err


def test_play_hints_solve_before_the_game_with_progress(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    code, out, err = _run(["play", "--rules", "farkle5", "--set", "target=500", "--set", "entry_threshold=500",
                           "--players", "human,random", "--first-player", "0", "--hints", "--plain"], capsys)
    assert code == 0 and "solving the duel table for farkle5" in err
    assert "hints (duel" in out


def test_files_written_for_runs_cards_models_and_tables_share_one_mode(tmp_path: Path) -> None:
    from greed_env.bots.cards import write_card as export_write
    from greed_env.files import atomic_write_text

    old = os.umask(0o022)
    try:
        paths = [atomic_write_text(tmp_path / "a.json", "{}"), export_write(tmp_path / "card.json", {})]
        table = solve(preset("farkle5"), "entry")
        paths.append(table.save(tmp_path / "t.npz"))
        from greed_env.files import atomic_write_text as run_write
        from greed_env.train.checkpoints import RunState

        paths.append(run_write(tmp_path / "args.json", json.dumps(RunState().__dict__)))
        from greed_env.bots.numpy_backend import NumpyPolicy

        policy = NumpyPolicy([(np.ones((2, 3)), np.zeros(3))], (np.ones((3, 1)), np.zeros(1)), "tanh", {})
        paths.append(policy.save(tmp_path / "p.npz"))
    finally:
        os.umask(old)
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths} == {0o644}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


# ------------------------------------------------------------------------------------------
# training runs


def _fake_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", "{}")
        zf.writestr("policy.pth", b"\0" * 64)


def _checkpointed_run(folder: Path, steps: tuple[int, ...]) -> Path:
    from greed_env.train.checkpoints import RunState

    ck = folder / "checkpoints"
    ck.mkdir(parents=True)
    for step in steps:
        name = f"step_{step:012d}.zip"
        _fake_zip(ck / name)
        text = json.dumps(RunState(step=step, model_file=name, sessions=1).__dict__)
        (ck / name.replace(".zip", ".json")).write_text(text)
        (ck / "latest.json").write_text(text)
    return folder


def test_resume_takes_the_newest_run_with_a_checkpoint(tmp_path: Path) -> None:
    from greed_env.training.ppo_turn import Args

    from greed_env.train.run import prepare_run

    good = _checkpointed_run(tmp_path / "ten_thousand__turn__ppo__1__100", (128,))
    failed = tmp_path / "ten_thousand__turn__ppo__1__200"
    failed.mkdir()
    os.utime(good, (1, 1))
    run_dir, state = prepare_run(Args(runs_dir=str(tmp_path), resume=True), "turn")
    assert run_dir == good and state is not None and state.step == 128


def test_a_corrupt_checkpoint_falls_back_to_the_one_kept_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from greed_env.train.checkpoints import Checkpointer, CheckpointError

    run = _checkpointed_run(tmp_path / "run", (128, 256))
    ck = Checkpointer(run)
    newest = ck.dir / "step_000000000256.zip"
    newest.write_bytes(newest.read_bytes()[:40])
    state = ck.usable(ck.latest())
    assert state.step == 128 and state.model_file == "step_000000000128.zip"
    assert str(newest) in capsys.readouterr().err
    (ck.dir / "step_000000000128.zip").write_bytes(b"junk")
    with pytest.raises(CheckpointError, match="no intact checkpoint"):
        ck.usable(ck.latest())
    (ck.dir / "latest.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"checkpoints/latest\.json is corrupt"):
        ck.latest()


def test_a_run_that_fails_at_its_start_leaves_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["train", "ppo_turn", "--runs-dir", str(tmp_path), "--vector", "dummy", "--num-envs", "1",
                         "--net-width", "8", "--net-depth", "1", "--init-from", str(tmp_path / "missing.zip")],
                        capsys)
    assert code == 2 and "missing.zip" in _one_line(err)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------
# environments


def test_gym_envs_refuse_nan_rewards_and_non_integer_actions() -> None:
    import gymnasium as gym

    import greed_env  # noqa: F401  (registers the ids)

    with pytest.raises(ValueError, match="reward_scale must be a finite number"):
        gym.make("greed_env/Solitaire-v0", reward_scale=float("nan"))
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        gym.make("greed_env/Duel-v0", illegal_reward=float("inf"))
    env = gym.make("greed_env/Solitaire-v0").unwrapped
    _, info = env.reset(seed=0)
    legal = int(np.flatnonzero(info["action_mask"])[0])
    for bad in (True, 2.0, float(legal), "1", np.array([legal]), np.float32(legal)):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env.step(np.int64(legal))
    _, info = env.reset(seed=0)
    env.step(np.array(legal))


def test_pettingzoo_raw_env_says_to_reset_after_the_game() -> None:
    from greed_env.pettingzoo import greed_v0

    env = greed_v0.raw_env(rules="greed")
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    with pytest.raises(ValueError, match="action"):
        env.reset(seed=2)
        env.step(True)
