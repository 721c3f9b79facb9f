"""``greed demo``: the main job in a few minutes.

1. a seeded game between two threshold bots, printed turn by turn;
2. the exact solver: optimal expected points per turn, probability of coming in within a
   turn, expected turns to the target;
3. a small MaskablePPO agent trained on ``greed_env/Solitaire-v0`` (one turn);
4. the agent, a simple heuristic and the optimal bot evaluated against the solver's value,
   with 95% confidence intervals;
5. the agent in whole games against the solver's optimal duel bot (win rate, seats balanced;
   the optimal bot is played by the numba engine, so 20,000 games take seconds).

``--quick`` runs every step on a small budget (a smoke test, under a minute of CPU): 1,024
training steps with one small evaluation, 200 evaluation turns without the exact
enumeration, and 200 duel games played in Python (no numba tables to build). Its figures
only show that each step works.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from greed_env.bots import ThresholdBot
from greed_env.commands.argtypes import (
    OutputPathError,
    check_output_dir,
    nonneg_int,
    positive_int,
    seed_int,
)
from greed_env.evaluation import evaluate
from greed_env.rules import (
    RulesError,
    apply,
    apply_roll,
    is_chance,
    is_over,
    new_game,
    preset,
    sample_roll,
)
from greed_env.rules.config import PRESET_SOURCES
from greed_env.train.recipes import run_recipe

DEFAULT_STEPS = 60_000
DEFAULT_EVAL_TURNS = 10_000
DEFAULT_DUEL_GAMES = 20_000
QUICK_STEPS = 1_024
QUICK_EVAL_TURNS = 200
QUICK_DUEL_GAMES = 200
EXACT_POSITIONS = 1_000_000
"""The most positions a bot's turns may reach for its exact value to be enumerated."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="play, solve, train a small agent and evaluate it against the solver",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rules", default="ten_thousand", help="preset (default ten_thousand)")
    p.add_argument(
        "--steps", type=positive_int, default=None, help=f"PPO training steps (default {DEFAULT_STEPS:,})"
    )
    p.add_argument(
        "--eval-turns",
        type=positive_int,
        default=None,
        help=f"turns per evaluation (default {DEFAULT_EVAL_TURNS:,})",
    )
    p.add_argument("--seed", type=seed_int, default=0, help="master seed (game, training, evaluation)")
    p.add_argument("--runs-dir", default="runs", help="where the trained run is written")
    p.add_argument("--turns-shown", type=nonneg_int, default=12, help="turns of the bot game to print")
    p.add_argument(
        "--duel-games",
        type=nonneg_int,
        default=None,
        help=f"games of the PPO agent against the optimal duel bot (default {DEFAULT_DUEL_GAMES:,}; 0: skip)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=(
            f"a smoke test on a small budget: {QUICK_STEPS:,} steps, {QUICK_EVAL_TURNS} evaluation turns "
            f"without exact enumeration, {QUICK_DUEL_GAMES} duel games in Python (--steps, --eval-turns and --duel-games given explicitly still apply)"
        ),
    )
    p.set_defaults(func=run)


def budget(args: argparse.Namespace) -> tuple[int, int, int]:
    """Training steps, evaluation turns and duel games: each as given, else the quick budget
    with ``--quick``, else the main job's."""
    full = (DEFAULT_STEPS, DEFAULT_EVAL_TURNS, DEFAULT_DUEL_GAMES)
    quick = (QUICK_STEPS, QUICK_EVAL_TURNS, QUICK_DUEL_GAMES)
    given = (args.steps, args.eval_turns, args.duel_games)
    default = quick if args.quick else full
    return tuple(d if g is None else g for g, d in zip(given, default, strict=True))  # type: ignore[return-value]


def _section(title: str) -> None:
    print()
    print(title)
    print("-" * len(title))


