"""Evaluate any bot against the exact solver: value with a 95% CI, regret, report and plots.

A bot is a trained model file (``.zip`` from stable-baselines3 / sb3-contrib, or a ``.npz``
policy snapshot), a bot spec for :func:`greed_env.bots.factory.make_bot` (``random``,
``threshold:N``, registry ids), ``optimal`` (the solver's
:class:`~greed_env.solver.OptimalBot` for the objective), or a bot object.

Objectives, each played in the environment the agents are trained in so that the numbers mean
the same thing:

* ``turn`` (``Solitaire-v0``): mean points of one turn, beside the solver's optimal expected
  turn score. The environment skips turns whose first roll has no scoring keep (no decision
  is possible); the mean is reported per turn *including* those, i.e. the conditional mean
  times ``1 - p_first_bust``, which is what the solver table states.
* ``race`` (``Solitaire-v0``): mean number of turns to reach the target, beside the optimal
  expected number of turns.
* ``duel`` (``Duel-v0``): win rate (a shared pot counts one half) against an opponent (default
  the optimal bot), seats balanced (game ``i`` seats the bot at ``i % num_players``).

Decision quality: at every decision of the evaluated bot in the first ``regret_episodes``
episodes, :meth:`OptimalBot.move_values` gives the optimal value of every legal move; the
regret of the move played is the gap to the best one, in the table's units (points, turns, win
probability). Regret also gives a second, far less noisy estimate of the bot's value (the
performance-difference identity: the value of a policy is the optimal value less the expected
sum of its regrets along its own trajectories, exact when the opponent plays optimally); both
estimates are reported.

Episodes are independent of how they are spread over processes: episode ``i`` is seeded from
``SeedSequence(seed, spawn_key=(i,))``, and worker processes receive explicit episode ranges.
Importing this module does not import torch; loading a ``.zip`` model does (once, in the
calling process: workers receive the numpy weights).

>>> from greed_env.rules import preset
>>> res = evaluate("threshold:300", preset("ten_thousand"), "turn", episodes=200, seed=1,
...                regret_episodes=0)
>>> res.score.n, res.objective
(200, 'turn')
"""

from __future__ import annotations

import csv
import functools
import itertools
import math
import multiprocessing as mp
import os
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.base import Bot
from greed_env.bots.policy_bots import batch_moves
from greed_env.envs.catalog import ActionCatalog
from greed_env.rules import Move, Phase, Rules, State, apply_roll, chance_outcomes, new_game

__all__ = [
    "OBJECTIVES",
    "TURN_BUCKETS",
    "Estimate",
    "EvalResult",
    "default_duel_games",
    "evaluate",
    "learning_curve",
    "mean_ci",
    "optimal_value",
    "plot_learning_curves",
    "resolve_bot",
    "write_report",
]

OBJECTIVES = ("turn", "race", "duel")
Z95 = 1.959963984540054
TURN_BUCKETS = (0, 300, 600, 1000, 2000)
"""Lower edges of the turn-total buckets used to group regret by situation."""
LEAD_BUCKETS = (-3000, -1000, 0, 50, 1050, 3050)
"""Edges of the banked-lead buckets (before the final round) used to group regret by situation."""

BotSource = str | os.PathLike | Bot


# ------------------------------------------------------------------------------------------
# statistics


@dataclass(frozen=True)
class Estimate:
    """A sample mean with the half-width of its normal-approximation 95% interval."""

    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def scaled(self, factor: float, offset: float = 0.0) -> Estimate:
        """``offset + factor * X`` as an estimate."""
        return Estimate(offset + factor * self.mean, abs(factor) * self.half_width, self.n)

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def fmt(self, digits: int = 2) -> str:
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def mean_ci(values: Sequence[float] | np.ndarray) -> Estimate:
    """Mean and 95% half-width ``1.96 * s / sqrt(n)`` (0 for fewer than two values).

    >>> e = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> e.mean, round(e.half_width, 3)
    (2.5, 1.265)
    """
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n == 0:
        return Estimate(float("nan"), float("nan"), 0)
    if n == 1:
        return Estimate(float(x[0]), 0.0, 1)
    return Estimate(float(x.mean()), float(Z95 * x.std(ddof=1) / math.sqrt(n)), n)


def default_duel_games(half_width: float = 0.005) -> int:
    """Games that bound the 95% half-width of a win rate near 50% by ``half_width``.

    >>> default_duel_games()
    38415
    """
    return math.ceil((Z95 * 0.5 / half_width) ** 2)


# ------------------------------------------------------------------------------------------
# the solver side


def _solver() -> Any:
    import greed_env.solver as solver

    return solver


@functools.lru_cache(maxsize=8)
def optimal_bot(rules: Rules, objective: str) -> Any:
    """The solver's optimal bot for ``objective`` (its table is built or loaded on first use;
    one shared instance per rules and objective in a process)."""
    return _solver().OptimalBot(rules, objective)


