"""The training loop every script calls (:func:`run_training`): build or resume the model,
learn, evaluate, save ``model.zip`` with its JSON card ``model.json``.

The parts it joins: run folders and checkpoints (:mod:`greed_env.train.runs`), the vector
backend switch (:mod:`greed_env.train.backends`), TensorBoard (:mod:`greed_env.train.tensorboard`),
the callback (:mod:`greed_env.train.callback`) and warm starts (:mod:`greed_env.train.warmstart`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import platform
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

from greed_env.bots.featurize import FeatureConfig, action_features
from greed_env.bots.numpy_backend import NumpyPolicy
from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import OBS_SPEC_VERSION
from greed_env.evaluation import EvalResult
from greed_env.files import atomic_write_text, strict_json
from greed_env.rules import Rules
from greed_env.train.args import PPOArgs, check_args
from greed_env.train.backends import EnvFn, make_vec_env
from greed_env.train.callback import TrainingCallback, eval_text
from greed_env.train.features import GreedActorCriticPolicy, GreedFeatures
from greed_env.train.runs import (
    Checkpointer,
    RunState,
    prepare_run,
    save_model_atomic,
    truncate_eval_csv,
)
from greed_env.train.tensorboard import make_logger
from greed_env.train.warmstart import init_weights, soften

__all__ = ["CARD_FORMAT", "CARD_VERSION", "model_card", "policy_class", "policy_kwargs", "run_training"]

CARD_FORMAT = "greed_env/training-card"
CARD_VERSION = 1


def model_card(
    args: PPOArgs,
    script: str,
    rules: Rules,
    objective: str,
    steps: int,
    wall_s: float,
    cpu_s: float,
    sessions: int,
    evaluation: dict[str, Any] | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON card saved beside ``model.zip``."""

    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "format_version": CARD_VERSION,
        "algorithm": "MaskablePPO",
        "script": script,
        "rules": rules.to_dict(),
        "rules_fingerprint": rules.fingerprint,
        "objective": objective,
        "obs_spec_version": OBS_SPEC_VERSION,
        "action_catalog_version": ActionCatalog(rules).version,
        "args": dataclasses.asdict(args),
        "seed": args.seed,
        "steps": steps,
        "wall_time_s": round(wall_s, 1),
        "cpu_time_s": round(cpu_s, 1),
        "cpu_time_note": "CPU seconds of training, periodic evaluations included, final evaluation excluded",
        "sessions": sessions,
        "evaluation": evaluation,
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__,
        },
    }
    if extra:
        card.update(extra)
    return card


def policy_kwargs(args: PPOArgs, rules: Rules) -> dict[str, Any]:
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation]
    layers = [args.net_width] * args.net_depth
    critic = [args.vf_width or args.net_width] * (args.vf_depth or args.net_depth)
    kwargs: dict[str, Any] = {"net_arch": {"pi": layers, "vf": critic}, "activation_fn": act}
    if args.features in ("greed", "margin", "margin-final", "margin-cross"):
        cfg = FeatureConfig.for_rules(
            rules,
            margin=args.features.startswith("margin"),
            final_only=args.features in ("margin-final", "margin-cross"),
            cross=args.features == "margin-cross",
        )
        if not args.set_readings:
            cfg = dataclasses.replace(cfg, set_readings=False)
        if args.need_readings:
            if not rules.exact_target:
                raise SystemExit(f"--need-readings needs rules with an exact target; {rules.name!r} has none")
            cfg = dataclasses.replace(cfg, need_readings=True)
        kwargs["features_extractor_class"] = GreedFeatures
        kwargs["features_extractor_kwargs"] = {"config": cfg.to_dict()}
    if args.policy_head == "structured":
        kwargs["action_features"] = action_features(rules).tolist()
    if args.lean_masking:
        kwargs["lean_masking"] = True
    return kwargs


def policy_class(args: PPOArgs) -> Any:
    if args.policy_head == "structured" or args.lean_masking:
        return GreedActorCriticPolicy
    return "MlpPolicy"


def lr_schedule(args: PPOArgs) -> Any:
    if not args.anneal_lr:
        return args.learning_rate
    lr = args.learning_rate
    return lambda progress_remaining: progress_remaining * lr