def _bot_game(rules: Any, seed: int, turns_shown: int) -> None:
    import numpy as np


    bots = [
        ThresholdBot(bank_at=350, name="threshold-350"),
        ThresholdBot(bank_at=1000, name="threshold-1000"),
    ]
    rng = np.random.default_rng(seed)
    state = new_game(rules, 2)
    lines: list[str] = []
    current: list[str] = []
    player = state.player
    turns = 0
    while not is_over(state):
        if is_chance(state):
            state = apply_roll(rules, state, sample_roll(rules, state, rng))
        else:
            state = apply(rules, state, bots[state.player].act(rules, state, rng))
        if state.rounds != turns or is_over(state):
            current.append(state.event.split("; ")[0] if state.rounds != turns else state.event)
            if turns < turns_shown:
                scores = " : ".join(f"{s:,}" for s in state.scores)
                lines.append(
                    f"  turn {turns + 1:>3}  P{player}  " + " / ".join(current) + f"   [{scores}]"
                )
            current = []
            turns = state.rounds
            player = state.player
        elif state.event and state.event not in ("rolls on",):
            current.append(state.event)
    for line in lines:
        print(line)
    if turns > turns_shown:
        print(f"  ... {turns - turns_shown} more turns ...")
    winners = ", ".join(bots[w].name for w in state.winners)
    scores = " : ".join(f"{s:,}" for s in state.scores)
    print(f"  final scores {scores}; winner: {winners} after {turns} turns")