def yardstick_rules(rules: Rules, objective: str) -> Rules:
    """The rules whose solver table measures ``objective`` as the environments play it.

    ``Solitaire-v0``'s ``turn`` episode is one turn from no busts in a row, where a bust
    penalty (Zilch: the third bust in a row) can never fall; its optimum is the single-turn
    optimum of the rules without the penalty, not the solver's long-run average per turn
    with the penalty (620.85 points for Zilch, against 623.02 for one turn).
    """
    if objective == "turn" and rules.bust_penalty:
        return rules.replace(bust_penalty=0)
    return rules


def optimal_value(rules: Rules, objective: str) -> float:
    """The solver's headline value: optimal expected turn score (``turn``), expected turns to
    the target (``race``), or the first player's win probability (``duel``)."""
    table = _solver().load_table(rules, objective)
    return float(table.headline)


def first_roll_bust_probability(rules: Rules) -> float:
    """Probability that the first full roll of a turn has no scoring keep.

    >>> from greed_env.rules import preset
    >>> round(first_roll_bust_probability(preset("ten_thousand")), 6)
    0.023148
    """
    solo = rules if rules.min_players <= 1 else rules.replace(min_players=1)
    s = new_game(solo, 1)
    return sum(p for roll, p in chance_outcomes(solo, s) if apply_roll(solo, s, roll).phase != Phase.KEEP)


# ------------------------------------------------------------------------------------------
# bots


def resolve_bot(source: BotSource, rules: Rules, objective: str) -> Bot:
    """A bot from a model path, a spec string, ``optimal``, or a bot object.

    Raises:
        greed_env.train.policy.ModelFileError: a model file that is missing, corrupt or made
            for other rules.
        greed_env.bots.factory.BotSpecError: an unknown spec.
    """
    if not isinstance(source, str | os.PathLike):
        if not callable(getattr(source, "act", None)):
            raise TypeError(f"a bot needs act(rules, state, rng); got {source!r}")
        return source
    text = os.fspath(source)
    if text.lower().endswith((".json", ".onnx")):
        from greed_env.bots.factory import make_bot

        return make_bot(text, rules)  # an exported bot: its card and ONNX file
    if text.endswith((".zip", ".npz")) or Path(text).is_file():
        from greed_env.train.policy import PolicyBot, load_policy

        return PolicyBot(load_policy(text, rules), rules, name=Path(text).name)
    if text.strip().lower() == "optimal":
        return optimal_bot(yardstick_rules(rules, objective), objective)
    from greed_env.bots.factory import make_bot

    return make_bot(text, rules)


def _bot_label(source: BotSource, bot: Bot) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return getattr(bot, "name", type(bot).__name__)


# ------------------------------------------------------------------------------------------
# the runner


@dataclass
class _Job:
    bot: Bot
    opponent: Any
    rules: Rules
    objective: str
    seed: int
    start: int
    stop: int
    regret_stop: int
    batch: int
    num_players: int


@dataclass
class _Chunk:
    start: int
    values: np.ndarray
    episode_regret: np.ndarray
    regret: np.ndarray
    phase: np.ndarray
    dice: np.ndarray
    turn_total: np.ndarray
    lead: np.ndarray
    final: np.ndarray
    first_value: np.ndarray


_CHUNK_DTYPES = (float, float, float, np.int8, np.int8, np.int64, np.int64, np.int8, float)
_TABLE_KEYS = ("regret", "phase", "dice", "turn_total", "lead", "final")
"""Dtypes of the array fields of :class:`_Chunk`, in order."""


def _episode_seeds(seed: int, stop: int) -> np.ndarray:
    """64-bit environment seeds of episodes ``0 .. stop-1`` (episode ``i`` gets entry ``i``
    whatever the split over workers)."""
    words = np.random.SeedSequence(seed).generate_state(2 * stop, np.uint32).astype(np.uint64)
    return (words[0::2] << np.uint64(32)) | words[1::2]


_ENV_CACHE: dict[tuple[Any, ...], list[Any]] = {}
_ENV_CACHE_LIMIT = 4


def _make_envs(job: _Job, count: int) -> list[Any]:
    """``count`` environments for ``job``, reused across calls in one process (building a
    Gymnasium environment costs more than many of its steps)."""
    key = (job.rules, job.objective, id(job.opponent), job.num_players)
    envs = _ENV_CACHE.get(key)
    if envs is None:
        if len(_ENV_CACHE) >= _ENV_CACHE_LIMIT:
            _ENV_CACHE.clear()
        envs = _ENV_CACHE[key] = []
    while len(envs) < count:
        envs.append(_make_env(job))
    return envs[:count]


