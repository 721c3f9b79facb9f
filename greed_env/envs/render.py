"""Pictures of the table: the ``rgb_array`` render of every environment and ``greed play``'s GIF.

A picture is drawn from the same inputs as the text render
(:func:`~greed_env.envs.conventions.render_text`): the position, the observing seat, the latest
events, and the keeps of the turn in progress, which a :class:`TurnLog` collects as moves are
played (a :class:`~greed_env.rules.State` holds the dice in hand and the working sets, not the
faces kept earlier in the turn). It shows the dice of the roll, the kept dice in tap order with
their reading, the working sets under tap-order rules, the turn total and every seat's score.

Drawing uses Pillow, imported inside :func:`table_picture` only, so ``import greed_env`` and an
environment made with ``render_mode="rgb_array"`` (as stable-baselines3's ``make_vec_env``
does) never need it; the first drawn frame does. Pillow is a small, wheel-only dependency that
draws text and shapes into numpy-compatible arrays without a display, which is all a frame
needs (pygame would need a video driver, matplotlib costs ~100 ms a figure).

>>> from greed_env.rules import preset, new_game, apply_roll, apply, Move
>>> r = preset("ten_thousand")
>>> s = apply_roll(r, new_game(r, 2, first_player=0), (1, 1, 1, 2, 3, 5))
>>> log = TurnLog()
>>> after = apply(r, s, Move("keep", (1, 1, 1)))
>>> log.note(r, s, Move("keep", (1, 1, 1)), after)
>>> [(k.taps, k.points, k.reading) for k in log.keeps_of(after)]
[((1, 1, 1), 1000, '3 1s 1000')]
>>> frame = table_picture(r, after, seat=0, keeps=log.keeps_of(after))
>>> frame.shape == picture_size(r, 2)[::-1] + (3,), frame.dtype
(True, dtype('uint8'))
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from greed_env.files import atomic_write_with
from greed_env.rules import Carry, IllegalKeep, Move, Phase, Rules, State, parse_move, read_keep
from greed_env.rules.record import GameRecord, replay

__all__ = [
    "GIF_FPS_RANGE",
    "KeptDice",
    "TurnLog",
    "picture_size",
    "record_frames",
    "save_animation",
    "table_picture",
]

MAX_KEEP_ROWS = 3
"""Keeps of the turn drawn (the latest ones; earlier ones are counted)."""

_W = 760
_MARGIN = 16
_SEATS_PER_ROW = 4
_SEAT_H = 58
_DIE = 54
_SMALL_DIE = 30
_FELT = (22, 92, 58)
_FELT_DARK = (14, 64, 40)
_INK = (240, 240, 232)
_DIM = (170, 200, 180)
_GOLD = (250, 204, 72)
_RED = (226, 96, 86)
_DIE_FACE = (250, 250, 244)
_DIE_EDGE = (40, 40, 40)
_PIP = (25, 25, 25)
_PIPS = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
    6: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.5), (0.75, 0.5), (0.25, 0.75), (0.75, 0.75)],
}


class KeptDice(NamedTuple):
    """One keep of a turn: the dice in the order tapped, its points, and how they read."""

    player: int
    taps: tuple[int, ...]
    points: int
    reading: str
    carry: Carry


def _turn_key(state: State) -> tuple[int, ...]:
    return (state.rounds, state.player, len(state.rolloff_scores), state.rolloff_round)


class TurnLog:
    """The keeps of the turn in progress, collected move by move (for the renders)."""

    def __init__(self) -> None:
        self._key: tuple[int, ...] | None = None
        self._keeps: list[KeptDice] = []

    def clear(self) -> None:
        self._key, self._keeps = None, []

    def note(self, rules: Rules, before: State, move: Move, after: State) -> None:
        """Record ``move`` played in ``before`` (anything but a keep only moves the turn on)."""
        key = _turn_key(before)
        if key != self._key:
            self._key, self._keeps = key, []
        if move.kind != "keep" or before.phase != Phase.KEEP:
            return
        fresh = before.fresh and len(before.roll) == rules.num_dice
        try:
            res = read_keep(rules, tuple(move.taps), before.carry, fresh)
        except IllegalKeep:
            return
        reading = " + ".join(f"{p.name} {p.points}" for p in res.parts) or "no points"
        self._keeps.append(KeptDice(before.player, tuple(move.taps), res.score, reading, res.carry))

    def keeps_of(self, state: State) -> list[KeptDice]:
        """The keeps of ``state``'s turn (at the end of the game: of the last turn played)."""
        if self._key is not None and (
            _turn_key(state) == self._key or state.phase == Phase.OVER
        ):
            return list(self._keeps)
        return []


