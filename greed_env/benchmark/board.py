"""The leaderboard's own protocol: which bots run on which tasks.

A leaderboard is only reproducible if the set of (bot, task) pairs is fixed too, so that one
command rebuilds it: ``greed benchmark --leaderboard docs/benchmark.md --board v1``. A board
names the baselines with the task patterns each runs on, plus every trained bot of the
registry (kind ``onnx-policy``) on every task of its own rule book, so a newly shipped bot joins
the board without an edit here.

Board ``v1`` (docs/benchmark.md):

* ``random``, ``threshold-300``: every task; ``threshold-500``: every task but the duels (there
  threshold-300 is the fixed-threshold reference of the six-dice rule books, where it beats
  threshold-500 in every turn, field and Elo result, and threshold-1000 Progressive's).
* ``threshold-1000``: Progressive's tasks (Progressive's pot field is threshold-1000).
* ``optimal-turn``: the turn tasks (the optimum, 100%), Progressive's pot and the Elo tasks (a
  reference bot there). Not the duel tasks, where optimal-duel, their opponent, is the optimum
  (and a Python game of the turn bot is ~10x slower than the numba games every other baseline
  plays), nor the 3-8 player fields, where it is one more fixed-policy player beside the
  thresholds.
* ``leader-duel``: the duel tasks of the rule books it plays (not Progressive's: carry-over) and
  the field tasks (with two players it is optimal-duel, so its duel rows read 50% within their
  intervals: a check of the protocol).
* every registry bot of kind ``onnx-policy``: all tasks of its rule book, except those that
  play it at other settings (``ten_thousand/ffa3-exact`` plays to 3,000 points: the loader
  refuses a trained bot there; docs/three-player.md measures them out of their rule book).

Not on the board: ``optimal-duel`` as a bot of its own (it is the duel tasks' opponent, the
duel rows of ``leader-duel`` are its self-play, and its Elo is in every Elo result's reference
standings), the ``ladder-*`` bots (optimal-duel softened by a temperature; their win
rates against optimal-duel are measured by their own protocol and printed by ``greed bots``)
and the solver's ``optimal-entry`` / ``optimal-race`` bots.
"""

from __future__ import annotations

from dataclasses import dataclass

from greed_env.benchmark.tasks import TASKS, Task, UnknownTaskError, match_tasks
from greed_env.bots.errors import BotLoadError
from greed_env.bots.loader import spec_card
from greed_env.bots.registry import list_bots

__all__ = ["BOARDS", "BoardEntry", "board_plan", "method_label", "trained_bots"]


@dataclass(frozen=True)
class BoardEntry:
    """A bot of a board and the task patterns it runs on (``all``: every task)."""

    bot: str
    tasks: tuple[str, ...] = ("all",)


BOARDS: dict[str, tuple[BoardEntry, ...]] = {
    "v1": (
        BoardEntry("random"),
        BoardEntry("threshold-300"),
        BoardEntry("threshold-500", ("*/turn", "*/ffa*", "progressive/pot4", "*/elo")),
        BoardEntry("threshold-1000", ("progressive/*",)),
        BoardEntry("optimal-turn", ("*/turn", "progressive/pot4", "*/elo")),
        BoardEntry("leader-duel", ("ten_thousand/duel", "greed/duel", "farkle/duel", "farkle5/duel", "*/ffa*")),
    ),
}
"""Every board by name; ``v1`` is the one in docs/benchmark.md."""


def trained_bots() -> list[BoardEntry]:
    """The registry's trained bots (kind ``onnx-policy``), each on its own rule book's tasks
    (none for a rule book without tasks, such as Trippn)."""
    with_tasks = {t.rules for t in TASKS.values()}
    return [
        BoardEntry(b.id, (f"{b.rules}/*",))
        for b in list_bots()
        if b.kind == "onnx-policy" and not b.problem and b.rules in with_tasks
    ]


def method_label(bot: str) -> str:
    """How a trained bot was made, as the leaderboard marks its row: ``PPO`` for a trained policy
    whose card names no teacher (pure reinforcement learning, the research baseline) and
    ``PPO + solver teacher: TEACHER`` for one trained with the exact solver as teacher (its
    training card's ``teacher``); "" for heuristics, solver bots and bots without a card.
    """
    try:
        card = spec_card(bot)
    except (BotLoadError, ValueError, LookupError):
        return ""
    if not card or card.get("kind") != "onnx-policy":
        return ""
    training = card.get("training") if isinstance(card.get("training"), dict) else {}
    teacher = training.get("teacher") if isinstance(training, dict) else None
    if isinstance(teacher, dict) and teacher.get("teacher"):
        return f"PPO + solver teacher: {teacher['teacher']}"
    return "PPO"


def board_plan(name: str, only: list[Task] | None = None) -> list[tuple[str, list[Task]]]:
    """The (bot, tasks) pairs of board ``name`` in run order, restricted to ``only`` when given
    (a trained bot gets every task of its rule book at the book's own settings; the runner skips
    other rule books).

    Raises:
        UnknownTaskError: no such board.
    """
    if name not in BOARDS:
        raise UnknownTaskError(f"no leaderboard {name!r}; boards: {', '.join(BOARDS)}")
    keep = None if only is None else {t.id for t in only}
    plan: list[tuple[str, list[Task]]] = []
    trained = trained_bots()
    for entry in [*BOARDS[name], *trained]:
        tasks = [t for t in match_tasks(list(entry.tasks)) if keep is None or t.id in keep]
        if entry in trained:  # a trained bot plays its rule book as published, not a smaller game
            tasks = [t for t in tasks if not t.overrides]
        if tasks:
            plan.append((entry.bot, tasks))
    return plan
