"""Run a bot through benchmark tasks: one :class:`TaskResult` per task, a JSON file, a scorecard.

Every number is a function of the task's protocol and the bot alone: game ``i`` of a task draws
its dice and the bots' generators from ``SeedSequence(task.seed, spawn_key=(i,))``, so a result
does not depend on the number of worker processes, nor on whether the games ran as tasks of a
Ray cluster (``address``), and a rerun reproduces it exactly. A result
records the package version, the rules fingerprint, the seeds and the number of games, and
:func:`check_result` tells whether a new run lands inside a recorded row's interval.
"""

from __future__ import annotations

import json
import math
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greed_env import __version__, cluster
from greed_env.benchmark.tasks import Task
from greed_env.bots import load
from greed_env.bots.base import checked_act
from greed_env.bots.cards import CARD_FORMAT
from greed_env.bots.loader import check_seats, check_trusted, spec_card, spec_rules
from greed_env.bots.play import play_game
from greed_env.bots.solver_backend import optimal_bot
from greed_env.bots.spec import parse_spec
from greed_env.bots.tournament import run_tournament, same_bot
from greed_env.bots.workers import map_chunks
from greed_env.evaluation import EvalResult, evaluate, mean_ci
from greed_env.evaluation.policy_value import SamplingBotError
from greed_env.files import atomic_write_text
from greed_env.rules import Move, Phase, Rules, State, new_game

__all__ = [
    "BenchmarkResult",
    "TaskResult",
    "beside",
    "bot_digest",
    "check_result",
    "load_field_bot",
    "plays_rules_of",
    "read_result",
    "run_benchmark",
    "run_task",
    "scorecard",
]

Progress = Callable[[int, int], None]
"""Called with ``(games done, games in the task)``."""

_CHUNK = 50


@dataclass
class TaskResult:
    """What one task measured for one bot.

    Attributes:
        task: the task id.
        protocol: the task's fixed protocol (:meth:`Task.protocol`).
        value: the headline metric; ``ci95``: its 95% half-width (0 for exact values).
        extra: further measurements (regret per decision, Elo error, turn mean, ...).
        wall_s: seconds the task took.
    """

    task: str
    protocol: dict[str, Any]
    value: float
    ci95: float
    extra: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0

    def contains(self, value: float, slack: float = 0.0) -> bool:
        return abs(value - self.value) <= self.ci95 + slack


@dataclass
class BenchmarkResult:
    """A bot's results on a list of tasks, with what is needed to reproduce them."""

    bot: str
    results: list[TaskResult]
    greed_env_version: str = __version__
    python: str = field(default_factory=platform.python_version)
    bot_sha256: str | None = None
    """sha256 of the exported bot file the results were measured with (:func:`bot_digest`);
    None for bots that are code (heuristics, solver bots) and for results written before it
    was recorded."""

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "format": "greed_env-benchmark/1",
            "bot": self.bot,
            "greed_env_version": self.greed_env_version,
            "python": self.python,
        }
        if self.bot_sha256 is not None:
            doc["bot_sha256"] = self.bot_sha256
        doc["results"] = [asdict(r) for r in self.results]
        return doc

    def write(self, path: str | Path) -> Path:
        """Write the result as JSON (atomically: a crash leaves no half-written file)."""
        return atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")


