"""Masked DQN with Tianshou 2 on a Gymnasium env and on the PettingZoo env, with no glue code.

* ``--env solitaire``: ``greed_env/Solitaire-v0`` made with ``mask_in_obs="tianshou"``, so every
  observation is ``{"obs": vector, "mask": int8 mask}``, the keys Tianshou's DQN reads
  (``batch.obs.obs`` for the network, ``batch.obs.mask`` to mask Q-values and exploration).
* ``--env pettingzoo``: ``greed_v0`` wrapped in Tianshou's own ``PettingZooEnv`` (which turns
  ``{"observation", "action_mask"}`` into ``{"obs", "mask"}``); seat 0 learns with DQN, seat 1
  plays Tianshou's masked random policy.

The script counts every action played that the mask forbade (there must be none), evaluates the
greedy policy, and prints one line per run. Install: ``pip install -e ".[tianshou]"``.

    python examples/tianshou_dqn.py --env solitaire --steps 5000
    python examples/tianshou_dqn.py --env pettingzoo --steps 3000

Tianshou draws its exploration from NumPy's and torch's global generators, so they are seeded
here (the environments draw from their own seeded generators).
"""

from __future__ import annotations

import argparse
import logging
import time

import gymnasium as gym
import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Collector, ReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import greed_env  # noqa: F401  (registers the Gymnasium ids)
from greed_env.pettingzoo import greed_v0
from greed_env.spaces.observation import OBS_DIM


def make_dqn(n_actions: int, action_space: gym.spaces.Space, lr: float) -> DQN:
    """A double DQN over the 106-entry observation vector, epsilon-greedy while training."""
    net = Net(state_shape=OBS_DIM, action_shape=n_actions, hidden_sizes=[128, 128])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=action_space, eps_training=0.2, eps_inference=0.0
    )
    return DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=lr),
        gamma=1.0,
        n_step_return_horizon=1,
        target_update_freq=200,
    )


class MaskAudit:
    """Counts actions played that the observation's mask forbade (a collector step hook)."""

    def __init__(self) -> None:
        self.steps = 0
        self.illegal = 0

    def check(self, masks: np.ndarray, actions: np.ndarray) -> None:
        rows = np.arange(len(actions))
        self.steps += len(actions)
        self.illegal += int((np.asarray(masks)[rows, np.asarray(actions)] == 0).sum())


def run_solitaire(args: argparse.Namespace) -> str:
    def make() -> gym.Env:
        return gym.make("greed_env/Solitaire-v0", rules=args.rules, mask_in_obs="tianshou")

    probe = make()
    algorithm = make_dqn(int(probe.action_space.n), probe.action_space, args.lr)
    train_envs, test_envs = DummyVectorEnv([make]), DummyVectorEnv([make])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1000)
    buffer = ReplayBuffer(args.buffer)
    train_collector = Collector(algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector(algorithm, test_envs, ReplayBuffer(1000))
    train_collector.reset()
    train_collector.collect(n_step=args.batch_size)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            max_epochs=1,
            epoch_num_steps=args.steps,
            collection_step_num_env_steps=4,
            batch_size=args.batch_size,
            update_step_num_gradient_steps_per_sample=0.25,
            verbose=False,
            show_progress=False,
        )
    )
    audit = audit_buffer(buffer)
    test_collector.reset()
    stats = test_collector.collect(n_episode=args.eval_episodes)
    points = float(np.mean(stats.returns)) / probe.unwrapped.reward_scale
    return (
        f"tianshou DQN solitaire {args.rules}: {result.train_step} training steps, "
        f"greedy mean turn score {points:.0f} points over {args.eval_episodes} turns, "
        f"masked actions in the replay buffer: {audit.illegal} of {audit.steps}"
    )


def audit_buffer(buffer: ReplayBuffer) -> MaskAudit:
    """Check every transition stored in ``buffer`` against the mask it was played under."""
    data = buffer[buffer.sample_indices(0)]
    audit = MaskAudit()
    audit.check(data.obs.mask, data.act)
    return audit


def run_pettingzoo(args: argparse.Namespace) -> str:
    def make() -> PettingZooEnv:
        return PettingZooEnv(greed_v0.env(rules=args.rules, num_players=2))

    probe = make()
    space = probe.action_space
    learner = make_dqn(int(space.n), space, args.lr)
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[learner, MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=space)],
        env=probe,
    )
    train_envs, test_envs = DummyVectorEnv([make]), DummyVectorEnv([make])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1000)
    buffer = ReplayBuffer(args.buffer)
    train_collector = Collector(algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector(algorithm, test_envs, ReplayBuffer(1000))
    train_collector.reset()
    train_collector.collect(n_step=args.batch_size)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            max_epochs=1,
            epoch_num_steps=args.steps,
            collection_step_num_env_steps=4,
            batch_size=args.batch_size,
            update_step_num_gradient_steps_per_sample=0.25,
            multi_agent_return_reduction=lambda rews: rews[:, 0],
            verbose=False,
            show_progress=False,
        )
    )
    audit = audit_buffer(buffer)
    test_collector.reset()
    stats = test_collector.collect(n_episode=args.eval_episodes)
    seat0 = float(np.mean(stats.returns[:, 0]))
    return (
        f"tianshou DQN greed_v0 {args.rules}: {result.train_step} training steps, "
        f"seat 0 (DQN) mean return {seat0:+.2f} vs masked random over {args.eval_episodes} "
        f"games, masked actions in the replay buffer: {audit.illegal} of {audit.steps}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", choices=["solitaire", "pettingzoo", "both"], default="both")
    p.add_argument("--rules", default="ten_thousand", help="rules preset")
    p.add_argument("--steps", type=int, default=4000, help="environment steps of training")
    p.add_argument("--batch-size", type=int, default=64, help="minibatch size")
    p.add_argument("--buffer", type=int, default=20_000, help="replay buffer size")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--eval-episodes", type=int, default=10, help="greedy evaluation episodes")
    p.add_argument("--seed", type=int, default=0, help="seed of the envs, NumPy and torch")
    args = p.parse_args(argv)
    # Tianshou's episode statistics warn that two-seat returns are not 1-D; we read them ourselves
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    np.random.seed(args.seed)  # Tianshou's exploration draws from the global generators
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    for env in ("solitaire", "pettingzoo") if args.env == "both" else (args.env,):
        start = time.perf_counter()
        line = run_solitaire(args) if env == "solitaire" else run_pettingzoo(args)
        print(f"{line} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
