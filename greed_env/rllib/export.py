"""From an RLlib checkpoint to a greed_env bot: the shared policy's logits as ONNX plus a card.

The bot format is the one :mod:`greed_env.bots.onnx_backend` loads (``NAME.onnx``: float32
``obs`` ``(batch, OBS_DIM)`` to ``logits`` ``(batch, n_actions)``, masking outside the graph;
``NAME.json``: the bot card). :func:`export_checkpoint`

1. restores only the shared module, from ``<checkpoint>/learner_group/learner/rl_module/
   <module_id>`` (:func:`load_policy_module`; no Algorithm, no env runners, no Ray cluster);
2. wraps its unmasked logits ``pi(actor_encoder(obs))`` in a torch module
   (:func:`logits_module`) and exports it with ``torch.onnx.export(dynamo=True)``, a dynamic
   batch axis and opset 18, as the SB3 exporter does;
3. checks, on positions sampled from bot games, that the ONNX bot's greedy masked action is the
   module's greedy masked action (the arg-max of the masked logits RLlib samples from), and
   refuses to write a bot that disagrees;
4. writes ``DIR/NAME.onnx`` then ``DIR/NAME.json`` atomically; the card id is
   ``<rules name>/NAME``, so copying both files into a bot folder (``GREED_BOTS_PATH``)
   makes ``greed_env.bots.load("<rules>/NAME")`` play it.

Importing this module imports neither ray nor torch; the functions do.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.cards import (
    ONNX_INPUT,
    ONNX_OPSET,
    ONNX_OUTPUT,
    build_card,
    onnx_metadata,
    write_card,
)
from greed_env.bots.errors import CatalogMismatchError, CorruptBotError, ObsSpecMismatchError
from greed_env.bots.export import encode_positions, onnx_logits_bytes, sample_positions
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.files import atomic_write_bytes
from greed_env.rules import Rules, resolve_rules
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM

__all__ = [
    "ONNX_INPUT",
    "ONNX_OPSET",
    "ONNX_OUTPUT",
    "RLlibExport",
    "export_checkpoint",
    "load_policy_module",
    "logits_module",
]

MODULE_PATH = ("learner_group", "learner", "rl_module")


@dataclass
class RLlibExport:
    """What :func:`export_checkpoint` wrote and what its check found."""

    onnx_path: Path
    card_path: Path
    card: dict[str, Any] = field(repr=False)
    positions: int = 0
    mismatches: int = 0
    max_abs_logit_diff: float = 0.0


def load_policy_module(checkpoint: str | Path, module_id: str = "shared") -> Any:
    """The RLModule ``module_id`` of an RLlib (new API stack) algorithm checkpoint, on the CPU.

    Raises:
        FileNotFoundError: the checkpoint has no such module.
    """
    from ray.rllib.core.rl_module.rl_module import RLModule

    path = Path(checkpoint).joinpath(*MODULE_PATH, module_id)
    if not path.is_dir():
        have = (
            sorted(p.name for p in path.parent.iterdir() if p.is_dir())
            if path.parent.is_dir()
            else []
        )
        raise FileNotFoundError(
            f"no RLModule {module_id!r} in checkpoint {checkpoint} (looked in {path}; modules: {have})"
        )
    module = RLModule.from_checkpoint(path)
    module.eval()
    return module


def logits_module(module: Any) -> Any:
    """A ``torch.nn.Module`` from observations ``(B, OBS_DIM)`` to the module's unmasked logits."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.base import ACTOR, ENCODER_OUT

    class PolicyLogits(torch.nn.Module):
        """Actor encoder and policy head of an RLlib PPO module."""

        def __init__(self, rl_module: Any) -> None:
            super().__init__()
            self.actor_encoder = getattr(rl_module.encoder, "actor_encoder", None)
            self.encoder = rl_module.encoder if self.actor_encoder is None else None
            self.pi = rl_module.pi

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            if self.actor_encoder is not None:
                latent = self.actor_encoder({Columns.OBS: obs})[ENCODER_OUT]
            else:
                latent = self.encoder({Columns.OBS: obs})[ENCODER_OUT][ACTOR]
            return self.pi(latent)

    return PolicyLogits(module).eval()


