"""Teacher-assisted MaskablePPO on one turn: PPO plus a distillation term toward the exact
solver's ``optimal-turn`` moves at the student's own positions, annealed to zero.

What it trains: a ``greed_env/Solitaire-v0`` turn policy (objective ``turn``: the points of one
turn of a player on the board) on the native vector engine. Each PPO update adds
``w(t) * KL(teacher || student)`` over the legal moves of the rollout's positions, the teacher
being the solver's move values turned into a distribution (a softmax at ``--teacher-temperature``
points, ties split evenly; ``greed_env.train.teacher``). ``w`` falls linearly from
``--teacher-weight`` to exactly 0 at ``--teacher-until`` of the run; the rest of the run is
MaskablePPO's own update, so the final policy is PPO's (``greed_env.train.kickstart``). With
``--teacher-weight 0`` the script is plain MaskablePPO, the control of every teacher run.

The defaults are the Progressive recipe (128 units, lean masking, 1M decisions, the teacher
until 60% of the run). What the runs reach (exact policy values, ``greed eval BOT --rules
PRESET --exact``; docs/experiments/teacher.md has every run and what each lever bought)::

    greed train ppo_teacher_turn --rules greed --total-timesteps 300000 --net-width 256 \\
        --entry-starts 0.3 --export ppo-turn-kick
        # greed/ppo-turn-kick: 99.97% of the optimal turn (503.35 of 503.49), 1.2 CPU-min
    greed train ppo_teacher_turn --rules greed --total-timesteps 300000 --net-width 256 \\
        --entry-starts 0.3 --teacher-weight 0
        # the control, PPO alone on the same budget: 97.72%
    greed train ppo_teacher_turn --rules progressive --run-name prog_turn_1
        # 98.16% of Progressive's optimal turn (2,128.78 of 2,168.77), 20 CPU-min
    greed train ppo_teacher_turn --rules progressive --init-from runs/prog_turn_1/model.zip \
        --ent-coef 0.001 --run-name prog_turn_2 --export ppo-turn-kick
        # progressive/ppo-turn-kick: 99.16% (2,150.54 of 2,168.77), 21.6 CPU-min more

Trippn's move values need its dice-state tables (17 GB to build): ``--teacher-arrays PATH``
reads the turn's value arrays from a file, solved and saved there first (about an hour of CPU
and 17 GB of memory, in a child process whose memory is freed before training) when missing::

    greed train ppo_teacher_turn --rules trippn --teacher-arrays trippn_turn.npz --need-readings \
        --run-name trippn_1
        # 83.52% of Trippn's optimal turn by the regret estimate (86.25% simulated), 51.5 CPU-min
    greed train ppo_teacher_turn --rules trippn --teacher-arrays trippn_turn.npz --need-readings \
        --init-from runs/trippn_1/model.zip --teacher-weight 0 --learning-rate 0.0001 \
        --ent-coef 0.0005 --total-timesteps 600000 --seed 4 --run-name trippn_4
        # trippn/ppo-turn-kick: 84.72% by the regret estimate (3,752.9 of 4,429.80), 36.6 CPU-min more

A Trippn turn meets too many positions for ``greed eval --exact``; ``python
scripts/fast_turn_eval.py MODEL --rules trippn --optimal 4429.8042 --teacher-arrays
trippn_turn.npz`` measures it by the regret estimate instead.

Run it as ``python training/ppo_teacher_turn.py ARGS`` or ``greed train ppo_teacher_turn ARGS``.
A run writes ``runs/RULES__turn__EXP__SEED__TIME/`` (``model.zip``, its card ``model.json``
with the teacher's settings under ``teacher``, ``eval.csv``, ``tb/``, checkpoints for
``--resume``); ``--export NAME`` also writes the ONNX bot and its card to ``agents/RULES/``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.train.backends import make_solitaire, make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.curriculum import EntryStarts
from greed_env.train.kickstart import (
    KickstartPPO,
    PPOLosses,
    RowRecorder,
    TeacherSamples,
    distillation_loss,
    export_bot,
)
from greed_env.train.network import policy_class, policy_kwargs
from greed_env.train.run import Run, start_run
from greed_env.train.settings import (
    EvalSettings,
    ExportSettings,
    NetworkSettings,
    OptionalStr,
    PPOSettings,
    RunSettings,
    TeacherSettings,
    parse_args,
    ppo_kwargs,
)
from greed_env.train.teacher import turn_teacher
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_teacher_turn.py"


@dataclass
class Args(EvalSettings, NetworkSettings, PPOSettings, TeacherSettings, ExportSettings, RunSettings):
    """Teacher-assisted MaskablePPO on greed_env/Solitaire-v0 (objective 'turn'), the solver's
    optimal-turn as teacher, measured exactly against the solver."""

    # the run (RunSettings, ExportSettings): the defaults of this recipe
    exp_name: str = "kick"
    rules: str = "progressive"
    progress: bool = False
    export_games: int = 200
    """games against each of the rules' default opponents that --export plays and stores in the bot card"""

    # the teacher (TeacherSettings)
    teacher_temperature: float = 1.0
    """temperature of the teacher's softmax over move values, in points (0: argmax, ties split)"""
    teacher_arrays: OptionalStr = None
    """in-turn value arrays of the turn (greed_env.train.teacher.TurnValueArrays) instead of the
    solver's table: Trippn, whose tables only an offline job can build; solved and saved here
    first when the file is missing"""

    # the environments
    num_envs: int = 256
    """parallel environments of the native engine"""
    vector: Literal["native"] = "native"
    """vector environment: the teacher reads the native engine's rows, so only 'native'"""
    reward_scale: float = 1e-3
    """points-to-reward factor (0.001: a 500-point bank is +0.5)"""
    entry_starts: float = 0.0
    """share of the training turns that start not yet on the board (rules with an entry
    threshold); the teacher values that turn as the solver's turn objective does"""

    # the network (NetworkSettings)
    features: Literal["greed", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, the turn total and the scores
    to the observation (greed_env.bots.featurize); 'none' feeds the observation alone"""
    lean_masking: bool = True

    # evaluation against the solver (EvalSettings)
    eval_episodes: int = 2000
    """turns per periodic evaluation (greedy masked actions)"""
    eval_regret_episodes: int = 0
    """turns of each evaluation whose decisions the solver scores (regret per decision)"""
    final_eval_episodes: int = 4000
    """turns of the final evaluation written into the model card, beside its exact value"""
    eval_exact: bool = False
    """also compute the exact value at every periodic evaluation (about a CPU-minute each under
    Progressive); the final evaluation always does"""
    eval_exact_positions: int = 4_000_000
    """the final evaluation enumerates every roll the greedy policy can meet for its exact value,
    unless its turns reach more positions than this"""


# The algorithm: MaskablePPO whose loss on every minibatch gains a distillation term toward the
# teacher's move distribution, at a weight that falls linearly to exactly zero:
#
#     loss = L_clip + ent_coef * L_entropy + vf_coef * L_value + w(t) * KL(teacher || student)
#     w(t) = w0 * (1 - t / T) for t < T, then 0        (w0: --teacher-weight, T: --teacher-until)
#
# KL(teacher || student) is distillation_loss: the mean over the rollout's labelled positions s
# of sum_a p(a|s) (log p(a|s) - log q(a|s)), p the teacher, q the student, a the legal moves.
# While w(t) > 0, KickstartPPO labels the rollout's positions with the teacher, then runs
# MaskablePPO's update with `minibatch_loss` in place of PPO's own sum; from T on it labels
# nothing and its update is MaskablePPO's, so the final policy is PPO's.


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
    policy_kwargs(args, rules)  # refuses settings the rules cannot take, before any run folder
    with start_run(args, objective="turn") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, environments, the teacher, KickstartPPO, final evaluation."""
    entry_starts = args.entry_starts if rules.entry_threshold else 0.0  # no turns off the board

    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the turns of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # environments: num_envs Solitaire-v0 turns on the native engine, the rows recorded for
    # the teacher (outermost, so they are the rows behind the observations the learner sees)
    env_fn = functools.partial(make_solitaire, rules, "turn", args.reward_scale)
    envs = make_vec_env([env_fn] * args.num_envs, "native", env_seed)
    if entry_starts:
        envs = EntryStarts(envs, entry_starts, seed=args.seed + 7919)
    envs = RowRecorder(envs)

    # the teacher: the solver's move values at temperature --teacher-temperature points (from
    # its table, or from --teacher-arrays); not saved with a checkpoint, attached on --resume
    teacher = turn_teacher(rules, args.teacher_temperature, args.teacher_arrays)
    weight = functools.partial(teacher_weight, args)

    # the agent: MaskablePPO with the distillation term
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed, model_class=KickstartPPO)
        model.attach_teacher(teacher, weight, minibatch_loss)
    else:
        model = KickstartPPO(
            policy_class(args), envs, **ppo_kwargs(args), policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed, device="cpu", teacher=teacher, teacher_weight=weight, minibatch_loss=minibatch_loss,
        )  # fmt: skip
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
    model.set_logger(make_logger(run.dir))  # TensorBoard: charts/, losses/ (teacher_kl), eval/

    # evaluation against the solver: on-board turns; the final one adds the exact value
    def evaluate_policy(policy: NumpyPolicy, episodes: int, exact: bool) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "turn",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes),
            exact=exact,
            exact_max_positions=args.eval_exact_positions,
        )

    # learning: periodic evaluations, checkpoints and the entropy schedule ride on the callback
    periodic = functools.partial(evaluate_policy, episodes=args.eval_episodes, exact=args.eval_exact)
    callback = TrainingCallback(run, periodic, ppo=args, evaluation=args)
    try:
        model.learn(run.remaining(model), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation (exact), model.zip and its card with the teacher's settings
    teacher_card = {
        "teacher": "optimal-turn" if args.teacher_weight > 0 else None,
        "teacher_temperature": args.teacher_temperature,
        "teacher_weight": args.teacher_weight,
        "teacher_until_step": int(args.teacher_until * args.total_timesteps),
        "teacher_label_cpu_s": round(model.label_seconds, 3),
    }
    run.finish(
        model, callback, functools.partial(evaluate_policy, episodes=args.final_eval_episodes, exact=True),
        script=SCRIPT, rules=rules, objective="turn",
        card_extra={"entry_starts": entry_starts, "teacher": teacher_card},
    )  # fmt: skip


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    card = json.loads((run_dir / "model.json").read_text())
    evaluation, teacher = card["evaluation"], card["teacher"]
    if evaluation.get("exact_ratio"):
        strength = f"{100 * evaluation['exact_ratio']:.2f}% of the optimal turn value, exact"
    else:
        strength = f"{evaluation['mean']:,.1f} points per turn, simulated"
    made = (
        f"PPO + solver teacher (KL toward optimal-turn's move values, temperature {args.teacher_temperature:g} "
        f"points, annealed to 0 at {teacher['teacher_until_step']:,} of {card['steps']:,} decisions)"
        if teacher["teacher"] else "PPO alone (teacher weight 0)"
    )  # fmt: skip
    export_bot(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        args.export,
        f"MaskablePPO turn policy, {args.net_width} units, {made.split(' (')[0]} ({strength})",
        f"{SCRIPT}, run {run_dir.name}: {made}; {card['cpu_time_s'] / 60:.1f} CPU-minutes (arguments in the training card)",
        check_positions=args.export_check_positions,
        seed=args.seed,
        games=args.export_games,
    )


if __name__ == "__main__":
    main(parse_args(Args))
