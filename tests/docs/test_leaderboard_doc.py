"""docs/benchmark.md's leaderboard is the committed results of board v1, nothing else."""

from __future__ import annotations

from pathlib import Path

from greed_env.benchmark import read_result
from greed_env.benchmark.board import board_plan
from greed_env.commands.benchmark_cmd import END, START, _safe, leaderboard_markdown


def _results(repo_root: Path) -> list:  # type: ignore[type-arg]
    return [read_result(p) for p in sorted((repo_root / "leaderboard").glob("*.json"))]


def test_the_doc_s_tables_are_the_committed_results(repo_root: Path) -> None:
    text = (repo_root / "docs" / "benchmark.md").read_text(encoding="utf-8")
    board = text.split(START, 1)[1].split(END, 1)[0]
    assert board.strip() == leaderboard_markdown(_results(repo_root)).strip(), (
        "docs/benchmark.md is stale: run `greed benchmark --leaderboard docs/benchmark.md --board v1`"
    )


def test_the_committed_results_cover_board_v1_under_today_s_protocols(repo_root: Path) -> None:
    have = {r.bot: {t.task: t for t in r.results} for r in _results(repo_root)}
    for bot, tasks in board_plan("v1"):
        assert (repo_root / "leaderboard" / f"{_safe(bot)}.json").is_file(), bot
        for task in tasks:
            got = have[bot].get(task.id)
            assert got is not None, f"{bot} has no result on {task.id}"
            assert got.protocol == task.protocol(), f"{bot} on {task.id}: result of an older protocol"


def test_committed_results_that_name_their_bot_file_measured_the_shipped_one(repo_root: Path) -> None:
    """A result records the sha256 of the bot file it measured (results from before that was
    recorded carry none); a bot shipped again makes its recorded rows stale."""
    from greed_env.benchmark import bot_digest

    for res in _results(repo_root):
        if res.bot_sha256 is not None:
            assert res.bot_sha256 == bot_digest(res.bot), (
                f"{res.bot} was shipped again after its benchmark rows: rerun them "
                "(`greed benchmark --leaderboard docs/benchmark.md --board v1 ...`)"
            )
