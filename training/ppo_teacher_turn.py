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

import dataclasses
import functools
import json
import multiprocessing
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate
from greed_env.rules import Rules
from greed_env.train.args import check_args, parse_args, rules_from_args
from greed_env.train.backends import make_solitaire, make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.curriculum import EntryStarts
from greed_env.train.kickstart import KickstartPPO, RowRecorder, TeacherSchedule, export_bot
from greed_env.train.policy import learning_rate, policy_class, policy_kwargs
from greed_env.train.session import Run, start_run
from greed_env.train.teacher import TeacherLabeller, TurnValueArrays, solve_turn_arrays
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_teacher_turn.py"


@dataclass
class Args:
    """Teacher-assisted MaskablePPO on greed_env/Solitaire-v0 (objective 'turn'), the solver's
    optimal-turn as teacher, measured exactly against the solver."""

    # the run
    exp_name: str = "kick"
    """name of this experiment (the third part of the run name)"""
    seed: int = 1
    """seed of the network, PPO's sampling and the environments"""
    rules: str = "progressive"
    """rules preset to train on"""
    rules_set: list[str] = dataclasses.field(
        default_factory=list, metadata={"flag": "--set", "metavar": "FIELD=VALUE", "replaces": "--rules-set"}
    )
    """override one rules field of the preset (repeatable), e.g. --set target=3000"""
    runs_dir: str = "runs"
    """folder holding one sub-folder per run"""
    run_name: str | None = None
    """explicit run name (default: rules__turn__exp__seed__time)"""
    resume: bool = False
    """continue the latest run of this rules/exp/seed (or --run-name) from its last checkpoint"""
    checkpoint_every: int = 250_000
    """environment steps between checkpoints (written atomically; --resume restarts there)"""
    export: str = ""
    """also export the final policy as the ONNX bot NAME with its card into --export-dir/RULES/"""
    export_dir: str = "agents"
    """folder of the bot registry that --export writes into"""
    export_check_positions: int = 10_000
    """random positions on which the exported ONNX bot must act as the model does"""
    export_games: int = 200
    """games against each of the rules' default opponents that --export plays and stores in the bot card"""
    progress: bool = False
    """show a progress bar with steps/s and the latest evaluation"""
    torch_threads: int = 1
    """torch intra-op threads (1 leaves the other core to the environments)"""
    torch_deterministic: bool = True
    """use deterministic torch algorithms"""

    # the teacher
    teacher_weight: float = 1.0
    """weight of KL(teacher || student) at the start of the run (0: MaskablePPO alone)"""
    teacher_until: float = 0.6
    """fraction of the run at which that weight reaches 0 (linearly); PPO alone after"""
    teacher_temperature: float = 1.0
    """temperature of the teacher's softmax over move values, in points (0: argmax, ties split)"""
    teacher_arrays: str | None = None
    """in-turn value arrays of the turn (greed_env.train.teacher.TurnValueArrays) instead of the
    solver's table: Trippn, whose tables only an offline job can build; solved and saved here
    first when the file is missing"""

    # the environments
    total_timesteps: int = 1_000_000
    """environment steps (decisions of the learner) of the run"""
    num_envs: int = 256
    """parallel environments of the native engine"""
    vector: Literal["native"] = "native"
    """vector environment: the teacher reads the native engine's rows, so only 'native'"""
    reward_scale: float = 1e-3
    """points-to-reward factor (0.001: a 500-point bank is +0.5)"""
    entry_starts: float = 0.0
    """share of the training turns that start not yet on the board (rules with an entry
    threshold); the teacher values that turn as the solver's turn objective does"""

    # PPO
    learning_rate: float = 3e-4
    """Adam learning rate (at the start, see --anneal-lr)"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to zero over the run"""
    num_steps: int = 64
    """steps per environment per rollout (rollout = num_envs * num_steps = 16,384 decisions)"""
    minibatch_size: int = 2048
    """minibatch size of the PPO update"""
    update_epochs: int = 4
    """epochs over each rollout"""
    gamma: float = 1.0
    """discount factor (1: the return is the turn's points)"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    clip_coef: float = 0.2
    """PPO surrogate clipping coefficient"""
    ent_coef: float = 0.01
    """entropy bonus coefficient at the start of the run"""
    ent_coef_final: float = 0.0
    """entropy bonus coefficient reached at --ent-anneal-fraction of the run (then held)"""
    ent_anneal_fraction: float = 0.8
    """fraction of the run over which the entropy coefficient is annealed linearly"""
    vf_coef: float = 0.5
    """value-loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float | None = None
    """stop an update early once the approximate KL exceeds this (None: never)"""

    # the network
    features: Literal["greed", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, the turn total and the scores
    to the observation (greed_env.bots.featurize); 'none' feeds the observation alone"""
    set_readings: bool = True
    """read the working sets as per-face thermometers (carry-over rules such as progressive)"""
    need_readings: bool = False
    """under an exact target: also read the points still needed to land on it"""
    policy_head: Literal["structured", "plain"] = "structured"
    """action logits: 'structured' adds a term shared by keeps made of the same parts; 'plain'
    is one linear layer"""
    lean_masking: bool = True
    """the masked action distribution in one log-softmax (the same values, a fraction of the
    update time with thousands of actions, as in progressive and trippn)"""
    net_width: int = 128
    """units per hidden layer (policy and value networks are separate MLPs)"""
    net_depth: int = 2
    """hidden layers"""
    activation: Literal["tanh", "relu"] = "tanh"
    """hidden-layer activation"""
    vf_width: int = 0
    """units per hidden layer of the value network (0: --net-width)"""
    vf_depth: int = 0
    """hidden layers of the value network (0: --net-depth)"""
    init_from: str | None = None
    """start from the weights of this model zip (same rules and network shape), e.g. a second
    teacher stage from a finished run"""

    # evaluation against the solver
    eval_every: int = 250_000
    """environment steps between evaluations (simulated turns; the exact value at the end)"""
    eval_episodes: int = 2000
    """turns per periodic evaluation (greedy masked actions)"""
    eval_regret_episodes: int = 0
    """turns of each evaluation whose decisions the solver scores (regret per decision)"""
    final_eval_episodes: int = 4000
    """turns of the final evaluation written into the model card, beside its exact value"""
    eval_seed: int = 12_345
    """seed of the evaluation turns (the same turns at every evaluation)"""
    eval_exact: bool = False
    """also compute the exact value at every periodic evaluation (about a CPU-minute each under
    Progressive); the final evaluation always does"""
    eval_exact_positions: int = 4_000_000
    """the final evaluation enumerates every roll the greedy policy can meet for its exact value,
    unless its turns reach more positions than this"""


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run and return its folder; ``--export`` also writes the bot."""
    if not 0.0 <= args.teacher_until <= 1.0:
        raise ValueError(f"--teacher-until {args.teacher_until}: must be a fraction of the run in [0, 1]")
    if not (args.teacher_weight >= 0.0 and args.teacher_temperature >= 0.0):
        raise ValueError("--teacher-weight and --teacher-temperature must be numbers >= 0")
    if args.export_games < 0:
        raise ValueError(f"--export-games {args.export_games}: must be an integer >= 0")
    check_args(args)
    rules = rules_from_args(args.rules, args.rules_set)
    policy_kwargs(args, rules)  # refuses settings the rules cannot take, before any run folder
    with start_run(args, objective="turn") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def save_turn_arrays(rules: Rules, path: Path) -> None:
    """Solve the turn's value arrays and save them (run in a child process: the dice-state
    tables behind them, 17 GB under Trippn, are freed when it ends)."""
    solve_turn_arrays(rules).save(path)


def load_teacher(args: Args, rules: Rules) -> TeacherLabeller:
    """The solver's turn teacher: from the table, or from saved value arrays (solved first
    when the file is missing)."""
    if args.teacher_arrays is None:
        return TeacherLabeller(rules, "turn", args.teacher_temperature)
    path = Path(args.teacher_arrays)
    if not path.is_file():
        print(f"solving the turn's value arrays into {path} (Trippn: about an hour of CPU, 17 GB)", flush=True)
        child = multiprocessing.get_context("spawn").Process(target=save_turn_arrays, args=(rules, path))
        child.start()
        child.join()
        if child.exitcode != 0 or not path.is_file():
            raise RuntimeError(f"solving the turn's value arrays failed (exit status {child.exitcode})")
    return TeacherLabeller(rules, "turn", args.teacher_temperature, arrays=TurnValueArrays.load(path, rules))


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

    # the teacher and its schedule (not saved with a checkpoint: attached again on --resume)
    teacher = load_teacher(args, rules)
    schedule = TeacherSchedule(args.teacher_weight, int(args.teacher_until * args.total_timesteps))

    # the agent: MaskablePPO with the distillation term
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed, model_class=KickstartPPO)
        model.attach_teacher(teacher, schedule)
    else:
        model = KickstartPPO(
            policy_class(args),
            envs,
            learning_rate=learning_rate(args),
            n_steps=args.num_steps,
            batch_size=args.minibatch_size,
            n_epochs=args.update_epochs,
            gamma=args.gamma,
            gae_lambda=args.gae_lambda,
            clip_range=args.clip_coef,
            ent_coef=args.ent_coef,
            vf_coef=args.vf_coef,
            max_grad_norm=args.max_grad_norm,
            target_kl=args.target_kl,
            policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed,
            device="cpu",
            teacher=teacher,
            schedule=schedule,
        )
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
    callback = TrainingCallback(args, run, periodic)
    try:
        model.learn(run.remaining(model, args.total_timesteps), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation (exact), model.zip and its card with the teacher's settings
    teacher_card = {
        "teacher": "optimal-turn" if args.teacher_weight > 0 else None,
        "teacher_temperature": args.teacher_temperature,
        "teacher_weight": args.teacher_weight,
        "teacher_until_step": schedule.until,
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
