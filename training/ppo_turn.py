"""MaskablePPO on one turn (``greed_env/Solitaire-v0``, objective ``turn``), any rule book.

Each episode is one turn of a player already on the board; the return is the points banked
(times ``--reward-scale``), so with ``gamma = 1`` the value of the start is the expected turn
score, and the optimum is the solver's table value. The policy is greedy when it plays, so its
expected score needs no sampling: every evaluation also enumerates every roll the policy can
meet (``greed_env.evaluation.policy_value``) and reports the exact share of the optimum.
``--entry-starts F`` starts a share of the training turns off the board (the turn must reach
the entry threshold before it may bank), as every game's first turns are.

The defaults are the recipe of the shipped ``ppo-turn`` bots (256 units per layer, 30% entry
starts, 1M decisions on the native vector engine, seed 1). What they reach (training cards,
2 shared cores; docs/results.md, "The shipped ppo-turn bots")::

    greed train ppo_turn --rules ten_thousand   # ten_thousand/ppo-turn: 99.78% exact, 7.5 CPU-min
    greed train ppo_turn --rules farkle         # farkle/ppo-turn:       99.84%, 5.0 CPU-min
    greed train ppo_turn --rules farkle5        # farkle5/ppo-turn:      99.95%, 3.9 CPU-min
    greed train ppo_turn --rules greed          # greed/ppo-turn:        98.33%, 4.3 CPU-min
    greed train ppo_turn --rules zilch          # zilch/ppo-turn:        99.92%, 7.0 CPU-min

Zilch has no entry threshold, so its turns start on the board whatever ``--entry-starts`` says.
The eight-dice carry-over books need the lean masked distribution and leave the exact
enumeration out (their turns reach millions of positions)::

    greed train ppo_turn --rules progressive --net-width 128 --lean-masking --entry-starts 0 \\
        --total-timesteps 2000000 --eval-every 250000 --eval-episodes 2000 \\
        --final-eval-episodes 4000 --checkpoint-every 250000 --no-eval-exact
        # progressive/ppo-turn: 95.38% of the optimal turn (exact, measured after), 39.3 CPU-min
    greed train ppo_turn --rules trippn --net-width 32 --lean-masking --entry-starts 0 \\
        --total-timesteps 196608 --eval-every 1000000 --final-eval-episodes 2000 --no-eval-exact
        # trippn/ppo-turn: 1,251.4 points per turn, 28.2% of the optimum, 4.8 CPU-min

The turn stage of the ten_thousand duel recipe (``ppo_duel.py --chain``) is this script with
``--total-timesteps 2000000`` (99.94%, 5.2 CPU-min on a faster machine); 128 units without entry starts
(``--net-width 128 --entry-starts 0 --total-timesteps 2000000``) reach 99.81% +- 0.03 over three
seeds in about 10 CPU-min.

Run it as ``python training/ppo_turn.py ARGS`` or ``greed train ppo_turn ARGS``. A run writes
``runs/RULES__turn__EXP__SEED__TIME/`` (``model.zip``, its card ``model.json``, ``eval.csv``,
TensorBoard scalars in ``tb/``, checkpoints for ``--resume``); ``--export NAME`` also writes the
ONNX bot and its card to ``agents/RULES/NAME.onnx`` / ``.json``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch
from sb3_contrib import MaskablePPO

from greed_env.bots.export import export_model
from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.train.backends import make_solitaire, make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.curriculum import EntryStarts, KeepStarts
from greed_env.train.network import policy_class, policy_kwargs
from greed_env.train.run import Run, start_run
from greed_env.train.settings import (
    EvalSettings,
    ExportSettings,
    NetworkSettings,
    PPOSettings,
    RunSettings,
    parse_args,
    ppo_kwargs,
)
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_turn.py"


@dataclass
class Args(EvalSettings, NetworkSettings, PPOSettings, ExportSettings, RunSettings):
    """Train a MaskablePPO turn policy on greed_env/Solitaire-v0 and measure it against the solver."""

    # the run (RunSettings, ExportSettings): the defaults of this recipe
    checkpoint_every: int = 25_000

    # the environments
    num_envs: int = 256
    """parallel environments"""
    vector: Literal["native", "subproc", "dummy"] = "native"
    """'native': the batched numba engine (greed_env.vector); 'subproc': one process per
    environment; 'dummy': all in this process"""
    reward_scale: float = 1e-3
    """points-to-reward factor (0.001: a 500-point bank is +0.5)"""
    entry_starts: float = 0.3
    """share of the training turns that start not yet on the board, so the turn must reach the
    entry threshold before it may bank (needs --vector native; none where the rules have no
    threshold); evaluations stay on the board"""
    keep_starts: float = 0.0
    """share of the training turns that start after a random legal first keep, so the positions
    every first keep leads to are trained whatever the policy keeps (needs --vector native)"""

    # the network (NetworkSettings)
    features: Literal["greed", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, the turn total and the scores
    to the observation (greed_env.bots.featurize); 'none' feeds the observation alone"""
    net_width: int = 256

    # evaluation against the solver (EvalSettings)
    eval_every: int = 500_000
    eval_regret_episodes: int = 0
    """turns of each evaluation whose decisions the solver scores (regret per decision)"""
    eval_exact: bool = True
    """also compute the policy's exact expected turn score by enumerating every roll it can meet
    (seconds of CPU for a trained policy)"""
    eval_exact_positions: int = 1_000_000
    """skip the exact value of a policy whose turns reach more positions than this (an untrained
    policy that keeps rolling meets every turn total)"""


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run and return its folder; ``--export`` also writes the bot."""
    rules = rules_from_args(args.rules, args.rules_set)
    with start_run(args, objective="turn") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, environments, MaskablePPO, learning, final evaluation."""
    entry_starts = args.entry_starts if rules.entry_threshold else 0.0  # no turns off the board
    if (entry_starts or args.keep_starts) and args.vector != "native":
        raise ValueError("--entry-starts and --keep-starts need --vector native (or pass 0)")

    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the episodes of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # environments: num_envs Solitaire-v0 turns, with exploring starts off the board
    env_fn = functools.partial(make_solitaire, rules, "turn", args.reward_scale)
    envs = make_vec_env([env_fn] * args.num_envs, args.vector, env_seed)
    if entry_starts:
        envs = EntryStarts(envs, entry_starts, seed=args.seed + 7919)
    if args.keep_starts:
        envs = KeepStarts(envs, args.keep_starts, seed=args.seed + 104729)

    # the agent
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed)
    else:
        model = MaskablePPO(
            policy_class(args), envs, **ppo_kwargs(args), policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed, device="cpu",
        )  # fmt: skip
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
    model.set_logger(make_logger(run.dir))  # TensorBoard: charts/, losses/, eval/

    # evaluation against the solver: on-board turns, the greedy policy's exact value beside
    # the simulated mean
    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "turn",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes),
            exact=args.eval_exact,
            exact_max_positions=args.eval_exact_positions,
        )

    # learning: periodic evaluations, checkpoints and the entropy schedule ride on the callback
    periodic = functools.partial(evaluate_policy, episodes=args.eval_episodes)
    callback = TrainingCallback(run, periodic, ppo=args, evaluation=args)
    try:
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation, model.zip and its card model.json
    run.finish(
        model, callback, functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        script=SCRIPT, rules=rules, objective="turn",
        card_extra={"entry_starts": entry_starts, "keep_starts": args.keep_starts},
    )  # fmt: skip


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    evaluation = json.loads((run_dir / "model.json").read_text())["evaluation"]
    if evaluation.get("exact_ratio"):
        strength = f"{100 * evaluation['exact_ratio']:.2f}% of the optimal turn value, exact"
    else:
        strength = f"{evaluation['mean']:,.1f} points per turn, simulated"
    result = export_model(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        name=args.export,
        description=f"MaskablePPO turn policy, {args.net_width} units ({strength})",
        check_positions=args.export_check_positions,
        seed=args.seed,
        notes=f"{SCRIPT}, run {run_dir.name} (arguments in the training card)",
    )
    print(f"exported {result.onnx_path} and {result.card_path}")


if __name__ == "__main__":
    main(parse_args(Args))
