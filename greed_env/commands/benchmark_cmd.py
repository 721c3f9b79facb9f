"""``greed benchmark``: the named benchmark tasks, a bot's scorecard and the leaderboard.

* ``greed benchmark --list``: every task with its version, rules, seats, field, games, metric.
* ``greed benchmark TASK... --bot SPEC [--out DIR]``: run one bot (any spec ``greed play``
  accepts) through the tasks (ids, ``ten_thousand/*``, ``*/duel``, ``all``: named, never
  implied, as every task takes hours); prints the plan, then a Markdown scorecard and, with
  ``--out``, writes ``result.json`` and ``scorecard.md``.
* ``greed benchmark --check RESULT.json --bot SPEC``: rerun the recorded tasks and say, per task,
  whether the new value lands inside the recorded interval.
* ``greed benchmark TASK... --leaderboard FILE --bots A,B,C --results DIR``: run every bot
  through the tasks (reusing results already in DIR under the same protocol), then write the
  leaderboard of every result in DIR into FILE between its leaderboard markers (or a new file).
* ``greed benchmark --leaderboard FILE --board v1``: the same for a named board's fixed
  (bot, task) pairs (:mod:`greed_env.benchmark.board`), the one command behind
  docs/benchmark.md; TASK patterns then restrict it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from greed_env.benchmark import (
    TASKS,
    BenchmarkResult,
    UnknownTaskError,
    bot_digest,
    check_result,
    get_task,
    match_tasks,
    plays_rules_of,
    read_result,
    run_benchmark,
    run_task,
    scorecard,
)
from greed_env.benchmark.board import board_plan, method_label
from greed_env.benchmark.runner import beside, format_value
from greed_env.bots import BotLoadError, check_seats, load
from greed_env.bots.loader import check_trusted
from greed_env.cluster import ClusterError, connected
from greed_env.commands.argtypes import (
    OutputPathError,
    add_address_option,
    check_output_dir,
    check_output_file,
    positive_int,
)
from greed_env.commands.debug import add_debug_flag, show_traceback
from greed_env.files import atomic_write_text
from greed_env.progress import CountBar
from greed_env.rules import preset

__all__ = ["register"]

START = "<!-- leaderboard:start -->"
END = "<!-- leaderboard:end -->"


def _fail(message: str) -> int:
    print(f"greed benchmark: {message}", file=sys.stderr)
    return 2


def _progress(enabled: bool) -> Any:
    """A factory of one task's progress report (a bar on stderr, closed when the task is done)."""
    if not enabled:
        return None

    def make(task: Any) -> Any:
        bar = CountBar(task.id, task.games, unit="game")

        def report(done: int, total: int) -> None:
            bar.update_to(done)
            if done >= total:
                bar.close()

        return report

    return make


def _list(as_json: bool) -> int:
    if as_json:
        print(json.dumps([t.protocol() | {"description": t.description} for t in TASKS.values()], indent=2))
        return 0
    width = max(len(t.id) for t in TASKS.values())
    print(f"{'task':{width}} {'kind':5} {'seats':>5} {'games':>7}  field / opponent")
    for t in TASKS.values():
        field = ", ".join(sorted(set(t.field))) if t.field else "-"
        if len(t.field) > 1 and len(set(t.field)) == 1:
            field = f"{len(t.field)} x {t.field[0]}"
        print(f"{t.id:{width}} {t.kind:5} {t.seats:>5} {t.games:>7,}  {field}")
        print(f"{'':{width}} {t.metric}")
    return 0


