"""Teacher-assisted MaskablePPO for one turn: PPO plus a distillation term toward the exact
solver's ``optimal-turn`` moves at the student's own positions, annealed to zero.

What it trains: a ``greed_env/Solitaire-v0`` turn policy (objective ``turn``: the points of one
turn, from score 0) on the native vector engine. Each PPO update adds
``w(t) * KL(teacher || student)`` over the legal moves of the rollout's positions, the teacher
being the solver's move values turned into a distribution (a softmax at a small temperature in
points, ties split evenly; ``greed_env.train.teacher``). ``w`` falls linearly from
``--teacher-weight`` to exactly 0 at ``--teacher-until`` of the run; the rest of the run is
MaskablePPO's own update, so the final policy is PPO's (``greed_env.train.kickstart``).

What it reproduces (exact policy values, ``greed eval BOT --rules PRESET --exact``):

* ``progressive/ppo-turn-kick`` with the defaults below;
* ``greed/ppo-turn-kick``: ``--rules greed --total-timesteps 300000 --net-width 256 --entry-starts 0.3``;
* ``trippn/ppo-turn-kick``: ``--rules trippn --teacher-arrays PATH`` (Trippn has no shipped
  in-turn tables: the arrays are solved and saved at ``PATH`` first if missing, which takes about
  an hour of CPU and 17 GB of memory; then training reads the file).

docs/experiments/teacher.md gives the measured runs and what each lever bought.

Run::

    python training/ppo_teacher_turn.py                          # Progressive, the recipe
    python training/ppo_teacher_turn.py --rules greed --total-timesteps 300000 --net-width 256 \\
        --entry-starts 0.3 --export agents/greed --export-name ppo-turn-kick
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import gymnasium as gym
import torch

from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate
from greed_env.files import atomic_write_text
from greed_env.rules import Rules
from greed_env.train.args import PPOArgs, check_args, parse_args, rules_from_args
from greed_env.train.backends import make_vec_env
from greed_env.train.callback import TrainingCallback, eval_text
from greed_env.train.kickstart import (
    KickstartPPO,
    RowRecorder,
    TeacherSchedule,
    export_bot,
    training_card,
)
from greed_env.train.loop import lr_schedule, policy_class, policy_kwargs
from greed_env.train.runs import Checkpointer, RunState, prepare_run, save_model_atomic
from greed_env.train.teacher import TeacherLabeller, TurnValueArrays, solve_turn_arrays
from greed_env.train.tensorboard import make_logger

SCRIPT = "training/ppo_teacher_turn.py"


@dataclass
class Args(PPOArgs):
    """Teacher-assisted MaskablePPO on greed_env/Solitaire-v0, objective 'turn'."""

    exp_name: str = "kick"
    """name of this experiment (the third part of the run name)"""
    rules: str = "progressive"
    """rules preset to train on"""
    total_timesteps: int = 1_000_000
    """total environment steps (decisions of the learner) of the run"""
    num_envs: int = 256
    """parallel environments of the native engine"""
    vector: Literal["native"] = "native"
    """vector environment: the teacher reads the native engine's rows, so only 'native'"""
    num_steps: int = 64
    """steps per environment per rollout"""
    minibatch_size: int = 2048
    """minibatch size of the PPO update"""
    net_width: int = 128
    """units per hidden layer (policy and value networks are separate MLPs)"""
    lean_masking: bool = True
    """masked distribution with one log-softmax (the same values; faster with thousands of actions)"""
    reward_scale: float = 1e-3
    """points-to-reward factor (0.001: a 500-point bank is +0.5)"""
    teacher_weight: float = 1.0
    """weight of KL(teacher || student) at the start of the run"""
    teacher_until: float = 0.6
    """fraction of the run at which that weight reaches 0 (linearly); PPO alone after"""
    teacher_temperature: float = 1.0
    """temperature of the teacher's softmax over move values, in points (0: argmax, ties split)"""
    teacher_arrays: str | None = None
    """in-turn value arrays of the turn from 0 (greed_env.train.teacher.TurnValueArrays) instead
    of the solver's table: Trippn, whose tables only an offline job can build; solved and saved
    here first when the file is missing"""
    entry_starts: float = 0.0
    """share of the episodes that start not yet on the board (rules with an entry threshold);
    the teacher then values that turn as the solver's turn objective does"""
    eval_every: int = 250_000
    """environment steps between evaluations (simulated turns; the exact value at the end)"""
    eval_episodes: int = 2000
    """turns per periodic evaluation"""
    eval_regret_episodes: int = 0
    """turns of each evaluation whose decisions are scored by the solver"""
    final_eval_episodes: int = 4000
    """turns of the final evaluation (besides its exact value)"""
    checkpoint_every: int = 250_000
    """environment steps between checkpoints"""
    progress: bool = False
    """show a progress bar"""
    export: str | None = None
    """export the final model as an ONNX bot into this folder (e.g. agents/progressive)"""
    export_name: str = "ppo-turn-kick"
    """bot name of the export (the card id is <rules>/<name>)"""


