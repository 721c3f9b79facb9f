"""MaskablePPO on the race to an exact target (``greed_env/Solitaire-v0``, objective ``race``).

Each episode is a race from 0 to the target: -1 per turn until the player lands on it, so the
value of the start is minus the expected number of turns, and the optimum is the solver's race
table. Under Progressive's exact target the last points are the expensive ones: banking into
the last few hundred points needs dozens of turns to get out, which a turn policy never learns.
Two levers teach the landing: ``--need-readings`` reads the points still needed to land
(target less banked score less turn total), and ``--race-starts F`` starts a share of the races
from a banked score drawn below the target (``--race-starts-near G``: a share of those in the
last fifth), so the endgame is trained from the first update.

The shipped ``progressive/ppo-duel`` (the strongest Progressive bot for whole games after
``optimal-duel`` and its ladder) is three race stages from the Progressive turn policy; the
defaults are its last stage, the :data:`CHAIN` below lists all of them, and ``--chain`` trains
the chain for one seed, the turn stage (``ppo_turn.py``, Progressive settings) first::

    greed train progressive_race --chain --seed 3 --export ppo-duel
        # progressive/ppo-duel: 22.2 +- 1.0 turns to finish a race (optimal 8.97; the turn
        # policy 110), 12.5% +- 1.7 vs optimal-duel by the regret estimate (1,000 games);
        # 27.8 CPU-min turn stage + 32 CPU-min race stages (2 shared cores)

The stages by hand (each ``--init-from`` the one before; what each reached, turns to finish a
race from 0, 2,000 races: ``prog_race_1`` 88.9, ``prog_race_2`` 33.4, ``prog_race_3`` 22.2)::

    greed train ppo_turn --rules progressive --seed 3 --net-width 128 --lean-masking --entry-starts 0 \\
        --total-timesteps 2000000 --eval-every 250000 --eval-episodes 2000 --final-eval-episodes 4000 \\
        --checkpoint-every 250000 --no-eval-exact --run-name prog_w128_3
    greed train progressive_race --seed 1 --init-from runs/prog_w128_3/model.zip --total-timesteps 600000 \\
        --race-starts 0.8 --race-starts-near 0 --learning-rate 1e-4 --ent-coef 0.003 --vf-warmup 65536 \\
        --eval-every 200000 --checkpoint-every 200000 --run-name prog_race_1
    greed train progressive_race --seed 2 --init-from runs/prog_race_1/model.zip --run-name prog_race_2
    greed train progressive_race --seed 3 --init-from runs/prog_race_2/model.zip --run-name prog_race_3

Any rule book runs the race objective (``--rules``); only exact-target books have need readings.
Run it as ``python training/progressive_race.py ARGS`` or ``greed train progressive_race ARGS``.
A run writes ``runs/RULES__race__EXP__SEED__TIME/`` (``model.zip``, ``model.json``,
``eval.csv``, ``tb/``, checkpoints); ``--export NAME`` also writes the ONNX bot and its card to
``agents/RULES/``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from sb3_contrib import MaskablePPO

from greed_env.bots.export import export_model
from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.train.backends import make_solitaire, make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.curriculum import RaceStarts
from greed_env.train.network import policy_class, policy_kwargs
from greed_env.train.recipes import run_recipe
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

SCRIPT = "training/progressive_race.py"


@dataclass
class Args(EvalSettings, NetworkSettings, PPOSettings, ExportSettings, RunSettings):
    """Train a MaskablePPO policy to finish races on an exact target, from a turn policy."""

    # the run (RunSettings, ExportSettings): the defaults of this recipe
    seed: int = 3
    rules: str = "progressive"
    chain: bool = False
    """train every stage of CHAIN (the turn stage first) into runs_dir/RULES__STAGE__SEED; the race
    stages use seeds --seed - 2, --seed - 1 and --seed; finished stages are kept"""

    # the environments
    num_envs: int = 256
    """parallel races"""
    vector: Literal["native", "subproc", "dummy"] = "native"
    """'native': the batched numba engine (greed_env.vector); 'subproc': one process per race;
    'dummy': all in this process"""
    race_starts: float = 0.9
    """share of the races that start from a banked score drawn uniformly below the target
    (needs --vector native); evaluations run whole races from 0"""
    race_starts_near: float = 0.5
    """share of the --race-starts drawn within the last fifth below the target (the landing)"""

    # PPO (PPOSettings)
    vf_warmup: int = 0
    """environment steps at the start during which only the value network learns (fits the new
    race critic to an --init-from turn policy before its advantages move that policy)"""

    # the network (NetworkSettings)
    features: Literal["greed", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, turn total and scores (and the
    working sets); 'none' feeds the observation alone"""
    need_readings: bool = True
    """read the points still needed to land on the exact target after banking now (rules with
    an exact target only; a turn policy without them starts with their weights at 0)"""
    lean_masking: bool = True

    # evaluation against the solver's race table (EvalSettings)
    eval_episodes: int = 500
    """races from 0 per periodic evaluation"""
    eval_regret_episodes: int = 0
    """races of each evaluation whose decisions the solver scores"""
    final_eval_episodes: int = 2000
    """races of the final evaluation written into the model card"""


@dataclass(frozen=True)
class Stage:
    """One stage of :data:`CHAIN`: a run of a script from the model of the stage ``after``."""

    name: str
    after: str
    settings: Mapping[str, Any]
    seed_offset: int = 0