def _make_env(job: _Job) -> Any:
    if job.objective == "duel":
        from greed_env.envs.duel import DuelEnv

        return DuelEnv(job.rules, opponent=job.opponent, num_players=job.num_players, seat=0)
    from greed_env.envs.solitaire import SolitaireEnv

    return SolitaireEnv(job.rules, objective=job.objective)


def _outcome(job: _Job, env: Any, ret: float) -> float:
    if job.objective == "turn":
        return round(ret / env.reward_scale)
    if job.objective == "race":
        return -ret
    return (ret + 1.0) / job.num_players


def _act_batch(bot: Bot, rules: Rules, states: list[State], rngs: list[np.random.Generator]) -> list[Move]:
    if hasattr(bot, "act_obs") and float(getattr(bot, "temperature", 0.0)) == 0.0:
        return batch_moves(bot, rules, states, rngs[0])  # greedy observation policies
    return [bot.act(rules, s, g) for s, g in zip(states, rngs, strict=True)]


def _banked_lead(state: State) -> int:
    """The deciding seat's banked score less the best banked score of the other seats."""
    others = [v for i, v in enumerate(state.scores) if i != state.player]
    return state.scores[state.player] - max(others) if others else 0


def _regret_of(
    catalog: ActionCatalog, values: list[tuple[Move, float]], state: State, move: Move, minimize: bool
) -> tuple[float, float]:
    """(regret of ``move``, best value) from the solver's move values."""
    by_id = {catalog.index_of(m, state): float(v) for m, v in values}
    chosen = by_id[catalog.index_of(move, state)]
    best = min(by_id.values()) if minimize else max(by_id.values())
    return (chosen - best if minimize else best - chosen), best


def _run_chunk(job: _Job) -> _Chunk:
    rules = job.rules
    catalog = ActionCatalog(rules)
    minimize = job.objective == "race"
    yard = yardstick_rules(rules, job.objective)
    oracle = optimal_bot(yard, job.objective) if job.regret_stop > job.start else None
    act_ids = getattr(job.bot, "act_ids", None)
    seeds = _episode_seeds(job.seed, job.stop)
    n = job.stop - job.start
    values = np.zeros(n)
    ep_regret = np.full(n, np.nan)
    first_value = np.full(n, np.nan)
    dec: dict[str, list[float]] = {key: [] for key in _TABLE_KEYS}
    slots: list[dict[str, Any]] = []
    next_ep = job.start

    def start(slot: dict[str, Any]) -> bool:
        nonlocal next_ep
        if next_ep >= job.stop:
            return False
        i = next_ep
        next_ep += 1
        env = slot["env"]
        if job.objective == "duel":
            env.fixed_seat = i % job.num_players
        env_seed = int(seeds[i])
        obs, info = env.reset(seed=env_seed)
        slot.update(
            ep=i,
            obs=obs,
            mask=info["action_mask"],
            rng=np.random.default_rng(env_seed + 1),
            ret=0.0,
            regret=0.0,
            first=True,
            track=oracle is not None and i < job.regret_stop,
        )
        return True

    for env in _make_envs(job, min(job.batch, n)):
        slot = {"env": env}
        if start(slot):
            slots.append(slot)
    while slots:
        states = [sl["env"].state for sl in slots]
        if act_ids is not None:
            ids = act_ids(np.stack([sl["obs"] for sl in slots]), np.stack([sl["mask"] for sl in slots]))
            moves: list[Move | None] = [
                catalog.action_to_move(s, int(a)) if sl["track"] else None
                for sl, s, a in zip(slots, states, ids, strict=True)
            ]
        else:
            moves = list(_act_batch(job.bot, rules, states, [sl["rng"] for sl in slots]))
            ids = [catalog.index_of(m, s) for m, s in zip(moves, states, strict=True)]
        still: list[dict[str, Any]] = []
        for sl, s, move, a in zip(slots, states, moves, ids, strict=True):
            if sl["track"] and move is not None and oracle is not None:
                r, best = _regret_of(catalog, oracle.move_values(yard, s), s, move, minimize)
                sl["regret"] += r
                if sl["first"]:
                    first_value[sl["ep"] - job.start] = best
                dec["regret"].append(r)
                dec["phase"].append(int(s.phase))
                dec["dice"].append(len(s.roll) if s.phase == Phase.KEEP else s.dice)
                dec["turn_total"].append(s.turn_total)
                dec["lead"].append(_banked_lead(s))
                dec["final"].append(int(s.endgame))
            sl["first"] = False
            env = sl["env"]
            sl["obs"], reward, terminated, truncated, info = env.step(int(a))
            sl["mask"] = info["action_mask"]
            sl["ret"] += float(reward)
            if terminated or truncated:
                k = sl["ep"] - job.start
                values[k] = _outcome(job, env, sl["ret"])
                if sl["track"]:
                    ep_regret[k] = sl["regret"]
                if not start(sl):
                    continue
            still.append(sl)
        slots = still
    return _Chunk(
        job.start,
        values,
        ep_regret,
        np.asarray(dec["regret"], dtype=np.float64),
        np.asarray(dec["phase"], dtype=np.int8),
        np.asarray(dec["dice"], dtype=np.int8),
        np.asarray(dec["turn_total"], dtype=np.int64),
        np.asarray(dec["lead"], dtype=np.int64),
        np.asarray(dec["final"], dtype=np.int8),
        first_value,
    )


