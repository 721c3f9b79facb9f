"""The whole game as pure functions over an immutable state.

Decisions and chance alternate explicitly:

* decision nodes: :func:`legal_moves` lists every move once; :func:`apply` plays one (and
  refuses an illegal one with :class:`IllegalMove`, leaving the state untouched);
* chance nodes: :func:`chance_outcomes` lists the distinct rolls with exact probabilities,
  :func:`apply_roll` applies one, :func:`sample_roll` draws one from a generator passed in.

Turn flow: a turn starts with a roll of every die (or, under Farkle's piggyback variation, a
choice to take over the previous player's turn). After each roll the player keeps scoring dice
(phase ``KEEP``), then banks or rolls on (phase ``CONTINUE``). A roll with no legal keep is a
bust. When every die has been kept, hot dice (an and-roll) give a full fresh set.

>>> import numpy as np
>>> from greed_env.rules import preset, new_game, legal_moves, apply, apply_roll
>>> r = preset("ten_thousand")
>>> s = new_game(r, 2, first_player=0)
>>> s = apply_roll(r, s, (1, 1, 1, 2, 3, 5))
>>> [str(m) for m in legal_moves(r, s)][:3]
['keep:5', 'keep:1', 'keep:1,5']
>>> s = apply(r, s, Move("keep", (1, 1, 1, 5)))
>>> s.turn_total, s.dice, [str(m) for m in legal_moves(r, s)]
(1050, 2, ['bank', 'roll'])
"""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache
from itertools import combinations_with_replacement
from math import factorial
from typing import Any, NamedTuple, Protocol

from greed_env.rules.config import Rules
from greed_env.rules.scoring import (
    EMPTY_CARRY,
    Carry,
    IllegalKeep,
    KeepOption,
    KeepResult,
    best_keep_score,
    counts_of,
    has_scoring_keep,
    keep_options,
    read_keep,
)

__all__ = [
    "BANK",
    "BUST",
    "FRESH",
    "PIGGYBACK",
    "REFUSE",
    "REROLL_ALL",
    "ROLL",
    "ROLL_FIRST",
    "ROLL_FOR_NOTHING",
    "ROLL_LAST",
    "SPLIT",
    "IllegalMove",
    "Move",
    "Phase",
    "State",
    "apply",
    "apply_roll",
    "chance_outcomes",
    "current_keep_options",
    "forfeit_turn",
    "is_chance",
    "is_over",
    "legal_moves",
    "new_game",
    "parse_move",
    "returns",
    "roll_wins",
    "sample_roll",
]


class Phase(IntEnum):
    """Where the game stands. ORDER_ROLL and ROLL are chance nodes; OVER is terminal."""

    ORDER_ROLL = 0  # chance: the next contender rolls one die to decide who starts
    START = 1  # decision: take over the previous player's turn (piggyback) or start fresh
    ROLL = 2  # chance: the dice in hand are thrown
    KEEP = 3  # decision: which dice to keep (or reroll all, or bust on purpose)
    CONTINUE = 4  # decision: bank, roll on, or roll for nothing
    SPLIT = 5  # decision: a tied finisher agrees to split the pot or refuses
    ORDER_CHOICE = 6  # decision: the first finisher rolls first or last in the roll-off
    OVER = 7  # terminal


class IllegalMove(ValueError):
    """A move the rules refuse. ``rule`` names the rule; the state is left as it was."""

    def __init__(self, message: str, rule: str = "illegal-move") -> None:
        super().__init__(message)
        self.rule = rule


class Move(NamedTuple):
    """A player's choice. ``kind`` is one of the MOVE_KINDS; keeps carry the tap order."""

    kind: str
    taps: tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.kind == "keep":
            return "keep:" + ",".join(map(str, self.taps))
        return self.kind


MOVE_KINDS = (
    "keep",
    "bank",
    "roll",
    "reroll_all",
    "bust",
    "roll_for_nothing",
    "piggyback",
    "fresh",
    "split",
    "refuse",
    "roll_first",
    "roll_last",
)
BANK = Move("bank")
ROLL = Move("roll")
REROLL_ALL = Move("reroll_all")
BUST = Move("bust")
ROLL_FOR_NOTHING = Move("roll_for_nothing")
PIGGYBACK = Move("piggyback")
FRESH = Move("fresh")
SPLIT = Move("split")
REFUSE = Move("refuse")
ROLL_FIRST = Move("roll_first")
ROLL_LAST = Move("roll_last")


def parse_move(text: str) -> Move:
    """Inverse of ``str(move)``: 'bank', 'keep:1,5,5', also 'keep 1 5 5' or '155'."""
    t = text.strip().lower()
    if t in MOVE_KINDS and t != "keep":
        return Move(t)
    body = t[4:] if t.startswith("keep") else t
    body = body.lstrip(": ")
    digits = [c for c in body if c.isdigit()]
    seps = set(body) - set("0123456789, ")
    if not digits or seps:
        raise IllegalMove(
            f"cannot read move {text!r}: expected a keep such as 'keep:1,5' or one of "
            + ", ".join(k for k in MOVE_KINDS if k != "keep"),
            rule="syntax",
        )
    return Move("keep", tuple(int(c) for c in digits))