def picture_size(rules: Rules, num_seats: int) -> tuple[int, int]:
    """``(width, height)`` in pixels of every picture of a game of ``num_seats`` seats."""
    seat_rows = -(-max(1, num_seats) // _SEATS_PER_ROW)
    height = (
        _MARGIN  # top
        + 30  # title
        + seat_rows * (_SEAT_H + 8)
        + 26  # roll caption
        + _DIE
        + 14
        + 24  # kept caption
        + MAX_KEEP_ROWS * (_SMALL_DIE + 8)
        + 4 * 22  # working sets, turn total, offer, last events
        + _MARGIN
    )
    width = max(_W, 2 * _MARGIN + rules.num_dice * (_DIE + 10))
    return width, height


@lru_cache(maxsize=1)
def _fonts() -> tuple[Any, Any, Any]:
    from PIL import ImageFont

    try:
        return (
            ImageFont.load_default(size=20),
            ImageFont.load_default(size=15),
            ImageFont.load_default(size=13),
        )
    except TypeError:  # Pillow < 10.1: one bitmap size only
        font = ImageFont.load_default()
        return font, font, font


def _draw_die(draw: Any, x: int, y: int, size: int, face: int | None, fill: Any) -> None:
    draw.rounded_rectangle(
        (x, y, x + size, y + size), radius=size // 6, fill=fill, outline=_DIE_EDGE, width=2
    )
    if face is None:
        return
    r = max(2, size // 11)
    for px, py in _PIPS[face]:
        cx, cy = x + px * size, y + py * size
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=_PIP)


def _fit(draw: Any, text: str, font: Any, width: int) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "...", font=font) > width:
        text = text[:-1]
    return text + "..."


def table_picture(
    rules: Rules,
    state: State | None,
    seat: int | None = None,
    events: Sequence[str] | None = None,
    keeps: Sequence[KeptDice] = (),
    num_seats: int | None = None,
    names: Sequence[str] = (),
) -> np.ndarray:
    """The table as an ``(height, width, 3)`` uint8 RGB array (see :func:`picture_size`).

    ``seat`` marks the observing player ("you"), ``events`` are the latest happenings,
    ``keeps`` the keeps of the turn in progress (:meth:`TurnLog.keeps_of`). ``num_seats`` fixes
    the layout before a game has started (default: the state's seats); ``names`` label the
    seats after their number.

    Raises:
        ModuleNotFoundError: Pillow is not installed (``pip install "greed-env[render]"``).
    """
    try:
        from PIL import Image, ImageDraw
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "drawing the table needs Pillow: pip install 'greed-env[render]'"
        ) from exc
    n = state.num_players if state is not None else (num_seats or 1)
    width, height = picture_size(rules, num_seats or n)
    img = Image.new("RGB", (width, height), _FELT)
    pen = _Pen(ImageDraw.Draw(img), *_fonts(), width)
    if state is None:
        pen.draw.text((_MARGIN, _MARGIN), f"[{rules.name}] not started: call reset()", font=pen.big, fill=_INK)
        return np.asarray(img, dtype=np.uint8)
    y = _draw_title(pen, rules, state, seat, _MARGIN)
    y = _draw_seats(pen, state, seat, names, y)
    y = _draw_dice(pen, state, y)
    y = _draw_keeps(pen, keeps, y)
    _draw_turn(pen, rules, state, events, y)
    return np.asarray(img, dtype=np.uint8)


class _Pen(NamedTuple):
    """What every section of a picture draws with: Pillow's ``ImageDraw``, the three fonts and
    the picture's width (text starts at ``_MARGIN``)."""

    draw: Any
    big: Any
    mid: Any
    small: Any
    width: int

    @property
    def inner(self) -> int:
        return self.width - 2 * _MARGIN


