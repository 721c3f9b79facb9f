"""The one game loop: play a position on with a chooser per seat and a dice generator.

Every place that plays games without a learner in the loop goes through :func:`play_out`: the
bots' :func:`~greed_env.bots.play.play_game` (tournaments), :func:`~greed_env.rules.record.record_game`
(game records) and the ``Duel-v0`` opponents' turns. A chooser is ``act(rules, state, rng) ->
Move`` (a bot's bound ``act``); ``on_step(before, event, after)`` sees every roll (a tuple of
faces) and every move as it is applied.

>>> import numpy as np
>>> from greed_env.rules import legal_moves, new_game, preset
>>> r = preset("greed")
>>> def first(rules, state, rng):  # the first legal move: banks whenever it may
...     return legal_moves(rules, state)[0]
>>> end = play_out(r, new_game(r, 2, first_player=0), [first, first], np.random.default_rng(0))
>>> end.phase.name
'OVER'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from greed_env.rules.config import Rules
from greed_env.rules.game import (
    IllegalMove,
    Move,
    State,
    apply,
    apply_roll,
    is_chance,
    is_over,
    sample_roll,
)

__all__ = ["Chooser", "play_out"]

Chooser = Callable[[Rules, State, np.random.Generator], Move]
"""``act(rules, state, rng) -> Move`` for the player to act in ``state``."""


def play_out(
    rules: Rules,
    state: State,
    choosers: Sequence[Chooser],
    dice_rng: np.random.Generator,
    chooser_rngs: Sequence[np.random.Generator] | None = None,
    *,
    on_step: Callable[[State, tuple[int, ...] | Move, State], None] | None = None,
    stop: Callable[[State], bool] | None = None,
    names: Sequence[str] = (),
    max_steps: int | None = None,
) -> State:
    """Play ``state`` on until the game is over, ``stop(state)`` holds at a decision, or
    ``max_steps`` rolls and moves were applied; return the position reached.

    Dice come from ``dice_rng``; seat ``p`` chooses with ``choosers[p]`` and its generator
    ``chooser_rngs[p]`` (default: ``dice_rng`` for every seat).

    Raises:
        IllegalMove: a chooser chose an illegal move (the message names the seat, and its name
            from ``names`` when given).
    """
    rngs = chooser_rngs if chooser_rngs is not None else [dice_rng] * len(choosers)
    s = state
    steps = 0
    while not is_over(s) and (max_steps is None or steps < max_steps):
        if is_chance(s):
            roll = sample_roll(rules, s, dice_rng)
            after = apply_roll(rules, s, roll)
            event: tuple[int, ...] | Move = roll
        else:
            if stop is not None and stop(s):
                break
            move = choosers[s.player](rules, s, rngs[s.player])
            try:
                after = apply(rules, s, move)
            except IllegalMove as exc:
                who = f"bot {names[s.player]!r} in seat {s.player}" if names else f"seat {s.player}"
                raise IllegalMove(f"{who} chose {move}: {exc}", rule=exc.rule) from None
            event = move
        if on_step is not None:
            on_step(s, event, after)
        s = after
        steps += 1
    return s