# ------------------------------------------------------------------------------------------
# duels against the optimal bot in the vector engine

VECTOR_DUEL_BATCH = 2048
"""Most games stepped together per seat by :func:`vector_duel_values`."""
VECTOR_DUEL_MIN_PER_ROW = 16
"""Fewest games a batch row plays in turn: a batch steps until its slowest row is done, so
with one or two games per row most of the work would be rows waiting."""


def vector_duel_act(bot: Bot, rules: Rules) -> Callable[[Any], np.ndarray] | None:
    """How :func:`vector_duel_values` makes ``bot`` act on a batch, or None when it cannot:
    a deterministic observation policy (a model file's ``PolicyBot``, an exported
    ``OnnxBot``, a ``PPOBot``) or the optimal duel bot itself."""
    from greed_env.solver.bot import OptimalBot

    greedy = float(getattr(bot, "temperature", 0.0)) == 0.0
    act_ids = getattr(bot, "act_ids", None)  # PolicyBot (a NumPy network)
    if act_ids is not None and greedy:
        return lambda batch: act_ids(batch.obs, batch.mask)
    if hasattr(bot, "act_obs") and callable(getattr(bot, "act_batch", None)) and greedy:
        return lambda batch: bot.act_batch(batch.obs, batch.mask)  # OnnxBot, PPOBot
    if type(bot) is OptimalBot and bot.objective == "duel" and bot.rules.fingerprint == rules.fingerprint:
        return lambda batch: np.maximum(batch.optimal_actions(), 0)
    return None


def vector_duel_supported(bot: Bot, opponent: Any, rules: Rules) -> bool:
    """Whether a two-seat duel of ``bot`` against ``opponent`` can run in the vector engine
    (the opponent: the optimal duel bot of these rules; see :func:`vector_duel_values`)."""
    from greed_env.solver.bot import OptimalBot
    from greed_env.vector.optimal import check_optimal_supported
    from greed_env.vector.tables import VectorUnsupportedError, check_vector_supported

    if not (type(opponent) is OptimalBot and opponent.objective == "duel"):
        return False
    if opponent.rules.fingerprint != rules.fingerprint or vector_duel_act(bot, rules) is None:
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

    act = vector_duel_act(bot, rules)
    if act is None:
        raise ValueError(f"{bot!r} cannot act on vector batches (no act_ids)")
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


# ------------------------------------------------------------------------------------------
# results


@dataclass
class EvalResult:
    """What :func:`evaluate` measured.

    Attributes:
        bot: how the bot was named.
        rules: the rules played.
        objective: ``turn``, ``race`` or ``duel``.
        opponent: the duel opponent's name (empty otherwise).
        episodes: turns, races or games played.
        seed: master seed of the episode seeds.
        score: the measured value with its 95% CI: mean turn score (per turn, first-roll busts
            included), mean turns to target, or win rate.
        optimal: the solver's value in the same units (0.5 for a seat-balanced duel; NaN
            where the solver has no table for the rules, e.g. Trippn, and then no regret).
        regret_estimate: the value estimated as ``optimal -/+ mean regret per episode`` over the
            regret episodes (None without them, or against a non-optimal duel opponent).
        decisions: decisions whose regret was measured.
        mean_regret, worst_regret: per decision, in the table's units.
        optimal_share: share of measured decisions whose regret is zero.
        wall_s: seconds of the evaluation.
        units: the unit of ``score`` in words.
        decisions_table: per-decision arrays ``regret``, ``phase``, ``dice``, ``turn_total``,
            ``lead`` (the decider's banked score less the best other banked score; 0 alone)
            and ``final`` (1 in a final round).
        exact: ``turn`` with ``exact=True``: the bot's exact expected turn score
            (:func:`greed_env.policy_value.turn_value`, no sampling error), else None.
        exact_p_cap: the probability mass valued at the enumeration's turn-total cap.
    """

    bot: str
    rules: Rules
    objective: str
    opponent: str
    episodes: int
    seed: int
    score: Estimate
    optimal: float
    regret_estimate: Estimate | None
    decisions: int
    mean_regret: float
    worst_regret: float
    optimal_share: float
    wall_s: float
    units: str
    decisions_table: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    exact: float | None = None
    exact_p_cap: float | None = None

    @property
    def exact_ratio(self) -> float | None:
        """Exact value / optimal value, when the exact value was computed."""
        return None if self.exact is None else self.exact / self.optimal

    @property
    def ratio(self) -> float:
        """Measured value / optimal value (turn, duel) or optimal / measured (race)."""
        if self.objective == "race":
            return self.optimal / self.score.mean
        return self.score.mean / self.optimal

    def summary(self) -> dict[str, Any]:
        """JSON-able digest (for model cards and logs)."""
        out: dict[str, Any] = {
            "bot": self.bot,
            "rules": self.rules.name,
            "objective": self.objective,
            "opponent": self.opponent,
            "episodes": self.episodes,
            "seed": self.seed,
            "units": self.units,
            "mean": self.score.mean,
            "ci95": self.score.half_width,
            "optimal": self.optimal,
            "ratio": self.ratio,
            "decisions": self.decisions,
            "mean_regret": self.mean_regret,
            "worst_regret": self.worst_regret,
            "optimal_share": self.optimal_share,
            "wall_s": self.wall_s,
        }
        if self.regret_estimate is not None:
            out["regret_estimate"] = self.regret_estimate.mean
            out["regret_estimate_ci95"] = self.regret_estimate.half_width
        if self.exact is not None:
            out["exact"] = self.exact
            out["exact_ratio"] = self.exact_ratio
            out["exact_p_cap"] = self.exact_p_cap
        return out


