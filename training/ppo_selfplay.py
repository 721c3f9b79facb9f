"""MaskablePPO self-play: one shared policy, 2-8 players, against a pool of its own past snapshots.

The learner plays one seat of the PettingZoo game ``greed_v0`` (``SelfPlayEnv``, drawn at every
reset); every other seat is played by a snapshot of the learner, saved every
``--snapshot-every`` steps into ``RUN/pool`` (the newest ``--pool-size`` stay in play, the newest
of all in a seat with probability ``--latest-prob``; with an empty pool, uniformly random legal
moves). The reward is the learner's share of the pot at the end, ``players * share - 1``.
Evaluations: with two players the win rate against the solver's optimal duel bot (optimum one
half, decisions scored by the solver); with more, the share against ``--eval-opponent`` in every
other seat (fair share ``1 / players``).

No shipped bot comes from this script (the self-play bot in the registry,
``ten_thousand/rllib-selfplay``, is ``rllib_selfplay.py``'s); the defaults are the script's own
settings, not a measured recipe::

    greed train ppo_selfplay --num-players 2 --total-timesteps 3000000
    greed train ppo_selfplay --num-players 4 --eval-opponent threshold:400

Run it as ``python training/ppo_selfplay.py ARGS`` or ``greed train ppo_selfplay ARGS``. A run
writes ``runs/RULES__selfplayN__EXP__SEED__TIME/`` (``model.zip``, ``model.json``,
``eval.csv``, ``tb/``, checkpoints, the snapshot pool); ``--export NAME`` also writes the ONNX
bot and its card to ``agents/RULES/``.
"""

from __future__ import annotations

import dataclasses
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
from greed_env.train.args import parse_args, rules_from_args
from greed_env.train.backends import make_vec_env
from greed_env.train.callback import TrainingCallback
from greed_env.train.policy import learning_rate, policy_class, policy_kwargs
from greed_env.train.selfplay_env import SelfPlayEnv, snapshot_name
from greed_env.train.session import Run, start_run
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights

SCRIPT = "training/ppo_selfplay.py"


@dataclass
class Args:
    """Train one MaskablePPO policy by self-play against a pool of its past snapshots."""

    # the run
    exp_name: str = "ppo"
    """name of this experiment (the third part of the run name)"""
    seed: int = 1
    """seed of the network, PPO's sampling and the environments"""
    rules: str = "ten_thousand"
    """rules preset to train on"""
    rules_set: list[str] = dataclasses.field(
        default_factory=list, metadata={"flag": "--set", "metavar": "FIELD=VALUE", "replaces": "--rules-set"}
    )
    """override one rules field of the preset (repeatable), e.g. --set target=3000"""
    runs_dir: str = "runs"
    """folder holding one sub-folder per run"""
    run_name: str | None = None
    """explicit run name (default: rules__selfplayN__exp__seed__time)"""
    resume: bool = False
    """continue the latest run of this rules/exp/seed (or --run-name) from its last checkpoint"""
    checkpoint_every: int = 100_000
    """environment steps between checkpoints (written atomically; --resume restarts there)"""
    export: str = ""
    """also export the final policy as the ONNX bot NAME with its card into --export-dir/RULES/"""
    export_dir: str = "agents"
    """folder of the bot registry that --export writes into"""
    export_check_positions: int = 10_000
    """random positions on which the exported ONNX bot must act as the model does"""
    progress: bool = True
    """show a progress bar with steps/s and the latest evaluation"""
    torch_threads: int = 1
    """torch intra-op threads (1 leaves the other core to the environments)"""
    torch_deterministic: bool = True
    """use deterministic torch algorithms"""

    # the environments
    num_players: int = 2
    """players per game (2-8)"""
    snapshot_every: int = 50_000
    """environment steps between snapshots added to the opponent pool"""
    pool_size: int = 10
    """newest snapshots kept in the opponent pool"""
    latest_prob: float = 0.5
    """probability that an opponent seat plays the newest snapshot (else a uniform pick)"""
    total_timesteps: int = 3_000_000
    """environment steps (decisions of the learner) of the run"""
    num_envs: int = 2
    """parallel games"""
    vector: Literal["subproc", "dummy"] = "subproc"
    """'subproc': one process per game; 'dummy': all in this process"""

    # PPO
    learning_rate: float = 3e-4
    """Adam learning rate (at the start, see --anneal-lr)"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to zero over the run"""
    num_steps: int = 1024
    """steps per environment per rollout"""
    minibatch_size: int = 256
    """minibatch size of the PPO update"""
    update_epochs: int = 4
    """epochs over each rollout"""
    gamma: float = 1.0
    """discount factor (1: the return is the game's result)"""
    gae_lambda: float = 0.98
    """lambda of generalised advantage estimation (long games: a longer credit horizon)"""
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
    features: Literal["greed", "margin", "none"] = "greed"
    """policy inputs: 'greed' appends exact readings of the dice, turn total and scores; 'margin'
    adds the margin after banking over the best other seat; 'none' feeds the observation alone"""
    set_readings: bool = True
    """read the working sets as per-face thermometers (carry-over rules such as progressive)"""
    need_readings: bool = False
    """under an exact target: also read the points still needed to land on it"""
    policy_head: Literal["structured", "plain"] = "structured"
    """action logits: 'structured' adds a term shared by keeps made of the same parts; 'plain' is
    one linear layer"""
    lean_masking: bool = False
    """the masked action distribution in one log-softmax (faster with thousands of actions)"""
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
    """start from the weights of this model zip (e.g. a turn policy of ppo_turn.py)"""

    # evaluation
    eval_opponent: str = "optimal"
    """evaluation opponent: 'optimal' (the solver's duel bot, two players only) or a bot spec
    such as 'threshold:400' in every other seat"""
    eval_every: int = 100_000
    """environment steps between evaluations"""
    eval_episodes: int = 1000
    """games per periodic evaluation (seats balanced)"""
    eval_regret_episodes: int = 200
    """games of each evaluation whose decisions the solver scores (two players only)"""
    final_eval_episodes: int = 10_000
    """games of the final evaluation written into the model card"""
    eval_seed: int = 12_345
    """seed of the evaluation games (the same games at every evaluation)"""


