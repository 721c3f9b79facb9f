"""Teacher-assisted MaskablePPO on whole two-player games: PPO plus a distillation term toward
the exact solver's ``optimal-duel`` moves at the student's own positions, annealed to zero.

What it trains: a ``greed_env/Duel-v0`` policy on the native vector engine, against a bot the
engine plays in its kernels (a threshold bot: the engine does not play the carry-over rules'
optimal duel bot), usually warm-started from a turn policy (``--init-from``). The learner's seat
is drawn at every reset and the reward is +1 / -1 (0 for a shared pot) at the end of the game.
Each update adds ``w(t) * KL(teacher || student)`` over the legal moves of the rollout's
positions, the teacher being optimal-duel's win probabilities of the moves turned into a
distribution (a softmax at ``--teacher-temperature`` in win probability, ties split evenly; the
ladder bots are the same softmax). Labelling a position needs the in-turn pass of its score pair
(about 9 ms each under Progressive), so at most ``--teacher-max-contexts`` new score pairs are
labelled per rollout (1,024 pairs' arrays are kept between rollouts). A share of the games
(``--teacher-starts``) starts at turn starts of optimal-duel's games against itself, where both
scores reach the endgame as strong play reaches it. ``w`` falls linearly to exactly 0 at
``--teacher-until`` of the run; the rest is MaskablePPO's own update, so the final policy is
PPO's. Every evaluation plays seat-balanced games against ``optimal-duel`` and scores every
decision with the solver (the regret estimate ``0.5 - regret per game``).

The defaults are the Progressive recipe's first stage: a 512-unit network from scratch, the
teacher's weight 5 falling to 0 at the end of the run, 80% of the games started along the
teacher's own games, 1M decisions. The second stage runs the same teacher again from that
policy (docs/experiments/teacher.md has the runs and what each lever bought; starting from a
turn policy with a weaker teacher was the first try)::

    greed train ppo_teacher_duel --rules progressive --run-name prog_duel_1
        # 40.63% +- 0.68 against optimal-duel by the regret estimate, 34.3 CPU-min
    greed train ppo_teacher_duel --rules progressive --init-from runs/prog_duel_1/model.zip \\
        --seed 2 --run-name prog_duel_2 --export ppo-duel-kick
        # 42.92% +- 0.75 (1,000 games), 37.8 CPU-min more

The strength of the exported bot, from its ONNX file and card alone::

    greed eval progressive/ppo-duel-kick --rules progressive --objective duel --episodes 2000 \\
        --regret-episodes 2000 --workers 1 --seed 7
        # 43.84% +- 0.39 against optimal-duel by the regret estimate (win rate 43.43% +- 2.09)

Run it as ``python training/ppo_teacher_duel.py ARGS`` or ``greed train ppo_teacher_duel ARGS``.
A run writes ``runs/RULES__duel__EXP__SEED__TIME/`` (``model.zip``, ``model.json`` with the
teacher's settings under ``teacher``, ``eval.csv``, ``tb/``, checkpoints); ``--export NAME``
also writes the ONNX bot and its card to ``agents/RULES/``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate, resolve_bot
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.solver.optimal_bot import OptimalBot
from greed_env.train.backends import make_duel, make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.kickstart import (
    KickstartPPO,
    PPOLosses,
    RowRecorder,
    TeacherSamples,
    TeacherStarts,
    distillation_loss,
    export_bot,
)
from greed_env.train.network import policy_class, policy_kwargs
from greed_env.train.run import Run, start_run
from greed_env.train.settings import (
    EvalSettings,
    ExportSettings,
    Features,
    NetworkSettings,
    PPOSettings,
    RunSettings,
    TeacherSettings,
    parse_args,
    ppo_kwargs,
)
from greed_env.train.teacher import TeacherLabeller, teacher_starts
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_teacher_duel.py"


@dataclass
class Args(EvalSettings, NetworkSettings, PPOSettings, TeacherSettings, ExportSettings, RunSettings):
    """Teacher-assisted MaskablePPO on greed_env/Duel-v0 (two seats, the learner's seat drawn),
    the solver's optimal-duel as teacher, measured against optimal-duel."""

    # the run (RunSettings, ExportSettings): the defaults of this recipe
    exp_name: str = "kick"
    rules: str = "progressive"
    progress: bool = False
    export_games: int = 200
    """games against each of the rules' default opponents that --export plays and stores in the bot card"""

    # the teacher (TeacherSettings)
    teacher_weight: float = 5.0
    teacher_until: float = 1.0
    teacher_temperature: float = 0.002
    """temperature of the teacher's softmax over the moves' win probabilities (0: argmax, ties split)"""
    teacher_max_contexts: int = 1000
    """new score pairs labelled per rollout at most (a seeded choice weighted by their positions)"""
    teacher_starts: float = 0.8
    """share of the games that start at a turn start of the teacher's own games against itself"""
    teacher_start_games: int = 300
    """games of optimal-duel against itself whose turn starts make that pool"""

    # the environments
    num_envs: int = 256
    """parallel games of the native engine"""
    vector: Literal["native"] = "native"
    """vector environment: the teacher reads the native engine's rows, so only 'native'"""
    opponent: str = "threshold-1000"
    """the training opponent, one the native engine plays in its kernels: 'threshold-N' or
    'random' (or 'optimal' on rules without carry-over)"""

    # PPO (PPOSettings)
    ent_coef: float = 0.001

    # the network (NetworkSettings)
    features: Features = "margin"
    need_readings: bool = True
    lean_masking: bool = True
    net_width: int = 512

    # evaluation against optimal-duel (EvalSettings)
    eval_episodes: int = 200
    """seat-balanced games per periodic evaluation, every decision scored (regret estimate)"""
    final_eval_episodes: int = 1000
    """seat-balanced games of the final evaluation, every decision scored (regret estimate)"""


# The algorithm: MaskablePPO whose loss on every minibatch gains a distillation term toward the
# teacher's move distribution, at a weight that falls linearly to exactly zero:
#
#     loss = L_clip + ent_coef * L_entropy + vf_coef * L_value + w(t) * KL(teacher || student)
#     w(t) = w0 * (1 - t / T) for t < T, then 0        (w0: --teacher-weight, T: --teacher-until)
#
# KL(teacher || student) is distillation_loss: the mean over the rollout's labelled positions s
# of sum_a p(a|s) (log p(a|s) - log q(a|s)), p the teacher, q the student, a the legal moves.
# While w(t) > 0, KickstartPPO labels the rollout's positions with the teacher (at most
# --teacher-max-contexts new score pairs), then runs MaskablePPO's update with `minibatch_loss`
# in place of PPO's own sum; from T on it labels nothing and its update is MaskablePPO's.


def teacher_weight(args: Args, step: int) -> float:
    """``w(t)``: ``--teacher-weight`` at step 0, falling linearly to 0 at ``--teacher-until``."""
    until = int(args.teacher_until * args.total_timesteps)
    return args.teacher_weight * (1.0 - step / until) if step < until and args.teacher_weight else 0.0


def minibatch_loss(model: KickstartPPO, batch: TeacherSamples, ppo: PPOLosses, w: float) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's loss of one minibatch plus ``w * KL(teacher || student)``; the KL term too, for the log."""
    kl = distillation_loss(ppo.log_probs, batch.teacher_actions.long(), batch.teacher_probs, batch.teacher_on.bool())
    return ppo.policy + model.ent_coef * ppo.entropy + model.vf_coef * ppo.value + w * kl, kl


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run and return its folder; ``--export`` also writes the bot."""
    args.check()
    rules = rules_from_args(args.rules, args.rules_set)
    resolve_bot(args.opponent, rules, "duel")  # refuse an unknown opponent before any folder
    policy_kwargs(args, rules)  # refuses settings the rules cannot take, before any run folder
    with start_run(args, objective="duel") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def evaluate_policy(args: Args, rules: Rules, policy: NumpyPolicy, episodes: int) -> EvalResult:
    """Seat-balanced games against optimal-duel, every decision scored by the solver."""
    return evaluate(
        PolicyBot(policy, rules, name=args.exp_name),
        rules,
        "duel",
        episodes=episodes,
        seed=args.eval_seed,
        regret_episodes=episodes,
        opponent="optimal",
    )


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, the teacher, environments, KickstartPPO, final evaluation."""
    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the games of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # the teacher: optimal-duel's win probabilities of the moves at temperature
    # --teacher-temperature (its table is also the one its self-play games are played from)
    teacher_bot = OptimalBot(rules, "duel")
    teacher = TeacherLabeller(rules, "duel", args.teacher_temperature, table=teacher_bot.table)
    weight = functools.partial(teacher_weight, args)

    # environments: num_envs games against the opponent, a share started along the teacher's
    # games, the rows recorded for the teacher (outermost)
    env_fn = functools.partial(make_duel, rules, args.opponent)
    envs = make_vec_env([env_fn] * args.num_envs, "native", env_seed)
    if args.teacher_starts:
        rng = np.random.default_rng(args.seed + 104729)
        pool = teacher_starts(rules, teacher_bot, args.teacher_start_games, rng, keep=lambda s: not s.endgame)
        print(f"teacher starts: {len(pool)} turn starts from {args.teacher_start_games} optimal-duel games", flush=True)
        envs = TeacherStarts(envs, pool, args.teacher_starts, seed=args.seed + 7919)
    envs = RowRecorder(envs)

    # the agent: MaskablePPO with the distillation term, warm-started from --init-from
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed, model_class=KickstartPPO)
        model.attach_teacher(teacher, weight, minibatch_loss, max_contexts=args.teacher_max_contexts)
    else:
        model = KickstartPPO(
            policy_class(args), envs, **ppo_kwargs(args), policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed, device="cpu", teacher=teacher, teacher_weight=weight, minibatch_loss=minibatch_loss,
            max_contexts=args.teacher_max_contexts,
        )  # fmt: skip
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
    model.set_logger(make_logger(run.dir))  # TensorBoard: charts/, losses/ (teacher_kl), eval/

    # learning: periodic evaluations, checkpoints and the entropy schedule ride on the callback
    periodic = functools.partial(evaluate_policy, args, rules, episodes=args.eval_episodes)
    callback = TrainingCallback(run, periodic, ppo=args, evaluation=args)
    try:
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation (the regret estimate), model.zip and its card with the teacher's settings
    teacher_card = {
        "teacher": "optimal-duel" if args.teacher_weight > 0 else None,
        "teacher_temperature": args.teacher_temperature,
        "teacher_weight": args.teacher_weight,
        "teacher_until_step": int(args.teacher_until * args.total_timesteps),
        "teacher_max_contexts": args.teacher_max_contexts,
        "teacher_starts": args.teacher_starts,
        "teacher_start_games": args.teacher_start_games,
        "teacher_label_cpu_s": round(model.label_seconds, 3),
    }
    run.finish(
        model, callback, functools.partial(evaluate_policy, args, rules, episodes=args.final_eval_episodes),
        script=SCRIPT, rules=rules, objective="duel",
        card_extra={
            "opponent": args.opponent, "teacher": teacher_card,
            "init_from": Path(args.init_from).name if args.init_from else None,
        },
    )  # fmt: skip


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    card = json.loads((run_dir / "model.json").read_text())
    evaluation, teacher = card["evaluation"] or {}, card["teacher"]
    estimate = evaluation.get("regret_estimate")
    strength = (
        f"{100 * estimate:.2f}% vs optimal-duel (regret estimate, {args.final_eval_episodes:,} games)"
        if estimate is not None else f"{100 * evaluation.get('mean', 0.0):.2f}% vs optimal-duel"
    )  # fmt: skip
    made = (
        f"PPO + solver teacher (KL toward optimal-duel's move values, temperature {args.teacher_temperature:g} "
        f"in win probability, annealed to 0 at {teacher['teacher_until_step']:,} of {card['steps']:,} decisions)"
        if teacher["teacher"] else "PPO alone (teacher weight 0)"
    )  # fmt: skip
    export_bot(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        args.export,
        f"MaskablePPO for whole games, {args.net_width} units, {made.split(' (')[0]}; {strength}",
        f"{SCRIPT}, run {run_dir.name}: {made}, trained against {args.opponent}; "
        f"{card['cpu_time_s'] / 60:.1f} CPU-minutes of this stage (arguments in the training card)",
        check_positions=args.export_check_positions,
        seed=args.seed,
        games=args.export_games,
    )


if __name__ == "__main__":
    main(parse_args(Args))
