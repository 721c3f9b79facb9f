"""Playing evaluation episodes: chunks of episodes in lock-step batches, spread over worker
processes or the tasks of a Ray cluster, and :func:`evaluate`, the entry point."""

from __future__ import annotations

import contextlib
import itertools
import math
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from greed_env import cluster
from greed_env.abilities import abilities_of
from greed_env.bots.base import Bot, check_rules, check_seats, checked_act
from greed_env.bots.solver_backend import optimal_available, optimal_bot
from greed_env.bots.workers import map_chunks, parallelism
from greed_env.envs.duel import DuelEnv
from greed_env.envs.solitaire import OBJECTIVES as SOLITAIRE_OBJECTIVES
from greed_env.envs.solitaire import SolitaireEnv
from greed_env.evaluation.duel import vector_duel_supported, vector_duel_values
from greed_env.evaluation.policy_value import EnumerationLimit, TurnValue, turn_value
from greed_env.evaluation.regret import banked_lead, regret_of
from greed_env.evaluation.resolve import BotSource, bot_label, names_optimal_duel, resolve_bot
from greed_env.evaluation.result import EvalResult
from greed_env.evaluation.stats import Estimate, default_duel_games, mean_ci
from greed_env.evaluation.yardstick import (
    first_roll_bust_probability,
    optimal_value,
    solver_module,
    yardstick_rules,
)
from greed_env.rules import Move, Phase, Rules, State
from greed_env.rules.config import resolve_rules
from greed_env.spaces.catalog import ActionCatalog

OBJECTIVES = (*SOLITAIRE_OBJECTIVES, "duel")
"""What :func:`evaluate` measures: the objectives of ``Solitaire-v0`` and the ``Duel-v0`` game
(each one of the solver's objectives, :data:`greed_env.solver.OBJECTIVES`)."""
MAX_EPISODES = 10**10
"""Most episodes one evaluation plays (days of CPU at millions per second; episode seeds and
counts stay exact in 64-bit arrays)."""


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
    episode: np.ndarray
    """The episode of each decision (the table's rows, in the order the lock-step batch met them)."""


@dataclass
class _VectorJob:
    """The games after the scored ones, played by the numba engine in one call (its rows share
    one generator, so they are one piece of work wherever it runs)."""

    bot: Bot
    opponent: Any
    rules: Rules
    games: int
    seed: int


_CHUNK_DTYPES = (float, float, float, np.int8, np.int8, np.int64, np.int64, np.int8, float, np.int64)
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
        return DuelEnv(job.rules, opponent=job.opponent, num_players=job.num_players, seat=0)
    return SolitaireEnv(job.rules, objective=job.objective)


def _outcome(job: _Job, env: Any, ret: float) -> float:
    if job.objective == "turn":
        return round(ret / env.reward_scale)
    if job.objective == "race":
        return -ret
    return (ret + 1.0) / job.num_players


def _act_each(bot: Bot, rules: Rules, states: list[State], rngs: list[np.random.Generator]) -> list[Move]:
    """A bot without a batched policy: each position with its episode's generator, each move
    checked (:func:`~greed_env.bots.base.checked_act`)."""
    return [checked_act(bot, rules, s, g) for s, g in zip(states, rngs, strict=True)]


