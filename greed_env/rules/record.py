"""Game records: a JSON log of one game that replays to the same positions.

A record holds everything needed to play the game again without any random numbers: the
rules (as :meth:`Rules.to_dict`), the number of players, the ``first_player`` argument given
to :func:`new_game` (if any), and the list of events in order. An event is either a chance
outcome (``{"roll": [faces]}``) or a decision (``{"move": str(move)}``), each tagged with the
seat that rolled or moved. The seed and player labels are informative only. The summary of
the last position (``final``) lets :func:`replay` check that the events reproduce the game.

The file format::

    {"format": "greed_env.game_record", "version": 1,
     "rules": {...}, "num_players": 2, "first_player": null, "seed": 7,
     "players": ["human", "threshold:500"],
     "events": [{"player": 0, "roll": [4]}, ..., {"player": 1, "move": "keep:1,5"}, ...],
     "final": {"phase": "OVER", "player": 1, "scores": [...], "winners": [...], ...}}

>>> from greed_env.rules import preset
>>> rec = Recorder(preset("ten_thousand"), 2, first_player=0)
>>> _ = rec.roll((1, 1, 1, 2, 3, 5))
>>> _ = rec.move("keep:1,1,1,5")
>>> rec.state.turn_total
1050
>>> states = replay(rec.record())
>>> len(states), states[-1] == rec.state
(3, True)
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from greed_env.rules.config import Rules, RulesError
from greed_env.rules.game import (
    IllegalMove,
    Move,
    Phase,
    State,
    apply,
    apply_roll,
    is_over,
    new_game,
    parse_move,
    sample_roll,
)
from greed_env.rules.play import Chooser, play_out

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "GameRecord",
    "RecordError",
    "Recorder",
    "distinct_names",
    "load",
    "record_game",
    "replay",
    "save",
    "state_summary",
]

RECORD_FORMAT = "greed_env.game_record"
RECORD_VERSION = 1

Event = dict[str, Any]


class RecordError(ValueError):
    """A game record that cannot be read, parsed or replayed; the message names the problem."""


def state_summary(state: State) -> dict[str, Any]:
    """The JSON-able summary of a position that a record stores and replay checks."""
    return {
        "phase": Phase(state.phase).name,
        "player": state.player,
        "scores": list(state.scores),
        "turn_total": state.turn_total,
        "rounds": state.rounds,
        "finishers": list(state.finishers),
        "winners": list(state.winners),
        "shares": list(state.shares),
    }


@dataclass
class GameRecord:
    """One recorded game. ``events`` are in play order; ``final`` summarises the last position."""

    rules: Rules
    num_players: int
    first_player: int | None = None
    seed: int | None = None
    players: tuple[str, ...] = ()
    events: list[Event] = field(default_factory=list)
    final: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (see the module docstring)."""
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules": self.rules.to_dict(),
            "num_players": self.num_players,
            "first_player": self.first_player,
            "seed": self.seed,
            "players": list(self.players),
            "events": [dict(e) for e in self.events],
            "final": self.final,
        }

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """Parse a JSON document; raises :class:`RecordError` naming the first problem found."""
        if not isinstance(data, dict):
            raise RecordError(f"a game record is a JSON object, got {type(data).__name__}")
        fmt = data.get("format")
        if fmt != RECORD_FORMAT:
            raise RecordError(
                f"not a greed_env game record: format is {fmt!r}, expected {RECORD_FORMAT!r}"
            )
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise RecordError(f"record version must be an integer, got {version!r}")
        if version > RECORD_VERSION or version < 1:
            raise RecordError(
                f"record version {version} is not supported (this reader knows 1..{RECORD_VERSION})"
            )
        for key in ("rules", "num_players", "events"):
            if key not in data:
                raise RecordError(f"record has no {key!r} entry")
        if not isinstance(data["rules"], dict):
            raise RecordError("record 'rules' must be an object of rules fields")
        try:
            rules = Rules.from_dict(data["rules"])
        except (RulesError, TypeError) as exc:
            raise RecordError(f"record rules are invalid: {exc}") from None
        num_players = _int_field(data, "num_players")
        first_player = (
            _int_field(data, "first_player") if data.get("first_player") is not None else None
        )
        seed = _int_field(data, "seed") if data.get("seed") is not None else None
        players = data.get("players") or []
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise RecordError("record 'players' must be a list of strings")
        for seat, name in enumerate(players):
            if players.index(name) != seat:
                raise RecordError(
                    f"record 'players' gives the name {name!r} to seats {players.index(name)} and {seat}: "
                    "each seat has a name of its own"
                )
        if len(players) > num_players:
            raise RecordError(f"record 'players' names {len(players)} players, the game has {num_players}")
        events = data["events"]
        if not isinstance(events, list):
            raise RecordError("record 'events' must be a list")
        for i, event in enumerate(events):
            _check_event(i, event)
        final = data.get("final")
        if final is not None and not isinstance(final, dict):
            raise RecordError("record 'final' must be an object or null")
        return cls(rules, num_players, first_player, seed, tuple(players), list(events), final)


