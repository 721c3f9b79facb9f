"""The numba duel path: a policy against the optimal duel bot, thousands of games at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from greed_env.abilities import abilities_of
from greed_env.bots.base import Bot
from greed_env.rules import Rules

VECTOR_DUEL_BATCH = 2048
"""Most games stepped together per seat by :func:`vector_duel_values`."""
VECTOR_DUEL_MIN_PER_ROW = 16
"""Fewest games a batch row plays in turn: a batch steps until its slowest row is done, so
with one or two games per row most of the work would be rows waiting."""


def vector_duel_act(bot: Bot, rules: Rules, seed: int = 0) -> Callable[[Any], np.ndarray] | None:
    """How :func:`vector_duel_values` makes ``bot`` act on a batch, from what the bot declares
    (:class:`~greed_env.abilities.Abilities`), or None when it cannot: a batched policy (a
    greedy network: a model file's ``PolicyBot``, an exported ``OnnxBot``, a ``PPOBot``) is
    asked for the batch's observations; a bot the numba kernels play themselves (the optimal
    duel bot of these rules, the leader-duel bot, which is that bot with two seats, a threshold
    or the random bot) is played by them, tested move for move against the Python bots; the
    random bot draws from a generator seeded by ``seed``."""
    from greed_env.vector.engine import opponent_params
    from greed_env.vector.tables import VectorUnsupportedError

    declared = abilities_of(bot)
    policy, native = declared.policy, declared.native
    if policy is not None:
        return lambda batch: policy.act_ids(batch.obs, batch.mask)
    if native is None:
        return None
    if native.is_optimal_duel(rules):
        return lambda batch: np.maximum(batch.optimal_actions(), 0)
    if native.kind == "threshold":
        try:
            _, bank_at, style, min_dice = opponent_params(bot, rules)
        except VectorUnsupportedError:
            return None
        return lambda batch: np.maximum(batch.threshold_actions(bank_at, style, min_dice), 0)
    if native.kind == "random":
        rng = np.random.default_rng(np.random.SeedSequence([seed, _RANDOM_STREAM]))
        return lambda batch: np.maximum(batch.random_actions(rng), 0)
    return None


_RANDOM_STREAM = 0x52414E44
"""The spawn word of a vector ``RandomBot``'s generator (apart from the dice streams)."""


def vector_duel_supported(bot: Bot, opponent: Any, rules: Rules) -> bool:
    """Whether a two-seat duel of ``bot`` against ``opponent`` can run in the vector engine
    (the opponent: the optimal duel bot of these rules, as it declares; see
    :func:`vector_duel_values`)."""
    from greed_env.vector.optimal import check_optimal_supported
    from greed_env.vector.tables import VectorUnsupportedError, check_vector_supported

    native = abilities_of(opponent).native
    if native is None or not native.is_optimal_duel(rules) or vector_duel_act(bot, rules) is None:
        return False
    try:
        check_vector_supported(rules)
        check_optimal_supported(rules)
    except VectorUnsupportedError:
        return False
    return True


def vector_duel_values(
    bot: Bot,
    opponent: Bot,
    rules: Rules,
    games: int,
    seed: int,
    batch: int = VECTOR_DUEL_BATCH,
) -> np.ndarray:
    """Outcomes (1 win, 0.5 shared, 0 loss) of ``games`` two-seat games of ``bot`` against
    the optimal duel bot, played by the numba engine (:mod:`greed_env.vector.optimal`).

    Game ``i`` puts ``bot`` in seat ``i % 2``. Each seat's games are rows of one
    :class:`~greed_env.vector.EpisodeBatch` (up to ``batch`` rows, at least
    :data:`VECTOR_DUEL_MIN_PER_ROW` games per row) seeded from ``SeedSequence([seed, seat])``;
    a row plays its games one after another and the first ``ceil(count / rows)`` of each row
    are kept (every row's first game, then every row's second, ...), so the result depends on
    ``seed``, ``games`` and ``batch`` only.
    """
    from greed_env.vector.engine import EpisodeBatch

    act = vector_duel_act(bot, rules, seed)
    if act is None:
        raise ValueError(f"{bot!r} declares no way to act on vector batches (a policy or a native play)")
    out = np.zeros(games)
    for seat in (0, 1):
        count = len(range(seat, games, 2))
        if count == 0:
            continue
        rows = max(1, min(batch, count // VECTOR_DUEL_MIN_PER_ROW))
        per_row = -(-count // rows)
        eb = EpisodeBatch(rules, rows, mode="duel", num_players=2, seat=seat, opponent=opponent)
        eb.reset(seed=int(np.random.SeedSequence([seed, seat]).generate_state(1)[0]))
        results = np.full((rows, per_row), np.nan)
        done_n = np.zeros(rows, dtype=np.int64)
        while done_n.min() < per_row:
            eb.step(act(eb))
            if eb.illegal.any():
                raise ValueError(f"{bot!r} played an illegal action in the vector duel")
            for i in np.flatnonzero(eb.done):
                k = done_n[i]
                if k < per_row:
                    results[i, k] = (eb.rewards[i] + 1.0) / 2.0
                done_n[i] = k + 1
        out[seat::2] = results.T.ravel()[:count]
    return out
