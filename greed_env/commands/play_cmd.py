"""``greed play`` (humans and bots at one table) and ``greed replay`` (print a recorded game).

Dice come from ``np.random.default_rng(seed)``; each bot seat draws its own choices from a
generator derived from the same seed, so a seeded game of bots is reproducible. Humans type
keeps (``1 5 5``, ``155``, ``keep:1,5,5``; in tap order where the rules read it), ``b`` /
``bank``, ``r`` / ``roll``, any other move name, ``?`` for the legal moves and ``q`` to quit.
A refused input is answered with the rule's message and asked again; the game is unchanged.
Output uses ``rich`` on a terminal and plain lines otherwise (or with ``--plain``).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from greed_env.bots.base import Bot, checked_act
from greed_env.bots.errors import BotLoadError, BotPlayError
from greed_env.bots.hints import default_objective, hint_lines
from greed_env.bots.loader import check_seats
from greed_env.bots.loader import load as load_bot
from greed_env.commands.argtypes import OutputPathError, check_output_file, seed_int
from greed_env.commands.debug import add_debug_flag, show_traceback
from greed_env.commands.rules_cmd import CommandError, add_rules_options
from greed_env.commands.signals import EXIT_STATUS, acknowledge
from greed_env.envs.render import GIF_FPS_RANGE, record_frames, save_animation
from greed_env.rules.config import Rules, RulesError, rules_from_args
from greed_env.rules.game import (
    ROLL_FOR_NOTHING,
    IllegalMove,
    Move,
    Phase,
    State,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    parse_move,
    returns,
)
from greed_env.rules.record import GameRecord, Recorder, RecordError, load, replay, save

__all__ = ["ALIASES", "Seat", "parse_players", "register"]

ALIASES = {
    "b": "bank",
    "r": "roll",
    "n": "roll_for_nothing",
    "a": "reroll_all",
    "x": "bust",
    "p": "piggyback",
    "f": "fresh",
    "s": "split",
    "no": "refuse",
    "first": "roll_first",
    "last": "roll_last",
}
DIE_FACES = "⚀⚁⚂⚃⚄⚅"


@dataclass
class Seat:
    """One player at the table: a human (``bot`` None) or a bot, with its display label."""

    label: str
    bot: Bot | None = None


def parse_players(spec: str, rules: Rules) -> list[Seat]:
    """``human,random,threshold-500`` -> seats (bot specs: :func:`greed_env.bots.load`). ``human`` may carry a name: ``human:Ann``.

    Raises:
        CommandError: an empty entry, an unknown bot, a player count the rules refuse, or a
            bot made for fewer seats (the optimal duel bot in a game of three).
    """
    seats: list[Seat] = []
    for i, raw in enumerate(spec.split(",")):
        item = raw.strip()
        if not item:
            raise CommandError(f"--players {spec!r}: entry {i + 1} is empty")
        kind, sep, arg = item.partition(":")
        if kind.lower() == "human":
            seats.append(Seat(arg.strip() if sep and arg.strip() else f"human{i}"))
            continue
        try:
            seats.append(Seat(item, load_bot(item, rules)))
        except BotLoadError as exc:
            raise CommandError(str(exc)) from None
    if not rules.min_players <= len(seats) <= rules.max_players:
        raise CommandError(
            f"{rules.name} is played by {rules.min_players}..{rules.max_players} players, "
            f"--players gives {len(seats)}"
        )
    for seat in seats:
        if seat.bot is not None:
            try:
                check_seats(seat.bot, len(seats), seat.label)
            except BotLoadError as exc:
                raise CommandError(f"--players {spec!r}: {exc}") from None
    return seats


# ------------------------------------------------------------------------------------------
# rendering


def _where(rules: Rules, state: State) -> str:
    """Where the game stands, for a turn header: a roll-off, or the round of a rounds game."""
    if state.in_rolloff:
        return " (roll-off)"
    if rules.rounds and not state.endgame:
        return f" (round {state.rounds // state.num_players + 1} of {rules.rounds})"
    if rules.rounds:
        return f" (final turn, round {state.rounds // state.num_players + 1} of {rules.rounds})"
    return ""


class Renderer:
    """Plain-text output: one line per event, a status block before each human decision."""

    def __init__(self, out: TextIO, rules: Rules, labels: Sequence[str]) -> None:
        self.out = out
        self.rules = rules
        self.labels = list(labels)

    def line(self, text: str = "") -> None:
        print(text, file=self.out)

    def name(self, seat: int) -> str:
        return f"P{seat} {self.labels[seat]}" if seat < len(self.labels) else f"P{seat}"

    def event(self, before: State, after: State, what: str) -> None:
        self.line(f"{self.name(before.player)}: {what}{_event_suffix(after)}")

    def turn_header(self, state: State) -> None:
        self.line(f"--- {self.name(state.player)} to play{_where(self.rules, state)} ---")

    def status(self, state: State, kept: Sequence[str]) -> None:
        self.line(self.scores_text(state))
        bits = [f"turn total {state.turn_total}"]
        if kept:
            bits.append("kept " + " | ".join(kept))
        if self.rules.carry_over and not state.carry.is_empty():
            bits.append("working: " + state.carry.describe())
        if state.bar >= 0:
            bits.append(f"must beat {state.bar}")
        self.line("  " + "; ".join(bits))
        if state.phase == Phase.KEEP:
            self.line("  roll: " + " ".join(map(str, state.roll)))
        elif state.phase == Phase.CONTINUE:
            self.line(f"  {_dice(state.dice)} to roll")
        hint = phase_hint(self.rules, state)
        if hint:
            self.line("  " + hint)

    def scores_text(self, state: State) -> str:
        cells = []
        for i, score in enumerate(state.scores):
            mark = "*" if i == state.player and not is_over(state) else " "
            board = "" if state.entered[i] else " (not in)"
            cells.append(f"{mark}{self.name(i)}: {score}{board}")
        return "scores: " + ", ".join(cells)

    def result(self, state: State) -> None:
        self.line(self.scores_text(state))
        if is_over(state):
            names = ", ".join(self.name(w) for w in state.winners)
            self.line(f"game over: {names} {'win' if len(state.winners) > 1 else 'wins'}")
            rets = ", ".join(f"{self.name(i)} {r:+g}" for i, r in enumerate(returns(state)))
            self.line(f"returns: {rets}")
        else:
            self.line("game not finished")


class RichRenderer(Renderer):
    """The same information with ``rich``: dice faces, a scores table, coloured events."""

    def __init__(self, out: TextIO, rules: Rules, labels: Sequence[str]) -> None:
        super().__init__(out, rules, labels)
        from rich.console import Console

        self.console = Console(file=out, highlight=False)

    def line(self, text: str = "") -> None:
        self.console.print(text, markup=False)

    def event(self, before: State, after: State, what: str) -> None:
        style = "bold red" if "bust" in what or "lost" in what else "cyan"
        self.console.print(
            f"[bold]{_esc(self.name(before.player))}[/]: [{style}]{_esc(what)}[/]"
            f"{_esc(_event_suffix(after))}"
        )

    def turn_header(self, state: State) -> None:
        from rich.rule import Rule

        self.console.print(Rule(f"{self.name(state.player)} to play{_where(self.rules, state)}"))

    def status(self, state: State, kept: Sequence[str]) -> None:
        from rich.table import Table

        table = Table(title=None, show_edge=False, pad_edge=False)
        table.add_column("player")
        table.add_column("score", justify="right")
        table.add_column("on board")
        for i, score in enumerate(state.scores):
            style = "bold yellow" if i == state.player else ""
            table.add_row(
                self.name(i), str(score), "yes" if state.entered[i] else "no", style=style
            )
        self.console.print(table)
        info = f"turn total [bold]{state.turn_total}[/]"
        if kept:
            info += "  kept " + _esc(" | ".join(kept))
        if self.rules.carry_over and not state.carry.is_empty():
            info += "  working: " + _esc(state.carry.describe())
        if state.bar >= 0:
            info += f"  must beat {state.bar}"
        self.console.print(info)
        if state.phase == Phase.KEEP:
            dice = "  ".join(f"{DIE_FACES[f - 1]} {f}" for f in state.roll)
            self.console.print(f"roll: [bold green]{dice}[/]")
        elif state.phase == Phase.CONTINUE:
            self.console.print(f"{_dice(state.dice)} to roll")
        hint = phase_hint(self.rules, state)
        if hint:
            self.console.print(f"[italic]{_esc(hint)}[/]")


def phase_hint(rules: Rules, state: State) -> str:
    """What the player must decide, for the decisions that are not keep / bank / roll."""
    if state.phase == Phase.START and state.piggy is not None:
        total, dice = state.piggy
        return f"piggyback on {total} with {dice} dice (p) or start fresh (f)"
    if state.phase == Phase.SPLIT:
        names = ", ".join(f"P{p}" for p in state.finishers)
        return f"{names} all went out: split the pot (s) or refuse and roll off (no)"
    if state.phase == Phase.ORDER_CHOICE:
        return "roll-off: roll first (first) or last (last)"
    if state.phase == Phase.CONTINUE and legal_moves(rules, state) == [ROLL_FOR_NOTHING]:
        return f"exactly {rules.target}: roll for nothing (n) and hope no die scores"
    if state.in_rolloff:
        return "roll-off: no banking, roll until you bust"
    return ""


def _dice(n: int) -> str:
    return f"{n} die" if n == 1 else f"{n} dice"


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _event_suffix(state: State) -> str:
    if is_over(state):
        return ""
    if state.phase == Phase.CONTINUE:
        return f" (turn total {state.turn_total}, {_dice(state.dice)} left)"
    return ""


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def make_renderer(out: TextIO, rules: Rules, labels: Sequence[str], plain: bool) -> Renderer:
    """Rich output on a terminal, plain lines otherwise (or when ``plain``)."""
    if plain or not _isatty(out):
        return Renderer(out, rules, labels)
    return RichRenderer(out, rules, labels)


# ------------------------------------------------------------------------------------------
# the table


def _turn_key(state: State) -> tuple[int, ...]:
    return (state.rounds, state.player, len(state.rolloff_scores), state.rolloff_round)


def _describe_step(before: State, after: State, event: dict[str, Any]) -> str:
    if "roll" in event and before.phase == Phase.ORDER_ROLL:
        return f"who-starts roll: {after.event}"
    return after.event


class _Quit(Exception):
    pass


def _read_human(
    view: Renderer,
    rules: Rules,
    state: State,
    seat: Seat,
    kept: Sequence[str],
    stdin: TextIO,
    hints: bool = False,
) -> Move:
    """Prompt until the human gives a move the rules accept (parsing only; apply checks).

    With ``hints`` the optimal bot's value of every legal move is shown first.
    """
    view.status(state, kept)
    if hints:
        for text in hint_lines(rules, state):
            view.line("  " + text)
    while True:
        moves = legal_moves(rules, state)
        view.out.write(f"{seat.label} > ")
        view.out.flush()
        line = stdin.readline()
        if not line:
            view.line("")
            raise _Quit("input ended")
        if not _isatty(stdin):
            view.line(line.rstrip("\n"))
        text = line.strip().lower()
        if not text:
            continue
        if text in ("?", "help", "h"):
            view.line("legal moves: " + ", ".join(str(m) for m in moves))
            view.line("type a keep in tap order (1 5 5, 155, keep:1,5,5), b=bank, r=roll, q=quit")
            continue
        if text in ("q", "quit", "exit"):
            raise _Quit("quit")
        try:
            return parse_move(ALIASES.get(text, text))
        except IllegalMove:  # the moves of these rules, here: not every kind the engine knows
            view.line(
                f"not understood: {line.strip()!r}; legal here: {', '.join(str(m) for m in moves)} "
                "(a keep in tap order: 1 5 5, 155, keep:1,5,5; ? for help, q to quit)"
            )


def _play(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args.rules, args.set)
        seats = parse_players(args.players, rules)
    except (CommandError, RulesError) as exc:
        return _fail("play", str(exc))
    n = len(seats)
    if args.first_player is not None and not 0 <= args.first_player < n:
        return _fail("play", f"--first-player must be a seat 0..{n - 1}")
    if _gif_problem(args):
        return _fail("play", _gif_problem(args))
    for flag, value, suffixes in (("--record", args.record, ()), ("--save-gif", args.save_gif, (".gif",))):
        if value is not None:  # an empty name too: it names no file
            try:
                check_output_file(value, flag, suffixes)
            except OutputPathError as exc:
                return _fail("play", str(exc))
    if args.hints and any(seat.bot is None for seat in seats):
        _prepare_hints(rules, n)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    rec = Recorder(rules, n, args.first_player, seed, [s.label for s in seats])
    labels = list(rec.players)  # a name of its own for each seat: random, random#2
    dice_rng = np.random.default_rng(seed)
    bot_rngs = [np.random.default_rng([seed, 1 + i]) for i in range(n)]
    out = sys.stdout
    view = make_renderer(out, rules, labels, args.plain)
    view.line(f"{rules.name}: {n} players, seed {seed}")
    kept: list[str] = []
    turn = None
    status = 0
    broken: BotPlayError | None = None
    try:
        while not is_over(rec.state):
            state = rec.state
            if _turn_key(state) != turn and state.phase not in (Phase.ORDER_ROLL, Phase.SPLIT):
                turn = _turn_key(state)
                kept = []
                if state.phase != Phase.ORDER_CHOICE:
                    view.turn_header(state)
            if is_chance(state):
                after = rec.sample(dice_rng)
                view.event(state, after, _describe_step(state, after, rec.events[-1]))
                continue
            seat = seats[state.player]
            if seat.bot is not None:
                move = checked_act(seat.bot, rules, state, bot_rngs[state.player])
            else:
                move = _read_human(view, rules, state, seat, kept, sys.stdin, args.hints)
            try:
                after = rec.move(move)
            except IllegalMove as exc:
                if seat.bot is not None:
                    view.line(f"bot {seat.label} chose an illegal move {move}: {exc}")
                    status = 1
                    break
                view.line(f"not allowed ({exc.rule}): {exc}")
                continue
            if move.kind == "keep":
                kept.append(",".join(map(str, move.taps)))
            view.event(state, after, f"[{move}] {after.event}")
    except _Quit as why:
        view.line(f"game stopped: {why}")
        status = 0 if str(why) == "quit" else 1
    except BotPlayError as exc:
        broken = exc
        view.line("game stopped: a bot failed")
        status = 2
    except KeyboardInterrupt:
        acknowledge()  # the record is saved below before the command ends
        view.line("")
        view.line("game stopped: interrupted")
        status = EXIT_STATUS
    view.result(rec.state)
    if args.record is not None:
        try:
            path = save(rec.record(), args.record)
        except OSError as exc:
            return _fail("play", f"cannot write record {args.record!r}: {exc.strerror or exc}")
        view.line(f"record saved to {path}")
    if status == EXIT_STATUS:  # Ctrl-C: the record is kept, the GIF (slow to draw) is not made
        print("interrupted", file=sys.stderr)
        return status
    if broken is not None:  # the record is kept; the one line names the bot and the position
        show_traceback(broken, args.debug)
        return _fail("play", str(broken))
    if args.save_gif is not None:
        failed = _write_gif("play", rec.record(), args.save_gif, args.gif_fps or DEFAULT_GIF_FPS)
        if failed:
            return failed
        view.line(f"animation saved to {args.save_gif}")
    return status


def _write_gif(command: str, record: GameRecord, path: str, fps: float) -> int:
    """Draw every position of ``record`` and save them as an animated GIF (0, or the exit
    status of a failure)."""

    try:
        save_animation(record_frames(record), path, fps)
    except ModuleNotFoundError as exc:
        return _fail(command, str(exc))
    except ValueError as exc:
        return _fail(command, f"--save-gif: {exc}")
    except OSError as exc:
        return _fail(command, f"cannot write {path!r}: {exc.strerror or exc}")
    return 0


def _prepare_hints(rules: Rules, n_players: int) -> None:
    """Load (or solve, with progress on stderr) the table the hints will read, before the game."""
    from greed_env.solver import SolverError, TableError, load_table
    from greed_env.solver.model import check_supported

    objective = default_objective(rules, new_game(rules, n_players, first_player=0))
    try:
        check_supported(rules, objective)
        load_table(rules, objective, progress=sys.stderr)
    except (SolverError, TableError):
        pass  # the hints say why they are unavailable, move by move


def _replay(args: argparse.Namespace) -> int:
    if _gif_problem(args):
        return _fail("replay", _gif_problem(args))
    if args.save_gif is not None:
        try:
            check_output_file(args.save_gif, "--save-gif", (".gif",))
        except OutputPathError as exc:
            return _fail("replay", str(exc))
    try:
        record = load(args.file)
        states = replay(record)
    except RecordError as exc:
        return _fail("replay", str(exc))
    labels = _labels(record)
    rules = record.rules
    view = make_renderer(sys.stdout, rules, labels, args.plain)
    seed = "" if record.seed is None else f", seed {record.seed}"
    view.line(f"{rules.name}: {record.num_players} players{seed}, {len(record.events)} events")
    turn = None
    for i, event in enumerate(record.events):
        before, after = states[i], states[i + 1]
        if _turn_key(before) != turn and before.phase not in (
            Phase.ORDER_ROLL,
            Phase.SPLIT,
            Phase.ORDER_CHOICE,
        ):
            turn = _turn_key(before)
            view.turn_header(before)
        what = _describe_step(before, after, event)
        if "move" in event:
            what = f"[{event['move']}] {what}"
        view.event(before, after, what)
        turn_ended = _turn_key(after) != _turn_key(before) and before.phase != Phase.ORDER_ROLL
        if turn_ended and not is_over(after):
            view.line(view.scores_text(after))
    view.result(states[-1])
    if args.save_gif is not None:
        failed = _write_gif("replay", record, args.save_gif, args.gif_fps or DEFAULT_GIF_FPS)
        if failed:
            return failed
        view.line(f"animation saved to {args.save_gif}")
    return 0


def _labels(record: GameRecord) -> list[str]:
    labels = list(record.players)
    return labels + [f"player{i}" for i in range(len(labels), record.num_players)]


def _fail(command: str, message: str) -> int:
    print(f"greed {command}: {message}", file=sys.stderr)
    return 2


def register(subparsers: Any) -> None:
    """Add the ``play`` and ``replay`` sub-commands."""
    p = subparsers.add_parser(
        "play",
        help="play a game at the terminal (humans and bots)",
        description="Play one game. SPEC lists the seats in order, e.g. human,threshold:500 or "
        "random,random,threshold. Humans type keeps in tap order (1 5 5, 155, keep:1,5,5), "
        "b/bank, r/roll, other move names, ? for the legal moves, q to quit.",
    )
    add_rules_options(p)
    p.add_argument("--players", required=True, metavar="SPEC", help="comma list of seats")
    p.add_argument(
        "--seed", type=seed_int, default=None, metavar="N", help="dice seed (default: random)"
    )
    p.add_argument("--record", default=None, metavar="FILE", help="save the game record (JSON)")
    p.add_argument(
        "--first-player",
        type=int,
        default=None,
        metavar="SEAT",
        help="seat that starts (default: the rules decide, e.g. a who-starts roll)",
    )
    p.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    add_debug_flag(p)
    p.add_argument(
        "--hints",
        action="store_true",
        help="before each human decision, show the optimal bot's value of every legal move",
    )
    _add_gif_options(p)
    p.set_defaults(func=_play)

    r = subparsers.add_parser(
        "replay",
        help="print a recorded game turn by turn",
        description="Replay a game record written by `greed play --record`, checking that every "
        "event is legal and that it ends where the record says.",
    )
    r.add_argument("file", metavar="FILE", help="game record (JSON)")
    r.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    _add_gif_options(r)
    r.set_defaults(func=_replay)


def _add_gif_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--save-gif",
        default=None,
        metavar="FILE",
        help="also save the game as an animated GIF (FILE.gif), one picture per roll and move (Pillow)",
    )
    p.add_argument(
        "--gif-fps",
        type=_gif_fps,
        default=None,
        metavar="N",
        help=f"pictures per second of the --save-gif GIF, {GIF_FPS_RANGE[0]:g} to {GIF_FPS_RANGE[1]:g} "
        f"(default: {DEFAULT_GIF_FPS:g})",
    )


DEFAULT_GIF_FPS = 2.0


def _gif_fps(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    low, high = GIF_FPS_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(
            f"must be a number from {low:g} to {high:g} (a GIF holds each picture 0.02 s to 655 s), got {text!r}"
        )
    return value


def _gif_problem(args: argparse.Namespace) -> str:
    """Why the GIF options cannot be used as given (``""`` when they can)."""
    if args.gif_fps is not None and args.save_gif is None:
        return "--gif-fps sets the pictures per second of --save-gif: give --save-gif FILE.gif too"
    return ""