def run_training(
    args: PPOArgs,
    *,
    script: str,
    rules: Rules,
    objective: str,
    env_fns: Callable[[int, Path], Sequence[EnvFn]],
    evaluate_policy: Callable[[NumpyPolicy], EvalResult],
    final_evaluate: Callable[[NumpyPolicy], EvalResult],
    card_extra: dict[str, Any] | None = None,
    extra_state: Callable[[], dict[str, Any]] | None = None,
    restore_extra: Callable[[dict[str, Any]], None] | None = None,
    on_iteration: Callable[[MaskablePPO, int], None] | None = None,
    wrap_venv: Callable[[VecEnv], VecEnv] | None = None,
) -> Path:
    """Train (or resume) a MaskablePPO run and save ``model.zip`` with ``model.json``.

    Args:
        args: the script's arguments.
        script: the script's name for the card.
        rules, objective: what is trained (the objective is part of the run name).
        env_fns: ``(seed, run directory) -> environment factories``.
        evaluate_policy: periodic evaluation of a policy snapshot.
        final_evaluate: the evaluation written into the card.
        card_extra: more card fields.
        extra_state / restore_extra: save and restore script state with each checkpoint.
        on_iteration: called at the start of every rollout with the model and the step count.
        wrap_venv: applied to the vector environment (after its ``VecMonitor``, so episode
            statistics stay the environment's own rewards), e.g. reward shaping.

    Returns:
        The run directory.
    """
    check_args(args)
    session_start = time.perf_counter()
    run_dir, resumed = prepare_run(args, objective)
    try:
        return _train(args, script, rules, objective, env_fns, evaluate_policy, final_evaluate, card_extra,
                      extra_state, restore_extra, on_iteration, wrap_venv, session_start, run_dir, resumed)
    except BaseException:  # an error or Ctrl-C
        if resumed is None and not (run_dir / "checkpoints" / "latest.json").is_file():
            shutil.rmtree(run_dir, ignore_errors=True)  # stopped before its first checkpoint
        raise


def _train(
    args: PPOArgs,
    script: str,
    rules: Rules,
    objective: str,
    env_fns: Callable[[int, Path], Sequence[EnvFn]],
    evaluate_policy: Callable[[NumpyPolicy], EvalResult],
    final_evaluate: Callable[[NumpyPolicy], EvalResult],
    card_extra: dict[str, Any] | None,
    extra_state: Callable[[], dict[str, Any]] | None,
    restore_extra: Callable[[dict[str, Any]], None] | None,
    on_iteration: Callable[[MaskablePPO, int], None] | None,
    wrap_venv: Callable[[VecEnv], VecEnv] | None,
    session_start: float,
    run_dir: Path,
    resumed: RunState | None,
) -> Path:
    state = resumed or RunState()
    state = dataclasses.replace(state, sessions=state.sessions + 1)
    if resumed is not None and (run_dir / "model.zip").is_file() and resumed.step >= args.total_timesteps:
        print(f"{run_dir} is already complete ({resumed.step} steps)")
        return run_dir

    # seeding: the network and PPO's sampling from the seed; environments from seed + steps
    # done, so a resumed session does not replay the episodes of the first one
    torch.manual_seed(args.seed + state.step)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    env_seed = args.seed + state.step

    if resumed is not None and restore_extra is not None:
        restore_extra(resumed.extra)
    venv = make_vec_env(env_fns(env_seed, run_dir), args.vector, env_seed)
    if wrap_venv is not None:
        venv = wrap_venv(venv)
    ppo_kwargs = dict(
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
    )
    if resumed is not None:
        ckpt = Checkpointer(run_dir).dir / resumed.model_file
        model = MaskablePPO.load(ckpt, env=venv, device="cpu", seed=env_seed)
        truncate_eval_csv(run_dir / "eval.csv", resumed.step)
        print(f"resuming {run_dir.name} from step {model.num_timesteps:,} ({ckpt.name})")
    else:
        model = MaskablePPO(
            policy_class(args),
            venv,
            learning_rate=lr_schedule(args),
            policy_kwargs=policy_kwargs(args, rules),
            seed=args.seed,
            device="cpu",
            verbose=0,
            **ppo_kwargs,
        )
        if args.init_from:
            init_weights(model, Path(args.init_from), rules)
            soften(model, args.init_temperature, rules)
    model.set_logger(make_logger(run_dir))
    callback = TrainingCallback(
        args, run_dir, evaluate_policy, state, session_start, extra_state, on_iteration
    )
    remaining = args.total_timesteps - model.num_timesteps
    try:
        if remaining > 0:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                reset_num_timesteps=resumed is None,
                progress_bar=False,
            )
    finally:
        with contextlib.suppress(Exception):
            venv.close()
    steps = model.num_timesteps
    callback.checkpoint(steps)
    train_cpu_s = callback.cpu_s()
    final = final_evaluate(NumpyPolicy.from_sb3(model))
    callback.record_eval(steps, final)
    save_model_atomic(model, run_dir / "model.zip")
    card = model_card(
        args,
        script,
        rules,
        objective,
        steps,
        callback.wall_s(),
        train_cpu_s,
        state.sessions,
        final.summary(),
        card_extra,
    )
    text = json.dumps(card, indent=1, default=_json_default)
    atomic_write_text(run_dir / "model.json", json.dumps(strict_json(json.loads(text)), indent=1, allow_nan=False))
    model.logger.close()
    print(
        f"saved {run_dir / 'model.zip'}: {steps:,} steps, {card['wall_time_s']:.0f} s wall, "
        f"{card['cpu_time_s']:.0f} s CPU; final {eval_text(final)}"
    )
    return run_dir


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON-able: {value!r}")
