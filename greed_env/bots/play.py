"""Playing bots: one game to the end (:func:`play_game`, through the one game loop
:func:`greed_env.rules.play.play_out`) and many positions at once (:func:`batch_moves`).

>>> import numpy as np
>>> from greed_env.bots.base import RandomBot, ThresholdBot
>>> from greed_env.rules import preset
>>> rngs = [np.random.default_rng(1), np.random.default_rng(2)]
>>> sum(play_game(preset("greed"), [ThresholdBot(), RandomBot()], np.random.default_rng(0), rngs))
1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from greed_env.abilities import abilities_of
from greed_env.bots.base import Bot, check_rules, checked_act
from greed_env.rules import Move, Rules, State, new_game
from greed_env.rules.play import play_out
from greed_env.spaces.observation import OBS_DIM, encode_observation

__all__ = ["batch_moves", "play_game"]


def play_game(
    rules: Rules,
    bots: Sequence[Bot],
    dice_rng: np.random.Generator,
    bot_rngs: Sequence[np.random.Generator],
    first_player: int | None = 0,
) -> tuple[float, ...]:
    """Play one game to the end (:func:`greed_env.rules.play.play_out`); return each seat's
    share of the win (1, 1/2 when shared, 0).

    Raises:
        BotPlayError: a bot raised or chose no legal move (:func:`~greed_env.bots.base.checked_act`:
            the message names the bot, the position and what it did).
    """
    s = new_game(rules, len(bots), first_player=first_player)
    choosers = [partial(checked_act, b) for b in bots]
    end = play_out(rules, s, choosers, dice_rng, bot_rngs, names=[b.name for b in bots])
    return tuple(end.shares)


def batch_moves(bot: Bot, rules: Rules, states: Sequence[State], rng: np.random.Generator) -> list[Move]:
    """The bot's moves in ``states``, batched where the bot declares a batched policy.

    A bot whose :class:`~greed_env.abilities.Abilities` hold a ``policy`` (a greedy network:
    :class:`~greed_env.bots.onnx_backend.OnnxBot`, :class:`~greed_env.bots.sb3_backend.PPOBot`,
    :class:`~greed_env.bots.numpy_backend.PolicyBot`) is asked for the whole batch at once; any
    other bot one position at a time with ``rng``.

    Raises:
        RulesMismatchError: the bot declares other rules.
        BotPlayError: a bot without a batched policy raised or chose no legal move.
    """
    if not states:
        return []
    check_rules(bot, rules)
    policy = abilities_of(bot).policy
    if policy is None:
        return [checked_act(bot, rules, s, rng) for s in states]
    obs = np.empty((len(states), OBS_DIM), dtype=np.float32)
    masks = np.empty((len(states), policy.catalog.n), dtype=np.int8)
    legal: list[dict[int, Move]] = []
    for i, s in enumerate(states):
        encode_observation(rules, s, out=obs[i])
        mask, moves = policy.catalog.legal(s)
        masks[i] = mask
        legal.append(moves)
    ids = policy.act_ids(obs, masks)
    return [moves[int(a)] for moves, a in zip(legal, np.asarray(ids).reshape(-1), strict=True)]