def read_result(path: str | Path) -> BenchmarkResult:
    """Read a result written by :meth:`BenchmarkResult.write`.

    Raises:
        ValueError: not a benchmark result file (the message names the file and the problem).
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
        if doc.get("format") != "greed_env-benchmark/1":
            raise ValueError(f"format is {doc.get('format')!r}, not 'greed_env-benchmark/1'")
        results = [TaskResult(**r) for r in doc["results"]]
        sha = doc.get("bot_sha256")
        if sha is not None and not isinstance(sha, str):
            raise ValueError(f"bot_sha256 is {sha!r}, not a string")
        return BenchmarkResult(doc["bot"], results, doc["greed_env_version"], doc.get("python", ""), sha)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"{p}: not a readable benchmark result ({exc})") from None


# ------------------------------------------------------------------------------------------
# bots


def bot_digest(bot: str) -> str | None:
    """The sha256 of the exported bot file ``bot`` names (its card's ``onnx.sha256``: a
    registry id or a card path), so a result can tell which file it measured; None for bots
    that are code (heuristics, solver bots, model files without a bot card).

    Raises:
        BotLoadError: a card that does not read.
    """
    card = spec_card(parse_spec(bot))
    if card is None or card.get("format") != CARD_FORMAT:
        return None
    sha = (card.get("onnx") or {}).get("sha256")
    return str(sha) if sha else None


def load_field_bot(spec: str, rules: Rules) -> Any:
    """A bot of a task (the one measured or one of its field): :func:`greed_env.bots.load`."""
    return load(spec, rules)


def plays_rules_of(bot: str, task: Task) -> bool:
    """Whether ``bot`` can be run on ``task``: heuristics and bare names play any rule book; a
    bot made for one (a trained bot's card, a ``preset/`` id of a solver bot) only its own.

    Raises:
        BotLoadError: a card that does not read.
    """
    if parse_spec(bot).kind in ("random", "threshold"):
        return True
    made_for = spec_rules(bot)
    return made_for is None or made_for.fingerprint == task.rules_fingerprint


def _game_rngs(seed: int, i: int, n: int) -> tuple[np.random.Generator, list[np.random.Generator]]:
    children = np.random.SeedSequence(seed, spawn_key=(i,)).spawn(n + 1)
    return np.random.default_rng(children[0]), [np.random.default_rng(c) for c in children[1:]]


# ------------------------------------------------------------------------------------------
# field games (three or more players, or any fixed field)

_WORKER: dict[str, Any] = {}


class RegretProbe:
    """The measured bot, playing as itself, with the regret of each of its decisions summed:
    the best move's value less its move's, by the exact three-player equilibrium (``oracle``, a
    :class:`~greed_env.solver.three_bot.ThreePlayerBot`). Against a field that plays that
    equilibrium, the bot's expected share is its seat's equilibrium value less its expected
    total regret (each decision faces the others' fixed strategies: one player's problem)."""

    def __init__(self, bot: Any, oracle: Any) -> None:
        self.bot = bot
        self.oracle = oracle
        self.name = bot.name
        self.regret = 0.0
        self.decisions = 0

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        move = checked_act(self.bot, rules, state, rng)
        if state.phase in (Phase.KEEP, Phase.CONTINUE):
            values = dict(self.oracle.move_values(rules, state))
            chosen = values.get(move)
            if chosen is None:  # the same keep, tapped in another order
                chosen = next(v for m, v in values.items() if m.kind == move.kind and sorted(m.taps) == sorted(move.taps))
            self.regret += max(values.values()) - chosen
            self.decisions += 1
        return move


def exact_field(field_specs: Sequence[str]) -> bool:
    """Whether a field is the exact three-player equilibrium (two ``optimal-3p`` bots)."""
    return len(field_specs) == 2 and all(
        parse_spec(s).kind == "optimal" and parse_spec(s).objective == "3p" for s in field_specs
    )


def _init_field(rules_dict: dict[str, Any], bot_spec: str, field_specs: Sequence[str]) -> None:
    rules = Rules.from_dict(rules_dict)
    _WORKER["rules"] = rules
    _WORKER["bot"] = load_field_bot(bot_spec, rules)
    cache: dict[str, Any] = {}
    _WORKER["field"] = [cache.setdefault(s, load_field_bot(s, rules)) for s in field_specs]
    _WORKER["oracle"] = optimal_bot(rules, "3p") if exact_field(field_specs) else None


def _field_chunk(args: tuple[int, int, int]) -> tuple[int, np.ndarray, np.ndarray, int]:
    """Shares of games ``start .. stop - 1``; against the exact field also the bot's regret in
    each game, and its number of decisions."""
    start, stop, seed = args
    rules, bot, others, oracle = _WORKER["rules"], _WORKER["bot"], _WORKER["field"], _WORKER["oracle"]
    n = len(others) + 1
    shares = np.empty(stop - start)
    regrets = np.full(stop - start, np.nan)
    decisions = 0
    for k, i in enumerate(range(start, stop)):
        seat = i % n
        player = bot if oracle is None else RegretProbe(bot, oracle)
        bots = [*others[:seat], player, *others[seat:]]
        dice_rng, bot_rngs = _game_rngs(seed, i, n)
        shares[k] = play_game(rules, bots, dice_rng, bot_rngs, first_player=0)[seat]
        if isinstance(player, RegretProbe):
            regrets[k] = player.regret
            decisions += player.decisions
    return start, shares, regrets, decisions


def _run_field(task: Task, rules: Rules, bot: str, workers: int, address: str | None, progress: Progress | None) -> TaskResult:
    check_seats(load_field_bot(bot, rules), task.seats, bot)  # a two-player bot: refused before the games
    chunks = [(a, min(a + _CHUNK, task.games), task.seed) for a in range(0, task.games, _CHUNK)]
    init = (rules.to_dict(), bot, list(task.field))
    parts: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}  # shares, regrets, decisions
    done = 0
    for start, shares, regrets, decisions in map_chunks(
        _field_chunk, chunks, workers=workers, address=address, initializer=_init_field, initargs=init
    ):
        parts[start] = (shares, regrets, decisions)
        done += shares.size
        if progress:
            progress(done, task.games)
    shares = np.concatenate([parts[k][0] for k in sorted(parts)])
    est = mean_ci(shares)
    extra: dict[str, Any] = {
        "fair_share": 1.0 / task.seats,
        "wins": int((shares == 1.0).sum()),
        "shared": int(((shares > 0) & (shares < 1)).sum()),
    }
    if exact_field(task.field):
        # the seats' equilibrium values follow the fixed seat schedule: only the regret is noise
        regrets = np.concatenate([parts[k][1] for k in sorted(parts)])
        decisions = sum(parts[k][2] for k in parts)
        values = optimal_bot(rules, "3p").start_values(new_game(rules, task.seats, first_player=0))
        seat_value = float(np.mean([values[i % task.seats] for i in range(task.games)]))
        reg = mean_ci(regrets)
        extra.update(
            regret_estimate=seat_value - reg.mean,
            regret_estimate_ci95=reg.half_width,
            seat_value=seat_value,
            mean_regret_per_decision=float(regrets.sum()) / decisions if decisions else 0.0,
            decisions=decisions,
        )
    return TaskResult(task.id, task.protocol(), est.mean, est.half_width, extra)


# ------------------------------------------------------------------------------------------
# turn, duel and Elo tasks (through greed_env.evaluation and the tournament)


def _run_turn(task: Task, rules: Rules, bot: str, workers: int, address: str | None, progress: Progress | None) -> TaskResult:
    exact = parse_spec(bot).kind != "random"
    try:
        r = _evaluate_turn(task, rules, bot, workers, address, progress, exact)
    except SamplingBotError:  # its move changes with its generator: refused before any turn
        r = _evaluate_turn(task, rules, bot, workers, address, progress, False)
    extra = {
        "optimal": r.optimal,
        "sampled_mean": r.score.mean,
        "sampled_ci95": r.score.half_width,
        "sampled_share": r.ratio,
        "mean_regret_per_decision": r.mean_regret,
        "optimal_decision_share": r.optimal_share,
    }
    if r.exact_ratio is not None:
        extra["exact_value"] = r.exact
        return TaskResult(task.id, task.protocol(), r.exact_ratio, 0.0, extra)
    extra["note"] = "not deterministic or too many positions: sampled share"
    return TaskResult(task.id, task.protocol(), r.ratio, r.score.half_width / r.optimal, extra)


def _evaluate_turn(
    task: Task, rules: Rules, bot: str, workers: int, address: str | None, progress: Progress | None, exact: bool
) -> EvalResult:
    return evaluate(
        bot, rules, "turn", episodes=task.games, seed=task.seed, workers=workers, address=address, exact=exact,
        exact_max_positions=3_000_000, progress=(lambda d: progress(d, task.games)) if progress else None,
    )


def _run_duel(task: Task, rules: Rules, bot: str, workers: int, address: str | None, progress: Progress | None) -> TaskResult:
    r = evaluate(
        bot, rules, "duel", episodes=task.games, seed=task.seed, workers=workers, address=address,
        opponent="optimal", progress=(lambda d: progress(d, task.games)) if progress else None,
    )
    extra: dict[str, Any] = {"mean_regret_per_decision": r.mean_regret}
    if r.regret_estimate is not None:
        extra["regret_estimate"] = r.regret_estimate.mean
        extra["regret_estimate_ci95"] = r.regret_estimate.half_width
    return TaskResult(task.id, task.protocol(), r.score.mean, r.score.half_width, extra)


_REF_TOURNAMENTS: dict[str, Any] = {}
"""Per task id, the reference bots' round robin (played once per process when several of
them are run through the same Elo task)."""


def _run_elo(task: Task, rules: Rules, bot: str, workers: int, address: str | None, progress: Progress | None) -> TaskResult:
    refs = list(task.field)
    bot = next((r for r in refs if same_bot(r, bot)), bot)  # threshold:300 is the field's threshold-300
    if bot in refs:  # the reference bots' own round robin: the same for each of them
        t = _REF_TOURNAMENTS.get(task.id)
        if t is None:
            t = _REF_TOURNAMENTS[task.id] = run_tournament(
                rules, refs, task.games, seed=task.seed, workers=workers, anchor="random", address=address
            )
    else:
        t = run_tournament(
            rules, [bot, *refs], task.games, seed=task.seed, workers=workers, anchor="random", address=address
        )
    shown = t.bots[t.specs.index(bot)]  # a py: bot is shown by its own name
    row = next(s for s in t.standings if s.bot == shown)
    return TaskResult(
        task.id, task.protocol(), row.elo, 1.96 * row.elo_se,
        {"score_rate": row.rate, "games": row.games, "standings": {s.bot: round(s.elo, 1) for s in t.standings}},
    )


_RUNNERS = {"turn": _run_turn, "duel": _run_duel, "field": _run_field, "elo": _run_elo}


def run_task(
    task: Task,
    bot: str,
    *,
    workers: int = 1,
    progress: Progress | None = None,
    trust_code: bool = True,
    address: str | None = None,
) -> TaskResult:
    """Run ``bot`` (any bot spec) through ``task`` under its fixed protocol.

    ``trust_code=False`` refuses a spec whose bot runs code as it loads (an SB3 ``.zip``,
    ``py:``; :func:`greed_env.bots.loader.check_trusted`), as ``greed benchmark`` does without
    ``--trust-code``. ``address``: the games run as tasks of the Ray cluster there
    (:mod:`greed_env.cluster`) instead of ``workers`` processes, with the same result.

    Raises:
        ValueError / LookupError: the bot does not load or does not play the task's rules (the
            message names the bot); nothing is written.
        ClusterError: ``address`` given, and no Ray or no cluster there.
    """
    check_trusted(bot, trust_code)
    rules = task.rules_object()
    t0 = time.perf_counter()
    result = _RUNNERS[task.kind](task, rules, bot, workers, address, progress)
    result.wall_s = round(time.perf_counter() - t0, 2)
    return result


def run_benchmark(
    tasks: Sequence[Task],
    bot: str,
    *,
    workers: int = 1,
    progress: Callable[[Task], Progress | None] | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
    trust_code: bool = True,
    address: str | None = None,
) -> BenchmarkResult:
    """Run ``bot`` through every task (in order) and collect the results (``trust_code``,
    ``address``: as :func:`run_task`; connected to the cluster once for all the tasks)."""
    check_trusted(bot, trust_code)
    results = []
    with cluster.connected(address):
        for task in tasks:
            r = run_task(
                task, bot, workers=workers, progress=progress(task) if progress else None, trust_code=trust_code,
                address=address,
            )
            results.append(r)
            if on_result is not None:
                on_result(r)
    return BenchmarkResult(bot, results, bot_sha256=bot_digest(bot))


# ------------------------------------------------------------------------------------------
# reading results


def _fmt(task_kind: str, value: float, ci: float) -> str:
    if task_kind == "elo":
        return f"{value:.0f} ± {ci:.0f}"
    if task_kind == "turn" and ci == 0.0:
        return f"{100 * value:.2f}%"
    return f"{100 * value:.2f} ± {100 * ci:.2f}%"


def format_value(r: TaskResult) -> str:
    """The headline of a result as the scorecard prints it."""
    return _fmt(str(r.protocol["kind"]), r.value, r.ci95)


def beside(r: TaskResult) -> str:
    """What a scorecard or leaderboard row shows beside the headline: the regret estimate of a
    duel, the regret per decision of a turn task, the fair share of a field task."""
    if "regret_estimate" in r.extra:
        return f"regret estimate {100 * r.extra['regret_estimate']:.2f} ± {100 * r.extra['regret_estimate_ci95']:.2f}%"
    if r.protocol["kind"] == "turn":
        text = f"{r.extra.get('mean_regret_per_decision', float('nan')):.2f} pts regret/decision"
        return text + (" (sampled)" if "note" in r.extra else "")
    if "fair_share" in r.extra:
        return f"fair share {100 * r.extra['fair_share']:.1f}%"
    return ""


def scorecard(result: BenchmarkResult) -> str:
    """A Markdown scorecard of one bot's results."""
    lines = [
        f"# Benchmark scorecard: `{result.bot}`",
        "",
        f"greed_env {result.greed_env_version}, Python {result.python}.",
        "",
        "| task | metric | result | games | seed | rules fingerprint | beside it |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result.results:
        p = r.protocol
        lines.append(
            f"| `{r.task}` | {p['metric']} | {format_value(r)} | {p['games']:,} | {p['seed']} | "
            f"`{p['rules_fingerprint']}` | {beside(r)} |"
        )
    return "\n".join(lines) + "\n"


def check_result(recorded: TaskResult, new: TaskResult) -> bool:
    """Whether ``new`` reproduces ``recorded``: the same protocol and a value inside the recorded
    interval widened by the new one's (two independent estimates of one quantity)."""
    if recorded.protocol != new.protocol:
        return False
    return abs(recorded.value - new.value) <= math.hypot(recorded.ci95, new.ci95) + 1e-12