def _int_field(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"record {key!r} must be an integer, got {value!r}")
    return value


def _check_event(i: int, event: Any) -> None:
    if not isinstance(event, dict):
        raise RecordError(f"event {i} must be an object, got {event!r}")
    player = event.get("player")
    if not isinstance(player, int) or isinstance(player, bool):
        raise RecordError(f"event {i} has no integer 'player': {event!r}")
    if "roll" in event:
        roll = event["roll"]
        if not isinstance(roll, list) or not all(
            isinstance(f, int) and not isinstance(f, bool) for f in roll
        ):
            raise RecordError(f"event {i}: 'roll' must be a list of faces, got {roll!r}")
    elif "move" in event:
        if not isinstance(event["move"], str):
            raise RecordError(f"event {i}: 'move' must be a string, got {event['move']!r}")
    else:
        raise RecordError(f"event {i} is neither a roll nor a move: {event!r}")


class Recorder:
    """Plays a game through :func:`apply` / :func:`apply_roll` and logs every event.

    Every step is checked by the rules first: an illegal move or roll raises
    :class:`IllegalMove` and is neither applied nor logged.
    """

    def __init__(
        self,
        rules: Rules,
        num_players: int,
        first_player: int | None = None,
        seed: int | None = None,
        players: Sequence[str] = (),
    ) -> None:
        self.rules = rules
        self.num_players = num_players
        self.first_player = first_player
        self.seed = seed
        self.players = distinct_names(players)
        self.events: list[Event] = []
        self.states: list[State] = [new_game(rules, num_players, first_player)]

    @property
    def state(self) -> State:
        """The current position."""
        return self.states[-1]

    def roll(self, roll: Sequence[int]) -> State:
        """Apply a chance outcome and log it."""
        before = self.state
        after = apply_roll(self.rules, before, tuple(roll))
        self.events.append({"player": before.player, "roll": sorted(int(f) for f in roll)})
        self.states.append(after)
        return after

    def sample(self, rng: np.random.Generator) -> State:
        """Draw the chance outcome from ``rng``, apply it and log it."""
        return self.roll(sample_roll(self.rules, self.state, rng))

    def move(self, move: Move | str) -> State:
        """Apply a decision (a :class:`Move` or its text) and log it as ``str(move)``."""
        before = self.state
        parsed = move if isinstance(move, Move) else parse_move(move)
        after = apply(self.rules, before, parsed)
        self.events.append({"player": before.player, "move": str(parsed)})
        self.states.append(after)
        return after

    def observe(self, before: State, event: tuple[int, ...] | Move, after: State) -> None:
        """Log a roll or a move applied elsewhere (the ``on_step`` of
        :func:`~greed_env.rules.play.play_out`); ``before`` must be the current position."""
        if before is not self.state:
            raise RecordError("observed a step from a position other than the recorder's")
        if isinstance(event, Move):
            self.events.append({"player": before.player, "move": str(event)})
        else:
            self.events.append({"player": before.player, "roll": sorted(int(f) for f in event)})
        self.states.append(after)

    def record(self) -> GameRecord:
        """The record of the game so far (its ``final`` is the current position)."""
        return GameRecord(
            rules=self.rules,
            num_players=self.num_players,
            first_player=self.first_player,
            seed=self.seed,
            players=self.players,
            events=[dict(e) for e in self.events],
            final=state_summary(self.state),
        )


MoveChooser = Chooser