def main(args: Args) -> Path:
    """Train (or ``--resume``) one run and return its folder; ``--export`` also writes the bot."""
    rules = rules_from_args(args.rules, args.rules_set)
    if not max(2, rules.min_players) <= args.num_players <= min(8, rules.max_players):
        raise ValueError(f"--num-players must be within 2..8 and the rules' limits, got {args.num_players}")
    if args.num_players > 2 and args.eval_opponent == "optimal":
        raise ValueError("the solver's optimal bot plays duels only: pass --eval-opponent for more players")
    with start_run(args, objective=f"selfplay{args.num_players}") as run:
        if not run.complete:
            train(args, rules, run)
    if args.export:
        export(args, rules, run.dir)
    return run.dir


def train(args: Args, rules: Rules, run: Run) -> None:
    """The training itself: seeding, the snapshot pool, environments, MaskablePPO, learning."""
    # seeding: the network and PPO's sampling from --seed; the environments from --seed plus
    # the steps already done, so a resumed session does not replay the games of the first
    torch.manual_seed(args.seed + run.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + run.step

    # environments: one seat of greed_v0 each, the other seats read their policies from the pool
    pool = run.dir / "pool"
    pool.mkdir(exist_ok=True)
    env_fn = functools.partial(
        SelfPlayEnv, rules, args.num_players, pool_dir=str(pool), pool_size=args.pool_size, latest_prob=args.latest_prob
    )
    envs = make_vec_env([env_fn] * args.num_envs, args.vector, env_seed)

    # the agent
    if run.resumed:
        model = run.load_checkpoint(envs, seed=env_seed)
    else:
        model = MaskablePPO(
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
        )
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
    model.set_logger(make_logger(run.dir))  # TensorBoard: charts/, losses/, eval/

    # the snapshot pool: a copy of the learner every --snapshot-every steps (kept with each
    # checkpoint, so a resumed run goes on from where its pool was)
    next_snapshot = {"step": int(run.state.extra.get("next_snapshot", 0))}

    def add_snapshot(model: MaskablePPO, step: int) -> None:
        if step >= next_snapshot["step"]:
            NumpyPolicy.from_sb3(model, meta={"step": step}).save(pool / snapshot_name(step))
            next_snapshot["step"] = step + args.snapshot_every

    def evaluate_policy(policy: NumpyPolicy, episodes: int) -> EvalResult:
        two = args.num_players == 2
        return evaluate(
            PolicyBot(policy, rules, name=args.exp_name),
            rules,
            "duel",
            episodes=episodes,
            seed=args.eval_seed,
            regret_episodes=min(episodes, args.eval_regret_episodes) if two else 0,
            opponent=args.eval_opponent,
            num_players=args.num_players,
        )

    # learning
    callback = TrainingCallback(
        args, run, functools.partial(evaluate_policy, episodes=args.eval_episodes),
        extra_state=lambda: {"next_snapshot": next_snapshot["step"]}, on_iteration=add_snapshot,
    )  # fmt: skip
    try:
        model.learn(run.remaining(model, args.total_timesteps), callback=callback, reset_num_timesteps=not run.resumed)
    finally:
        envs.close()

    # the final evaluation, model.zip and its card model.json
    run.finish(
        model, callback, functools.partial(evaluate_policy, episodes=args.final_eval_episodes),
        script=SCRIPT, rules=rules, objective=f"selfplay{args.num_players}",
        card_extra={"num_players": args.num_players, "eval_opponent": args.eval_opponent},
    )  # fmt: skip


def export(args: Args, rules: Rules, run_dir: Path) -> None:
    """The run's final policy as the ONNX bot ``--export`` with its card, in ``--export-dir/RULES/``."""
    evaluation = json.loads((run_dir / "model.json").read_text())["evaluation"]
    result = export_model(
        run_dir / "model.zip",
        Path(args.export_dir) / rules.name,
        name=args.export,
        objective="duel",
        description=(
            f"MaskablePPO self-play, {args.num_players} players, {args.net_width} units; "
            f"{100 * evaluation['mean']:.2f}% vs {args.eval_opponent}"
        ),
        check_positions=args.export_check_positions,
        seed=args.seed,
        notes=f"{SCRIPT}, run {run_dir.name} (arguments in the training card)",
    )
    print(f"exported {result.onnx_path} and {result.card_path}")


if __name__ == "__main__":
    main(parse_args(Args))