def _draw_title(pen: _Pen, rules: Rules, state: State, seat: int | None, y: int) -> int:
    """The rules, who is to play (or the winners) and the game's stage; returns the next y."""
    phase = Phase(state.phase)
    if phase == Phase.OVER:
        head = "game over: winner(s) " + ", ".join(f"P{w}" for w in state.winners)
    else:
        you = " (you)" if seat == state.player else ""
        head = f"P{state.player}{you} to play: {phase.name.lower()}"
    extra = []
    if state.endgame:
        extra.append("final round")
    if state.in_rolloff:
        extra.append(f"roll-off round {state.rolloff_round}")
    title = f"{rules.name}   {head}" + (f"   ({', '.join(extra)})" if extra else "")
    pen.draw.text((_MARGIN, y), _fit(pen.draw, title, pen.big, pen.inner), font=pen.big, fill=_INK)
    return y + 30


def _draw_seats(pen: _Pen, state: State, seat: int | None, names: Sequence[str], y: int) -> int:
    """One box per seat (``_SEATS_PER_ROW`` a row): name, score, whether it has come in; the
    player to act and the winners outlined in gold. Returns the next y."""
    draw, small, big = pen.draw, pen.small, pen.big
    phase = Phase(state.phase)
    n = state.num_players
    box_w = (pen.inner - (_SEATS_PER_ROW - 1) * 8) // _SEATS_PER_ROW
    for p in range(n):
        bx = _MARGIN + (p % _SEATS_PER_ROW) * (box_w + 8)
        by = y + (p // _SEATS_PER_ROW) * (_SEAT_H + 8)
        acting = p == state.player and phase != Phase.OVER
        won = phase == Phase.OVER and p in state.winners
        edge = _GOLD if acting or won else _DIM
        draw.rounded_rectangle(
            (bx, by, bx + box_w, by + _SEAT_H), radius=8, fill=_FELT_DARK, outline=edge,
            width=3 if acting or won else 1,
        )
        label = f" {names[p]}" if p < len(names) and names[p] else ""
        name = f"P{p}{label}" + (" (you)" if p == seat else "") + ("  winner" if won else "")
        name = _fit(draw, name, small, box_w - (64 if not state.entered[p] else 16))
        draw.text((bx + 8, by + 5), name, font=small, fill=edge)
        draw.text((bx + 8, by + 22), f"{state.scores[p]:,}", font=big, fill=_INK)
        if not state.entered[p]:
            draw.text((bx + box_w - 52, by + 5), "not in", font=small, fill=_RED)
    return y + (-(-n // _SEATS_PER_ROW)) * (_SEAT_H + 8)


def _draw_dice(pen: _Pen, state: State, y: int) -> int:
    """The dice of the roll (faces up), or the dice in hand (blank); returns the next y."""
    phase = Phase(state.phase)
    if phase == Phase.KEEP:
        caption, faces = f"roll ({len(state.roll)} dice)", list(state.roll)
    elif phase in (Phase.START, Phase.CONTINUE, Phase.ROLL):
        caption = f"{state.dice} {'die' if state.dice == 1 else 'dice'} in hand"
        faces = [None] * state.dice
    else:
        caption, faces = "", []
    pen.draw.text((_MARGIN, y + 4), caption, font=pen.mid, fill=_DIM)
    y += 26
    for i, face in enumerate(faces):
        fill = _DIE_FACE if face is not None else (120, 150, 130)
        _draw_die(pen.draw, _MARGIN + i * (_DIE + 10), y, _DIE, face, fill)
    return y + _DIE + 14


def _draw_keeps(pen: _Pen, keeps: Sequence[KeptDice], y: int) -> int:
    """The turn's keeps in tap order with their points and reading (the last
    :data:`MAX_KEEP_ROWS`; the rows always take their room); returns the next y."""
    draw, mid = pen.draw, pen.mid
    total = sum(k.points for k in keeps)
    draw.text(
        (_MARGIN, y + 2),
        "kept this turn (tap order)" + (f": {total:,}" if keeps else ": nothing yet"),
        font=mid,
        fill=_DIM,
    )
    y += 24
    hidden = max(0, len(keeps) - MAX_KEEP_ROWS)
    for k in list(keeps)[-MAX_KEEP_ROWS:]:
        for i, face in enumerate(k.taps):
            _draw_die(draw, _MARGIN + i * (_SMALL_DIE + 4), y, _SMALL_DIE, face, _DIE_FACE)
        tx = _MARGIN + max(6, len(k.taps)) * (_SMALL_DIE + 4) + 10
        label = f"{k.points:,}: {k.reading}"
        draw.text((tx, y + 7), _fit(draw, label, mid, pen.width - _MARGIN - tx), font=mid, fill=_INK)
        y += _SMALL_DIE + 8
    y += (MAX_KEEP_ROWS - min(len(keeps), MAX_KEEP_ROWS)) * (_SMALL_DIE + 8)
    if hidden:
        draw.text((pen.width - _MARGIN - 140, y - 20), f"(+{hidden} earlier)", font=pen.small, fill=_DIM)
    return y


def _draw_turn(pen: _Pen, rules: Rules, state: State, events: Sequence[str] | None, y: int) -> None:
    """The working sets (tap-order rules), the turn total and the bar, a piggyback offer and
    the latest events."""
    draw, mid = pen.draw, pen.mid
    if rules.carry_over:
        working = _fit(draw, f"working: {state.carry.describe()}", mid, pen.inner)
        draw.text((_MARGIN, y), working, font=mid, fill=_INK)
    y += 22
    line = f"turn total: {state.turn_total:,}"
    if state.bar >= 0:
        line += f"    must beat: {state.bar:,}"
    draw.text((_MARGIN, y), line, font=pen.big, fill=_GOLD)
    y += 22
    if state.piggy is not None:
        offer = f"piggyback offer: {state.piggy[0]:,} with {state.piggy[1]} dice"
        draw.text((_MARGIN, y + 2), offer, font=mid, fill=_INK)
    y += 22
    shown = [e for e in (events or []) if e][-4:]
    if shown:
        text = _fit(draw, "last: " + " / ".join(shown), pen.small, pen.inner)
        draw.text((_MARGIN, y + 4), text, font=pen.small, fill=_DIM)


def record_frames(record: GameRecord) -> list[np.ndarray]:
    """One picture per position of a recorded game (``greed play --record`` / ``--save-gif``):
    the start, then the position after every roll and move, with the event that led to it.

    Raises:
        RecordError: the record does not replay.
    """
    rules = record.rules
    states = replay(record)
    log = TurnLog()
    n, names = record.num_players, list(record.players)
    frames = [table_picture(rules, states[0], None, [states[0].event], (), n, names)]
    for i, event in enumerate(record.events):
        before, after = states[i], states[i + 1]
        if "move" in event:
            log.note(rules, before, parse_move(event["move"]), after)
        keeps = log.keeps_of(after)
        frames.append(table_picture(rules, after, None, [after.event], keeps, n, names))
    return frames


GIF_FPS_RANGE = (0.01, 50.0)
"""Pictures per second a GIF can show: its delays are whole hundredths of a second, at least
two (browsers draw shorter ones slower) and at most 65,535."""


def save_animation(frames: Sequence[np.ndarray], path: str | Path, fps: float = 2.0) -> Path:
    """Write ``frames`` (equal-sized RGB arrays) as an animated GIF looping forever.

    The file is written to a temporary name beside ``path`` and moved into place, so a failed
    write leaves no half-written GIF.

    Raises:
        ValueError: no frames, frames of different sizes, or ``fps`` outside
            ``GIF_FPS_RANGE`` (a GIF holds each picture 0.02 s to 655 s).
        OSError: the file cannot be written.
    """
    if not frames:
        raise ValueError("no frames to save")
    low, high = GIF_FPS_RANGE
    if not low <= fps <= high:
        raise ValueError(f"fps must be a number from {low:g} to {high:g} (a GIF holds each picture 0.02 s to 655 s), got {fps!r}")
    shape = frames[0].shape
    if any(f.shape != shape for f in frames):
        raise ValueError("every frame must have the same size")
    from PIL import Image

    out = Path(path)
    # one palette for the whole animation, from frames spread over it: mapping to a fixed
    # palette is ~30x faster than quantizing every frame on its own
    sample = np.concatenate([frames[i] for i in np.linspace(0, len(frames) - 1, 8).astype(int)])
    palette = Image.fromarray(np.asarray(sample, dtype=np.uint8)).quantize(colors=128)
    images = [
        Image.fromarray(np.asarray(f, dtype=np.uint8)).quantize(
            palette=palette, dither=Image.Dither.NONE
        )
        for f in frames
    ]
    return atomic_write_with(
        out,
        lambda tmp: images[0].save(
            tmp,
            format="GIF",
            save_all=True,
            append_images=images[1:],
            duration=max(20, round(1000 / fps)),
            loop=0,
            optimize=False,
        ),
    )