class State(NamedTuple):
    """Immutable, hashable game position (the rules are passed beside it)."""

    phase: int
    player: int
    scores: tuple[int, ...]
    entered: tuple[bool, ...]
    streaks: tuple[int, ...]
    turns: tuple[int, ...]
    turn_total: int = 0
    dice: int = 0
    roll: tuple[int, ...] = ()
    carry: Carry = EMPTY_CARRY
    fresh: bool = True
    bar: int = -1
    entry_met: bool = False
    for_nothing: bool = False
    rounds: int = 0
    piggy: tuple[int, int] | None = None
    taken_over: int = 0
    """Points of the turn taken over by a piggyback (0 in every other turn): they do not count
    toward coming in under ``piggyback_counts_for_entry=False``."""
    contenders: tuple[int, ...] = ()
    order_rolls: tuple[int, ...] = ()
    final_left: tuple[int, ...] = ()
    endgame: bool = False
    finishers: tuple[int, ...] = ()
    votes: int = 0
    rolloff: tuple[int, ...] = ()
    rolloff_scores: tuple[int, ...] = ()
    rolloff_round: int = 0
    winners: tuple[int, ...] = ()
    shares: tuple[float, ...] = ()
    event: str = ""
    rules_name: str = ""
    """Name of the rules that made the state (:func:`new_game`); :func:`apply`,
    :func:`apply_roll` and :func:`legal_moves` refuse rules of another name. Rules derived
    with ``replace()`` keep the name, so a one-player or yardstick variant of the same rule
    book still plays the state; ``""`` (a state built by hand) is not checked."""

    @property
    def num_players(self) -> int:
        return len(self.scores)

    @property
    def in_rolloff(self) -> bool:
        return bool(self.rolloff) and self.phase != Phase.OVER


_FIELD_INDEX = {name: i for i, name in enumerate(State._fields)}


def _fast_replace(self: State, **changes: Any) -> State:
    """Copy with some fields changed; index-based, as it is the hot path of every transition."""
    values = list(self)
    for key, value in changes.items():
        values[_FIELD_INDEX[key]] = value
    return tuple.__new__(State, values)


State._replace = _fast_replace  # type: ignore[method-assign,assignment]

_new = tuple.__new__
# Field positions: the transitions below copy a state into a list, set fields by position and
# build the next state once (a turn's end, the next turn's start and the event in one copy).
_I_PHASE = _FIELD_INDEX["phase"]
_I_PLAYER = _FIELD_INDEX["player"]
_I_SCORES = _FIELD_INDEX["scores"]
_I_ENTERED = _FIELD_INDEX["entered"]
_I_STREAKS = _FIELD_INDEX["streaks"]
_I_TURNS = _FIELD_INDEX["turns"]
_I_TURN_TOTAL = _FIELD_INDEX["turn_total"]
_I_ROLL = _FIELD_INDEX["roll"]
_I_CARRY = _FIELD_INDEX["carry"]
_I_FOR_NOTHING = _FIELD_INDEX["for_nothing"]
_I_ROUNDS = _FIELD_INDEX["rounds"]
_I_PIGGY = _FIELD_INDEX["piggy"]
_I_TAKEN_OVER = _FIELD_INDEX["taken_over"]
_I_FINAL_LEFT = _FIELD_INDEX["final_left"]
_I_ENDGAME = _FIELD_INDEX["endgame"]
_I_FINISHERS = _FIELD_INDEX["finishers"]
_I_ROLLOFF = _FIELD_INDEX["rolloff"]
_I_EVENT = _FIELD_INDEX["event"]

_ORDER_ROLL = Phase.ORDER_ROLL
_START = Phase.START
_ROLL = Phase.ROLL
_KEEP = Phase.KEEP
_CONTINUE = Phase.CONTINUE
_OVER = Phase.OVER
_CHANCE_PHASES = (_ORDER_ROLL, _ROLL)

_IN_TURN = slice(_I_TURN_TOTAL, _I_FOR_NOTHING + 1)
"""The fields a keep or a new turn sets together, adjacent in :class:`State`: turn_total,
dice, roll, carry, fresh, bar, entry_met, for_nothing."""
assert State._fields[_IN_TURN] == (
    "turn_total", "dice", "roll", "carry", "fresh", "bar", "entry_met", "for_nothing"
)

# ------------------------------------------------------------------------------------------
# set-up


def new_game(rules: Rules, num_players: int, first_player: int | None = None) -> State:
    """A new game. With ``first_player`` None and rules.first_player == 'roll', the game opens
    with the who-starts roll (chance nodes); otherwise the given seat (or seat 0) starts."""
    if not isinstance(num_players, int) or not rules.min_players <= num_players <= rules.max_players:
        raise IllegalMove(
            f"{rules.name} is played by {rules.min_players}..{rules.max_players} players, "
            f"got {num_players!r}",
            rule="players",
        )
    n = num_players
    base = State(
        phase=Phase.ORDER_ROLL,
        player=0,
        scores=(0,) * n,
        entered=(rules.entry_threshold == 0,) * n,
        streaks=(0,) * n,
        turns=(0,) * n,
        rules_name=rules.name,
    )
    if first_player is not None:
        if not 0 <= first_player < n:
            raise IllegalMove(f"first_player must be a seat 0..{n - 1}", rule="players")
        return _begin_turn(rules, base, first_player)
    if rules.first_player == "seat0" or n == 1:
        return _begin_turn(rules, base, 0)
    return base._replace(contenders=tuple(range(n)), player=0, event="who starts: roll one die each")


# ------------------------------------------------------------------------------------------
# queries


def is_chance(state: State) -> bool:
    return state.phase in _CHANCE_PHASES


def is_over(state: State) -> bool:
    return state.phase == _OVER


def current_keep_options(rules: Rules, state: State) -> tuple[KeepOption, ...]:
    """Legal keeps of the roll showing (empty outside the KEEP phase)."""
    if state.phase != Phase.KEEP:
        return ()
    return _keep_table(rules, state.roll, state.carry, state.fresh, state.bar)[0]


_KeepEffect = tuple[int, Carry, int, str]
"""What keeping a listed option does: its points, the carry-over after it, the number of dice
kept and the state's event (``keeps 1,5 for 150``)."""
_KeepTable = tuple[
    tuple[KeepOption, ...], tuple[Move, ...], dict[tuple[int, ...], _KeepEffect], tuple[Move, ...]
]


