"""``greed train NAME`` (run the training script ``training/NAME.py``), ``greed train soup``
(average the weights of runs fine-tuned from one model, :mod:`greed_env.train.soup`) and
``greed eval`` (evaluate any bot).

Every file ``training/NAME.py`` with a dataclass ``Args`` and a ``main(args)`` is a script of
``greed train`` (:mod:`greed_env.train.scripts` finds them; nothing registers them); its options
are generated from ``Args`` when it runs, so ``greed --help`` imports no script. The old names
``solo``, ``duel``, ``selfplay`` and ``rllib`` are aliases of ``ppo_turn``, ``ppo_duel``,
``ppo_selfplay`` and ``rllib_selfplay``. User errors (missing or corrupt model file, rules
mismatch, unknown bot, existing run directory, a refused setting) exit with status 2 and one line
on stderr.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from greed_env.commands.argtypes import (
    OutputPathError,
    check_output_dir,
    int_at_least,
    nonneg_int,
    positive_int,
    seed_int,
)

__all__ = ["register"]

SCRIPT_ALIASES = {"solo": "ppo_turn", "duel": "ppo_duel", "selfplay": "ppo_selfplay", "rllib": "rllib_selfplay"}
"""Old ``greed train`` names, kept as aliases of the scripts that replaced them."""


def _user_errors() -> tuple[type[BaseException], ...]:
    from greed_env.bots.errors import BotLoadError
    from greed_env.rules import IllegalMove, RulesError
    from greed_env.solver.model import SolverError
    from greed_env.solver.table import TableError

    return (BotLoadError, RulesError, IllegalMove, FileNotFoundError, FileExistsError, SolverError, TableError)


def _fail(exc: BaseException, command: str = "eval") -> int:
    text = " ".join(str(exc).split())
    print(f"greed {command}: {text}", file=sys.stderr)
    return 2


def _run_script(ns: argparse.Namespace) -> int:
    """Parse the script's own options from ``ns.script_args`` and run its ``main``."""
    from greed_env.train.args import add_dataclass_arguments, namespace_to
    from greed_env.train.scripts import load_script

    command = f"train {ns.script}"
    try:
        module = load_script(ns.script)
    except ImportError as exc:  # the train extra is missing
        return _fail(Exception(f"{exc} (training needs pip install 'greed-env[train]')"), command)
    stub: argparse.ArgumentParser = ns.stub
    parser = type(stub)(
        prog=stub.prog, description=module.__doc__, epilog=stub.epilog, formatter_class=stub.formatter_class
    )
    add_dataclass_arguments(parser, module.Args)
    args = namespace_to(module.Args, parser.parse_args(ns.script_args))
    try:
        module.main(args)
    except (*_user_errors(), ValueError, LookupError) as exc:
        return _fail(exc, command)
    return 0


def script_examples() -> dict[str, str]:
    """``{"train NAME": example}`` for every training script (and alias): the first line of its
    docstring that runs it with ``greed train NAME``, else ``greed train NAME``."""
    from greed_env.train.scripts import ScriptError, script_docstring, script_names

    out: dict[str, str] = {}
    try:
        names = script_names()
    except ScriptError:  # an install without the scripts: no train NAME sub-commands
        return out
    for name in names:
        lines = [line.strip() for line in script_docstring(name).splitlines()]
        example = next((line for line in lines if line.startswith(f"greed train {name} ")), f"greed train {name}")
        out[f"train {name}"] = example.split("  #")[0].rstrip(" \\")
    for alias, name in SCRIPT_ALIASES.items():
        if f"train {name}" in out:
            out[f"train {alias}"] = out[f"train {name}"]
    return out


def _run_soup(ns: argparse.Namespace) -> int:
    from greed_env.train.soup import run

    try:
        run(ns)
    except (*_user_errors(), ValueError) as exc:
        return _fail(exc, "train soup")
    return 0


def _run_eval(ns: argparse.Namespace) -> int:
    from greed_env.bots.loader import spec_card, spec_rules
    from greed_env.evaluation import evaluate, write_report
    from greed_env.rules import preset

    try:
        bot_path = Path(ns.bot)
        card = spec_card(ns.bot)
        rules = preset(ns.rules) if ns.rules else (spec_rules(ns.bot) or preset("ten_thousand"))
        objective = ns.objective or _objective_from_card(card) or "turn"
        if ns.out:
            check_output_dir(ns.out, "--out")
        run_dirs = [Path(d) for d in ns.run_dir or []]
        if not run_dirs and card is not None and (bot_path.parent / "eval.csv").is_file():
            run_dirs = [bot_path.parent]
        bar = _progress_bar(ns, objective)
        try:
            result = evaluate(
                ns.bot,
                rules,
                objective,
                episodes=ns.episodes,
                seed=ns.seed,
                workers=ns.workers,
                regret_episodes=ns.regret_episodes,
                opponent=ns.opponent,
                num_players=ns.num_players,
                progress=bar.update_to if bar else None,
                exact=ns.exact,
            )
        finally:
            if bar:
                bar.close()
    except (*_user_errors(), OutputPathError, ValueError) as exc:
        return _fail(exc)
    summary = result.summary()
    if ns.out:
        command = "greed eval " + " ".join(shlex.quote(a) for a in ns.argv)
        path = write_report(result, ns.out, run_dir=run_dirs or None, command=command)
        summary["report"] = str(path)
    if ns.json:
        print(json.dumps(summary, indent=1))
    else:
        _print_summary(result, summary.get("report"))
    return 0


