"""MaskablePPO on whole games (``greed_env/Duel-v0``) against a bot, ``optimal-duel`` by default.

The learner's seat is drawn at every reset and the reward is +1 / -1 (0 for a shared pot) at
the end of the game. On the native vector engine the opponent, the solver's optimal duel bot
included, plays inside the numba batch. Exploring starts change what the learner sees, never
what it is measured on: ``--final-round-starts F`` begins a share of the episodes at the
learner's last turn of the final round (none on rules without a final round or with an exact
target), ``--score-starts F`` at a turn start with random banked scores. Every evaluation plays
seat-balanced games against ``optimal-duel`` (the optimum is one half); the final one also
scores the decisions of its first ``--final-regret-episodes`` games with the solver, whose
estimate ``0.5 - regret per game`` has a far smaller interval than the games' +-1 outcomes.

The defaults are the first duel stage of the shipped ``ten_thousand/ppo-duel`` (256 units,
8M decisions, half of the episodes started in the final round, from the turn stage's weights).
That bot is the end of a chain of stages, the :data:`CHAIN` below, each a run of this script
from the model of the stage before (``--init-from``), the last rounds branches averaged into
model soups (greed_env.train.soup). ``--chain`` trains all of it for one seed, the turn stage
(``ppo_turn.py --total-timesteps 2000000``) first; a finished stage is not trained again, so the
command resumes where it stopped::

    greed train ppo_duel --chain --seed 3 --export ppo-duel
        # ten_thousand/ppo-duel: 49.46% +- 0.06 vs optimal-duel (regret estimate, 2,000 games),
        # 49.61% +- 0.31 on the cards' 100,000 games; 123.5 CPU-min in all (2 shared cores)

One stage by hand, e.g. the first (47.8% by the regret estimate, three seeds)::

    greed train ppo_turn --seed 3 --total-timesteps 2000000 --run-name turn3
    greed train ppo_duel --seed 3 --init-from runs/turn3/model.zip

The short-budget duel bots of the rule books without a final round (greed, farkle, farkle5:
45.0%, 45.7%, 44.7% vs optimal-duel over 20,000 games, about 3 CPU-min with the turn stage)::

    greed train ppo_turn --rules greed --net-width 128 --total-timesteps 500000 --run-name greed_turn
    greed train ppo_duel --rules greed --seed 1 --net-width 128 --total-timesteps 300000 \\
        --init-from runs/greed_turn/model.zip --eval-every 1000000 --final-eval-episodes 20000 \\
        --final-regret-episodes 0

Run it as ``python training/ppo_duel.py ARGS`` or ``greed train ppo_duel ARGS``. A run writes
``runs/RULES__duel__EXP__SEED__TIME/`` (``model.zip``, ``model.json``, ``eval.csv``, ``tb/``,
checkpoints); ``--export NAME`` also writes the ONNX bot and its card to ``agents/RULES/``.
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
from greed_env.evaluation import EvalResult, evaluate, resolve_bot
from greed_env.files import atomic_write_text, strict_json
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.train.backends import make_duel, make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.curriculum import FinalRoundStarts
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
from greed_env.train.shaping import SolverPotentialShaping
from greed_env.train.soup import soup
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights, soften

SCRIPT = "training/ppo_duel.py"


@dataclass
class Args(EvalSettings, NetworkSettings, PPOSettings, ExportSettings, RunSettings):
    """Train a MaskablePPO agent on greed_env/Duel-v0 and measure it against the optimal duel bot."""

    # the run (RunSettings, ExportSettings): the defaults of this recipe
    seed: int = 3
    checkpoint_every: int = 500_000
    total_timesteps: int = 8_000_000
    chain: bool = False
    """train every stage of CHAIN for --seed (the turn stage first) into runs_dir/RULES__duel__STAGE__SEED;
    finished stages are kept; the stages' settings replace these arguments' where they name them"""

    # the environments
    num_envs: int = 512
    """parallel games"""
    vector: Literal["native", "subproc", "dummy"] = "native"
    """'native': the batched numba engine, opponent included; 'subproc': one process per game;
    'dummy': all in this process"""
    opponent: str = "optimal"
    """opponent bot: 'optimal' (the solver's duel bot), 'threshold:N', 'random', a registry id or a model file"""
    final_round_starts: float = 0.5
    """share of the episodes that start at the learner's final-round turn, the opponent just past
    the target (needs --vector native; none where the rules have no final round or an exact target)"""
    final_round_near: float = 0.0
    """share of those starts in which the learner trails by at most 3,000 points"""
    final_round_warmup: int = 0
    """final-round starts move on into the learner's turn by up to this many random roll-and-keep steps"""
    score_starts: float = 0.0
    """share of the episodes that start at a turn start with both banked scores drawn below the
    target, either seat to move (needs --vector native)"""
    score_starts_warmup: int = 0
    """random-score starts on the learner's turn move on into it by up to this many random steps"""
    score_starts_near: float = 0.0
    """share of the random-score starts with both scores within a fifth of the target below it"""
    shaping: Literal["none", "solver"] = "none"
    """'solver': add the potential-based reward phi(s') - phi(s), phi = 2 P - 1 with P the solver's
    win probability (policy-invariant, but it feeds the exact solution into training; needs
    --vector native; greed_env.train.shaping)"""

    # PPO (PPOSettings)
    learning_rate: float = 1e-4
    minibatch_size: int = 4096
    gae_lambda: float = 0.8
    """lambda of generalised advantage estimation (0.8 leans on the critic; later stages use 0.95)"""
    ent_coef: float = 0.003
    vf_coef: float = 1.0
    vf_warmup: int = 0
    """environment steps at the start during which only the value network learns"""

    # the network (NetworkSettings)
    net_width: int = 256
    init_temperature: float = 1.0
    """divide the --init-from policy's logits of the moves other than keeps by this (>= 1): the
    greedy play stays, but bank-or-roll choices the turn stage ruled out are sampled again"""

    # evaluation against optimal-duel (EvalSettings)
    eval_every: int = 500_000
    eval_episodes: int = 40_000
    """seat-balanced games per periodic evaluation (+-0.5 points)"""
    eval_regret_episodes: int = 0
    """games of each periodic evaluation whose decisions the solver scores"""
    final_eval_episodes: int = 100_000
    """games of the final evaluation written into the model card (+-0.3 points)"""
    final_regret_episodes: int = 2000
    """games of the final evaluation whose decisions the solver scores: the estimate
    0.5 - regret per game (+-0.09 points from 2,000 games; 0: none)"""

    def check(self) -> None:
        super().check()
        if self.init_temperature < 1.0 or (self.init_temperature != 1.0 and not self.init_from):
            raise ValueError(f"--init-temperature {self.init_temperature}: needs a value >= 1 and --init-from")


@dataclass(frozen=True)
class Stage:
    """One stage of :data:`CHAIN`: a run of this script from the model of the stage ``after``
    (seed ``--seed`` + ``seed_offset``), or with ``soup_of`` the weight average of those stages."""

    name: str
    after: str = ""
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    seed_offset: int = 0
    soup_of: tuple[str, ...] = ()


TURN_STAGE: Mapping[str, Any] = {"total_timesteps": 2_000_000}
"""The turn stage: ppo_turn.py's defaults (256 units, 30% entry starts) for 2M decisions."""
LATE_STARTS: Mapping[str, Any] = {
    "total_timesteps": 3_000_000, "ent_coef": 0.001, "final_round_starts": 0.3, "final_round_near": 0.8,
    "final_round_warmup": 3, "score_starts": 0.4, "score_starts_warmup": 3, "score_starts_near": 0.5,
}  # fmt: skip
"""Every stage after the first: 3M decisions, warm final-round and random-score starts."""
CROSSING: Mapping[str, Any] = {**LATE_STARTS, "features": "margin-cross", "gae_lambda": 0.95}
SLOW: Mapping[str, Any] = {**CROSSING, "learning_rate": 5e-5}
BRANCH: Mapping[str, Any] = {**SLOW, "eval_every": 100_000_000, "final_eval_episodes": 20_000}
"""A branch of a soup: no periodic evaluation, a 20,000-game final one."""

CHAIN: tuple[Stage, ...] = (
    Stage("eppo", after="turn"),  # the defaults: 8M decisions from the turn stage
    Stage("emfinal", after="eppo", settings={**LATE_STARTS, "features": "margin-final", "init_temperature": 4.0}),
    Stage("elamx", after="emfinal", settings=CROSSING),
    Stage("elamx5", after="elamx", settings=SLOW),
    Stage("elamx6", after="elamx5", settings=SLOW),
    Stage("elamx6b", after="elamx5", settings=BRANCH, seed_offset=10),
    Stage("elamx6c", after="elamx5", settings=BRANCH, seed_offset=20),
    Stage("esoup6", soup_of=("elamx6", "elamx6b", "elamx6c")),
    Stage("elamx7a", after="esoup6", settings=BRANCH, seed_offset=30),
    Stage("elamx7b", after="esoup6", settings=BRANCH, seed_offset=40),
    Stage("elamx7c", after="esoup6", settings=BRANCH, seed_offset=50),
    Stage("esoup7", soup_of=("elamx7a", "elamx7b", "elamx7c")),  # shipped as ten_thousand/ppo-duel
)
"""The stages behind ten_thousand/ppo-duel, in order (docs/results.md, the duel recipe and its
model soups): margin readings in final rounds only, then crossing readings with GAE lambda 0.95,
a halved learning rate, and two rounds of three branches averaged."""


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run, or with ``--chain`` every stage; returns the last run's
    folder. ``--export`` also writes the bot."""
    if args.chain:
        return run_chain(args)
    rules = rules_from_args(args.rules, args.rules_set)
    resolve_bot(args.opponent, rules, "duel")  # refuse an unknown opponent before any folder
    with start_run(args, objective="duel") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def evaluate_policy(args: Args, rules: Rules, policy: NumpyPolicy, episodes: int, regret: int) -> EvalResult:
    """Seat-balanced games against optimal-duel, the first ``regret`` of them scored by the solver."""
    return evaluate(
        PolicyBot(policy, rules, name=args.exp_name),
        rules,
        "duel",
        episodes=episodes,
        seed=args.eval_seed,
        regret_episodes=min(episodes, regret),
        opponent="optimal",
    )


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, environments, MaskablePPO, learning, final evaluation."""
    final_round = rules.final_round and not rules.exact_target  # where final-round starts exist
    final_round_starts = args.final_round_starts if final_round else 0.0

    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the games of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # environments: num_envs games against the opponent, with exploring starts and shaping
    env_fn = functools.partial(make_duel, rules, args.opponent)
    envs = make_vec_env([env_fn] * args.num_envs, args.vector, env_seed)
    if final_round_starts or args.score_starts:
        envs = FinalRoundStarts(
            envs,
            final_round_starts,
            seed=args.seed + 7919,
            near=args.final_round_near,
            warmup=args.final_round_warmup,
            scores=args.score_starts,
            scores_warmup=args.score_starts_warmup,
            scores_near=args.score_starts_near,
        )
    if args.shaping == "solver":
        envs = SolverPotentialShaping(envs)

    # the agent: a fresh network, warm-started from --init-from with bank-or-roll softened
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed)
    else:
        model = MaskablePPO(
            policy_class(args), envs, **ppo_kwargs(args), policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed, device="cpu",
        )  # fmt: skip
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
            soften(model, args.init_temperature, rules)
    model.set_logger(make_logger(run.dir))  # TensorBoard: charts/, losses/, eval/

    # learning: periodic evaluations, checkpoints, the entropy schedule and the critic's warm-up
    periodic = functools.partial(evaluate_policy, args, rules, episodes=args.eval_episodes, regret=args.eval_regret_episodes)
    callback = TrainingCallback(run, periodic, ppo=args, evaluation=args, vf_warmup=args.vf_warmup)
    try:
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation (played games and the regret estimate), model.zip and model.json
    final = functools.partial(evaluate_policy, args, rules, episodes=args.final_eval_episodes, regret=args.final_regret_episodes)
    run.finish(
        model, callback, final, script=SCRIPT, rules=rules, objective="duel",
        card_extra={
            "opponent": args.opponent, "shaping": args.shaping, "final_round_starts": final_round_starts,
            "score_starts": args.score_starts,
        },
    )  # fmt: skip


