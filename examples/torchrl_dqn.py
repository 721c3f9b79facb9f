"""Masked DQN with TorchRL on a Gymnasium env and on the PettingZoo env.

* ``--env solitaire``: ``GymEnv("greed_env/Solitaire-v0", mask_in_obs=True)`` gives
  ``observation`` and ``action_mask`` entries directly. The mask is int8 (as in PettingZoo and
  Gymnasium's ``Discrete.sample(mask=...)``); TorchRL's Q-value module wants a boolean one, so a
  ``DTypeCastTransform`` turns it into bool, and ``ActionMask`` masks the action spec. Training
  uses TorchRL's own collector, replay buffer, ``DQNLoss`` and epsilon-greedy module, all told
  the mask key.
* ``--env pettingzoo``: ``PettingZooWrapper(greed_v0.raw_env(), use_mask=True)``; seat 0 plays
  a masked Q-value actor, seat 1 a masked random policy. In a turn-based (AEC) game the next
  decision of seat 0 is not the next row of the rollout, so seat 0's transitions are cut from
  whole-game rollouts (its rows, the rewards until its next decision) before ``DQNLoss``.

Every action played is checked against its mask (there must be no masked action), then the
greedy policy is evaluated; one line per run. Install: ``pip install -e ".[torchrl]"``.

    python examples/torchrl_dqn.py --env solitaire --steps 4000
    python examples/torchrl_dqn.py --env pettingzoo --steps 3000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.envs import DTypeCastTransform, GymEnv, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.transforms import ActionMask
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules import MLP, EGreedyModule, QValueActor
from torchrl.objectives import DQNLoss, SoftUpdate

import greed_env  # noqa: F401  (registers the Gymnasium ids)
from greed_env.pettingzoo import greed_v0
from greed_env.spaces.observation import OBS_DIM


def q_actor(n_actions: int, obs_key: object, mask_key: object, action_key: object) -> QValueActor:
    """An MLP of Q-values over the observation vector, choosing the best unmasked action."""
    net = MLP(in_features=OBS_DIM, out_features=n_actions, num_cells=[128, 128])
    return QValueActor(
        net,
        in_keys=[obs_key],
        action_space="categorical",
        action_mask_key=mask_key,
        action_key=action_key,
        action_value_key=(action_key[0], "action_value") if isinstance(action_key, tuple) else None,
        chosen_action_value_key=(
            (action_key[0], "chosen_action_value") if isinstance(action_key, tuple) else None
        ),
    )


def masked_played(mask: torch.Tensor, action: torch.Tensor) -> int:
    """How many of ``action`` were masked in ``mask`` (rows of booleans)."""
    return int((~mask.gather(-1, action.long().unsqueeze(-1))).sum())


# ------------------------------------------------------------------------------------------
# Gymnasium


def make_solitaire(rules: str) -> TransformedEnv:
    base = GymEnv(
        "greed_env/Solitaire-v0", rules=rules, mask_in_obs=True, categorical_action_encoding=True
    )
    env = TransformedEnv(base, DTypeCastTransform(torch.int8, torch.bool, in_keys=["action_mask"]))
    env.append_transform(ActionMask())
    return env


def run_solitaire(args: argparse.Namespace) -> str:
    env = make_solitaire(args.rules)
    env.set_seed(args.seed)
    n = int(env.action_spec.space.n)
    actor = q_actor(n, "observation", "action_mask", "action")
    explore = TensorDictSequential(
        actor,
        EGreedyModule(
            env.action_spec,
            eps_init=0.5,
            eps_end=0.05,
            annealing_num_steps=args.steps // 2,
            action_mask_key="action_mask",
        ),
    )
    loss = DQNLoss(actor, action_space=env.action_spec, delay_value=True)
    loss.make_value_estimator(gamma=1.0)
    target = SoftUpdate(loss, eps=0.99)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    buffer = ReplayBuffer(storage=LazyTensorStorage(args.buffer), batch_size=args.batch_size)
    per_batch = args.frames_per_batch
    total = max(1, -(-args.steps // per_batch)) * per_batch  # whole collector batches
    collector = Collector(env, explore, frames_per_batch=per_batch, total_frames=total)
    masked = frames = 0
    for batch in collector:
        masked += masked_played(batch["action_mask"], batch["action"])
        frames += batch.numel()
        buffer.extend(batch.reshape(-1))
        explore[1].step(batch.numel())
        if len(buffer) < args.batch_size:
            continue
        for _ in range(max(1, batch.numel() // 8)):
            value = loss(buffer.sample())["loss"]
            optim.zero_grad()
            value.backward()
            optim.step()
            target.step()
    collector.shutdown()
    scale = env.base_env._env.unwrapped.reward_scale
    test = make_solitaire(args.rules)
    test.set_seed(args.seed + 1000)
    returns = []
    with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
        for _ in range(args.eval_episodes):
            roll = test.rollout(1000, actor)
            masked += masked_played(roll["action_mask"], roll["action"])
            returns.append(float(roll["next", "reward"].sum()) / scale)
    return (
        f"torchrl DQN solitaire {args.rules}: {frames} training steps, greedy mean turn score "
        f"{np.mean(returns):.0f} points over {args.eval_episodes} turns, masked actions played: "
        f"{masked}"
    )


# ------------------------------------------------------------------------------------------
# PettingZoo


def make_pettingzoo(rules: str) -> PettingZooWrapper:
    return PettingZooWrapper(
        greed_v0.raw_env(rules=rules, num_players=2), use_mask=True, categorical_actions=True
    )


class RandomMasked(torch.nn.Module):
    """Uniform over the unmasked actions, from its own seeded generator."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.gen = torch.Generator().manual_seed(seed)

    def forward(self, mask: torch.Tensor) -> torch.Tensor:
        scores = torch.rand(mask.shape, generator=self.gen).masked_fill(~mask, -1.0)
        return scores.argmax(-1)


