"""Teacher-assisted MaskablePPO for whole two-player games: PPO plus a distillation term toward
the exact solver's ``optimal-duel`` moves at the student's own positions, annealed to zero.

What it trains: a ``greed_env/Duel-v0`` policy on the native vector engine, against a bot the
engine plays in its kernels (a threshold bot: the engine cannot play the carry-over rules'
optimal duel bot), usually warm-started from a turn policy (``--init-from``). The reward is
the game's result, +1 / 0.5 / 0 for a win / shared pot / loss. Each update adds
``w(t) * KL(teacher || student)`` over the legal moves of the rollout's positions, the teacher
being optimal-duel's win probabilities of the moves turned into a distribution (a softmax at a
temperature in win probability, ties split evenly; the ladder bots are the same softmax).
Labelling a position needs the in-turn pass of its score pair (about 9 ms each for
Progressive), so at most ``--teacher-max-contexts`` score pairs are labelled per rollout. A
share of the games (``--teacher-starts``) starts at turn starts of optimal-duel's games against
itself, where both scores reach the endgame as strong play reaches it. ``w`` falls linearly to
exactly 0 at ``--teacher-until`` of the run; the rest is MaskablePPO's own update.

What it reproduces: ``progressive/ppo-duel-kick`` with the defaults below, from the turn
policy of ``training/ppo_teacher_turn.py`` (``--init-from RUN/model.zip``); strength by the
regret estimate against optimal-duel (``greed eval BOT --rules progressive --objective duel
--regret-episodes 1000``). docs/experiments/teacher.md gives the measured runs.

Run::

    python training/ppo_teacher_duel.py --init-from runs/TURN_RUN/model.zip \\
        --export agents/progressive --export-name ppo-duel-kick
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import gymnasium as gym
import numpy as np
import torch

from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import EvalResult, evaluate, resolve_bot
from greed_env.files import atomic_write_text
from greed_env.rules import Rules
from greed_env.solver.bot import OptimalBot
from greed_env.train.args import PPOArgs, check_args, parse_args, rules_from_args
from greed_env.train.backends import make_vec_env
from greed_env.train.callback import TrainingCallback, eval_text
from greed_env.train.kickstart import (
    KickstartPPO,
    RowRecorder,
    TeacherSchedule,
    TeacherStarts,
    export_bot,
    training_card,
)
from greed_env.train.loop import lr_schedule, policy_class, policy_kwargs
from greed_env.train.runs import Checkpointer, RunState, prepare_run, save_model_atomic
from greed_env.train.teacher import TeacherLabeller, teacher_starts
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_teacher_duel.py"


@dataclass
class Args(PPOArgs):
    """Teacher-assisted MaskablePPO on greed_env/Duel-v0 (two seats, the learner's seat drawn)."""

    exp_name: str = "kick"
    """name of this experiment (the third part of the run name)"""
    rules: str = "progressive"
    """rules preset to train on"""
    opponent: str = "threshold-1000"
    """the training opponent, one the native engine plays: 'threshold-N' or 'random'"""
    total_timesteps: int = 1_500_000
    """total environment steps (decisions of the learner) of the run"""
    num_envs: int = 256
    """parallel games of the native engine"""
    vector: Literal["native"] = "native"
    """vector environment: the teacher reads the native engine's rows, so only 'native'"""
    num_steps: int = 64
    """steps per environment per rollout"""
    minibatch_size: int = 2048
    """minibatch size of the PPO update"""
    learning_rate: float = 3e-4
    """Adam learning rate at the start (annealed to 0)"""
    ent_coef: float = 0.003
    """entropy bonus at the start (annealed to 0 over --ent-anneal-fraction)"""
    net_width: int = 128
    """units per hidden layer (as the turn policy it starts from)"""
    features: Literal["greed", "margin", "margin-final", "margin-cross", "none"] = "margin"
    """policy inputs: 'margin' reads the lead after banking over the opponent besides the scores"""
    need_readings: bool = True
    """read the points still needed to land on the exact target"""
    lean_masking: bool = True
    """masked distribution with one log-softmax (the same values; faster with thousands of actions)"""
    teacher_weight: float = 1.0
    """weight of KL(teacher || student) at the start of the run"""
    teacher_until: float = 0.8
    """fraction of the run at which that weight reaches 0 (linearly); PPO alone after"""
    teacher_temperature: float = 0.002
    """temperature of the teacher's softmax over the moves' win probabilities (0: argmax)"""
    teacher_max_contexts: int = 1000
    """score pairs labelled per rollout at most (a random choice weighted by their positions)"""
    teacher_starts: float = 0.5
    """share of the games that start at a turn start of the teacher's own games"""
    teacher_start_games: int = 300
    """games of optimal-duel against itself whose turn starts make that pool"""
    eval_every: int = 250_000
    """environment steps between evaluations against optimal-duel"""
    eval_episodes: int = 200
    """seat-balanced games per periodic evaluation, every decision scored (regret estimate)"""
    eval_regret_episodes: int = 200
    """games of each evaluation whose decisions are scored by the solver"""
    final_eval_episodes: int = 1000
    """games of the final evaluation (all scored: the regret estimate)"""
    checkpoint_every: int = 250_000
    """environment steps between checkpoints"""
    progress: bool = False
    """show a progress bar"""
    export: str | None = None
    """export the final model as an ONNX bot into this folder (e.g. agents/progressive)"""
    export_name: str = "ppo-duel-kick"
    """bot name of the export (the card id is <rules>/<name>)"""


def make_env(rules: Rules, opponent: str) -> gym.Env:
    """One ``Duel-v0`` game (the native engine reads its id and arguments, and plays the opponent)."""
    import greed_env.envs  # noqa: F401  (registers the ids)

    return gym.make("greed_env/Duel-v0", rules=rules, opponent=resolve_bot(opponent, rules, "duel"))


def main(args: Args) -> Path:
    """Train one run (or ``--resume`` it); returns its directory."""
    check_args(args)
    if not 0.0 <= args.teacher_until <= 1.0:
        raise ValueError(f"--teacher-until {args.teacher_until}: must be a fraction of the run in [0, 1]")
    rules = rules_from_args(args.rules, args.rules_set)
    network = policy_kwargs(args, rules)  # refuses settings the rules cannot take, before any run folder
    session_start = time.perf_counter()
    run_dir, resumed = prepare_run(args, "duel")
    state = dataclasses.replace(resumed or RunState(), sessions=(resumed.sessions if resumed else 0) + 1)

    # seeding: network and PPO sampling from the seed, environments from seed + steps done
    torch.manual_seed(args.seed + state.step)
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + state.step
    teacher_bot = OptimalBot(rules, "duel")
    venv = make_vec_env([lambda: make_env(rules, args.opponent)] * args.num_envs, "native", env_seed)
    if args.teacher_starts:
        pool = teacher_starts(rules, teacher_bot, args.teacher_start_games, np.random.default_rng(args.seed + 104729),
                              keep=lambda s: not s.endgame)
        print(f"teacher starts: {len(pool)} turn starts from {args.teacher_start_games} optimal-duel games", flush=True)
        venv = TeacherStarts(venv, pool, args.teacher_starts, seed=args.seed + 7919)
    venv = RowRecorder(venv)

    teacher = TeacherLabeller(rules, "duel", args.teacher_temperature, table=teacher_bot.table)
    schedule = TeacherSchedule(args.teacher_weight, int(args.teacher_until * args.total_timesteps))
    if resumed is not None:
        model = KickstartPPO.load(Checkpointer(run_dir).dir / resumed.model_file, env=venv, device="cpu", seed=env_seed)
        model.attach_teacher(teacher, schedule, max_contexts=args.teacher_max_contexts)
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
            max_contexts=args.teacher_max_contexts,
        )
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
    model.set_logger(make_logger(run_dir))

    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "duel",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, max(args.eval_regret_episodes, episodes)),
            opponent="optimal",
        )

    callback = TrainingCallback(args, run_dir, lambda p: evaluate_policy(p, args.eval_episodes), state, session_start)
    model.learn(args.total_timesteps - model.num_timesteps, callback=callback, reset_num_timesteps=resumed is None)
    venv.close()

    steps = model.num_timesteps
    callback.checkpoint(steps)
    cpu_s = callback.cpu_s()
    final = evaluate_policy(NumpyPolicy.from_sb3(model), args.final_eval_episodes)
    callback.record_eval(steps, final)
    save_model_atomic(model, run_dir / "model.zip")
    teacher_info = {
        "teacher": "optimal-duel",
        "teacher_temperature": args.teacher_temperature,
        "teacher_weight": args.teacher_weight,
        "teacher_until_step": schedule.until,
        "teacher_max_contexts": args.teacher_max_contexts,
        "teacher_starts": args.teacher_starts,
        "teacher_start_games": args.teacher_start_games,
        "teacher_label_cpu_s": round(model.label_seconds, 1),
        "opponent": args.opponent,
        "init_from": Path(args.init_from).as_posix() if args.init_from else None,
    }
    card = training_card(args, SCRIPT, rules, "duel", steps, callback.wall_s(), cpu_s, state.sessions, final, teacher_info)
    atomic_write_text(run_dir / "model.json", json.dumps(card, indent=1, allow_nan=False))
    print(f"saved {run_dir / 'model.zip'}: {steps:,} steps, {cpu_s:.0f} CPU-s; final {eval_text(final)}", flush=True)
    if args.export:
        est = final.regret_estimate
        text = f"{100 * est.mean:.1f}% against optimal-duel (regret estimate)" if est is not None else "see the card"
        export_bot(
            run_dir / "model.zip",
            Path(args.export),
            args.export_name,
            "duel",
            f"MaskablePPO for whole games with the solver as teacher (optimal-duel, annealed to 0 at "
            f"{schedule.until:,} of {steps:,} decisions); {text}",
            f"{SCRIPT}: PPO + solver teacher (KL toward optimal-duel's move values, temperature "
            f"{args.teacher_temperature:g} in win probability) against {args.opponent}; {text} over "
            f"{args.final_eval_episodes} seat-balanced games; {cpu_s / 60:.1f} CPU-minutes of this stage",
        )
    return run_dir


if __name__ == "__main__":
    main(parse_args(Args))
