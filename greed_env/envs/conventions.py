"""The conventions every adapter follows alike (Gymnasium, PettingZoo, the vector envs; no
Gymnasium import here):

* :func:`env_rules` turns the ``rules=`` / ``rules_overrides=`` arguments into a validated
  :class:`~greed_env.rules.Rules`; :func:`check_reward` and :func:`check_illegal_mode` check the
  reward and ``illegal_action=`` arguments;
* :func:`forfeit` ends the acting player's turn as a bust, the documented outcome of an
  illegal action under ``illegal_action='penalty'``;
* :func:`advance_chance` resolves chance nodes with a generator;
* :func:`render_text` draws a position as text for the ``ansi`` and ``human`` render modes;
* :func:`terminal_mask` is the mask the Gymnasium envs return once an episode is over.

>>> env_rules("farkle", {"entry_threshold": 500}).entry_threshold
500
>>> env_rules("yahtzee")
Traceback (most recent call last):
...
greed_env.rules.config.RulesError: unknown rules preset 'yahtzee'; known presets: farkle, farkle5, greed, progressive, ten_thousand, trippn, zilch
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from greed_env.rules import (
    IllegalMove,
    Phase,
    Rules,
    RulesError,
    State,
    apply,
    apply_roll,
    forfeit_turn,
    is_chance,
    legal_moves,
    resolve_rules,
    sample_roll,
)

if TYPE_CHECKING:
    from greed_env.envs.render import KeptDice

__all__ = [
    "ILLEGAL_ACTION_MODES",
    "advance_chance",
    "check_illegal_mode",
    "env_rules",
    "forfeit",
    "render_text",
    "terminal_mask",
]

ILLEGAL_ACTION_MODES = ("penalty", "raise")
_TURN_PHASES = (Phase.START, Phase.KEEP, Phase.CONTINUE)


def terminal_mask(n: int) -> np.ndarray:
    """The int8 mask returned with the last observation of an episode: all ``n`` actions
    marked legal (Pgx's convention), so that no sampler meets an empty mask. None of them is
    played: a finished episode must be reset, and next-step autoreset ignores the action."""
    return np.ones(n, dtype=np.int8)


def env_rules(rules: Rules | str | None, rules_overrides: Mapping[str, Any] | None = None) -> Rules:
    """A preset name or :class:`Rules` (None: ``ten_thousand``) with optional overrides.

    Raises:
        RulesError: unknown preset, unknown field, bad value, or overrides not a mapping.
    """
    if rules_overrides is not None and not isinstance(rules_overrides, Mapping):
        raise RulesError(
            f"rules_overrides must be a dict of rules fields, got {type(rules_overrides).__name__}"
        )
    return resolve_rules(rules, **dict(rules_overrides or {}))


def check_reward(name: str, value: Any) -> float:
    """A finite float, or ValueError naming the argument (``reward_scale=nan`` is refused)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return x


def check_illegal_mode(mode: str) -> str:
    """Validate an ``illegal_action`` argument."""
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(
            f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTION_MODES))}, got {mode!r}"
        )
    return mode


def forfeit(rules: Rules, state: State) -> State:
    """The acting player's turn ends as a bust (the turn's unbanked points are lost).

    This is the outcome of an illegal action under ``illegal_action='penalty'``: the bust
    counts toward bust streaks and penalties like any bust, and in a roll-off it ends the
    player's roll-off turn as a bust does. In the split vote and the roll-off order choice,
    where there is no turn to forfeit, the first legal move (``split`` / ``roll_first``) is
    played instead.
    """
    if state.phase in _TURN_PHASES:
        return forfeit_turn(rules, state, "forfeits the turn (illegal action)")
    moves = legal_moves(rules, state)
    if not moves:
        raise IllegalMove("no decision to forfeit: chance node or game over", rule="phase")
    return apply(rules, state, moves[0])


def advance_chance(
    rules: Rules,
    state: State,
    rng: Any,
    events: list[str] | None = None,
    stop: Callable[[State], bool] | None = None,
) -> State:
    """Roll the dice (``sample_roll`` with ``rng``) until a decision, the end, or ``stop``.

    ``events`` collects the ``state.event`` text of every roll; ``stop(state)`` true ends the
    rolling early (for example when a turn is over).
    """
    while is_chance(state) and not (stop is not None and stop(state)):
        state = apply_roll(rules, state, sample_roll(rules, state, rng))
        if events is not None and state.event:
            events.append(state.event)
    return state


def render_text(
    rules: Rules,
    state: State,
    seat: int | None = None,
    events: list[str] | None = None,
    keeps: Sequence[KeptDice] = (),
) -> str:
    """A few lines describing ``state``: who acts, scores, dice, the keeps of the turn, turn
    total, recent events.

    ``seat`` marks the observing player ("you"); ``events`` are shown as the latest happenings;
    ``keeps`` are the turn's keeps (:class:`~greed_env.envs.render.TurnLog`), in tap order with
    their reading.
    """
    n = state.num_players
    phase = Phase(state.phase)
    lines = []
    who = f"player {state.player}" + (" (you)" if seat == state.player else "")
    if phase == Phase.OVER:
        winners = ", ".join(map(str, state.winners))
        head = f"game over: winner(s) {winners}"
    else:
        head = f"{who} - {phase.name.lower()}"
    extra = []
    if state.endgame:
        extra.append("final round")
    if state.in_rolloff:
        extra.append(f"roll-off round {state.rolloff_round}")
    lines.append(f"[{rules.name}] {head}" + (f" ({', '.join(extra)})" if extra else ""))
    seats = []
    for p in range(n):
        mark = "*" if p == state.player and phase != Phase.OVER else " "
        you = " (you)" if p == seat else ""
        entered = "" if state.entered[p] else " (not in)"
        seats.append(f"{mark}P{p}{you} {state.scores[p]:,}{entered}")
    lines.append("  scores: " + " | ".join(seats))
    if phase == Phase.KEEP:
        lines.append("  roll:   " + " ".join(f"[{f}]" for f in state.roll))
    elif phase in (Phase.CONTINUE, Phase.ROLL, Phase.START):
        lines.append(f"  dice in hand: {state.dice}")
    for k in keeps:
        taps = ",".join(map(str, k.taps))
        lines.append(f"  kept:   {taps} for {k.points:,} ({k.reading})")
    lines.append(
        f"  turn total: {state.turn_total:,}"
        + (f"  must beat: {state.bar:,}" if state.bar >= 0 else "")
    )
    if rules.carry_over:
        lines.append(f"  working: {state.carry.describe()}")
    if state.piggy is not None:
        lines.append(f"  piggyback offer: {state.piggy[0]:,} with {state.piggy[1]} dice")
    shown = [e for e in (events or []) if e][-6:]
    if shown:
        lines.append("  last: " + " / ".join(shown))
    return "\n".join(lines)