def run_chain(args: Args) -> Path:
    """Every stage of :data:`CHAIN` for ``--seed``, the turn stage first, each in
    ``runs_dir/RULES__duel__STAGE__SEED`` (a stage with its card is done; one with a checkpoint
    resumes); returns the last stage's folder."""
    dataclasses.replace(args, init_from=None).check()  # before hours of stages: a bad --export fails now
    runs = Path(args.runs_dir)
    turn_dir = runs / f"{args.rules}__turn__chain__{args.seed}"
    if not (turn_dir / "model.json").is_file():
        run_recipe("ppo_turn", {
            **TURN_STAGE, "rules": args.rules, "rules_set": args.rules_set, "seed": args.seed, "runs_dir": str(runs),
            "run_name": turn_dir.name, "resume": (turn_dir / "checkpoints" / "latest.json").is_file(),
            "progress": args.progress, "torch_threads": args.torch_threads,
        })  # fmt: skip
    models = {"turn": turn_dir / "model.zip"}
    for stage in CHAIN:
        folder = runs / f"{args.rules}__duel__{stage.name}__{args.seed}"
        if stage.soup_of:
            make_soup(args, [models[name] for name in stage.soup_of], folder)
        elif not (folder / "model.json").is_file():
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


def make_soup(args: Args, members: list[Path], folder: Path) -> None:
    """The weight average of ``members`` in ``folder``, played like a stage's final evaluation
    (its result goes into the soup's card)."""
    if not (folder / "model.json").is_file():
        soup(members, folder)
    card = json.loads((folder / "model.json").read_text())
    if card.get("evaluation") is None:
        rules = rules_from_args(args.rules, args.rules_set)
        policy = NumpyPolicy.from_sb3(MaskablePPO.load(folder / "model.zip", device="cpu"))
        result = evaluate_policy(args, rules, policy, args.final_eval_episodes, args.final_regret_episodes)
        card["evaluation"] = result.summary()
        atomic_write_text(folder / "model.json", json.dumps(strict_json(card), indent=1, allow_nan=False) + "\n")
        print(f"soup {folder.name}: {result.score.fmt(4)} vs optimal-duel")


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    evaluation = json.loads((run_dir / "model.json").read_text())["evaluation"] or {}
    estimate = evaluation.get("regret_estimate")
    strength = (
        f"{100 * estimate:.2f}% vs optimal-duel (regret estimate)" if estimate is not None
        else f"{100 * evaluation.get('mean', 0.0):.2f}% vs optimal-duel"
    )  # fmt: skip
    opponent = "optimal-duel" if args.opponent == "optimal" else args.opponent
    result = export_model(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        name=args.export,
        objective="duel",
        description=f"MaskablePPO trained on whole games against {opponent}, {args.net_width} units; {strength}",
        check_positions=args.export_check_positions,
        seed=args.seed,
        notes=f"{SCRIPT}, run {run_dir.name} (arguments in the training card)",
    )
    print(f"exported {result.onnx_path} and {result.card_path}")


if __name__ == "__main__":
    main(parse_args(Args))
