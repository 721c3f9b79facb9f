"""The stable-baselines3 backend: MaskablePPO models (SB3 ``.zip``) as bots.

:func:`load_sb3_model` loads a model on the CPU with its training card (``model.json`` beside
``model.zip``), :func:`resolve_model_rules` checks the card against this greed_env and the
rules asked for, and :class:`PPOBot` plays the model greedily. sb3-contrib and torch are
imported only when a model is loaded (``pip install greed-env[train]``); exporting a model to
the torch-free ONNX runtime is :mod:`greed_env.bots.export`.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.policy_bots import (
    BotLoadError,
    CatalogMismatchError,
    CorruptBotError,
    ObsSpecMismatchError,
    RulesMismatchError,
    rules_mismatch_message,
)
from greed_env.envs.catalog import ACTION_CATALOG_VERSION, ActionCatalog, catalog_version
from greed_env.envs.observation import (
    OBS_DIM,
    OBS_SPEC_VERSION,
    encode_observation,
    spec_version_reads,
)
from greed_env.rules import Move, Rules, RulesError, State, resolve_rules

__all__ = ["PPOBot", "find_training_card", "load_sb3_model", "resolve_model_rules"]


def find_training_card(model_path: str | Path) -> Path | None:
    """The training card of an SB3 model file: ``model.json`` beside ``model.zip`` (or None)."""
    p = Path(model_path)
    for candidate in (p.with_suffix(".json"), p.parent / (p.name + ".json"), p.parent / "card.json"):
        if candidate.is_file():
            return candidate
    return None


def _read_training_card(model_path: Path) -> dict[str, Any]:
    path = find_training_card(model_path)
    if path is None:
        return {}
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptBotError(f"training card {path}: not valid JSON ({exc})") from None
    if not isinstance(card, dict):
        raise CorruptBotError(f"training card {path}: expected a JSON object")
    card.setdefault("_path", path.name)
    return card


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
        raise CorruptBotError(f"model file {p}: not a readable zip ({exc})") from None
    if bad is not None:
        raise CorruptBotError(f"model file {p}: member {bad!r} fails its CRC check (truncated or edited)")
    if "data" not in names or "policy.pth" not in names:
        raise CorruptBotError(f"model file {p}: a zip without data/policy.pth is not an SB3 model")
    card = _read_training_card(p)
    from sb3_contrib import MaskablePPO

    try:
        model = MaskablePPO.load(p, device="cpu")
    except Exception as exc:
        raise CorruptBotError(f"model file {p}: MaskablePPO cannot load it: {exc}") from None
    return model, card


def resolve_model_rules(card: Mapping[str, Any], rules: Rules | None, where: str) -> Rules:
    """The rules a model plays: its training card's, checked against ``rules`` when both exist.

    The card may give ``rules`` as a :meth:`Rules.to_dict` dict or a preset name, and
    ``rules_fingerprint``, ``obs_spec_version`` and ``action_catalog_version``.

    Raises:
        BotLoadError: no rules anywhere; :class:`RulesMismatchError`,
            :class:`ObsSpecMismatchError`, :class:`CatalogMismatchError` on a mismatch;
            :class:`CorruptBotError` when the card's rules do not build.
    """
    card_rules: Rules | None = None
    raw = card.get("rules")
    try:
        if isinstance(raw, Mapping):
            card_rules = Rules.from_dict(dict(raw))
        elif isinstance(raw, str):
            card_rules = resolve_rules(raw, **dict(card.get("rules_overrides") or {}))
    except (RulesError, TypeError, ValueError) as exc:
        raise CorruptBotError(f"{where}: the training card's rules do not build: {exc}") from None
    fp = card.get("rules_fingerprint")
    if card_rules is not None and fp is not None and fp != card_rules.fingerprint:
        raise CorruptBotError(
            f"{where}: training card fingerprint {fp!r} does not match its rules ({card_rules.fingerprint!r})"
        )
    read_rules = rules if rules is not None else card_rules
    version = card.get("obs_spec_version", OBS_SPEC_VERSION)
    if version != OBS_SPEC_VERSION and (read_rules is None or not spec_version_reads(version, read_rules)):
        raise ObsSpecMismatchError(
            f"{where}: trained on observation spec v{card['obs_spec_version']}, "
            f"this greed_env encodes v{OBS_SPEC_VERSION}"
        )
    known = rules if rules is not None else card_rules
    built = catalog_version(known) if known is not None else ACTION_CATALOG_VERSION
    if card.get("action_catalog_version", built) != built:
        raise CatalogMismatchError(
            f"{where}: trained on action catalog v{card['action_catalog_version']}, "
            f"this greed_env builds v{built} for these rules"
        )
    if rules is not None:
        want = fp or (card_rules.fingerprint if card_rules is not None else None)
        if want is not None and want != rules.fingerprint:
            raise RulesMismatchError(
                f"{where}: trained for rules {getattr(card_rules, 'name', '?')!r} (fingerprint "
                f"{want}), asked for {rules.name!r} (fingerprint {rules.fingerprint})"
            )
        return rules
    if card_rules is None:
        raise BotLoadError(f"{where}: no training card names its rules; pass the rules explicitly (--rules)")
    return card_rules


class PPOBot:
    """A MaskablePPO model (SB3 ``.zip``) playing greedily: ``predict(..., deterministic=True)``.

    Needs sb3-contrib and torch (``pip install greed-env[train]``), imported when the bot is
    built. ``rules`` is required unless the model's training card (see
    :func:`find_training_card`) names them.

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
        self.rules = resolve_model_rules(self.training_card, rules, where=f"model {self.path}")
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