@lru_cache(maxsize=1 << 17)
def _keep_table(
    rules: Rules, roll: tuple[int, ...], carry: Carry, fresh: bool, bar: int
) -> _KeepTable:
    """Legal keep options of a roll, their moves, canonical taps -> what the keep does, and
    the moves with a voluntary bust after them (derived from :func:`keep_options`, so the
    fast path and the reference reading cannot disagree)."""
    opts = keep_options(rules, roll, carry, fresh)
    if bar >= 0:
        opts = tuple(o for o in opts if o.score > bar)
    moves = tuple(Move("keep", o.taps) for o in opts)
    effects = {
        o.taps: (o.score, o.carry, len(o.taps), f"keeps {','.join(map(str, o.taps))} for {o.score}")
        for o in opts
    }
    return opts, moves, effects, (*moves, BUST)


_shown: tuple[State | None, Rules | None, _KeepTable | None] = (None, None, None)
"""The KEEP position :func:`apply_roll` made last, its rules and its keep table:
:func:`legal_moves` and :func:`apply` on that position read the table from here, without
hashing the roll and the carry-over again (one tuple, replaced whole)."""


def _needs_entry(rules: Rules, s: State, p: int) -> bool:
    if s.entered[p] or rules.entry_threshold <= 0:
        return False
    return rules.entry_until_made or s.turns[p] <= 1


def _entry_points(rules: Rules, s: State) -> int:
    """The turn's points that count toward coming in (scope 'turn'): all of them, or without
    the points taken over by a piggyback under ``piggyback_counts_for_entry=False``."""
    return s.turn_total if rules.piggyback_counts_for_entry else s.turn_total - s.taken_over


def can_bank(rules: Rules, s: State) -> bool:
    """Whether banking is legal in this CONTINUE position."""
    total = s.turn_total
    if s.phase != _CONTINUE or s.rolloff or total <= 0 or s.bar >= 0 or total < rules.min_bank:
        return False  # (in a roll-off: the phase is CONTINUE)
    p = s.player
    if rules.entry_threshold > 0 and not s.entered[p] and _needs_entry(rules, s, p):
        if rules.entry_scope == "turn" and _entry_points(rules, s) < rules.entry_threshold:
            return False
        if rules.entry_scope == "roll" and not s.entry_met:
            return False
    return not (rules.exact_target and s.scores[p] + total >= rules.target)


def can_reroll_all(rules: Rules, s: State) -> bool:
    """Whether rerolling all the dice is legal in this KEEP position: under
    ``reroll_all_any_time`` after any roll outside a roll-off, otherwise only on the turn's
    first roll (no points yet, a full set rolled, no reroll made)."""
    if not rules.reroll_all or s.phase != Phase.KEEP or s.in_rolloff:
        return False
    if rules.reroll_all_any_time:
        return True
    return s.turn_total == 0 and s.bar < 0 and len(s.roll) == rules.num_dice and s.piggy is None


def legal_moves(rules: Rules, state: State) -> list[Move]:
    """Every legal move of a decision node, each once (empty at chance and terminal nodes).

    Keeps come first, in the order of :func:`current_keep_options`, with canonical tap orders.

    Raises:
        TypeError: ``rules`` is not a :class:`Rules` or ``state`` not a :class:`State`.
        IllegalMove: ``state`` was made by other rules.
    """
    try:
        name = state.rules_name
        if name is not rules.name and name and name != rules.name:
            raise _other_rules(rules, state)
        ph = state.phase
    except AttributeError:
        raise _not_rules_and_state(rules, state) from None
    if ph == _KEEP:
        shown = _shown
        if shown[0] is state and shown[1] is rules:
            table: _KeepTable = shown[2]  # type: ignore[assignment]
        else:
            table = _keep_table(rules, state.roll, state.carry, state.fresh, state.bar)
        if rules.reroll_all and can_reroll_all(rules, state):
            moves = [*table[1], REROLL_ALL]
            if rules.voluntary_bust and not state.rolloff:
                moves.append(BUST)
            return moves
        if rules.voluntary_bust and not state.rolloff:
            return list(table[3])
        return list(table[1])
    if ph == _CONTINUE:
        if state.rolloff:
            return [ROLL]
        if rules.exact_target and state.scores[state.player] + state.turn_total == rules.target:
            return [ROLL_FOR_NOTHING]
        if can_bank(rules, state):
            return [BANK, ROLL] if state.dice > 0 else [BANK]
        return [ROLL] if state.dice > 0 else []
    if ph == Phase.START:
        return [PIGGYBACK, FRESH]
    if ph == Phase.SPLIT:
        return [SPLIT, REFUSE]
    if ph == Phase.ORDER_CHOICE:
        return [ROLL_FIRST, ROLL_LAST]
    return []