TURN_STAGE: Mapping[str, Any] = {
    "net_width": 128, "lean_masking": True, "entry_starts": 0.0, "total_timesteps": 2_000_000,
    "eval_every": 250_000, "eval_episodes": 2000, "final_eval_episodes": 4000, "checkpoint_every": 250_000,
    "eval_exact": False,
}  # fmt: skip
"""The Progressive turn stage: ppo_turn.py with 128 units and lean masking for 2M decisions."""

CHAIN: tuple[Stage, ...] = (
    Stage("race1", after="turn", seed_offset=-2, settings={
        "total_timesteps": 600_000, "race_starts": 0.8, "race_starts_near": 0.0, "learning_rate": 1e-4,
        "ent_coef": 0.003, "vf_warmup": 65_536, "eval_every": 200_000, "checkpoint_every": 200_000,
    }),  # 88.9 turns to finish
    Stage("race2", after="race1", seed_offset=-1, settings={}),  # the defaults: 33.4 turns
    Stage("race3", after="race2", settings={}),  # 22.2 turns; shipped as progressive/ppo-duel
)  # fmt: skip
"""The stages behind progressive/ppo-duel (docs/results.md, Progressive: the landing)."""


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run, or with ``--chain`` every stage; returns the last run's
    folder. ``--export`` also writes the bot."""
    if args.chain:
        return run_chain(args)
    rules = rules_from_args(args.rules, args.rules_set)
    with start_run(args, objective="race") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, environments, MaskablePPO, learning, final evaluation."""
    if args.race_starts and args.vector != "native":
        raise ValueError("--race-starts needs --vector native (or pass 0)")
    if args.race_starts_near and not args.race_starts:
        raise ValueError("--race-starts-near needs --race-starts")

    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the races of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # environments: num_envs races, most of them from random banked scores
    env_fn = functools.partial(make_solitaire, rules, "race")
    envs = make_vec_env([env_fn] * args.num_envs, args.vector, env_seed)
    if args.race_starts:
        envs = RaceStarts(envs, args.race_starts, seed=args.seed + 130363, near=args.race_starts_near)

    # the agent: warm-started from the turn policy (its missing need readings at weight 0)
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

    # evaluation against the race table: whole races from 0, the mean number of turns
    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "race",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes),
        )

    # learning: periodic evaluations, checkpoints, the entropy schedule and the critic's warm-up
    periodic = functools.partial(evaluate_policy, episodes=args.eval_episodes)
    callback = TrainingCallback(run, periodic, ppo=args, evaluation=args, vf_warmup=args.vf_warmup)
    try:
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation, model.zip and its card model.json
    run.finish(
        model, callback, functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        script=SCRIPT, rules=rules, objective="race",
        card_extra={"race_starts": args.race_starts, "race_starts_near": args.race_starts_near},
    )  # fmt: skip


def run_chain(args: Args) -> Path:
    """The turn stage, then every stage of :data:`CHAIN`, each in ``runs_dir/RULES__STAGE__SEED``
    (a stage with its card is done; one with a checkpoint resumes); returns the last folder."""
    if args.seed < 2:
        raise ValueError(f"--chain trains its race stages with seeds --seed - 2 .. --seed: --seed {args.seed} is below 2")
    dataclasses.replace(args, init_from=None).check()  # before hours of stages: a bad --export fails now
    runs = Path(args.runs_dir)
    turn_dir = runs / f"{args.rules}__turn__{args.seed}"
    if not (turn_dir / "model.json").is_file():
        run_recipe("ppo_turn", {
            **TURN_STAGE, "rules": args.rules, "rules_set": args.rules_set, "seed": args.seed, "runs_dir": str(runs),
            "run_name": turn_dir.name, "resume": (turn_dir / "checkpoints" / "latest.json").is_file(),
            "progress": args.progress, "torch_threads": args.torch_threads,
        })  # fmt: skip
    models = {"turn": turn_dir / "model.zip"}
    for stage in CHAIN:
        folder = runs / f"{args.rules}__{stage.name}__{args.seed}"
        if not (folder / "model.json").is_file():
            main(dataclasses.replace(
                args, **stage.settings, chain=False, export="", exp_name=stage.name,
                seed=args.seed + stage.seed_offset, init_from=str(models[stage.after]),
                run_name=folder.name, resume=(folder / "checkpoints" / "latest.json").is_file(),
            ))  # fmt: skip
        models[stage.name] = folder / "model.zip"
    last = models[CHAIN[-1].name].parent
    if args.export:
        export(args, rules_from_args(args.rules, args.rules_set), last)
    return last


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    evaluation = json.loads((run_dir / "model.json").read_text())["evaluation"]
    result = export_model(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        name=args.export,
        objective="race",
        description=(
            f"MaskablePPO race policy for an exact target, {args.net_width} units; "
            f"{evaluation['mean']:.1f} turns to finish a race (optimal {evaluation['optimal']:.2f})"
        ),
        check_positions=args.export_check_positions,
        seed=args.seed,
        notes=f"{SCRIPT}, run {run_dir.name} (arguments in the training card)",
    )
    print(f"exported {result.onnx_path} and {result.card_path}")


if __name__ == "__main__":
    main(parse_args(Args))