def seat_transitions(game: TensorDict, seat: str) -> TensorDict:
    """Seat ``seat``'s transitions of one whole-game rollout: from each of its decisions to
    its next one (rewards summed over the rows between), the last one ending the game."""
    acted = game[seat, "mask"].reshape(-1).nonzero().reshape(-1).tolist()
    rewards = game["next", seat, "reward"].reshape(-1)
    obs = game[seat, "observation", "observation"].reshape(len(rewards), -1)
    masks = game[seat, "action_mask"].reshape(len(rewards), -1)
    actions = game[seat, "action"].reshape(-1)
    rows = []
    for k, i in enumerate(acted):
        last = k + 1 == len(acted)
        j = len(rewards) if last else acted[k + 1]
        nxt = i if last else j
        rows.append(
            {
                "observation": obs[i],
                "action_mask": masks[i],
                "action": actions[i],
                "next_observation": obs[nxt],
                "next_action_mask": masks[nxt] if not last else torch.ones_like(masks[i]),
                "reward": rewards[i:j].sum().reshape(1),
                "done": torch.tensor([last]),
            }
        )
    flat = {key: torch.stack([r[key] for r in rows]) for key in rows[0]}
    return TensorDict(
        {
            "observation": flat["observation"],
            "action_mask": flat["action_mask"],
            "action": flat["action"],
            "next": {
                "observation": flat["next_observation"],
                "action_mask": flat["next_action_mask"],
                "reward": flat["reward"],
                "done": flat["done"],
                "terminated": flat["done"],
            },
        },
        batch_size=[len(rows)],
    )


def run_pettingzoo(args: argparse.Namespace) -> str:
    env = make_pettingzoo(args.rules)
    n = int(env.full_action_spec["player_0", "action"].space.n)
    learner = q_actor(n, "observation", "action_mask", "action")
    rng = np.random.default_rng(args.seed)
    opponent = RandomMasked(args.seed)
    loss = DQNLoss(learner, action_space="categorical", delay_value=True)
    loss.make_value_estimator(gamma=1.0)
    target = SoftUpdate(loss, eps=0.99)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    buffer = ReplayBuffer(storage=LazyTensorStorage(args.buffer), batch_size=args.batch_size)

    def policy(eps: float) -> TensorDictSequential:
        def seat0(obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            if rng.random() < eps:
                return opponent(mask)
            td = TensorDict({"observation": obs, "action_mask": mask}, batch_size=obs.shape[:-1])
            return learner(td)["action"]

        return TensorDictSequential(
            TensorDictModule(
                seat0,
                in_keys=[("player_0", "observation", "observation"), ("player_0", "action_mask")],
                out_keys=[("player_0", "action")],
            ),
            TensorDictModule(
                opponent, in_keys=[("player_1", "action_mask")], out_keys=[("player_1", "action")]
            ),
        )

    masked = frames = games = 0
    while frames < args.steps:
        eps = max(0.05, 0.5 * (1 - frames / max(1, args.steps // 2)))
        with torch.no_grad():
            env.set_seed(int(rng.integers(2**31)))
            game = env.rollout(100_000, policy(eps), break_when_any_done=True)
        games += 1
        for seat in ("player_0", "player_1"):
            acted = game[seat, "mask"].reshape(-1)
            masked += masked_played(
                game[seat, "action_mask"].reshape(len(acted), -1)[acted],
                game[seat, "action"].reshape(-1)[acted],
            )
        moves = seat_transitions(game, "player_0")
        frames += len(moves)
        buffer.extend(moves)
        if len(buffer) < args.batch_size:
            continue
        for _ in range(max(1, len(moves) // 8)):
            value = loss(buffer.sample())["loss"]
            optim.zero_grad()
            value.backward()
            optim.step()
            target.step()
    wins = []
    with torch.no_grad():
        for g in range(args.eval_episodes):
            env.set_seed(args.seed + 10_000 + g)
            game = env.rollout(100_000, policy(0.0), break_when_any_done=True)
            wins.append(float(game["next", "player_0", "reward"].sum()))
    return (
        f"torchrl DQN greed_v0 {args.rules}: {frames} seat-0 training steps in {games} games, "
        f"greedy seat 0 mean return {np.mean(wins):+.2f} vs masked random over "
        f"{args.eval_episodes} games, masked actions played: {masked}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", choices=["solitaire", "pettingzoo", "both"], default="both")
    p.add_argument("--rules", default="ten_thousand", help="rules preset")
    p.add_argument("--steps", type=int, default=4000, help="environment steps of training")
    p.add_argument("--frames-per-batch", type=int, default=128, help="collector batch (Gymnasium)")
    p.add_argument("--batch-size", type=int, default=64, help="minibatch size")
    p.add_argument("--buffer", type=int, default=20_000, help="replay buffer size")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument("--eval-episodes", type=int, default=10, help="greedy evaluation episodes")
    p.add_argument("--seed", type=int, default=0, help="seed of the envs, torch and exploration")
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    # TorchRL notes that its PettingZoo wrapper is tested with PettingZoo 1.24 (this is 1.27)
    warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
    for env in ("solitaire", "pettingzoo") if args.env == "both" else (args.env,):
        start = time.perf_counter()
        line = run_solitaire(args) if env == "solitaire" else run_pettingzoo(args)
        print(f"{line} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