def _safe(bot: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", bot.removeprefix("bot:")).strip("_") or "bot"


def _run(args: argparse.Namespace) -> int:
    if not args.bot:
        return _fail("give the bot to run with --bot SPEC (or --list, --leaderboard)")
    try:
        if not args.tasks:
            every = match_tasks(["all"])
            return _fail(
                f"name the tasks to run: task ids or patterns (ten_thousand/*, */duel), or all for "
                f"every task ({len(every)} tasks, {sum(t.games for t in every):,} games or turns; "
                "hours for most bots); `greed benchmark --list` shows them"
            )
        tasks = match_tasks(args.tasks)
        out = check_output_dir(args.out, "--out") if args.out is not None else None
        check_trusted(args.bot, args.trust_code)
        playable = [t for t in tasks if plays_rules_of(args.bot, t)]
    except (UnknownTaskError, OutputPathError, BotLoadError) as exc:
        return _fail(str(exc))
    if not playable:
        return _fail(f"{args.bot} plays none of these tasks' rule books ({', '.join(sorted({t.rules for t in tasks}))})")
    if len(playable) < len(tasks):
        print(f"greed benchmark: {args.bot} is made for one rule book: "
              f"{len(tasks) - len(playable)} tasks of other rule books left out", file=sys.stderr)
    tasks = playable
    try:  # the bot loads (its runtime installed, its card sound) and fits every table first

        bot = load(args.bot, preset(tasks[0].rules), trust_code=args.trust_code)
        for task in tasks:
            check_seats(bot, task.seats, args.bot)
    except (BotLoadError, ValueError, LookupError) as exc:
        return _fail(str(exc))
    print(f"greed benchmark: {args.bot} on {len(tasks)} task{'s' * (len(tasks) != 1)}, "
          f"{sum(t.games for t in tasks):,} games or turns: {', '.join(t.id for t in tasks)}", file=sys.stderr)
    try:
        result = run_benchmark(
            tasks, args.bot, workers=args.workers, address=args.address, progress=_progress(not args.no_progress),
            on_result=lambda r: print(f"{r.task}: {_value(r)}", file=sys.stderr), trust_code=args.trust_code,
        )
    except (ValueError, LookupError, OSError) as exc:
        show_traceback(exc, args.debug)
        return _fail(str(exc))
    card = scorecard(result)
    print(card)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)

        result.write(out / "result.json")
        atomic_write_text(out / "scorecard.md", card)
        print(f"wrote {out / 'result.json'}, {out / 'scorecard.md'}")
    return 0


def _value(r: Any) -> str:
    return format_value(r)


def _check(args: argparse.Namespace) -> int:
    try:
        recorded = read_result(args.check)
    except ValueError as exc:
        return _fail(str(exc))
    bot = args.bot or recorded.bot
    try:
        check_trusted(bot, args.trust_code)
        digest = bot_digest(bot)
    except BotLoadError as exc:
        return _fail(str(exc))
    if None not in (digest, recorded.bot_sha256) and digest != recorded.bot_sha256:
        print(f"note: {bot} is not the bot file {args.check} measured (sha256 {recorded.bot_sha256[:12]}..., "
              f"now {str(digest)[:12]}...)", file=sys.stderr)
    progress = _progress(not args.no_progress)
    ok = True
    for old in recorded.results:
        try:
            task = get_task(old.task)
            new = run_task(
                task, bot, workers=args.workers, address=args.address, progress=progress(task) if progress else None, trust_code=args.trust_code
            )
        except (ValueError, LookupError) as exc:
            show_traceback(exc, args.debug)
            return _fail(str(exc))
        same = check_result(old, new)
        ok &= same
        print(f"{old.task}: recorded {_value(old)}, now {_value(new)}: {'reproduced' if same else 'NOT reproduced'}")
    return 0 if ok else 1


def leaderboard_markdown(results: list[Any]) -> str:
    """The leaderboard tables (one per task, best first) from several bots' results."""

    by_task: dict[str, list[tuple[str, Any]]] = {}
    for res in results:
        for r in res.results:
            by_task.setdefault(r.task, []).append((res.bot, r))
    lines: list[str] = []
    for task_id in [t for t in TASKS if t in by_task]:
        task = TASKS[task_id]
        rows = sorted(by_task[task_id], key=lambda br: -br[1].value)
        lines += [f"### `{task_id}`", "", f"{task.description}. Metric: {task.metric}; "
                  f"{task.games:,} {'turns' if task.kind == 'turn' else 'games'}"
                  f"{' per pair' if task.kind == 'elo' else ''}, seed {task.seed}.", "",
                  "| bot | result | beside it |", "|---|---|---|"]
        for bot, r in rows:
            label = method_label(bot)
            lines.append(f"| `{bot}`{f' ({label})' if label else ''} | {_value(r)} | {beside(r)} |")
        lines.append("")
    return "\n".join(lines)