def _objective_from_card(card: dict[str, Any] | None) -> str | None:
    if not card:
        return None
    objective = str(card.get("objective", ""))
    if objective in ("turn", "race", "duel"):
        return objective
    if objective.startswith("selfplay"):
        return "duel"
    return None


class _Bar:
    """A tqdm bar drawn from the first progress report on, so a run refused before any
    episode leaves stderr to its one-line error."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None

    def update_to(self, done: int) -> None:
        if self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, unit="episode", unit_scale=True, dynamic_ncols=True)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _progress_bar(ns: argparse.Namespace, objective: str) -> _Bar | None:
    if not ns.progress:
        return None
    from greed_env.evaluation import default_duel_games

    total = ns.episodes or (default_duel_games() if objective == "duel" else 20_000)
    return _Bar(total)


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
    """Add ``train`` (one sub-command per training script, and ``soup``) and ``eval`` to the CLI."""
    from greed_env.train import soup
    from greed_env.train.scripts import ScriptError, script_docstring, script_names

    train = subparsers.add_parser(
        "train",
        help="run a training script (training/NAME.py) or average runs (soup)",
        description="Run a training script: one readable file per recipe in training/ (MaskablePPO "
        "or RLlib), each writing a run folder with TensorBoard logs, evaluations against the exact "
        "solver, checkpoints (--resume) and a model with its JSON card. `greed train NAME --help` "
        "lists a script's options.",
    )
    scripts = train.add_subparsers(dest="script", metavar="SCRIPT")
    try:
        names = script_names()
    except ScriptError:
        names = []
    aliases: dict[str, list[str]] = {}
    for alias, name in SCRIPT_ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    for name in names:
        doc = script_docstring(name)
        sub = scripts.add_parser(
            name,
            aliases=aliases.get(name, []),
            help=doc.split("\n\n")[0].replace("\n", " "),
            description=doc,
            add_help=False,  # every option, --help included, goes to the script's own parser
            prefix_chars="+",
        )
        sub.add_argument("script_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        sub.set_defaults(func=_run_script, script=name, stub=sub)

    sub = scripts.add_parser("soup", help="average the weights of runs fine-tuned from one model", description=soup.DESCRIPTION)
    soup.add_arguments(sub)
    sub.set_defaults(func=_run_soup)
    train.set_defaults(func=lambda ns: train.print_help() or 0)

    ev = subparsers.add_parser(
        "eval",
        help="evaluate a bot or trained model against the exact solver",
        description="Play a bot (model .zip/.npz, bot spec, or 'optimal') and report its value "
        "with a 95% CI beside the optimal value, its regret per decision, and plots.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ev.add_argument("bot", help="bot spec, as in greed play: random, threshold-N, optimal-turn (optimal alone: optimal-duel), a registry id, a file (.json / .onnx exported bot, .zip / .npz model) or py:MODULE:ATTR")
    ev.add_argument("--rules", default=None, help="rules preset (default: the model card's, else ten_thousand)")
    ev.add_argument(
        "--objective",
        choices=("turn", "race", "duel"),
        default=None,
        help="what to measure (default: the model card's, else turn)",
    )
    ev.add_argument("--episodes", type=positive_int, default=None, help="turns / races / games (default: 20,000; duel: 38,415 for a 95%% CI of +-0.5 points)")
    ev.add_argument("--workers", type=positive_int, default=2, help="processes playing episodes in parallel")
    ev.add_argument("--seed", type=seed_int, default=0, help="master seed of the episode seeds")
    ev.add_argument("--regret-episodes", type=nonneg_int, default=None, help="episodes whose decisions are scored by the solver (default: min(episodes, 2000))")
    ev.add_argument("--opponent", default="optimal", help="duel opponent bot spec (optimal: optimal-duel)")
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
        help="objective turn: also compute the bot's exact expected turn score by enumerating every roll (deterministic bots)",
    )
    ev.add_argument("--json", action="store_true", help="print the summary as JSON")
    ev.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="show a progress bar")
    ev.set_defaults(func=_with_argv(_run_eval))


def _with_argv(func: Any) -> Any:
    def run(ns: argparse.Namespace) -> int:
        argv = sys.argv[sys.argv.index("eval") + 1 :] if "eval" in sys.argv else []
        ns.argv = argv
        return func(ns)

    return run