def run(args: argparse.Namespace) -> int:
    from greed_env.solver import SolverError, solve  # numba: when the demo runs
    from greed_env.solver.model import check_supported

    try:
        rules = preset(args.rules)
        check_output_dir(args.runs_dir, "--runs-dir")
        check_supported(rules, "turn")  # steps 2 to 5 measure everything by the turn table
    except (RulesError, OutputPathError) as exc:
        print(f"greed demo: {exc}", file=sys.stderr)
        return 2
    except SolverError as exc:
        print(f"greed demo: --rules {rules.name}: the demo measures the agent by the solver's turn table, "
              f"which it does not solve here: {exc}", file=sys.stderr)
        return 2
    quick = bool(args.quick)
    steps, eval_turns, duel_games = budget(args)
    t_start = time.perf_counter()
    print(f"greed_env demo - rules '{rules.name}' ({PRESET_SOURCES.get(rules.name, 'custom')})")
    if quick:
        print("quick run: every step on a small budget; the figures only show that each step works")

    _section("1. A seeded game between two threshold bots (bank at 350 / at 1,000)")
    _bot_game(rules, args.seed, args.turns_shown)

    _section("2. Exact solver (dynamic programming over the reference scoring)")
    values: dict[str, float] = {}
    for objective, label, fmt in (
        ("turn", "optimal expected points per turn", "{:,.1f}"),
        ("entry", "best probability of coming in within one turn", "{:.2%}"),
        ("race", "fewest expected turns to reach the target from 0", "{:.2f}"),
    ):
        t0 = time.perf_counter()
        try:
            table = solve(rules, objective)
        except SolverError as exc:
            print(f"  {objective:<6} not solved: {exc}")
            continue
        values[objective] = table.headline
        print(
            f"  {objective:<6} {label}: {fmt.format(table.headline)}  ({time.perf_counter() - t0:.1f} s)"
        )
    if "turn" not in values:
        print("  the turn objective is needed for the rest of the demo")
        return 1

    _section(f"3. Training MaskablePPO on greed_env/Solitaire-v0 ({steps:,} steps)")

    # training/ppo_turn.py with the demo's small settings, as `greed train ppo_turn ...` runs it
    run_dir = Path(args.runs_dir) / f"{rules.name}__turn__demo__{args.seed}__{int(time.time())}"
    t0 = time.perf_counter()
    run_recipe("ppo_turn", {
        "rules": rules.name, "num_envs": 2, "vector": "subproc", "num_steps": 512, "minibatch_size": 256,
        "net_width": 128, "entry_starts": 0.0, "seed": args.seed, "total_timesteps": steps, "exp_name": "demo",
        "runs_dir": args.runs_dir, "run_name": run_dir.name, "eval_every": steps if quick else max(steps // 3, 1),
        "eval_episodes": 200 if quick else 1000, "eval_regret_episodes": 50 if quick else 200,
        "final_eval_episodes": 200 if quick else 1000, "eval_exact": not quick, "eval_exact_positions": EXACT_POSITIONS,
        "checkpoint_every": max(steps // 2, 1), "progress": sys.stderr.isatty(),
    })  # fmt: skip
    print(f"  trained in {time.perf_counter() - t0:.0f} s; run written to {run_dir}")

    _section(f"4. Evaluation against the solver ({eval_turns:,} turns each, seeded)")

    optimal = values["turn"]
    # the agent's exact value is the one its training run's final evaluation enumerated (and
    # printed), under the training's limit on positions; not enumerated twice
    trained = json.loads((run_dir / "model.json").read_text(encoding="utf-8")).get("evaluation") or {}
    rows = []
    for label, source in (
        ("PPO agent", str(run_dir / "model.zip")),
        ("threshold bot (bank at 300)", "threshold:300"),
        ("optimal bot (solver)", "optimal-turn"),
    ):
        result = evaluate(
            source,
            rules,
            "turn",
            episodes=eval_turns,
            seed=args.seed + 1,
            regret_episodes=min(eval_turns, 2000),
            # the solver's own value is known; the threshold bot: every roll enumerated, no noise
            exact=source == "threshold:300" and not quick,
            exact_max_positions=EXACT_POSITIONS,
        )
        rows.append((label, result))
    for line in evaluation_table(rows, optimal, trained.get("exact")):
        print(line)
    print(f"  {'optimal value (exact)':<30}{optimal:>14,.1f}")
    print(
        "  exact value: the bot's expected points per turn with every roll enumerated "
        "(greed eval --exact); '-' where its turns reach too many positions"
        + (" or, in a quick run, everywhere" if quick else "")
    )
    if duel_games > 0:
        _duel_section(rules, run_dir / "model.zip", duel_games, args.seed + 2, vector=not quick)
    print()
    print(f"demo finished in {time.perf_counter() - t_start:.0f} s")
    return 0


def evaluation_table(rows: list[tuple[str, Any]], optimal: float, agent_exact: float | None) -> list[str]:
    """Step 4's table: per bot its simulated value, share of optimal moves and exact value.
    The PPO agent's exact value is ``agent_exact``, its training run's final one; the optimal
    bot's is ``optimal``; the others' their result's (``-`` where not enumerated)."""
    lines = [
        f"  {'bot':<30}{'points/turn (95% CI)':>24}{'of optimal':>12}{'optimal moves':>15}"
        f"{'exact value':>14}{'of optimal':>12}"
    ]
    for label, result in rows:
        est = result.score
        exact = optimal if label.startswith("optimal") else agent_exact if label == "PPO agent" else result.exact
        exact_text = f"{exact:>14,.1f}{exact / optimal:>12.2%}" if exact is not None else f"{'-':>14}{'-':>12}"
        lines.append(
            f"  {label:<30}{est.mean:>14,.1f} +- {est.half_width:>6,.1f}"
            f"{est.mean / optimal:>12.1%}{result.optimal_share:>15.1%}{exact_text}"
        )
    return lines


def _duel_section(rules: Any, model: Path, games: int, seed: int, vector: bool = True) -> None:
    """The trained agent (a turn player) against the solver's duel bot, in the numba engine
    (``vector=False``: in Python, which builds no numba tables: quicker for a few games)."""
    from greed_env.vector.optimal import check_optimal_supported
    from greed_env.vector.tables import VectorUnsupportedError

    try:
        check_optimal_supported(rules)
    except VectorUnsupportedError as exc:
        _section("5. Duel against the optimal bot: skipped")
        print(f"  {exc}")
        return
    _section(f"5. Whole games against the solver's duel bot ({games:,} games, seats balanced)")
    t0 = time.perf_counter()
    result = evaluate(str(model), rules, "duel", episodes=games, seed=seed, regret_episodes=0, vector=vector)
    est = result.score
    where = "numba" if vector else "Python"
    print(
        f"  PPO agent (trained for single turns) wins {est.mean:.1%} +- {est.half_width:.1%} "
        f"against optimal-duel (an equal player: 50%)  ({time.perf_counter() - t0:.0f} s, "
        f"the optimal bot played in {where})"
    )
    print("  it never learned the score: to play whole games, `greed train ppo_duel` (docs/results.md)")