_UNITS = {"turn": "points per turn", "race": "turns to target", "duel": "win rate"}


def evaluate(
    bot: BotSource,
    rules: Rules,
    objective: str,
    episodes: int | None = None,
    seed: int = 0,
    workers: int = 1,
    regret_episodes: int | None = None,
    opponent: BotSource = "optimal",
    num_players: int = 2,
    batch: int = 64,
    progress: Callable[[int], None] | None = None,
    exact: bool = False,
    exact_max_positions: int | None = None,
    vector: bool = True,
) -> EvalResult:
    """Play ``episodes`` episodes of ``objective`` with ``bot`` and measure it.

    Args:
        bot: model path, bot spec, ``optimal`` or a bot object.
        rules: the rules (a model's card must name the same rules).
        objective: ``turn``, ``race`` or ``duel``.
        episodes: turns / races / games; default 20,000 for turn and race and
            :func:`default_duel_games` (a 95% half-width of 0.5 points) for duel.
        seed: master seed; episode ``i`` uses ``SeedSequence(seed, spawn_key=(i,))``.
        workers: processes to spread episodes over (1: in this process).
        regret_episodes: how many of the first episodes get regret measured (default
            ``min(episodes, 2000)``).
        opponent: the duel opponent (default ``optimal``).
        num_players: duel seats (the bot in one, the opponent in the others).
        batch: episodes played in lock-step per process (policies act on a whole batch).
        progress: called with the number of finished episodes after each finished chunk.
        exact: ``turn`` only: also compute the bot's exact expected turn score by enumerating
            every roll it can meet (:func:`greed_env.policy_value.turn_value`; the bot must be
            deterministic; seconds to a minute of CPU).
        exact_max_positions: with ``exact``, give up the exact value (None in the result)
            when the bot's turns reach more positions than this (an untrained policy that
            keeps rolling); None: no limit below the enumeration's own (an error).
        vector: a two-seat duel of a deterministic observation policy (or the optimal bot)
            against the optimal duel bot plays its games after the first ``regret_episodes``
            in the numba engine (:func:`vector_duel_values`: 20-30 times faster with a policy, other
            dice streams from the same seed); False: every game in Python environments.

    Raises:
        ValueError: unknown objective, a non-positive episode count, or ``exact`` with an
            objective other than ``turn``.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if episodes is None:
        episodes = default_duel_games() if objective == "duel" else 20_000
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a whole number >= 1, got {episodes!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    if exact and objective != "turn":
        raise ValueError(f"exact values are computed for the 'turn' objective only, not {objective!r}")
    regret_n = min(episodes, 2000 if regret_episodes is None else max(0, regret_episodes))
    t0 = time.perf_counter()
    the_bot = resolve_bot(bot, rules, objective)
    check_rules = getattr(the_bot, "check_rules", None)
    if check_rules is not None:
        check_rules(rules)
    opp: Any = None
    opp_name = ""
    if objective == "duel":
        opp = resolve_bot(opponent, rules, "duel")
        opp_name = _bot_label(opponent, opp)
    optimal = 1.0 / num_players
    if objective != "duel":
        try:
            optimal = optimal_value(yardstick_rules(rules, objective), objective)
        except _solver().SolverError:  # no table for these rules (Trippn): no yardstick
            optimal, regret_n = math.nan, 0
    python_n = episodes
    if vector and objective == "duel" and num_players == 2 and vector_duel_supported(the_bot, opp, rules):
        python_n = regret_n  # the games whose decisions are scored; the rest in numba
    workers = max(1, min(int(workers), max(python_n, 1)))
    n_chunks = 1 if workers == 1 else min(python_n, workers * 4)
    edges = np.linspace(0, python_n, n_chunks + 1).astype(int)
    jobs = [
        _Job(the_bot, opp, rules, objective, seed, int(a), int(b), regret_n, batch, num_players)
        for a, b in itertools.pairwise(edges)
        if b > a
    ]
    chunks: list[_Chunk] = []
    done = 0
    if workers == 1:
        for job in jobs:
            chunks.append(_run_chunk(job))
            done += job.stop - job.start
            if progress:
                progress(done)
    else:
        try:
            pickle.loads(pickle.dumps(jobs[0]))
        except Exception as exc:
            raise ValueError(
                f"the bot or opponent cannot be sent to worker processes ({exc}); use workers=1"
            ) from None
        with mp.get_context("spawn").Pool(workers) as pool:
            for chunk in pool.imap_unordered(_run_chunk, jobs):
                chunks.append(chunk)
                done += len(chunk.values)
                if progress:
                    progress(done)
    chunks.sort(key=lambda c: c.start)
    if python_n < episodes:
        vector_values = vector_duel_values(the_bot, opp, rules, episodes - python_n, seed)
        if progress:
            progress(episodes)
    else:
        vector_values = np.zeros(0)
    chunks.append(_Chunk(0, *(np.zeros(0, dtype=d) for d in _CHUNK_DTYPES)))  # none in Python
    values = np.concatenate([c.values for c in chunks] + [vector_values])
    ep_regret = np.concatenate([c.episode_regret for c in chunks])[:regret_n]
    table = {
        key: np.concatenate([getattr(c, key) for c in chunks])
        for key in _TABLE_KEYS
    }
    score = mean_ci(values)
    regret_est = None
    if objective == "turn":
        keep = 1.0 - first_roll_bust_probability(rules)
        score = score.scaled(keep)
        if regret_n:
            regret_est = mean_ci(ep_regret).scaled(-keep, optimal)
    elif objective == "race" and regret_n:
        regret_est = mean_ci(ep_regret).scaled(1.0, optimal)
    elif objective == "duel" and regret_n and num_players == 2 and opponent == "optimal":
        regret_est = mean_ci(ep_regret).scaled(-1.0, optimal)
    reg = table["regret"]
    tol = 1e-9 if objective == "duel" else 1e-6
    exact_value = None
    if exact:
        from greed_env.policy_value import EnumerationLimit, turn_value

        try:
            limit = {} if exact_max_positions is None else {"max_positions": exact_max_positions}
            exact_value = turn_value(the_bot, rules, **limit)
        except EnumerationLimit:
            if exact_max_positions is None:
                raise
    return EvalResult(
        bot=_bot_label(bot, the_bot),
        rules=rules,
        objective=objective,
        opponent=opp_name,
        episodes=episodes,
        seed=seed,
        score=score,
        optimal=optimal,
        regret_estimate=regret_est,
        decisions=int(reg.size),
        mean_regret=float(reg.mean()) if reg.size else float("nan"),
        worst_regret=float(reg.max()) if reg.size else float("nan"),
        optimal_share=float((reg <= tol).mean()) if reg.size else float("nan"),
        wall_s=time.perf_counter() - t0,
        units=_UNITS[objective],
        decisions_table=table,
        exact=None if exact_value is None else exact_value.value,
        exact_p_cap=None if exact_value is None else exact_value.p_cap,
    )


# ------------------------------------------------------------------------------------------
# report and plots


def learning_curve(run_dir: str | Path) -> list[dict[str, float]]:
    """Evaluation rows of a training run: ``eval.csv`` in the run directory, or else the
    ``eval/value`` scalars of its TensorBoard event files.

    Each row has ``step`` and ``value`` and, when logged, ``ci95``, ``optimal`` and
    ``regret_estimate``.

    Raises:
        FileNotFoundError: the directory has neither.
    """
    run_dir = Path(run_dir)
    csv_path = run_dir / "eval.csv"
    if csv_path.is_file():
        with csv_path.open(newline="") as fh:
            rows = [
                {k: float(v) for k, v in row.items() if v not in ("", None)}
                for row in csv.DictReader(fh)
            ]
        return sorted(rows, key=lambda r: r["step"])
    events = sorted(run_dir.rglob("events.out.tfevents.*"))
    if not events:
        raise FileNotFoundError(f"{run_dir} holds neither eval.csv nor TensorBoard event files")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    by_step: dict[int, dict[str, float]] = {}
    for path in events:
        acc = EventAccumulator(str(path))
        acc.Reload()
        tags = set(acc.Tags().get("scalars", []))
        for tag, key in (("eval/value", "value"), ("eval/optimal", "optimal"), ("eval/ci95", "ci95")):
            if tag in tags:
                for ev in acc.Scalars(tag):
                    by_step.setdefault(ev.step, {"step": float(ev.step)})[key] = ev.value
    return [by_step[s] for s in sorted(by_step) if "value" in by_step[s]]


def _bucket_labels() -> list[str]:
    edges = list(TURN_BUCKETS)
    labels = [f"{a}-{b - 50}" for a, b in itertools.pairwise(edges)]
    return [*labels, f"{edges[-1]}+"]


def regret_by_situation(table: dict[str, np.ndarray]) -> dict[str, list[tuple[str, int, float, float]]]:
    """Mean regret grouped by phase and dice, by turn-total bucket and, in games of several
    seats, by the decider's banked lead (final-round decisions apart).

    Returns ``{"dice": [(label, decisions, mean regret, share optimal)], "turn_total": [...],
    "lead": [...]}``.
    """
    reg = table.get("regret", np.zeros(0))
    out: dict[str, list[tuple[str, int, float, float]]] = {"dice": [], "turn_total": [], "lead": []}
    if reg.size == 0:
        return out
    phase, dice, total = table["phase"], table["dice"], table["turn_total"]

    def add(group: str, label: str, sel: np.ndarray) -> None:
        if sel.any():
            out[group].append((label, int(sel.sum()), float(reg[sel].mean()), float((reg[sel] <= 1e-9).mean())))

    for ph, word in ((Phase.KEEP, "keep"), (Phase.CONTINUE, "bank/roll")):
        for d in sorted(set(dice[phase == ph].tolist())):
            add("dice", f"{word}, {d} dice", (phase == ph) & (dice == d))
    bucket = np.searchsorted(np.asarray(TURN_BUCKETS), total, side="right") - 1
    for b, label in enumerate(_bucket_labels()):
        add("turn_total", label, bucket == b)
    lead, final = table.get("lead"), table.get("final")
    if lead is None or final is None or not (lead.any() or final.any()):
        return out
    edges = list(LEAD_BUCKETS)
    before = final == 0
    add("lead", "final round", final != 0)
    add("lead", f"lead below {edges[0]}", before & (lead < edges[0]))
    for a, b in itertools.pairwise(edges):
        span = f"{a}" if b - a == 50 else f"{a}..{b - 50}"
        add("lead", f"lead {span}", before & (lead >= a) & (lead < b))
    add("lead", f"lead {edges[-1]}+", before & (lead >= edges[-1]))
    return out


def _plot_regret(result: EvalResult, path: Path) -> bool:
    groups = regret_by_situation(result.decisions_table)
    if not groups["dice"]:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, key, title in ((axes[0], "dice", "by decision and dice"), (axes[1], "turn_total", "by turn total")):
        rows = groups[key]
        ax.bar(range(len(rows)), [r[2] for r in rows], color="tab:red")
        ax.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=45, ha="right", fontsize=8)
        ax.set_title(f"mean regret {title}")
        ax.set_ylabel(f"regret ({_regret_unit(result.objective)})")
    fig.suptitle(f"{result.bot} - {result.rules.name} {result.objective}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_learning_curves(
    runs: dict[str, list[dict[str, float]]],
    path: str | Path,
    optimal: float | None,
    units: str,
    minimize: bool = False,
) -> bool:
    """Plot evaluation rows of one or more runs against steps and against CPU minutes.

    Each run is drawn with its exact value where it was logged (``exact``), else the
    regret-based estimate, else the measured mean with its 95% band; ``optimal`` is the dashed line. Returns False when no run has rows.
    """
    runs = {name: rows for name, rows in runs.items() if rows}
    if not runs:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with_cpu = all(all("cpu_s" in r for r in rows) for rows in runs.values())
    n_rows = 2 if optimal else 1
    fig, axes = plt.subplots(
        n_rows, 2 if with_cpu else 1, figsize=(12 if with_cpu else 7, 3.6 * n_rows), squeeze=False
    )
    for name, rows in runs.items():
        use_exact = all("exact" in r for r in rows)
        use_regret = not use_exact and all("regret_estimate" in r for r in rows)
        key, ci_key = ("regret_estimate", "regret_estimate_ci95") if use_regret else ("value", "ci95")
        if use_exact:
            key, ci_key = "exact", "no-ci"
        vals = np.array([r[key] for r in rows])
        ci = np.array([r.get(ci_key, 0.0) for r in rows])
        label = name + (" (optimal - regret)" if use_regret else " (exact)" if use_exact else "")
        xs = [("environment steps", np.array([r["step"] for r in rows]))]
        if with_cpu:
            xs.append(("CPU minutes (training and evaluations)", np.array([r["cpu_s"] for r in rows]) / 60))
        for col, (xlabel, x) in enumerate(xs):
            for row in range(n_rows):
                ax = axes[row][col]
                ax.plot(x, vals, marker="o", ms=3, label=label)
                ax.fill_between(x, vals - ci, vals + ci, alpha=0.2)
                ax.set_xlabel(xlabel)
    for row in range(n_rows):
        for ax in axes[row]:
            if optimal:
                ax.axhline(optimal, color="k", ls=":", label=f"optimal {optimal:.4g}")
            ax.set_ylabel(units if row == 0 else f"{units} (zoom: within 2% of optimal)")
            if row == 1 and optimal:
                worse, better = 0.02 * abs(optimal), 0.005 * abs(optimal)
                ax.set_ylim(*((optimal - better, optimal + worse) if minimize else (optimal - worse, optimal + better)))
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _regret_unit(objective: str) -> str:
    return {"turn": "points", "race": "turns", "duel": "win probability"}[objective]


def write_report(
    result: EvalResult,
    out_dir: str | Path,
    run_dir: str | Path | Sequence[str | Path] | None = None,
    command: str | None = None,
) -> Path:
    """Write ``report.md`` with ``regret.png`` (and ``learning_curve.png`` for run dirs).

    Returns the path of the Markdown report.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    r = result
    unit = _regret_unit(r.objective)
    lines = [
        f"# Evaluation: {r.bot}",
        "",
        f"- rules: `{r.rules.name}` (fingerprint `{r.rules.fingerprint}`)",
        f"- objective: `{r.objective}`" + (f", opponent `{r.opponent}`, seats balanced" if r.opponent else ""),
        f"- episodes: {r.episodes:,} (seed {r.seed}), {r.wall_s:.1f} s",
    ]
    if command:
        lines.append(f"- command: `{command}`")
    lines += [
        "",
        "| measure | value |",
        "|---|---|",
        f"| {r.units} (95% CI) | {r.score.fmt(4 if r.objective == 'duel' else 2)} |",
        f"| optimal (solver) | {r.optimal:.4f} |",
        f"| ratio to optimal | {100 * r.ratio:.2f}% |",
    ]
    if r.exact is not None:
        lines.append(
            f"| exact value of the bot's play (every roll enumerated) | {r.exact:.4f} "
            f"({100 * (r.exact_ratio or 0.0):.3f}% of optimal) |"
        )
    if r.regret_estimate is not None:
        lines.append(
            f"| optimal - regret estimate (95% CI) | {r.regret_estimate.fmt(4)} "
            f"({100 * (r.regret_estimate.mean / r.optimal if r.objective != 'race' else r.optimal / r.regret_estimate.mean):.2f}%) |"
        )
    if r.decisions:
        lines += [
            f"| decisions with regret measured | {r.decisions:,} |",
            f"| mean regret per decision ({unit}) | {r.mean_regret:.5g} |",
            f"| worst regret ({unit}) | {r.worst_regret:.5g} |",
            f"| optimal decisions | {100 * r.optimal_share:.2f}% |",
        ]
    groups = regret_by_situation(r.decisions_table)
    if groups["dice"]:
        lines += [
            "",
            "## Regret by situation",
            "",
            "A group's share of all regret says where the bot loses most. Each kind of group (dice,",
            "turn total, and in games of several seats the banked lead) splits the decisions apart.",
            "",
            "| situation | decisions | mean regret | share of all regret | optimal |",
            "|---|---|---|---|---|",
        ]
        whole = float(r.decisions_table["regret"].sum()) or 1.0
        totals = [(f"turn total {label}", *rest) for label, *rest in groups["turn_total"]]
        for label, n, mean, share in groups["dice"] + totals + groups["lead"]:
            lines.append(f"| {label} | {n:,} | {mean:.4g} | {100 * n * mean / whole:.1f}% | {100 * share:.1f}% |")
    if _plot_regret(r, out / "regret.png"):
        lines += ["", "![regret by situation](regret.png)"]
    if run_dir is not None:
        dirs = [run_dir] if isinstance(run_dir, str | os.PathLike) else list(run_dir)
        curves = {Path(d).name: learning_curve(d) for d in dirs}
        if plot_learning_curves(curves, out / "learning_curve.png", r.optimal, r.units, r.objective == "race"):
            lines += ["", "## Learning curve", "", "![learning curve](learning_curve.png)", ""]
            lines += ["| run | evaluations | last step | last value | CPU minutes |", "|---|---|---|---|---|"]
            for name, rows in curves.items():
                if rows:
                    last = rows[-1]
                    shown = last.get("exact", last.get("regret_estimate", last["value"]))
                    cpu = f"{last['cpu_s'] / 60:.1f}" if "cpu_s" in last else "-"
                    lines.append(f"| {name} | {len(rows)} | {int(last['step']):,} | {shown:.4f} | {cpu} |")
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
