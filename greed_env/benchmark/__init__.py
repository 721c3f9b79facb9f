"""The multi-agent benchmark: named, versioned tasks with a fixed protocol, and their runner.

>>> from greed_env.benchmark import get_task
>>> get_task("ten_thousand/ffa4").id
'ten_thousand/ffa4-v1'

``greed benchmark --list`` prints the tasks; ``greed benchmark TASK... --bot SPEC`` runs a bot
through them (docs/benchmark.md has the protocol and the leaderboard).
"""

from greed_env.benchmark.runner import (
    BenchmarkResult,
    TaskResult,
    bot_digest,
    check_result,
    load_field_bot,
    plays_rules_of,
    read_result,
    run_benchmark,
    run_task,
    scorecard,
)
from greed_env.benchmark.tasks import KINDS, TASKS, Task, UnknownTaskError, get_task, match_tasks

__all__ = [
    "KINDS",
    "TASKS",
    "BenchmarkResult",
    "Task",
    "TaskResult",
    "UnknownTaskError",
    "bot_digest",
    "check_result",
    "get_task",
    "load_field_bot",
    "match_tasks",
    "plays_rules_of",
    "read_result",
    "run_benchmark",
    "run_task",
    "scorecard",
]
