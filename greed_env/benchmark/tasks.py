"""Named, versioned benchmark tasks: each fixes the rules, seats, opponents, seeds, games and metric.

A task id reads like a Gymnasium id, ``<rules>/<task>-v<version>``: ``ten_thousand/turn-v1``,
``farkle/duel-v1``, ``ten_thousand/ffa4-v1``. The version changes whenever anything that moves a
result changes (the rules' fingerprint, the field, the seeds, the number of games, the metric),
so two results of one id are comparable. An id without its version means the newest.

Kinds:

``turn``
    One player's turns alone. Metric: the bot's exact expected turn score as a share of the
    optimal turn value (:func:`greed_env.evaluation.policy_value.turn_value`; a bot that is not deterministic
    gets the sampled mean of ``games`` turns instead), with the regret per decision beside it.
``duel``
    Two players, the bot against the exact optimal-duel bot, seats alternating. Metric: the
    bot's win rate (a shared win counts 1/2) with its 95% interval; the regret estimate
    (0.5 less the mean regret per game, in win probability) beside it.
``field``
    ``seats`` players: the bot in one seat against a fixed field in the others, its seat
    rotating game by game so it plays every seat equally often (seat 0 starts). Metric: the
    bot's mean share of the pot (1 for a win, 1/k for a k-way share, 0 otherwise) with its 95%
    interval; a bot no better than the field takes ``1 / seats``. Against a field of
    ``optimal-3p`` bots (the exact three-player equilibrium, ``ffa3-exact``) the regret
    estimate stands beside it: the bot's seat's equilibrium value less the regret of its
    moves, in win probability, per game.
``elo``
    A round robin of two-player games between the bot and fixed reference bots, with Elo
    anchored on ``random`` at 1000, so numbers from different papers compare.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from greed_env.rules.config import PRESETS, Rules, preset

__all__ = [
    "KINDS",
    "TASKS",
    "Task",
    "UnknownTaskError",
    "get_task",
    "match_tasks",
]

KINDS = ("turn", "duel", "field", "elo")

_ID = re.compile(r"^(?P<name>[a-z0-9_]+/[a-z0-9_-]+?)(?:-v(?P<version>\d+))?$")


class UnknownTaskError(LookupError):
    """A task id or pattern that names no task."""


@dataclass(frozen=True)
class Task:
    """One benchmark task and its fixed protocol.

    Attributes:
        name: ``<rules>/<task>`` without the version.
        version: the protocol version (see the module docstring).
        kind: ``turn``, ``duel``, ``field`` or ``elo``.
        rules: the preset played (no overrides: a task is a published rule book).
        seats: players per game (1 for ``turn``; 2 for ``duel`` and ``elo``).
        field: the other seats' bots (``field``), the opponent (``duel``) or the reference bots
            (``elo``), as bot specs.
        seed: the root seed; game ``i`` draws from ``SeedSequence(seed, spawn_key=(i,))``.
        games: turns (``turn``), games (``duel``, ``field``) or games per pair (``elo``).
        metric: what the headline number is, in words.
        description: one line for listings.
        overrides: rules fields changed from the preset (``(("target", 3000),)``), for a task
            that plays a smaller game than the rule book's (said in its description).
    """

    name: str
    version: int
    kind: str
    rules: str
    seats: int
    field: tuple[str, ...]
    seed: int
    games: int
    metric: str
    description: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.name}-v{self.version}"

    def rules_object(self) -> Rules:
        """The rules played: the preset, with the task's overrides."""
        return preset(self.rules, **dict(self.overrides)) if self.overrides else PRESETS[self.rules]

    @property
    def rules_fingerprint(self) -> str:
        return self.rules_object().fingerprint

    def protocol(self) -> dict[str, object]:
        """The fixed protocol as a JSON-able dict (written into every result)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "rules": self.rules,
            "rules_fingerprint": self.rules_fingerprint,
            "seats": self.seats,
            "field": list(self.field),
            "seed": self.seed,
            "games": self.games,
            "metric": self.metric,
            **({"overrides": dict(self.overrides)} if self.overrides else {}),
        }


BOARD_PRESETS = ("ten_thousand", "greed", "farkle", "farkle5", "zilch", "progressive")
"""The rule books of the board, in its order: each has a turn and a duel task. They are the
presets whose turn and duel tables ship with the package (a task never solves for hours); a
test checks this list against the presets and the shipped tables, so a new rule book joins
here when its tables ship."""
PYTHON_DUELS = ("zilch", "progressive")
"""Board rule books whose optimal-duel opponent plays in Python (the vector engine's optimal
opponent models neither a bust penalty nor carry-over): 2,000 games, not 20,000. A test checks
it against the vector engine."""
FIELD_PRESETS = ("ten_thousand", "farkle")
"""Board rule books that also have the many-player tasks (fields of 3, 4 and 8 seats, and the
Elo round robin)."""
_SEED = 2026
_EXACT3_TARGET = 3_000  # the three-player equilibrium's shipped table (docs/three-player.md)


def _build() -> dict[str, Task]:
    tasks: list[Task] = []
    for r in BOARD_PRESETS:
        tasks.append(Task(
            f"{r}/turn", 1, "turn", r, 1, (), _SEED, 2_000,
            "exact share of the optimal turn value",
            f"{r}: single-turn play, scored exactly against the solver's optimum",
        ))
    for r in BOARD_PRESETS:
        games = 2_000 if r in PYTHON_DUELS else 20_000
        tasks.append(Task(
            f"{r}/duel", 1, "duel", r, 2, ("optimal-duel",), _SEED, games,
            "win rate against optimal-duel, seats alternating",
            f"{r}: two-player game against the exact optimal-duel bot",
        ))
    for r in FIELD_PRESETS:
        for n, games in ((3, 2_000), (4, 2_000), (8, 1_000)):
            tasks.append(Task(
                f"{r}/ffa{n}", 1, "field", r, n, ("leader-duel",) * (n - 1), _SEED, games,
                f"share of the pot against {n - 1} leader-duel bots, seat rotated",
                f"{r}: {n}-player game against the reference field (optimal duel vs the leader)",
            ))
            tasks.append(Task(
                f"{r}/ffa{n}-threshold", 1, "field", r, n, ("threshold-300",) * (n - 1), _SEED, games,
                f"share of the pot against {n - 1} threshold-300 bots, seat rotated",
                f"{r}: {n}-player game against the simplest field (bank at 300)",
            ))
    tasks.append(Task(
        "progressive/pot4", 1, "field", "progressive", 4, ("threshold-1000",) * 3, _SEED, 500,
        "share of the pot against 3 threshold-1000 bots, seat rotated",
        "progressive: 4-player game for the pot against a threshold field (bank at 1000)",
    ))
    for r in FIELD_PRESETS:
        tasks.append(Task(
            f"{r}/elo", 1, "elo", r, 2,
            ("random", "threshold-300", "threshold-500", "optimal-turn", "optimal-duel"), _SEED, 2_000,
            "Elo in a round robin against reference bots (random = 1000)",
            f"{r}: round robin with the reference bots, Elo anchored on random",
        ))
    tasks.append(Task(
        "ten_thousand/ffa3-exact", 1, "field", "ten_thousand", 3, ("optimal-3p",) * 2, _SEED, 2_000,
        f"share of the pot against 2 optimal-3p bots at target {_EXACT3_TARGET:,}, seat rotated",
        f"ten_thousand at target {_EXACT3_TARGET:,} (not 10,000: its exact table takes an hour of CPU and 0.7 GB, solved offline): "
        "3-player game against the exact three-player equilibrium, with the regret estimate",
        overrides=(("target", _EXACT3_TARGET),),
    ))
    return {t.id: t for t in tasks}


TASKS: dict[str, Task] = _build()
"""Every task by id (newest and older versions alike)."""


def _newest(name: str) -> Task | None:
    found = [t for t in TASKS.values() if t.name == name]
    return max(found, key=lambda t: t.version) if found else None


def get_task(task_id: str) -> Task:
    """The task of ``task_id`` (``<rules>/<task>-v<N>``, or without ``-v<N>``: the newest).

    Raises:
        UnknownTaskError: no such task; the message lists the known ones.
    """
    m = _ID.match(task_id.strip())
    if m is not None:
        if m.group("version") is not None:
            task = TASKS.get(f"{m.group('name')}-v{m.group('version')}")
        else:
            task = _newest(m.group("name"))
        if task is not None:
            return task
    raise UnknownTaskError(
        f"unknown benchmark task {task_id!r}; known: {', '.join(sorted(TASKS))} "
        "(see `greed benchmark --list`)"
    )


def match_tasks(patterns: list[str]) -> list[Task]:
    """Tasks named by ids or shell patterns (``ten_thousand/*``, ``*/duel``, ``all``), in order,
    each once; a pattern matches against ids with and without their version.

    Raises:
        UnknownTaskError: a pattern that matches nothing.
    """
    out: dict[str, Task] = {}
    newest = {t.name: _newest(t.name) for t in TASKS.values()}
    for pat in patterns:
        pat = pat.strip()
        if pat == "all":
            out.update({t.id: t for t in newest.values() if t is not None})
            continue
        if any(ch in pat for ch in "*?["):
            hits = [t for name, t in newest.items() if t is not None and fnmatch.fnmatchcase(name, pat)]
            hits += [t for t in TASKS.values() if fnmatch.fnmatchcase(t.id, pat)]
            if not hits:
                raise UnknownTaskError(f"no benchmark task matches {pat!r} (see `greed benchmark --list`)")
            out.update({t.id: t for t in hits})
            continue
        task = get_task(pat)
        out[task.id] = task
    return list(out.values())
