"""The benchmark tasks, their runner, the leader-duel reference bot and `greed benchmark`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from greed_env.benchmark import (
    TASKS,
    BenchmarkResult,
    Task,
    TaskResult,
    UnknownTaskError,
    bot_digest,
    check_result,
    get_task,
    match_tasks,
    plays_rules_of,
    read_result,
    run_task,
    scorecard,
)
from greed_env.benchmark import tasks as tasks_module
from greed_env.bots import BotLoadError, load
from greed_env.bots.leader import LeaderDuelBot, duel_view
from greed_env.cli import main
from greed_env.rules import State, legal_moves, preset, preset_names

TINY = Task(
    "ten_thousand/tiny", 1, "field", "ten_thousand", 3, ("threshold-300", "threshold-500"), 7, 6,
    "share of the pot", "a tiny field task for tests",
)


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> Task:
    monkeypatch.setitem(tasks_module.TASKS, TINY.id, TINY)
    return TINY


def test_task_ids_are_versioned_and_unique() -> None:
    assert len({t.id for t in TASKS.values()}) == len(TASKS)
    for task_id, t in TASKS.items():
        assert task_id == t.id and t.id.endswith(f"-v{t.version}")
        assert t.kind in ("turn", "duel", "field", "elo")
        assert t.rules_fingerprint == preset(t.rules, **dict(t.overrides)).fingerprint
        if t.kind == "field":
            assert len(t.field) == t.seats - 1


def test_the_board_is_every_preset_whose_turn_and_duel_tables_ship() -> None:
    """BOARD_PRESETS is the one list of the board's rule books: the presets whose turn and duel
    tables ship; PYTHON_DUELS those the vector engine's optimal opponent does not play."""
    from greed_env.solver import table_paths
    from greed_env.solver.table import package_table_dir
    from greed_env.vector.optimal import check_optimal_supported
    from greed_env.vector.tables import VectorUnsupportedError

    def shipped(name: str, objective: str) -> bool:
        return any(p.parent == package_table_dir() and p.exists() for p in table_paths(preset(name), objective))

    def vector_plays_the_opponent(name: str) -> bool:
        try:
            check_optimal_supported(preset(name))
        except VectorUnsupportedError:
            return False
        return True

    board = tasks_module.BOARD_PRESETS
    assert set(board) == {n for n in preset_names() if shipped(n, "turn") and shipped(n, "duel")}
    assert set(tasks_module.PYTHON_DUELS) == {n for n in board if not vector_plays_the_opponent(n)}
    assert set(tasks_module.FIELD_PRESETS) <= set(board)
    assert {t.rules for t in TASKS.values() if t.kind in ("turn", "duel")} == set(board)


def test_the_issue_s_tasks_exist() -> None:
    names = {t.name for t in TASKS.values()}
    for r in ("ten_thousand", "farkle"):
        for n in (3, 4, 8):
            assert f"{r}/ffa{n}" in names
        assert f"{r}/elo" in names
    assert "progressive/pot4" in names
    assert {f"{r}/duel" for r in ("ten_thousand", "greed", "farkle", "farkle5", "progressive")} <= names


def test_get_task_without_version_is_the_newest_and_errors_name_the_task() -> None:
    assert get_task("ten_thousand/turn") is get_task("ten_thousand/turn-v1")
    with pytest.raises(UnknownTaskError, match="'ten_thousand/turn-v9'"):
        get_task("ten_thousand/turn-v9")
    assert {t.id for t in match_tasks(["*/duel"])} == {t.id for t in TASKS.values() if t.kind == "duel"}
    assert len(match_tasks(["ten_thousand/turn", "ten_thousand/turn-v1"])) == 1
    with pytest.raises(UnknownTaskError, match="matches"):
        match_tasks(["nothing/*"])


def test_field_task_is_deterministic_and_independent_of_workers(tiny: Task) -> None:
    one = run_task(tiny, "threshold-400")
    again = run_task(tiny, "threshold-400")
    two = run_task(tiny, "threshold-400", workers=2)
    assert one.value == again.value == two.value
    assert 0.0 <= one.value <= 1.0 and one.protocol == tiny.protocol()


def test_result_round_trip_check_and_scorecard(tiny: Task, tmp_path: Path) -> None:
    r = run_task(tiny, "threshold-400")
    res = BenchmarkResult("threshold-400", [r])
    path = res.write(tmp_path / "r.json")
    back = read_result(path)
    assert back.results[0] == r and back.bot == "threshold-400"
    assert check_result(r, r)
    moved = dataclasses.replace(r, value=r.value + 3 * r.ci95 + 0.01)
    assert not check_result(r, moved)
    other = dataclasses.replace(r, protocol={**r.protocol, "games": 7})
    assert not check_result(r, other)
    assert "`ten_thousand/tiny-v1`" in scorecard(res)