def make_env(rules: Rules, reward_scale: float) -> gym.Env:
    """One ``Solitaire-v0`` turn environment (the native engine reads its id and arguments)."""
    import greed_env.envs  # noqa: F401  (registers the ids)

    return gym.make("greed_env/Solitaire-v0", rules=rules, objective="turn", reward_scale=reward_scale)


def save_turn_arrays(rules: Rules, path: Path) -> None:
    """Solve the turn's value arrays and save them (run in a child process: the dice-state
    tables behind them, 17 GB under Trippn, are freed when it ends)."""
    solve_turn_arrays(rules).save(path)


def load_teacher(args: Args, rules: Rules) -> TeacherLabeller:
    """The solver's turn teacher: from the table, or from saved value arrays."""
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


def main(args: Args) -> Path:
    """Train one run (or ``--resume`` it); returns its directory."""
    check_args(args)
    if not 0.0 <= args.teacher_until <= 1.0:
        raise ValueError(f"--teacher-until {args.teacher_until}: must be a fraction of the run in [0, 1]")
    rules = rules_from_args(args.rules, args.rules_set)
    network = policy_kwargs(args, rules)  # refuses settings the rules cannot take, before any run folder
    session_start = time.perf_counter()
    run_dir, resumed = prepare_run(args, "turn")
    state = dataclasses.replace(resumed or RunState(), sessions=(resumed.sessions if resumed else 0) + 1)

    # seeding: network and PPO sampling from the seed, environments from seed + steps done
    torch.manual_seed(args.seed + state.step)
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + state.step
    venv = make_vec_env([lambda: make_env(rules, args.reward_scale)] * args.num_envs, "native", env_seed)
    if args.entry_starts:
        from greed_env.train.curriculum import EntryStarts

        venv = EntryStarts(venv, args.entry_starts, seed=args.seed + 7919)
    venv = RowRecorder(venv)

    teacher = load_teacher(args, rules)
    schedule = TeacherSchedule(args.teacher_weight, int(args.teacher_until * args.total_timesteps))
    if resumed is not None:
        model = KickstartPPO.load(Checkpointer(run_dir).dir / resumed.model_file, env=venv, device="cpu", seed=env_seed)
        model.attach_teacher(teacher, schedule)
    else:
        model = KickstartPPO(
            policy_class(args),
            venv,
            learning_rate=lr_schedule(args),
            n_steps=args.num_steps,
            batch_size=args.minibatch_size,
            n_epochs=args.update_epochs,
            gamma=args.gamma,
            gae_lambda=args.gae_lambda,
            clip_range=args.clip_coef,
            ent_coef=args.ent_coef,
            vf_coef=args.vf_coef,
            max_grad_norm=args.max_grad_norm,
            policy_kwargs=network,
            seed=args.seed,
            device="cpu",
            teacher=teacher,
            schedule=schedule,
        )
    model.set_logger(make_logger(run_dir))

    def evaluate_policy(policy: NumpyPolicy, episodes: int, exact: bool) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "turn",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes),
            exact=exact,
            exact_max_positions=4_000_000,
        )

    callback = TrainingCallback(args, run_dir, lambda p: evaluate_policy(p, args.eval_episodes, False), state, session_start)
    model.learn(args.total_timesteps - model.num_timesteps, callback=callback, reset_num_timesteps=resumed is None)
    venv.close()

    steps = model.num_timesteps
    callback.checkpoint(steps)
    cpu_s = callback.cpu_s()
    final = evaluate_policy(NumpyPolicy.from_sb3(model), args.final_eval_episodes, True)
    callback.record_eval(steps, final)
    save_model_atomic(model, run_dir / "model.zip")
    teacher_info = {
        "teacher": "optimal-turn",
        "teacher_temperature": args.teacher_temperature,
        "teacher_weight": args.teacher_weight,
        "teacher_until_step": schedule.until,
        "teacher_label_cpu_s": round(model.label_seconds, 1),
        "entry_starts": args.entry_starts,
    }
    card = training_card(args, SCRIPT, rules, "turn", steps, callback.wall_s(), cpu_s, state.sessions, final, teacher_info)
    atomic_write_text(run_dir / "model.json", json.dumps(card, indent=1, allow_nan=False))
    print(f"saved {run_dir / 'model.zip'}: {steps:,} steps, {cpu_s:.0f} CPU-s; final {eval_text(final)}", flush=True)
    if args.export:
        share = f"{100 * (final.exact_ratio or 0.0):.2f}%"
        export_bot(
            run_dir / "model.zip",
            Path(args.export),
            args.export_name,
            "turn",
            f"MaskablePPO turn policy with the solver as teacher (optimal-turn, annealed to 0 at "
            f"{schedule.until:,} of {steps:,} decisions); {share} of the optimal turn value, exact",
            f"{SCRIPT}: PPO + solver teacher (KL toward optimal-turn's move values, temperature "
            f"{args.teacher_temperature:g} points); exact {final.exact:.2f} points per turn ({share}); "
            f"{cpu_s / 60:.1f} CPU-minutes",
        )
    return run_dir


if __name__ == "__main__":
    main(parse_args(Args))
