"""RLlib multi-agent PPO self-play on ``greed_v0``: one shared, action-masked policy.

Every seat of the game maps to the module ``"shared"`` (:data:`SHARED_MODULE`), so the policy
plays against copies of itself; each seat's samples train it. The same configuration runs
in one process (``num_env_runners=0``, ``num_learners=0``: sampling and learning in the
driver, as the tests do) or on a Ray cluster (``num_env_runners`` remote samplers spread over
the cluster's CPUs, optionally ``num_learners`` remote learners); see ``docs/scale.md``.

Importing this module does not import ray; :func:`selfplay_config` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from greed_env.rllib.env import register_rllib_env

__all__ = ["SHARED_MODULE", "selfplay_config", "shared_policy"]

SHARED_MODULE = "shared"
"""The module id every agent maps to."""


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn``: every agent plays :data:`SHARED_MODULE`."""
    return SHARED_MODULE


def selfplay_config(
    env_config: Mapping[str, Any] | None = None,
    *,
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 1,
    num_cpus_per_env_runner: float = 1,
    num_learners: int = 0,
    rollout_fragment_length: int | str = "auto",
    train_batch_size: int = 4000,
    minibatch_size: int = 500,
    num_epochs: int = 4,
    lr: float = 3e-4,
    gamma: float = 1.0,
    lambda_: float = 1.0,
    entropy_coeff: float = 0.01,
    hidden: tuple[int, ...] = (128, 128),
    seed: int | None = 0,
    native_games: int = 0,
) -> Any:
    """The PPO configuration of shared-policy self-play on ``greed_v0``.

    Args:
        env_config: ``greed_v0`` arguments (``rules``, ``rules_overrides``, ``num_players``,
            ``illegal_action``, ``illegal_reward``). With ``illegal_action='raise'`` a masked
            action sampled by the policy fails the run, and RLlib's environment pre-check
            (which steps unmasked random actions) is switched off.
        num_env_runners: remote sampling actors (0: sample in the driver process).
        num_envs_per_env_runner: games each runner steps.
        num_cpus_per_env_runner: CPUs Ray reserves per runner (placement on the cluster).
        num_learners: remote learner actors (0: learn in the driver process).
        rollout_fragment_length: steps per runner per sample call (``"auto"``: from the batch).
        train_batch_size: agent steps per training iteration (per learner).
        minibatch_size, num_epochs, lr, gamma, lambda_, entropy_coeff: PPO settings
            (``lambda_``: GAE lambda).
        hidden: sizes of the policy and value MLP layers.
        seed: seed of RLlib's samplers and of the network initialisation (None: unseeded).
        native_games: 0 to step ``greed_v0`` (one game per env); N > 0 to step N games per env
            on the native engine (:class:`greed_env.rllib.native.NativeSelfPlayEnv`, same rules,
            observations and rewards; ``env_config`` keys ``rules`` and ``num_players`` only);
            batch sizes then count agent steps (with ``greed_v0`` every env step is one).

    Returns:
        A ``ray.rllib.algorithms.ppo.PPOConfig``; ``.build_algo()`` makes the algorithm.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from greed_env.rllib.module import MaskedPPOTorchRLModule

    cfg = dict(env_config or {})
    strict = cfg.get("illegal_action") == "raise"
    if native_games > 0:
        from greed_env.rllib.native import register_native_env

        env_name = register_native_env()
        cfg = {k: cfg[k] for k in ("rules", "num_players") if k in cfg}
        cfg["num_games"] = native_games
    else:
        env_name = register_rllib_env()
    module = RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config=DefaultModelConfig(
            fcnet_hiddens=list(hidden), fcnet_activation="tanh", vf_share_layers=False
        ),
    )
    return (
        PPOConfig()
        .environment(env_name, env_config=cfg, disable_env_checking=strict or native_games > 0)
        .framework("torch")
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            num_cpus_per_env_runner=num_cpus_per_env_runner,
            rollout_fragment_length=rollout_fragment_length,
        )
        .learners(num_learners=num_learners)
        .multi_agent(
            policies={SHARED_MODULE},
            policy_mapping_fn=shared_policy,
            # a native env step is a decision in each of its games: batches count decisions
            count_steps_by="agent_steps" if native_games > 0 else "env_steps",
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_MODULE: module}))
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=gamma,
            lambda_=lambda_,
            entropy_coeff=entropy_coeff,
        )
        .debugging(seed=seed)
    )
