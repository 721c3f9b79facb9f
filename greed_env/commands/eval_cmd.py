"""``greed eval BOT``: play a bot against the exact solver and report its value.

The bot is any spec ``greed play`` takes (:func:`greed_env.bots.load`); the rules are ``--rules``
with ``--set FIELD=VALUE`` overrides as in every command (without ``--rules``, the card's rules
of a trained or exported bot, else ten_thousand). The measurement is
:func:`greed_env.evaluation.evaluate`; ``--out`` writes its Markdown report and plots
(:func:`greed_env.evaluation.write_report`). Bad input ends with one line and status 2 before
any episode is played.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from greed_env.abilities import abilities_of
from greed_env.bots.base import Bot
from greed_env.bots.errors import BotLoadError
from greed_env.bots.loader import check_trusted, load
from greed_env.bots.spec import BotSpec, parse_spec
from greed_env.cluster import ClusterError
from greed_env.commands.argtypes import (
    OutputPathError,
    add_address_option,
    check_output_dir,
    int_at_least,
    nonneg_int,
    positive_int,
    seed_int,
)
from greed_env.commands.debug import add_debug_flag, show_traceback
from greed_env.evaluation import default_duel_games, evaluate, resolve_bot, write_report
from greed_env.progress import CountBar
from greed_env.rules import IllegalMove, Rules, RulesError
from greed_env.rules.config import rules_from_args

__all__ = ["MAX_EPISODES", "register"]

MAX_EPISODES = 10**10
"""Most ``--episodes`` (:data:`greed_env.evaluation.MAX_EPISODES`: days of play)."""
DEFAULT_RULES = "ten_thousand"
"""The rules of a bot that names none, without ``--rules``."""


def _fail(exc: BaseException | str) -> int:
    text = " ".join(str(exc).split())
    print(f"greed eval: {text}", file=sys.stderr)
    return 2


def _run_eval(ns: argparse.Namespace) -> int:
    from greed_env.solver import SolverError, TableError  # numba: loaded when a command runs

    try:
        spec = parse_spec(ns.bot)
        check_trusted(spec, ns.trust_code)
        if ns.opponent is not None:
            check_trusted(ns.opponent, ns.trust_code)
        run_dirs = _run_dirs(ns)
        rules, bot = _rules_and_bot(spec, ns)
        card = abilities_of(bot).card
        objective = ns.objective or _objective_from_card(card) or "turn"
        if ns.opponent is not None and objective != "duel":
            raise ValueError(
                f"--opponent {ns.opponent}: an opponent plays in --objective duel only; objective {objective} "
                "plays the bot alone"
            )
        if ns.out is not None:
            check_output_dir(ns.out, "--out")
        bot_path = Path(ns.bot)
        if not run_dirs and card is not None and (bot_path.parent / "eval.csv").is_file():
            run_dirs = [bot_path.parent]
        bar = _progress_bar(ns, objective, f"greed eval: {ns.bot} on {rules.name}, objective {objective}")
        try:
            result = evaluate(
                bot,
                rules,
                objective,
                episodes=ns.episodes,
                seed=ns.seed,
                workers=ns.workers,
                regret_episodes=ns.regret_episodes,
                opponent=ns.opponent or "optimal",
                num_players=ns.num_players,
                progress=bar.update_to if bar else None,
                exact=ns.exact,
                label=spec.text,
                trust_code=ns.trust_code,
                address=ns.address,
            )
        finally:
            if bar:
                bar.close()
    except (BotLoadError, RulesError, IllegalMove, SolverError, TableError, OutputPathError,
            FileNotFoundError, ValueError, ClusterError) as exc:
        show_traceback(exc, ns.debug)
        return _fail(exc)
    summary = result.summary()
    if ns.out is not None:
        command = "greed eval " + " ".join(shlex.quote(a) for a in ns.argv)
        try:
            path = write_report(result, ns.out, run_dir=run_dirs or None, command=command)
        except OSError as exc:
            return _fail(f"cannot write the report to {ns.out!r}: {exc.strerror or exc}")
        summary["report"] = str(path)
    if ns.json:
        print(json.dumps(summary, indent=1))
    else:
        _print_summary(result, summary.get("report"))
    return 0


def _run_dirs(ns: argparse.Namespace) -> list[Path]:
    """The ``--run-dir`` folders, each a training run (an ``eval.csv`` or TensorBoard events),
    and only with ``--out``, whose report plots them.

    Raises:
        ValueError: naming the flag and the folder at fault.
    """
    dirs = [Path(d) for d in ns.run_dir or []]
    if dirs and ns.out is None:
        raise ValueError("--run-dir adds a learning curve to the --out report: give --out DIR too")
    for d in dirs:
        if not d.is_dir():
            raise ValueError(f"--run-dir {str(d)!r}: no such folder")
        if not (d / "eval.csv").is_file() and next(d.rglob("events.out.tfevents.*"), None) is None:
            raise ValueError(
                f"--run-dir {str(d)!r}: not a training run (it holds neither eval.csv nor TensorBoard events)"
            )
    return dirs


def _rules_and_bot(spec: BotSpec, ns: argparse.Namespace) -> tuple[Rules, Bot]:
    """The rules to measure on and the bot, loaded once.

    ``--rules`` (with ``--set``) when given; else a bot whose spec names its rules (a preset
    id, a file) is loaded first and its declared rules are the base of ``--set``; else
    ten_thousand. The bot is loaded for the rules measured (:func:`resolve_bot`: ``optimal-OBJ``
    plays the yardstick of the objective, which is ``--objective`` or ``turn`` here: such a bot
    has no card to name another).

    Raises:
        BotLoadError: the bot does not load, or was made for other rules than the ones asked.
        RulesError: a bad ``--rules`` or ``--set``.
    """
    if ns.rules is None and (spec.preset or spec.kind == "file"):
        bot = load(spec, trust_code=ns.trust_code)
        rules = rules_from_args(abilities_of(bot).rules or DEFAULT_RULES, ns.set)
        return rules, bot
    rules = rules_from_args(ns.rules or DEFAULT_RULES, ns.set)
    return rules, resolve_bot(spec, rules, ns.objective or "turn", trust_code=ns.trust_code)


def _objective_from_card(card: Mapping[str, Any] | None) -> str | None:
    if not card:
        return None
    objective = str(card.get("objective", ""))
    if objective in ("turn", "race", "duel"):
        return objective
    if objective.startswith("selfplay"):
        return "duel"
    return None


class _Bar:
    """The plan line and a progress bar, drawn from the first progress report on (the episodes
    start), so a run refused before any episode leaves stderr to its one-line error."""

    def __init__(self, total: int, plan: str) -> None:
        self.total = total
        self.plan = plan
        self.bar: CountBar | None = None

    def update_to(self, done: int) -> None:
        if self.bar is None:
            print(f"{self.plan}, {self.total:,} episodes ...", file=sys.stderr, flush=True)
            self.bar = CountBar("greed eval", self.total, unit="episode")
        self.bar.update_to(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _progress_bar(ns: argparse.Namespace, objective: str, plan: str) -> _Bar | None:
    if not ns.progress:
        return None

    total = ns.episodes or (default_duel_games() if objective == "duel" else 20_000)
    return _Bar(total, plan)


def _print_summary(result: Any, report: str | None) -> None:
    r = result
    digits = 4 if r.objective == "duel" else 2
    print(f"{r.bot} on {r.rules.name} ({r.objective}{', vs ' + r.opponent if r.opponent else ''}), {r.episodes:,} episodes, {r.wall_s:.1f} s")
    print(f"  {r.units}: {r.score.fmt(digits)} (95% CI)   optimal: {r.optimal:.4f}   ratio: {100 * r.ratio:.2f}%")
    if r.regret_estimate is not None:
        print(f"  optimal - regret estimate: {r.regret_estimate.fmt(digits + 2)}")
    if r.exact is not None:
        print(f"  exact value (every roll enumerated): {r.exact:.4f} = {100 * r.exact_ratio:.3f}% of optimal")
    if r.decisions:
        print(
            f"  regret per decision: mean {r.mean_regret:.5g}, worst {r.worst_regret:.5g}; "
            f"optimal decisions {100 * r.optimal_share:.2f}% of {r.decisions:,}"
        )
    if report:
        print(f"  report: {report}")


def register(subparsers: Any) -> None:
    """Add the ``eval`` sub-command."""
    ev = subparsers.add_parser(
        "eval",
        help="evaluate a bot or trained model against the exact solver",
        description="Play a bot (model .zip/.npz, bot spec, or 'optimal') and report its value "
        "with a 95% CI beside the optimal value, its regret per decision, and plots.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ev.add_argument("bot", help="bot spec, as in greed play: random, threshold-N, optimal-turn (optimal alone: optimal-duel), a registry id, a file (.json / .onnx exported bot, .zip / .npz model) or py:MODULE:ATTR")
    ev.add_argument("--rules", default=None, metavar="NAME", help="rules preset (default: the model card's, else ten_thousand)")
    ev.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="override one rules field (repeatable), e.g. --set min_bank=350; applied to --rules, "
        "else to the card's rules",
    )
    ev.add_argument(
        "--objective",
        choices=("turn", "race", "duel"),
        default=None,
        help="what to measure (default: the model card's, else turn)",
    )
    ev.add_argument("--episodes", type=int_at_least(1, MAX_EPISODES), default=None, help="turns / races / games (default: 20,000; duel: 38,415 for a 95%% CI of +-0.5 points)")
    ev.add_argument("--workers", type=positive_int, default=2, help="processes playing episodes in parallel")
    add_address_option(ev, "episodes")
    ev.add_argument("--seed", type=seed_int, default=0, help="master seed of the episode seeds")
    ev.add_argument("--regret-episodes", type=nonneg_int, default=None, help="episodes whose decisions are scored by the solver (default: min(episodes, 2000))")
    ev.add_argument(
        "--opponent", default=None, help="with --objective duel: the opponent bot spec (default optimal: optimal-duel)"
    )
    ev.add_argument("--num-players", type=int_at_least(2, 8), default=2, help="duel seats")
    ev.add_argument("--out", default=None, help="directory for report.md and the PNG plots")
    ev.add_argument(
        "--run-dir",
        action="append",
        default=None,
        help="training run directory whose learning curve to plot (repeat for several seeds)",
    )
    ev.add_argument(
        "--exact",
        action="store_true",
        help="objective turn: also compute the bot's exact expected turn score by enumerating every roll (deterministic bots, and bots that declare their move probabilities)",
    )
    ev.add_argument(
        "--trust-code",
        action="store_true",
        help="load bots that run code as they load: an SB3 .zip (pickle) or py:MODULE:ATTR; refused without it",
    )
    ev.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_debug_flag(ev)
    ev.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="show a progress bar")
    ev.set_defaults(func=_with_argv(_run_eval))


def _with_argv(func: Any) -> Any:
    def run(ns: argparse.Namespace) -> int:
        argv = sys.argv[sys.argv.index("eval") + 1 :] if "eval" in sys.argv else []
        ns.argv = argv
        return func(ns)

    return run