@lru_cache(maxsize=16)
def _roll_distribution(k: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    out = []
    total = 6**k
    for roll in combinations_with_replacement(range(1, 7), k):
        c = counts_of(roll)
        ways = factorial(k)
        for x in c:
            ways //= factorial(x)
        out.append((roll, ways / total))
    return tuple(out)


_CANONICAL_ROLLS: dict[tuple[int, ...], tuple[int, ...]] = {
    roll: roll for k in range(1, 9) for roll in combinations_with_replacement(range(1, 7), k)
}
"""Every sorted roll of 1..8 dice, mapped to itself: one lookup validates a sampled roll."""


def _roll_text(roll: tuple[int, ...]) -> tuple[str, str, str]:
    """A roll as shown (``1,1,5``), the event of rolling it and of busting on it."""
    shown = ",".join(map(str, roll))
    return shown, f"rolls {shown}", f"rolls {shown}: bust"


_ROLL_INFO = {id(roll): (roll, *_roll_text(roll)) for roll in _CANONICAL_ROLLS}
"""Each canonical roll object by its identity, with its texts: one lookup of an integer key
tells a sampled roll valid and gives its events, without hashing its faces."""


@lru_cache(maxsize=16)
def _valid_rolls(k: int) -> frozenset[tuple[int, ...]]:
    return frozenset(r for r, _ in _roll_distribution(k))


def chance_outcomes(rules: Rules, state: State) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Distinct outcomes of the chance node with exact probabilities (sum to 1).

    A roll is the sorted tuple of faces; the who-starts roll is one die, ``(face,)``.
    """
    if state.phase == Phase.ORDER_ROLL:
        return _roll_distribution(1)
    if state.phase == Phase.ROLL:
        return _roll_distribution(state.dice)
    return ()


class _Generator(Protocol):
    def integers(self, low: int, high: int, size: int) -> Any: ...


def sample_roll(rules: Rules, state: State, rng: Any) -> tuple[int, ...]:
    """Draw the chance node's outcome from ``rng`` (numpy Generator or random.Random).

    Raises:
        TypeError: ``rng`` is neither (None, a seed: make one with ``numpy.random.default_rng(seed)``).
        IllegalMove: ``state`` is not a chance node.
    """
    try:
        ph = state.phase
        k = state.dice if ph == _ROLL else 1
    except AttributeError:
        raise _not_rules_and_state(rules, state) from None
    if ph != _ROLL and ph != _ORDER_ROLL:
        raise IllegalMove("not a chance node: no dice are waiting to be rolled", rule="not-chance")
    # one uniform draw in [0, 6**k) read as k base-6 digits: k independent fair dice
    integers = getattr(rng, "integers", None)
    if integers is not None:
        code = int(integers(6**k))
    elif hasattr(rng, "randrange"):
        code = rng.randrange(6**k)
    else:
        raise TypeError(
            f"rng must be a numpy Generator or a random.Random, got {rng!r}; "
            "make one from a seed with numpy.random.default_rng(seed)"
        )
    if k <= _DECODE_MAX:
        return _DECODE[k][code]
    if k <= _DECODE_MAX + 2:
        high, low = divmod(code, _LOW_CODES)  # high < 6 ** (k - 4), as code < 6 ** k
        return _MERGED[k][_LOW_RANK[low] + _HIGH_RANK[k][high]]
    return _decode(code, k)


def _decode(code: int, k: int) -> tuple[int, ...]:
    faces = []
    for _ in range(k):
        code, digit = divmod(code, 6)
        faces.append(digit + 1)
    return tuple(sorted(faces))


_DECODE_MAX = 6
_DECODE = [
    tuple(_CANONICAL_ROLLS.get(r, r) for r in (_decode(c, k) for c in range(6**k)))
    for k in range(_DECODE_MAX + 1)
]
"""Every code of up to six dice decoded, as the canonical roll objects (one identity test in
:func:`apply_roll` then accepts them)."""


def _merge_table() -> tuple[list[int], list[list[int]], list[list[tuple[int, ...]]]]:
    """Seven and eight dice (6**8 codes are too many to list): the low four base-6 digits and
    the high ones decode apart, and a table of (low multiset, high multiset) gives the sorted
    roll: ``_MERGED[k][_LOW_RANK[low] + _HIGH_RANK[k][high]]``."""
    sets = {k: list(combinations_with_replacement(range(1, 7), k)) for k in (3, 4)}
    width = len(sets[4])
    low_rank = [sets[4].index(r) * width for r in _DECODE[4]]
    high_rank: list[list[int]] = [[] for _ in range(9)]
    merged: list[list[tuple[int, ...]]] = [[] for _ in range(9)]
    for k in (7, 8):
        high_rank[k] = [sets[k - 4].index(r) for r in _DECODE[k - 4]]
        merged[k] = [
            _CANONICAL_ROLLS[tuple(sorted(low + high))] if j < len(sets[k - 4]) else ()
            for low in sets[4]
            for j, high in enumerate(sets[k - 4] + [()] * (width - len(sets[k - 4])))
        ]
    return low_rank, high_rank, merged


_LOW_CODES = 6**4
_LOW_RANK, _HIGH_RANK, _MERGED = _merge_table()


# ------------------------------------------------------------------------------------------
# transitions


def apply(rules: Rules, state: State, move: Move) -> State:
    """Play one decision. Raises :class:`IllegalMove` (naming the rule) and leaves ``state``
    untouched if the move is not legal here."""
    name = state.rules_name
    if name is not rules.name and name and name != rules.name:
        raise _other_rules(rules, state)
    ph = state.phase
    if ph == _KEEP and type(move) is Move and move.kind == "keep" and type(move.taps) is tuple:
        return _apply_keep(rules, state, move.taps)
    if ph in _CHANCE_PHASES:
        raise IllegalMove("the dice must be rolled first (chance node)", rule="chance-node")
    if ph == _OVER:
        raise IllegalMove("the game is over", rule="game-over")
    if not isinstance(move, Move):
        move = parse_move(str(move))
    elif not isinstance(move.taps, tuple):
        move = Move(move.kind, _as_faces(move.taps))
    kind = move.kind
    if ph == _KEEP:
        if kind == "keep":
            return _apply_keep(rules, state, move.taps)
        if kind == "reroll_all" and can_reroll_all(rules, state):
            bar = state.turn_total + best_keep_score(rules, state.roll, state.carry, state.fresh)
            return state._replace(
                phase=Phase.ROLL,
                turn_total=0,
                dice=rules.num_dice,
                roll=(),
                carry=EMPTY_CARRY,
                fresh=True,
                bar=bar if rules.reroll_all_must_beat else -1,
                entry_met=False,
                taken_over=0,
                event=f"rerolls all {rules.num_dice} dice, giving up {bar}",
            )
        if kind == "bust" and rules.voluntary_bust and not state.in_rolloff:
            return _end_turn(rules, state, "busts on purpose", bust=True)
        if kind == "reroll_all" and rules.reroll_all and not state.in_rolloff:
            raise IllegalMove(
                "all the dice can be rerolled only on the turn's first roll "
                "(reroll_all_any_time=False)",
                rule="reroll-first-roll-only",
            )
        raise IllegalMove(_not_now(kind, "choose which dice to keep"), rule="phase")
    if ph == _CONTINUE:
        if _continue_legal(rules, state, kind):
            if kind == "bank":
                return _bank(rules, state)
            v = list(state)
            v[_I_PHASE] = _ROLL
            v[_I_ROLL] = ()
            if kind == "roll":
                v[_I_EVENT] = "rolls on"
            else:
                v[_I_FOR_NOTHING] = True
                v[_I_EVENT] = "rolls for nothing"
            return _new(State, v)
        raise IllegalMove(_continue_refusal(rules, state, kind), rule=_continue_rule(rules, state, kind))
    if ph == Phase.START:
        if kind == "piggyback" and state.piggy is not None:
            total, dice = state.piggy
            return state._replace(
                phase=Phase.ROLL,
                turn_total=total,
                dice=dice,
                fresh=dice == rules.num_dice,
                piggy=None,
                taken_over=total,
                event=f"piggybacks on {total} with {dice} dice",
            )
        if kind == "fresh":
            return state._replace(phase=Phase.ROLL, piggy=None, event="starts fresh")
        raise IllegalMove(_not_now(kind, "piggyback or start fresh"), rule="phase")
    if ph == Phase.SPLIT:
        if kind == "split":
            votes = state.votes + 1
            if votes == len(state.finishers):
                return _finish(state, state.finishers, "the finishers split the pot")
            return state._replace(votes=votes, player=state.finishers[votes], event="agrees to split")
        if kind == "refuse":
            return state._replace(
                phase=Phase.ORDER_CHOICE,
                player=state.finishers[0],
                event="refuses to split: roll-off",
            )
        raise IllegalMove(_not_now(kind, "split the pot or refuse"), rule="phase")
    if ph == Phase.ORDER_CHOICE:
        if kind in ("roll_first", "roll_last"):
            first, others = state.finishers[0], state.finishers[1:]
            order = (first, *others) if kind == "roll_first" else (*others, first)
            s = state._replace(rolloff=order, rolloff_scores=(), rolloff_round=1)
            return _begin_turn(rules, s, order[0], event=f"roll-off order {order}")
        raise IllegalMove(_not_now(kind, "roll first or last"), rule="phase")
    raise IllegalMove(f"no moves in phase {Phase(ph).name}", rule="phase")


def _other_rules(rules: Rules, state: State) -> IllegalMove:
    return IllegalMove(
        f"the state belongs to a game under the {state.rules_name!r} rules, not {rules.name!r}",
        rule="other-rules",
    )


def _continue_legal(rules: Rules, s: State, kind: str) -> bool:
    if s.rolloff:  # in a roll-off (the phase is CONTINUE)
        return kind == "roll"
    if rules.exact_target and s.scores[s.player] + s.turn_total == rules.target:
        return kind == "roll_for_nothing"
    if kind == "roll":
        return s.dice > 0
    return kind == "bank" and can_bank(rules, s)


def _not_now(kind: str, expected: str) -> str:
    return f"move {kind!r} is not legal now: the player must {expected}"


def _continue_rule(rules: Rules, s: State, kind: str) -> str:
    if kind == "bank":
        return "cannot-bank"
    if kind == "roll":
        return "no-dice" if s.dice == 0 else "must-roll-for-nothing"
    return "phase"


def _continue_refusal(rules: Rules, s: State, kind: str) -> str:
    p = s.player
    if kind == "bank":
        if s.in_rolloff:
            return "no banking in a roll-off: roll until you bust"
        if rules.exact_target and s.scores[p] + s.turn_total >= rules.target:
            return f"at exactly {rules.target} you cannot bank: you must roll for nothing"
        if s.bar >= 0:
            return "after rerolling all the dice, a keep must first beat the points given up"
        if s.turn_total < rules.min_bank:
            return f"a turn must reach {rules.min_bank} points to bank (turn total {s.turn_total})"
        if _needs_entry(rules, s, p):
            own = "" if _entry_points(rules, s) == s.turn_total else (
                f"; {s.taken_over} of them taken over, which do not count"
            )
            return (
                f"not on the board yet: {rules.entry_threshold} points in one "
                f"{rules.entry_scope} are needed to come in (turn total {s.turn_total}{own})"
            )
        return "nothing to bank"
    if kind == "roll":
        if rules.exact_target and s.scores[p] + s.turn_total == rules.target:
            return f"at exactly {rules.target} the only move is to roll for nothing"
        return "no dice left to roll (hot dice are off): bank"
    if kind == "roll_for_nothing":
        return f"rolling for nothing is only for a total of exactly {rules.target}"
    return _not_now(kind, "bank or roll on")


def _apply_keep(rules: Rules, s: State, taps: tuple[int, ...]) -> State:
    shown = _shown
    if shown[0] is s and shown[1] is rules:
        table: _KeepTable = shown[2]  # type: ignore[assignment]
    else:
        table = _keep_table(rules, s.roll, s.carry, s.fresh, s.bar)
    known = table[2].get(taps)
    if known is not None:
        score, carry, kept, event = known
    else:
        res = _read_unlisted_keep(rules, s, taps)
        score, carry, kept = res.score, res.carry, len(taps)
        event = f"keeps {','.join(map(str, taps))} for {score}"
    if s.bar >= 0 and score <= s.bar:
        raise IllegalMove(
            f"after rerolling all the dice the keep must score more than {s.bar} (this keep: "
            f"{score})",
            rule="must-beat",
        )
    p = s.player
    total = s.turn_total + score
    dice = s.dice - kept
    new_fresh = False
    if dice == 0 and rules.hot_dice:
        dice = rules.num_dice
        new_fresh = True
        if not rules.trippn:
            carry = EMPTY_CARRY
    v = list(s)
    v[_I_PHASE] = _CONTINUE
    entry_met = s.entry_met or score >= rules.entry_threshold
    v[_IN_TURN] = (total, dice, (), carry, new_fresh, -1, entry_met, s.for_nothing)
    v[_I_EVENT] = event
    if s.rolloff:  # in a roll-off: the position after the keep is one too
        s2 = _new(State, v)
        if rules.trippn and all(carry.sets[f - 1] for f in (2, 3, 4, 6)):
            shown = ",".join(map(str, taps))
            return _finish(
                s2._replace(event=f"keeps {shown}: sets of 2s, 3s, 4s and 6s working, locked in"),
                (p,),
                f"player {p} is locked in and wins the roll-off",
            )
        return s2
    if rules.exact_target and s.scores[p] + total > rules.target:
        return _end_turn_values(rules, v, _goes_over(rules.target), bust=True)
    if dice == 0:
        s2 = _new(State, v)
        if not can_bank(rules, s2):
            return _end_turn(rules, s2, "no dice left and cannot bank: turn scores 0", bust=False)
        return s2
    return _new(State, v)


@lru_cache(maxsize=64)
def _goes_over(target: int) -> str:
    return f"goes over {target}: turn lost"


def _read_unlisted_keep(rules: Rules, s: State, taps: tuple[int, ...]) -> KeepResult:
    """Reference reading of a keep given in a non-canonical tap order (or an illegal one)."""
    try:
        need = counts_of(taps) if taps else (0,) * 6
    except IllegalKeep as exc:
        raise IllegalMove(str(exc), rule=exc.rule) from None
    have = counts_of(s.roll)
    if any(n > h for n, h in zip(need, have, strict=True)):
        raise IllegalMove(
            f"kept dice {','.join(map(str, taps))} are not all showing (roll "
            f"{','.join(map(str, s.roll))})",
            rule="not-showing",
        )
    fresh = s.fresh and len(s.roll) == rules.num_dice
    try:
        return read_keep(rules, taps, s.carry, fresh)
    except IllegalKeep as exc:
        raise IllegalMove(str(exc), rule=exc.rule) from None


def apply_roll(rules: Rules, state: State, roll: tuple[int, ...] | list[int]) -> State:
    """Apply a chance outcome (any order of faces; it is sorted)."""
    name = state.rules_name
    if name is not rules.name and name and name != rules.name:
        raise _other_rules(rules, state)
    info = _ROLL_INFO.get(id(roll))
    if info is None:
        canonical = _CANONICAL_ROLLS.get(roll) if type(roll) is tuple else None
        # 1.0 and True equal 1 (and hash alike): an equal tuple of other types is checked face by face
        if canonical is not roll and (canonical is None or not all(type(f) is int for f in roll)):
            roll = tuple(sorted(_as_faces(roll)))
            canonical = _CANONICAL_ROLLS.get(roll, roll)
        roll = canonical
        info = _ROLL_INFO.get(id(roll))  # None for faces outside 1..6 or more than eight dice
    ph = state.phase
    if ph == _ORDER_ROLL:
        if len(roll) != 1 or roll[0] not in range(1, 7):
            raise IllegalMove("the who-starts roll is one die 1..6", rule="roll")
        rolls = (*state.order_rolls, roll[0])
        contenders = state.contenders
        if len(rolls) < len(contenders):
            return state._replace(order_rolls=rolls, player=contenders[len(rolls)], event=f"rolls {roll[0]}")
        top = max(rolls)
        tied = tuple(c for c, r in zip(contenders, rolls, strict=True) if r == top)
        if len(tied) == 1:
            s = state._replace(contenders=(), order_rolls=())
            return _begin_turn(rules, s, tied[0], event=f"rolls {roll[0]}; player {tied[0]} starts")
        return state._replace(
            contenders=tied, order_rolls=(), player=tied[0], event=f"rolls {roll[0]}; tie at {top}: roll again"
        )
    if ph != _ROLL:
        raise IllegalMove("not a chance node: no dice are waiting to be rolled", rule="not-chance")
    if info is None or len(roll) != state.dice:
        if roll not in _valid_rolls(state.dice):
            raise IllegalMove(f"expected {state.dice} dice showing 1..6, got {roll}", rule="roll")
        info = (roll, *_roll_text(roll))
    _, shown, rolls_event, bust_event = info
    if rules.six_kind_wins and roll_wins(rules, roll):
        s = state._replace(phase=Phase.KEEP, roll=roll, for_nothing=False, event=f"rolls {shown}")
        return _finish(s, (state.player,), f"player {state.player} rolled six of a kind: instant win")
    if state.for_nothing:
        s = state._replace(roll=roll, for_nothing=False)
        if has_scoring_keep(rules, roll, state.carry):
            return _end_turn(rules, s, f"rolls {shown} for nothing, but it scores: turn lost", bust=True)
        return _go_out(rules, s, f"rolls {shown} for nothing: goes out")
    v = list(state)
    v[_I_PHASE] = _KEEP
    v[_I_ROLL] = roll
    v[_I_EVENT] = rolls_event
    table = _keep_table(rules, roll, state.carry, state.fresh, state.bar)
    if table[0]:
        global _shown
        s = _new(State, v)
        _shown = (s, rules, table)
        return s
    if state.bar >= 0 and keep_options(rules, roll, state.carry, state.fresh):
        return _end_turn_values(
            rules, v, f"rolls {shown}: does not beat {state.bar}, turn scores 0", bust=True
        )
    return _end_turn_values(rules, v, bust_event, bust=True)


def roll_wins(rules: Rules, roll: tuple[int, ...]) -> bool:
    """Whether the sorted ``roll`` wins the game at once: six (or more) dice of one face under
    ``six_kind_wins`` (001 variant: 'Rolling six of the same number in one roll is an instant
    win'). :func:`apply_roll` ends the game on it, before any keep; the solver counts it as a
    terminal outcome of the roll distribution."""
    return rules.six_kind_wins and any(roll[i] == roll[i + 5] for i in range(len(roll) - 5))


def _begin_turn(rules: Rules, s: State, p: int, event: str = "") -> State:
    return _begin_turn_values(rules, list(s), p, event)


def _begin_turn_values(rules: Rules, v: list[Any], p: int, event: str) -> State:
    """:func:`_begin_turn` on the field values of a state (a list, changed in place)."""
    rolloff = v[_I_ROLLOFF]
    turns = v[_I_TURNS]
    offer = v[_I_PIGGY] if (rules.piggyback and not rolloff) else None
    v[_I_PHASE] = _START if offer is not None else _ROLL
    v[_I_PLAYER] = p
    if not rolloff:
        counts = list(turns)
        counts[p] += 1
        v[_I_TURNS] = tuple(counts)
    v[_IN_TURN] = _new_turn(rules.num_dice)
    v[_I_PIGGY] = offer
    v[_I_TAKEN_OVER] = 0
    v[_I_EVENT] = event or f"player {p} to play"
    return _new(State, v)


@lru_cache(maxsize=16)
def _new_turn(num_dice: int) -> tuple[Any, ...]:
    """The in-turn fields (:data:`_IN_TURN`) at the start of a turn with ``num_dice`` dice."""
    return (0, num_dice, (), EMPTY_CARRY, True, -1, False, False)


def _bank(rules: Rules, s: State) -> State:
    p = s.player
    total = s.turn_total
    scores = _set(s.scores, p, s.scores[p] + total)
    v = list(s)
    v[_I_SCORES] = scores
    v[_I_ENTERED] = _set(s.entered, p, True)
    v[_I_STREAKS] = _set(s.streaks, p, 0)
    v[_I_EVENT] = f"banks {total}"
    piggy = (total, s.dice) if rules.piggyback and s.dice > 0 else None
    if not rules.exact_target and rules.target and scores[p] >= rules.target and not s.endgame:
        if not rules.final_round or len(scores) == 1:
            return _finish(_new(State, v), (p,), f"player {p} reaches {rules.target}")
        v[_I_ENDGAME] = True
        v[_I_FINAL_LEFT] = _others_after(p, len(scores))
        v[_I_FINISHERS] = (p,) if rules.tie_rule == "first_finisher" else ()  # who a tie does not beat
    return _next_turn_values(rules, v, piggy)


def _go_out(rules: Rules, s: State, event: str) -> State:
    p = s.player
    s2 = s._replace(
        scores=_set(s.scores, p, rules.target),
        finishers=(*s.finishers, p),
        streaks=_set(s.streaks, p, 0),
        event=event,
    )
    if not s.endgame:
        if not rules.final_round or s.num_players == 1:
            return _finish(s2, (p,), f"player {p} goes out")
        s2 = s2._replace(endgame=True, final_left=_others_after(p, s.num_players))
    return _next_turn(rules, s2, piggy=None)


def forfeit_turn(rules: Rules, state: State, reason: str = "forfeits the turn") -> State:
    """End the acting player's turn as a bust (environments use it for an illegal action).

    In a roll-off the points held so far become the roll-off score, as at any bust. Raises
    :class:`IllegalMove` outside the turn phases (START, ROLL, KEEP, CONTINUE).
    """
    if state.phase not in (Phase.START, Phase.ROLL, Phase.KEEP, Phase.CONTINUE):
        raise IllegalMove(
            f"no turn to forfeit in phase {Phase(state.phase).name}", rule="phase"
        )
    return _end_turn(rules, state._replace(for_nothing=False), reason, bust=True)


def _end_turn(rules: Rules, s: State, event: str, bust: bool) -> State:
    """The turn ends without banking (bust, failed reroll, overshoot, stranded)."""
    return _end_turn_values(rules, list(s), event, bust)


def _end_turn_values(rules: Rules, v: list[Any], event: str, bust: bool) -> State:
    """:func:`_end_turn` on the field values of a state (a list, changed in place)."""
    if v[_I_ROLLOFF] and v[_I_PHASE] != _OVER:  # in a roll-off
        v[_I_EVENT] = event
        return _rolloff_turn_done(rules, _new(State, v))
    if bust:
        p = v[_I_PLAYER]
        streaks = v[_I_STREAKS]
        streak = streaks[p] + 1
        if rules.bust_penalty_after and streak >= rules.bust_penalty_after:
            scores = v[_I_SCORES]
            v[_I_SCORES] = _set(scores, p, scores[p] - rules.bust_penalty)
            event += f"; {streak} busts in a row cost {rules.bust_penalty}"
            streak = 0
        counts = list(streaks)
        counts[p] = streak
        v[_I_STREAKS] = tuple(counts)
    v[_I_EVENT] = event
    return _next_turn_values(rules, v, None)


def _next_turn(rules: Rules, s: State, piggy: tuple[int, int] | None) -> State:
    return _next_turn_values(rules, list(s), piggy)


def _next_turn_values(rules: Rules, v: list[Any], piggy: tuple[int, int] | None) -> State:
    """:func:`_next_turn` on the field values of a state (a list, changed in place)."""
    n = len(v[_I_SCORES])
    p = v[_I_PLAYER]
    entered = v[_I_ENTERED]
    if not rules.entry_until_made and not entered[p]:
        v[_I_ENTERED] = _set(entered, p, True)
    rounds = v[_I_ROUNDS] + 1
    v[_I_ROUNDS] = rounds
    v[_I_PIGGY] = piggy
    endgame = v[_I_ENDGAME]
    if rules.rounds and rounds >= rules.rounds * n and not (endgame and rules.final_round_past_rounds):
        v[_I_FINAL_LEFT] = ()
        return _resolve_rounds(rules, _turn_cleared(v))
    if endgame:
        left = tuple(x for x in v[_I_FINAL_LEFT] if x != p)
        v[_I_FINAL_LEFT] = left
        if not left:
            return _resolve_end(rules, _turn_cleared(v))
        return _begin_turn_values(rules, v, left[0], v[_I_EVENT])
    if rounds >= rules.horizon_rounds * n:
        return _finish(_turn_cleared(v), tuple(range(n)), "horizon reached: the pot is shared")
    return _begin_turn_values(rules, v, (p + 1) % n, v[_I_EVENT])


def _turn_cleared(v: list[Any]) -> State:
    """The state of field values ``v`` with the ended turn's total, roll and carry-over
    cleared, for a game that ends without another turn (:func:`_begin_turn_values` sets them
    for the next turn)."""
    v[_I_TURN_TOTAL] = 0
    v[_I_ROLL] = ()
    v[_I_CARRY] = EMPTY_CARRY
    return _new(State, v)


def _resolve_end(rules: Rules, s: State) -> State:
    if rules.exact_target:
        fin = s.finishers
        if len(fin) == 1:
            return _finish(s, fin, f"player {fin[0]} went out")
        if rules.tie_rule == "split_vote":
            return s._replace(phase=Phase.SPLIT, player=fin[0], votes=0, event="tie: split or roll off?")
        if rules.tie_rule == "first_finisher":
            return _finish(s, fin[:1], f"tie: player {fin[0]} went out first and wins")
        return _finish(s, fin, "tie: the pot is shared")
    top = max(s.scores)
    winners = tuple(i for i, x in enumerate(s.scores) if x == top)
    first = s.finishers[0] if s.finishers else -1
    if len(winners) > 1 and rules.tie_rule == "first_finisher" and first in winners:
        return _finish(s, (first,), f"final round over: a tie does not beat player {first}")
    return _finish(s, winners, "final round over")


def _resolve_rounds(rules: Rules, s: State) -> State:
    """The last of ``rules.rounds`` rounds is over: the highest banked score wins.

    If the target was reached (a final round cut short by the rounds), the game ends as that
    final round would have. Otherwise tied leaders share the pot, or vote on a split under
    ``tie_rule='split_vote'``.
    """
    if s.endgame:
        return _resolve_end(rules, s)
    top = max(s.scores)
    tied = tuple(i for i, x in enumerate(s.scores) if x == top)
    event = f"{rules.rounds} rounds played"
    if len(tied) > 1 and rules.tie_rule == "split_vote":
        event = f"{s.event}; {event}" if s.event else event
        return s._replace(
            phase=Phase.SPLIT, player=tied[0], finishers=tied, votes=0, event=f"{event}: tie, split or roll off?"
        )
    return _finish(s, tied, event if len(tied) == 1 else f"{event}: tie, the pot is shared")


def _rolloff_turn_done(rules: Rules, s: State) -> State:
    scores = (*s.rolloff_scores, s.turn_total)
    order = s.rolloff
    if len(scores) < len(order):
        s2 = s._replace(rolloff_scores=scores)
        return _begin_turn(rules, s2, order[len(scores)], event=s.event)
    top = max(scores)
    tied = tuple(p for p, x in zip(order, scores, strict=True) if x == top)
    if len(tied) == 1:
        return _finish(s._replace(rolloff_scores=scores), tied, f"player {tied[0]} wins the roll-off")
    if s.rolloff_round >= rules.rolloff_horizon:
        return _finish(s._replace(rolloff_scores=scores), tied, "roll-off horizon: shared")
    s2 = s._replace(rolloff=tied, rolloff_scores=(), rolloff_round=s.rolloff_round + 1)
    return _begin_turn(rules, s2, tied[0], event=s.event + "; roll-off tied: again")


def _finish(s: State, winners: tuple[int, ...], event: str) -> State:
    n = s.num_players
    share = 1.0 / len(winners)
    shares = tuple(share if i in winners else 0.0 for i in range(n))
    return s._replace(
        phase=Phase.OVER, winners=tuple(sorted(winners)), shares=shares, event=f"{s.event}; {event}" if s.event else event
    )


def returns(state: State) -> tuple[float, ...]:
    """Net pot share of each seat in buy-ins (zero-sum): ``n * share - 1``.

    Two players: +1 win, -1 loss, 0 shared. Zero for every seat before the end.
    """
    n = state.num_players
    if state.phase != Phase.OVER:
        return (0.0,) * n
    return tuple(n * x - 1.0 for x in state.shares)


def _not_rules_and_state(rules: Any, state: Any) -> TypeError:
    """The error for arguments that are not a :class:`Rules` and a :class:`State`."""
    if not isinstance(rules, Rules):
        return TypeError(f"rules must be a Rules (e.g. preset('ten_thousand')), got {rules!r}")
    return TypeError(f"state must be a State (e.g. new_game(rules, 2)), got {state!r}")


def _as_faces(values: Any) -> tuple[int, ...]:
    """Faces given as any iterable of integers (numpy integers too); anything else (a float, a
    bool, a string) is refused."""
    import operator

    try:
        faces = tuple(values)
        if any(isinstance(f, bool) for f in faces):
            raise TypeError("a bool is no face")
        return tuple(operator.index(f) for f in faces)
    except TypeError:
        raise IllegalMove(f"dice must be integers 1..6, got {values!r}", rule="face") from None


def _set(t: tuple[Any, ...], i: int, v: Any) -> tuple[Any, ...]:
    values = list(t)
    values[i] = v
    return tuple(values)


def _others_after(p: int, n: int) -> tuple[int, ...]:
    return tuple((p + k) % n for k in range(1, n))