def _leaderboard(args: argparse.Namespace) -> int:
    bots = [b.strip() for b in (args.bots or "").split(",") if b.strip()]
    if bool(bots) == bool(args.board):
        return _fail("--leaderboard needs the bots to rank: --bots A,B,C or --board NAME (one of them)")
    try:
        tasks = match_tasks(args.tasks or ["all"])
        plan = board_plan(args.board, tasks if args.tasks else None) if args.board else [(b, tasks) for b in bots]
        doc = check_output_file(args.leaderboard, "--leaderboard", (".md",))
        folder = check_output_dir(args.results, "--results")
        for bot, _ in plan:
            check_trusted(bot, args.trust_code)
    except (UnknownTaskError, OutputPathError, BotLoadError) as exc:
        return _fail(str(exc))
    folder.mkdir(parents=True, exist_ok=True)
    collected = []
    progress = _progress(not args.no_progress)
    for bot, tasks in plan:
        path = folder / f"{_safe(bot)}.json"
        have = read_result(path) if path.exists() else BenchmarkResult(bot, [])
        try:
            digest = bot_digest(bot)
        except BotLoadError as exc:
            return _fail(str(exc))
        known = {r.task: r for r in have.results}
        if known and None not in (digest, have.bot_sha256) and have.bot_sha256 != digest:
            print(f"greed benchmark: {bot} is not the bot {path} measured (its file's sha256 changed): "
                  "every task runs again", file=sys.stderr)
            known = {}
        # results of a file recorded before digests were kept cannot vouch for the bot of today
        vouched = digest if not known or have.bot_sha256 == digest else have.bot_sha256
        for task in tasks:
            old = known.get(task.id)
            if old is not None and old.protocol == task.protocol():
                continue
            try:
                if not plays_rules_of(bot, task):
                    continue
            except BotLoadError as exc:
                return _fail(str(exc))
            try:
                r = run_task(
                    task, bot, workers=args.workers, address=args.address, progress=progress(task) if progress else None,
                    trust_code=args.trust_code,
                )
            except (ValueError, LookupError) as exc:
                print(f"greed benchmark: {bot} on {task.id}: skipped ({exc})", file=sys.stderr)
                continue
            print(f"{bot} {task.id}: {_value(r)}", file=sys.stderr)
            known[task.id] = r
            BenchmarkResult(bot, list(known.values()), bot_sha256=vouched).write(path)
    for path in sorted(folder.glob("*.json")):
        try:
            collected.append(read_result(path))
        except ValueError as exc:
            return _fail(str(exc))

    table = leaderboard_markdown(collected)
    text = doc.read_text(encoding="utf-8") if doc.exists() else f"# Leaderboard\n\n{START}\n{END}\n"
    if START not in text or END not in text:
        return _fail(f"{doc} has no leaderboard markers ({START} ... {END})")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    atomic_write_text(doc, f"{head}{START}\n{table}\n{END}{tail}")
    print(f"wrote the leaderboard of every result in {folder} ({len(collected)} bots) to {doc}")
    return 0


def _main(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args.json)
    try:
        with connected(args.address):  # once: the cluster's workers keep their bots and tables
            if args.check:
                return _check(args)
            if args.leaderboard:
                return _leaderboard(args)
            return _run(args)
    except ClusterError as exc:
        return _fail(str(exc))


def register(subparsers: Any) -> None:
    """Add the ``benchmark`` sub-command."""
    p = subparsers.add_parser(
        "benchmark",
        help="run a bot through the named benchmark tasks; list tasks; build the leaderboard",
        description="Named, versioned benchmark tasks with a fixed protocol (rules, seats, field, "
        "seeds, games, metric). Run any bot spec through them for a JSON result and a Markdown "
        "scorecard; --list prints the tasks; --check reruns a recorded result; --leaderboard ranks "
        "several bots into a Markdown file. TASK is an id (ten_thousand/ffa4-v1; without -vN the "
        "newest), a pattern (ten_thousand/*, */duel) or all (every task: hours).",
    )
    p.add_argument("tasks", nargs="*", metavar="TASK", help="task ids or patterns, or all (--leaderboard: default all)")
    p.add_argument("--bot", default=None, metavar="SPEC", help="the bot to run (registry id, file, threshold:N, ...)")
    p.add_argument("--list", action="store_true", help="print the tasks and exit")
    p.add_argument("--json", action="store_true", help="with --list: machine-readable")
    p.add_argument("--out", default=None, metavar="DIR", help="write result.json and scorecard.md here")
    p.add_argument("--check", default=None, metavar="RESULT", help="rerun a recorded result.json and compare")
    p.add_argument("--leaderboard", default=None, metavar="FILE", help="write the leaderboard of --bots into FILE (.md)")
    p.add_argument("--bots", default=None, metavar="A,B,C", help="with --leaderboard: the bots to rank")
    p.add_argument("--board", default=None, metavar="NAME", help="with --leaderboard: a named board's bots and tasks (v1: docs/benchmark.md)")
    p.add_argument("--results", default="leaderboard", metavar="DIR", help="with --leaderboard: per-bot result files (reused; the board shows them all)")
    p.add_argument("--workers", type=positive_int, default=1, metavar="K", help="processes")
    add_address_option(p, "games")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_debug_flag(p)
    p.add_argument(
        "--trust-code",
        action="store_true",
        help="load bots that run code as they load: an SB3 .zip (pickle) or py:MODULE:ATTR, as --bot or "
        "named in a --check result; refused without it",
    )
    p.set_defaults(func=_main)