def export_checkpoint(
    checkpoint: str | Path,
    out_dir: str | Path,
    rules: Rules | str,
    *,
    name: str = "rllib-selfplay",
    module_id: str = "shared",
    description: str | None = None,
    check_positions: int = 500,
    seed: int = 0,
    training: dict[str, Any] | None = None,
) -> RLlibExport:
    """Export the shared policy of ``checkpoint`` as the bot ``<rules name>/<name>``.

    Args:
        checkpoint: an RLlib algorithm checkpoint directory (``algo.save_to_path()``).
        out_dir: destination folder (created).
        rules: the rules the policy was trained on (preset name or :class:`Rules`).
        name: bot name (no ``/``).
        module_id: the RLModule to export (self-play: ``"shared"``).
        description: one line for ``greed bots``.
        check_positions: sampled positions on which ONNX and module actions must agree.
        seed: seed of the position sampler.
        training: run information stored in the card's ``training`` field.

    Raises:
        ObsSpecMismatchError / CatalogMismatchError: the module's input or output size is not
            this greed_env's observation size or the rules' catalog size.
        CorruptBotError: the ONNX bot disagrees with the module; nothing is written.
    """
    import torch

    bot_rules = resolve_rules(rules)
    if "/" in name or not name:
        raise ValueError(f"bot name {name!r} must be a non-empty name without '/'")
    catalog = ActionCatalog(bot_rules)
    module = load_policy_module(checkpoint, module_id)
    where = f"RLlib checkpoint {checkpoint}"
    obs_space = module.observation_space
    inner = obs_space["observations"] if hasattr(obs_space, "spaces") else obs_space
    if tuple(inner.shape) != (OBS_DIM,):
        raise ObsSpecMismatchError(
            f"{where}: module observations {inner.shape}, greed_env has ({OBS_DIM},)"
        )
    if int(module.action_space.n) != catalog.n:
        raise CatalogMismatchError(
            f"{where}: module has {module.action_space.n} actions, the {bot_rules.name} catalog {catalog.n}"
        )
    logits = logits_module(module)
    bot_id = f"{bot_rules.name}/{name}"
    data = onnx_logits_bytes(logits, onnx_metadata(bot_id, bot_rules))
    card = build_card(
        name=name,
        rules=bot_rules,
        onnx_bytes=data,
        description=description or f"RLlib PPO self-play policy for {bot_rules.name}, greedy masked actions",
        objective="selfplay",
        training=dict(training or {}, source="ray.rllib", module_id=module_id),
    )
    bot = OnnxBot(card, data, where=f"exported {bot_id}")
    states = sample_positions(bot_rules, check_positions, np.random.default_rng([seed, 0x51]))
    obs, masks = encode_positions(bot_rules, states)
    with torch.no_grad():
        ref = logits(torch.from_numpy(obs)).numpy()
    ours = bot.logits(obs)
    legal = masks.astype(bool)
    mismatches = int(
        np.sum(np.argmax(np.where(legal, ref, -np.inf), axis=1) != bot.act_batch(obs, masks))
    )
    diff = float(np.max(np.abs(ref - ours))) if len(obs) else 0.0
    card["export"] = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source_checkpoint": Path(checkpoint).name,
        "exporter": "torch.onnx.export(dynamo=True)",
        "equivalence_check": {
            "positions": len(states),
            "mismatches": mismatches,
            "max_abs_logit_diff": diff,
            "seed": seed,
            "reference": "argmax of the RLlib module's masked logits",
        },
    }
    if mismatches:
        raise CorruptBotError(
            f"exported {bot_id}: ONNX greedy actions differ from the RLlib module on "
            f"{mismatches} of {len(states)} positions; nothing written"
        )
    out = Path(out_dir)
    onnx_path = atomic_write_bytes(out / f"{name}.onnx", data)
    card_path = write_card(out / f"{name}.json", card)
    return RLlibExport(onnx_path, card_path, card, len(states), mismatches, diff)