def _run_chunk(job: _Job) -> _Chunk:
    rules = job.rules
    catalog = ActionCatalog(rules)
    minimize = job.objective == "race"
    yard = yardstick_rules(rules, job.objective)
    oracle = optimal_bot(yard, job.objective) if job.regret_stop > job.start else None
    policy = abilities_of(job.bot).policy  # a greedy network: the batch of observations at once
    seeds = _episode_seeds(job.seed, job.stop)
    n = job.stop - job.start
    values = np.zeros(n)
    ep_regret = np.full(n, np.nan)
    first_value = np.full(n, np.nan)
    dec: dict[str, list[float]] = {key: [] for key in (*_TABLE_KEYS, "episode")}
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
        if policy is not None:
            ids = policy.act_ids(np.stack([sl["obs"] for sl in slots]), np.stack([sl["mask"] for sl in slots]))
            moves: list[Move | None] = [
                catalog.action_to_move(s, int(a)) if sl["track"] else None
                for sl, s, a in zip(slots, states, ids, strict=True)
            ]
        else:
            moves = _act_each(job.bot, rules, states, [sl["rng"] for sl in slots])
            ids = [catalog.index_of(m, s) for m, s in zip(moves, states, strict=True)]
        still: list[dict[str, Any]] = []
        for sl, s, move, a in zip(slots, states, moves, ids, strict=True):
            if sl["track"] and move is not None and oracle is not None:
                r, best = regret_of(catalog, oracle.move_values(yard, s), s, move, minimize)
                sl["regret"] += r
                if sl["first"]:
                    first_value[sl["ep"] - job.start] = best
                dec["regret"].append(r)
                dec["phase"].append(int(s.phase))
                dec["dice"].append(len(s.roll) if s.phase == Phase.KEEP else s.dice)
                dec["turn_total"].append(s.turn_total)
                dec["lead"].append(banked_lead(s))
                dec["final"].append(int(s.endgame))
                dec["episode"].append(sl["ep"])
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
        np.asarray(dec["episode"], dtype=np.int64),
    )



_UNITS = {"turn": "points per turn", "race": "turns to target", "duel": "win rate"}


