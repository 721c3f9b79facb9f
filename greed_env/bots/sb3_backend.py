"""The stable-baselines3 backend: MaskablePPO models (SB3 ``.zip``) as bots.

:func:`load_sb3_model` loads a model on the CPU with its training card (``model.json`` beside
``model.zip``, :mod:`greed_env.bots.cards`), :func:`model_rules` gives the rules it plays, and
:class:`PPOBot` plays the model greedily with ``predict``. sb3-contrib and torch are
imported only when a model is loaded (``pip install greed-env[train]``); exporting a model to
the torch-free ONNX runtime is :mod:`greed_env.bots.export`.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.abilities import Abilities, ObservationPolicy
from greed_env.bots.cards import check_training_card, read_training_card, rules_mismatch_message
from greed_env.bots.errors import (
    BotLoadError,
    CatalogMismatchError,
    CorruptBotError,
    ObsSpecMismatchError,
    RulesMismatchError,
)
from greed_env.rules import Move, Rules, State
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM, OBS_SPEC_VERSION, encode_observation

__all__ = ["PPOBot", "load_sb3_model", "model_rules"]


def model_rules(card: Mapping[str, Any], rules: Rules | None, where: str) -> Rules:
    """The rules a saved model plays: ``rules`` checked against its training card, or the card's.

    Raises:
        BotLoadError: no rules anywhere, or the card does not fit (:func:`check_training_card`).
    """
    found = check_training_card(card, rules, where)
    if found is None:
        raise BotLoadError(f"{where}: no training card names its rules; pass the rules explicitly (--rules)")
    return found


def load_sb3_model(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """A MaskablePPO model loaded on the CPU, and its training card (``{}`` when none).

    Raises:
        CorruptBotError: missing file, not an SB3 zip, or a zip SB3 cannot load.
    """
    p = Path(path)
    if not p.is_file():
        raise CorruptBotError(f"model file {p} does not exist")
    try:
        with zipfile.ZipFile(p) as zf:
            names = set(zf.namelist())
            bad = zf.testzip()
    except (zipfile.BadZipFile, OSError) as exc:
        raise CorruptBotError(f"model file {p} is not a stable-baselines3 model (not a readable zip: {exc})") from None
    if bad is not None:
        raise CorruptBotError(f"model file {p}: member {bad!r} fails its CRC check (truncated or edited)")
    if "data" not in names or "policy.pth" not in names:
        raise CorruptBotError(f"model file {p} is a zip with no data/policy.pth: not a stable-baselines3 model")
    card = read_training_card(p) or {}
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(p, device="cpu")
    except Exception as exc:
        raise CorruptBotError(f"model file {p}: MaskablePPO cannot load it: {exc}") from None
    return model, card


class PPOBot:
    """A MaskablePPO model (SB3 ``.zip``) playing greedily: ``predict(..., deterministic=True)``.

    Needs sb3-contrib and torch (``pip install greed-env[train]``), imported when the bot is
    built. ``rules`` is required unless the model's training card (see
    :func:`~greed_env.bots.cards.training_card_path`) names them.

    Raises:
        BotLoadError: rules unknown, or the model's spaces do not fit the observation spec and
            the action catalog of ``rules``; versions in the training card differ from this
            greed_env's.
    """

    def __init__(
        self, path: str | Path, rules: Rules | None = None, *, name: str | None = None
    ) -> None:
        self.path = Path(path)
        self.name = name or f"ppo:{self.path.name}"
        self.model, self.training_card = load_sb3_model(self.path)
        self.rules = model_rules(self.training_card, rules, where=f"model {self.path}")
        self.catalog = ActionCatalog(self.rules)
        n_actions = int(self.model.action_space.n)
        if n_actions != self.catalog.n:
            raise CatalogMismatchError(
                f"model {self.path}: {n_actions} actions, the {self.rules.name} catalog "
                f"v{self.catalog.version} has {self.catalog.n}"
            )
        obs_shape = tuple(self.model.observation_space.shape or ())
        if obs_shape != (OBS_DIM,):
            raise ObsSpecMismatchError(
                f"model {self.path}: observation shape {obs_shape}, spec v{OBS_SPEC_VERSION} has ({OBS_DIM},)"
            )

    def abilities(self) -> Abilities:
        """Its rules only; a deterministic observation policy (:meth:`act_batch`); its training card."""
        return Abilities(
            rules=self.rules, policy=ObservationPolicy(self.act_batch, self.catalog), card=self.training_card or None
        )

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``MaskablePPO.predict(obs, action_masks=masks, deterministic=True)`` for a batch."""
        actions, _ = self.model.predict(
            np.asarray(observations, dtype=np.float32),
            action_masks=np.asarray(masks).astype(bool),
            deterministic=True,
        )
        return np.asarray(actions, dtype=np.int64).reshape(-1)

    def act_obs(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The model's deterministic masked action for one observation."""
        return int(self.act_batch(np.asarray(observation)[None, :], np.asarray(action_mask)[None, :])[0])

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """The model's move for ``state.player``.

        Raises:
            RulesMismatchError: ``rules`` differ from the model's rules.
        """
        if rules.fingerprint != self.rules.fingerprint:
            raise RulesMismatchError(rules_mismatch_message(f"model {self.path}", self.rules, rules))
        mask, moves = self.catalog.legal(state)
        return moves[self.act_obs(encode_observation(rules, state), mask)]

    def __repr__(self) -> str:
        return f"PPOBot({str(self.path)!r}, rules={self.rules.name!r})"