def distinct_names(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` with every repeat numbered, so each seat of a record has a name of its own.

    >>> distinct_names(["random", "random", "human", "random"])
    ('random', 'random#2', 'human', 'random#3')
    """
    out: list[str] = []
    for name in names:
        shown, k = name, 1
        while shown in out or (k > 1 and shown in names):
            k += 1
            shown = f"{name}#{k}"
        out.append(shown)
    return tuple(out)


def record_game(
    rules: Rules,
    choosers: Sequence[MoveChooser],
    rng: np.random.Generator,
    seed: int | None = None,
    first_player: int | None = None,
    players: Sequence[str] = (),
    max_steps: int = 1_000_000,
) -> GameRecord:
    """Play one game to the end with one chooser per seat and return its record.

    A chooser is any ``act(rules, state, rng)`` callable (a bot's bound ``act`` method). Every
    die and every chooser's random choice is drawn from ``rng``, so the game is a pure function
    of the arguments; ``seed`` is only written into the record (pass the seed ``rng`` was made
    from).

    Raises:
        RecordError: the game did not end within ``max_steps`` events.
    """
    rec = Recorder(rules, len(choosers), first_player, seed, players)
    end = play_out(rules, rec.state, choosers, rng, on_step=rec.observe, max_steps=max_steps)
    if not is_over(end):
        raise RecordError(f"the game did not end within {max_steps} events")
    return rec.record()


def replay(record: GameRecord | dict[str, Any]) -> list[State]:
    """Re-apply every event of ``record``; return the positions (the start and one per event).

    Raises:
        RecordError: an event is illegal where it occurs, names the wrong player, or the last
            position differs from the recorded ``final`` summary.
    """
    rec = record if isinstance(record, GameRecord) else GameRecord.from_dict(record)
    rules = rec.rules
    try:
        state = new_game(rules, rec.num_players, rec.first_player)
    except IllegalMove as exc:
        raise RecordError(f"record cannot start a game: {exc}") from None
    states = [state]
    for i, event in enumerate(rec.events):
        if event.get("player") != state.player:
            raise RecordError(
                f"event {i} ({_describe(event)}) is by player {event.get('player')}, "
                f"but player {state.player} is to act"
            )
        try:
            if "roll" in event:
                state = apply_roll(rules, state, tuple(event["roll"]))
            else:
                state = apply(rules, state, parse_move(event["move"]))
        except IllegalMove as exc:
            raise RecordError(f"event {i} ({_describe(event)}) is illegal: {exc}") from None
        states.append(state)
    if rec.final is not None:
        got = state_summary(state)
        diff = sorted(k for k in rec.final if got.get(k) != rec.final[k])
        if diff:
            details = "; ".join(
                f"{k}: recorded {rec.final[k]!r}, replayed {got.get(k)!r}" for k in diff
            )
            raise RecordError(f"replay does not reproduce the recorded final position ({details})")
    return states


def _describe(event: Event) -> str:
    if "roll" in event:
        return "roll " + ",".join(map(str, event["roll"]))
    return f"move {event.get('move')}"


def save(record: GameRecord, path: str | os.PathLike[str]) -> Path:
    """Write ``record`` as JSON atomically: a new temporary file in the same folder (created
    exclusively, with the usual permissions), flushed to disk, then :func:`os.replace`, so
    ``path`` never holds a half-written record; an existing ``path`` that is not a regular file
    (a folder, a device, a pipe) is refused with an ``OSError``. Returns the path."""
    target = Path(path)
    if target.exists() and not target.is_file():  # the rename would replace a device or a pipe
        raise OSError(f"{target} exists and is not a regular file: refusing to replace it")
    text = json.dumps(record.to_dict(), indent=1) + "\n"
    tmp = target.with_name(f".{target.name[:64]}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    with open(tmp, "x", encoding="utf-8") as fh:
        try:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        except BaseException:
            fh.close()
            tmp.unlink(missing_ok=True)
            raise
    try:
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike[str]) -> GameRecord:
    """Read a record written by :func:`save`.

    Raises:
        RecordError: the file cannot be read, is not JSON, is not a game record, has an
            unknown format version, or holds invalid fields; the message names the file and
            the problem.
    """
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(
            f"cannot read game record {str(target)!r}: {exc.strerror or exc}"
        ) from None
    except UnicodeDecodeError:
        raise RecordError(f"game record {str(target)!r} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"game record {str(target)!r} is not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno})"
        ) from None
    try:
        return GameRecord.from_dict(data)
    except RecordError as exc:
        raise RecordError(f"game record {str(target)!r}: {exc}") from None