def test_corrupt_result_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"bad\.json: not a readable benchmark result"):
        read_result(bad)
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="format"):
        read_result(bad)


def _states(random_game: Callable, name: str, n: int, seed: int, limit: int) -> list[State]:  # type: ignore[type-arg]
    rules = preset(name)
    return random_game(rules, n, seed, bots=[load("threshold-300", rules), load("random", rules)], limit=limit)[0]


@pytest.mark.parametrize(("name", "n", "seed"), [("ten_thousand", 3, 1), ("farkle", 4, 2), ("ten_thousand", 8, 3)])
def test_duel_view_has_the_same_legal_moves(name: str, n: int, seed: int, random_game: Callable) -> None:  # type: ignore[type-arg]
    rules = preset(name)
    states = _states(random_game, name, n, seed, limit=3000)
    if rules.final_round:
        assert any(s.endgame for s in states), "the sample should reach a final round"
    for s in states:
        v = duel_view(s)
        assert v.num_players == 2 and v.player == 0
        assert v.scores[0] == s.scores[s.player]
        assert v.scores[1] == max(x for q, x in enumerate(s.scores) if q != s.player)
        assert legal_moves(rules, v) == legal_moves(rules, s)


def test_leader_duel_plays_legal_moves_and_is_the_duel_bot_for_two(random_game: Callable) -> None:  # type: ignore[type-arg]
    rules = preset("ten_thousand")
    bot = LeaderDuelBot(rules)
    rng = np.random.default_rng(0)
    for s in _states(random_game, "ten_thousand", 4, 5, limit=300):
        assert bot.act(rules, s, rng) in legal_moves(rules, s)
    duel = bot._duel
    for s in _states(random_game, "ten_thousand", 2, 6, limit=200):
        assert bot.act(rules, s, rng) == duel.act(rules, s, rng)
    with pytest.raises(BotLoadError, match="carry-over"):
        LeaderDuelBot(preset("progressive"))
    solo = rules.replace(min_players=1)  # a Solitaire-v0 turn
    alone = next(s for s in random_game(solo, 1, 7, bots=[load("threshold-300", solo)], limit=50)[0] if s.phase.name == "KEEP")
    with pytest.raises(ValueError, match="no leader"):
        bot.act(solo, alone, rng)