def evaluate(
    bot: BotSource,
    rules: Rules | str,
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
    label: str | None = None,
    trust_code: bool = True,
    address: str | None = None,
) -> EvalResult:
    """Play ``episodes`` episodes of ``objective`` with ``bot`` and measure it.

    Args:
        bot: model path, bot spec (a string or a :class:`~greed_env.bots.BotSpec`),
            ``optimal`` or a bot object.
        rules: the rules, or a preset name (a model's card must name the same rules).
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
        progress: called with 0 when the episodes start (every check passed), then with the
            number of finished episodes after each finished chunk.
        exact: ``turn`` only: also compute the bot's exact expected turn score by enumerating
            every roll it can meet (:func:`greed_env.evaluation.policy_value.turn_value`; a bot
            that samples must declare its move probabilities; seconds to a minute of CPU).
        exact_max_positions: with ``exact``, give up the exact value (None in the result)
            when the bot's turns reach more positions than this (an untrained policy that
            keeps rolling); None: no limit below the enumeration's own (an error).
        vector: a two-seat duel of a bot the numba engine plays (a declared batched policy,
            or the optimal, leader-duel, threshold or random bot: :func:`vector_duel_act`)
            against the optimal duel bot plays its games after the first ``regret_episodes``
            in the numba engine (:func:`vector_duel_values`: 20-30 times faster with a policy,
            other dice streams from the same seed); False: every game in Python environments.
        label: what the result calls the bot (default: the spec as given, else its name).
        trust_code: False refuses a bot or opponent spec that runs code as it loads (an SB3
            ``.zip``, ``py:``), as ``greed eval`` does without ``--trust-code``
            (:func:`greed_env.bots.loader.check_trusted`). True by default: a Python caller
            names its own bots.
        address: play the chunks as tasks of the Ray cluster there (``auto``,
            ``ray://HOST:PORT``, ``HOST:PORT``; :mod:`greed_env.cluster`) instead of
            ``workers`` processes; the results are the same figure for figure (episode ``i``'s
            seeds are fixed by ``i``, wherever its chunk runs).

    Raises:
        RulesError: (a ValueError) ``rules`` names no preset.
        ValueError: unknown objective, an episode count outside ``1..MAX_EPISODES``, a negative
            ``regret_episodes``, or ``exact``
            with an objective other than ``turn``; with ``exact``, a bot whose move changes with
            its generator and that declares no move probabilities
            (:class:`~greed_env.evaluation.policy_value.SamplingBotError`, before any episode).
        RulesMismatchError: (a BotLoadError) a bot made for other rules.
        SeatCountError: (a ValueError) a duel of more than two seats with a bot or opponent
            made for two-player games (the optimal duel bot).
        UntrustedCodeError: (a BotLoadError) a spec that runs code, with ``trust_code=False``.
        ClusterError: (a RuntimeError) ``address`` given, and no Ray or no cluster there.
    """
    rules = resolve_rules(rules)
    episodes = _checked_arguments(objective, episodes, workers, seed, exact)
    if regret_episodes is not None and (
        isinstance(regret_episodes, bool) or not isinstance(regret_episodes, int) or regret_episodes < 0
    ):
        raise ValueError(f"regret_episodes must be a whole number >= 0 (or None), got {regret_episodes!r}")
    regret_n = min(episodes, 2000 if regret_episodes is None else regret_episodes)
    t0 = time.perf_counter()
    the_bot, name, opp, opp_name = _seated_bots(bot, label, opponent, rules, objective, num_players, trust_code)
    if exact:
        _probe_exact(the_bot, rules)
    optimal, regret_n = _yardstick(rules, objective, num_players, regret_n)
    python_n = episodes
    if vector and objective == "duel" and num_players == 2 and vector_duel_supported(the_bot, opp, rules):
        python_n = regret_n  # the games whose decisions are scored; the rest in numba
    with cluster.connected(address):
        par = max(1, min(parallelism(workers, address), max(python_n, 1)))
        n_chunks = 1 if par == 1 else min(python_n, par * 4)
        edges = np.linspace(0, python_n, n_chunks + 1).astype(int)
        jobs: list[_Job | _VectorJob] = [
            _Job(the_bot, opp, rules, objective, seed, int(a), int(b), regret_n, batch, num_players)
            for a, b in itertools.pairwise(edges)
            if b > a
        ]
        if python_n < episodes:  # first: the longest piece
            jobs.insert(0, _VectorJob(the_bot, opp, rules, episodes - python_n, seed))
        chunks = _play_chunks(jobs, workers, address, progress)
    values = np.concatenate([c.values for c in chunks])
    ep_regret = np.concatenate([c.episode_regret for c in chunks])[:regret_n]
    # episode by episode, each in its own order: the same table however the episodes were cut
    # into chunks and batches (so its means are the same to the last bit too)
    order = np.argsort(np.concatenate([c.episode for c in chunks]), kind="stable")
    table = {key: np.concatenate([getattr(c, key) for c in chunks])[order] for key in _TABLE_KEYS}
    score, regret_est = _estimates(
        rules, objective, values, ep_regret, optimal, num_players == 2 and names_optimal_duel(opponent)
    )
    reg = table["regret"]
    tol = 1e-9 if objective == "duel" else 1e-6
    exact_value = _exact_turn_value(the_bot, rules, exact_max_positions) if exact else None
    return EvalResult(
        bot=name,
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


def _checked_arguments(objective: str, episodes: int | None, workers: int, seed: int, exact: bool) -> int:
    """The episode count (its default filled in), once every argument is in range.

    Raises:
        ValueError: naming the argument out of range.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if episodes is None:
        episodes = default_duel_games() if objective == "duel" else 20_000
    if isinstance(episodes, bool) or not isinstance(episodes, int) or not 1 <= episodes <= MAX_EPISODES:
        raise ValueError(f"episodes must be a whole number in 1..{MAX_EPISODES:,}, got {episodes!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    if exact and objective != "turn":
        raise ValueError(f"exact values are computed for the 'turn' objective only, not {objective!r}")
    return episodes


def _seated_bots(
    bot: BotSource,
    label: str | None,
    opponent: BotSource,
    rules: Rules,
    objective: str,
    num_players: int,
    trust_code: bool = True,
) -> tuple[Bot, str, Any, str]:
    """The bot measured and its label, the duel opponent (None otherwise) and its label, each
    checked against what it declares (:func:`~greed_env.bots.base.check_rules`,
    :func:`~greed_env.bots.base.check_seats`)."""
    the_bot = resolve_bot(bot, rules, objective, trust_code=trust_code)
    name = label or bot_label(bot, the_bot)
    check_rules(the_bot, rules, name)
    if objective != "duel":
        return the_bot, name, None, ""
    opp = resolve_bot(opponent, rules, "duel", trust_code=trust_code)
    opp_name = bot_label(opponent, opp)
    check_rules(opp, rules, opp_name)
    check_seats(the_bot, num_players, name)
    check_seats(opp, num_players, opp_name)
    return the_bot, name, opp, opp_name


def _yardstick(rules: Rules, objective: str, num_players: int, regret_n: int) -> tuple[float, int]:
    """The optimal value the objective is measured by, and the episodes whose regret can be
    scored (none without move values)."""
    if objective == "duel":
        return 1.0 / num_players, regret_n
    yard = yardstick_rules(rules, objective)
    try:
        optimal = optimal_value(yard, objective)
    except solver_module().SolverError:  # no table for these rules (Trippn's race): no yardstick
        return math.nan, 0
    if regret_n and not optimal_available(yard, objective):
        regret_n = 0  # a shipped headline without move values (Trippn's turn): no regret
    return optimal, regret_n


def _play(job: _Job | _VectorJob) -> _Chunk:
    """One piece of the episodes: a chunk in Python environments, or the vector engine's games."""
    if isinstance(job, _VectorJob):
        return _vector_chunk(vector_duel_values(job.bot, job.opponent, job.rules, job.games, job.seed))
    return _run_chunk(job)


def _play_chunks(
    jobs: list[_Job | _VectorJob], workers: int, address: str | None, progress: Callable[[int], None] | None
) -> list[_Chunk]:
    """Every job's episodes, in this process, over ``workers`` processes or as tasks of the Ray
    cluster at ``address``; the chunks in episode order, the vector engine's games last.

    Raises:
        ValueError: the bot or the opponent cannot be sent to worker processes or the cluster.
    """
    if address is not None or (workers > 1 and len(jobs) > 1):
        try:
            pickle.loads(pickle.dumps(jobs[0]))
        except Exception as exc:
            where = "the cluster" if address is not None else "worker processes"
            raise ValueError(f"the bot or opponent cannot be sent to {where} ({exc}); use workers=1") from None
    chunks: list[_Chunk] = []
    done = 0
    if progress:
        progress(0)  # the bots are loaded and the yardstick known: the episodes start
    for chunk in map_chunks(_play, jobs, workers=workers, address=address):
        chunks.append(chunk)
        done += len(chunk.values)
        if progress:
            progress(done)
    return sorted(chunks, key=lambda c: (c.start < 0, c.start))


def _vector_chunk(values: np.ndarray) -> _Chunk:
    """The games played in the numba engine: outcomes only, no decision scored."""
    empty = (np.zeros(0, dtype=d) for d in _CHUNK_DTYPES[1:])
    return _Chunk(-1, values, *empty)


def _estimates(
    rules: Rules,
    objective: str,
    values: np.ndarray,
    ep_regret: np.ndarray,
    optimal: float,
    against_optimal_duel: bool,
) -> tuple[Estimate, Estimate | None]:
    """The mean value with its interval, and the regret estimate (the optimum less the mean
    regret; the turn's both per turn, first-roll busts included)."""
    score = mean_ci(values)
    if objective == "turn":
        keep = 1.0 - first_roll_bust_probability(rules)
        return score.scaled(keep), mean_ci(ep_regret).scaled(-keep, optimal) if ep_regret.size else None
    if objective == "race" and ep_regret.size:
        return score, mean_ci(ep_regret).scaled(1.0, optimal)
    if objective == "duel" and ep_regret.size and against_optimal_duel:
        return score, mean_ci(ep_regret).scaled(-1.0, optimal)
    return score, None


_PROBE_POSITIONS = 5_000
"""Positions the enumeration of an exact turn value visits before the episodes, so that a bot
it refuses (:class:`~greed_env.evaluation.policy_value.SamplingBotError`) is refused first."""


def _probe_exact(bot: Bot, rules: Rules) -> None:
    """The start of the bot's exact turn value: raises what the enumeration would raise about
    the bot within its first :data:`_PROBE_POSITIONS` positions."""
    with contextlib.suppress(EnumerationLimit):
        turn_value(bot, rules, max_positions=_PROBE_POSITIONS)


def _exact_turn_value(bot: Bot, rules: Rules, max_positions: int | None) -> TurnValue | None:
    """The bot's exact turn value; None when its turns reach more than ``max_positions``.

    Raises:
        EnumerationLimit: without ``max_positions``, the enumeration's own limit.
    """
    try:
        limit = {} if max_positions is None else {"max_positions": max_positions}
        return turn_value(bot, rules, **limit)
    except EnumerationLimit:
        if max_positions is None:
            raise
        return None