def test_cli_list_run_and_check(tiny: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["benchmark", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "ten_thousand/ffa4-v1" in listing and "progressive/pot4-v1" in listing
    out = tmp_path / "out"
    assert main(["benchmark", tiny.id, "--bot", "threshold:400", "--out", str(out), "--no-progress"]) == 0
    assert "ten_thousand/tiny-v1" in capsys.readouterr().out
    assert main(["benchmark", "--check", str(out / "result.json"), "--no-progress"]) == 0
    assert "reproduced" in capsys.readouterr().out
    assert main(["benchmark", "nope/x", "--bot", "random"]) == 2
    assert "unknown benchmark task 'nope/x'" in capsys.readouterr().err


def test_a_python_bot_by_import_path_runs_in_worker_processes(tiny: Task, tmp_path: Path) -> None:
    source = tmp_path / "house_bot.py"
    source.write_text("from greed_env.bots.base import ThresholdBot\n\ndef make():\n    return ThresholdBot(bank_at=400)\n")
    mine = run_task(tiny, f"py:{source}:make", workers=2)
    same = run_task(tiny, "threshold:400")
    assert (mine.value, mine.ci95) == (same.value, same.ci95)


def test_cli_leaderboard_writes_between_markers(tiny: Task, tmp_path: Path) -> None:
    doc = tmp_path / "board.md"
    doc.write_text("# Board\n\nintro\n\n<!-- leaderboard:start -->\nSTALE ROWS\n<!-- leaderboard:end -->\n\noutro\n")
    args = ["benchmark", tiny.id, "--leaderboard", str(doc), "--bots", "threshold-300,threshold-500",
            "--results", str(tmp_path / "res"), "--no-progress"]
    assert main(args) == 0
    text = doc.read_text()
    assert "intro" in text and "outro" in text and "STALE ROWS" not in text
    assert "`threshold-300`" in text and "`threshold-500`" in text
    saved = read_result(tmp_path / "res" / "threshold-300.json")
    assert [r.task for r in saved.results] == [tiny.id]
    assert isinstance(saved.results[0], TaskResult)
    again = ["benchmark", tiny.id, "--leaderboard", str(doc), "--bots", "threshold-500",
             "--results", str(tmp_path / "res"), "--no-progress"]
    assert main(again) == 0  # nothing to run: the board still shows every saved result
    assert "`threshold-300`" in doc.read_text() and "`threshold-500`" in doc.read_text()


def test_leaderboard_runs_again_a_bot_whose_file_changed(
    tiny: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, res = tmp_path / "board.md", tmp_path / "res"
    args = ["benchmark", tiny.id, "--leaderboard", str(doc), "--bots", "ten_thousand/ppo-turn",
            "--results", str(res), "--no-progress"]
    assert main(args) == 0
    path = res / "ten_thousand_ppo-turn.json"
    saved = read_result(path)
    assert saved.bot_sha256 is not None and saved.bot_sha256 == bot_digest("ten_thousand/ppo-turn")
    assert bot_digest("threshold-300") is None  # code, not a file
    capsys.readouterr()
    assert main(args) == 0  # the same file: its result is reused
    assert f"ten_thousand/ppo-turn {tiny.id}:" not in capsys.readouterr().err
    stale = json.loads(path.read_text())
    stale["bot_sha256"], stale["results"][0]["value"] = "0" * 64, -1.0
    path.write_text(json.dumps(stale))
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "is not the bot" in err and f"ten_thousand/ppo-turn {tiny.id}:" in err
    again = read_result(path)
    assert again.bot_sha256 == saved.bot_sha256 and again.results[0].value == saved.results[0].value


def test_a_bot_made_for_one_rule_book_runs_only_its_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    assert plays_rules_of("farkle/ppo-turn", get_task("farkle/turn"))
    assert not plays_rules_of("farkle/ppo-turn", get_task("greed/turn"))
    assert plays_rules_of("threshold:300", get_task("greed/turn")) and plays_rules_of("optimal-turn", get_task("greed/turn"))
    assert main(["benchmark", "greed/turn", "--bot", "farkle/ppo-turn", "--no-progress"]) == 2
    assert "plays none of these tasks' rule books (greed)" in capsys.readouterr().err


def test_reference_bots_of_an_elo_task_share_one_round_robin(monkeypatch: pytest.MonkeyPatch) -> None:
    from greed_env.benchmark import runner

    task = Task(
        "farkle/tiny-elo", 1, "elo", "farkle", 2, ("random", "threshold-300", "threshold-500"), 3, 6,
        "Elo", "a tiny Elo task for tests",
    )
    played: list[list[str]] = []
    real = runner.run_tournament

    def counting(rules, bots, *args, **kwargs):  # type: ignore[no-untyped-def]
        played.append(list(bots))
        return real(rules, bots, *args, **kwargs)

    monkeypatch.setattr(runner, "run_tournament", counting)
    monkeypatch.setattr(runner, "_REF_TOURNAMENTS", {})
    a = run_task(task, "threshold-300")
    b = run_task(task, "threshold-500")
    c = run_task(task, "threshold-400")
    assert played == [list(task.field), ["threshold-400", *task.field]]
    assert a.extra["standings"] == b.extra["standings"]  # one round robin, each ref's row of it
    assert a.value == pytest.approx(a.extra["standings"]["threshold-300"], abs=0.06)  # rounded there
    assert "threshold-400" in c.extra["standings"]


def test_board_v1_runs_baselines_everywhere_and_trained_bots_on_their_rule_book() -> None:
    from greed_env.benchmark.board import board_plan, trained_bots

    plan = dict(board_plan("v1"))
    assert {"random", "threshold-300", "threshold-500", "optimal-turn", "leader-duel"} <= set(plan)
    assert len(plan["random"]) == len(TASKS)
    assert {t.rules for t in plan["threshold-1000"]} == {"progressive"}
    assert not any(t.kind == "duel" for t in plan["optimal-turn"])
    assert all(t.rules != "progressive" for t in plan["leader-duel"] if t.kind == "duel")
    trained = [e.bot for e in trained_bots()]
    assert "ten_thousand/ppo-duel" in trained and "farkle/ppo-turn" in trained
    assert not any(b.startswith("trippn/") for b in trained)  # no Trippn task
    for bot in trained:
        assert plan[bot] and {t.rules for t in plan[bot]} == {bot.split("/")[0]}
    duel_only = dict(board_plan("v1", match_tasks(["*/duel"])))
    assert all(t.kind == "duel" for tasks in duel_only.values() for t in tasks)
    assert "optimal-turn" not in duel_only
    with pytest.raises(UnknownTaskError, match="no leaderboard 'v9'"):
        board_plan("v9")


def test_cli_board_runs_the_board_s_pairs(tiny: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "board.md"
    res = tmp_path / "res"
    assert main(["benchmark", tiny.id, "--leaderboard", str(doc), "--board", "v1", "--results", str(res),
                 "--no-progress"]) == 0
    ran = {p.stem for p in res.glob("*.json")}
    assert {"random", "threshold-300", "ten_thousand_ppo-turn"} <= ran
    assert not {"optimal-turn", "threshold-500", "farkle_ppo-turn"} & ran  # none plays this task
    assert "`ten_thousand/ppo-duel`" in doc.read_text()
    assert main(["benchmark", "--leaderboard", str(doc), "--board", "v1", "--bots", "random"]) == 2
    assert "one of them" in capsys.readouterr().err
