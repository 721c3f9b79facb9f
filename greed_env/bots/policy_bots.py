"""Bots that play a trained policy: an exported ONNX file (onnxruntime only) or an SB3 model.

An exported bot is two files side by side: ``NAME.onnx``, a graph from the float32
observation batch ``obs`` (``(batch, OBS_DIM)``) to the action logits ``logits``
(``(batch, n_actions)``), and ``NAME.json``, its card. Masking happens outside the graph, in
numpy: the greedy action is the highest logit among the legal actions, which is the action
``MaskablePPO.predict(obs, action_masks=mask, deterministic=True)`` returns.

The card (format :data:`CARD_FORMAT`, version :data:`CARD_VERSION`) holds::

    id, name, kind, description, objective,
    rules (Rules.to_dict()), rules_name, rules_fingerprint,
    obs_spec_version, obs_dim, action_catalog_version, num_actions,
    onnx: {file, sha256, bytes, input, output, opset},
    training: {...}   # the training run's own card, as written by the trainer
    evaluation: [...] # measured results (see greed_env.bots.tournament)
    export: {...}     # when and how it was exported, and the equivalence check

Loading checks everything that would make a bot silently wrong and raises a
:class:`BotLoadError` subclass naming the mismatch: :class:`CorruptBotError` (card not JSON,
fields missing, checksum mismatch, ONNX parse failure, graph shape not as the card says),
:class:`RulesMismatchError` (the bot was trained for other rules),
:class:`ObsSpecMismatchError` and :class:`CatalogMismatchError` (the observation encoder or the
action catalog of this greed_env differs from the bot's).

This module imports neither torch nor onnxruntime at import time: :class:`OnnxBot` needs only
onnxruntime and numpy; the SB3 model bot, :class:`~greed_env.bots.sb3_backend.PPOBot`, lives
in :mod:`greed_env.bots.sb3_backend`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.base import Bot
from greed_env.envs.catalog import ActionCatalog
from greed_env.envs.observation import (
    OBS_DIM,
    OBS_SPEC_VERSION,
    encode_observation,
    spec_version_reads,
)
from greed_env.rules.config import (
    Rules,
    RulesError,
    fingerprint_before_revisions,
    reading_revisions,
)
from greed_env.rules.game import Move, State

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "BotLoadError",
    "CatalogMismatchError",
    "CorruptBotError",
    "ObsSpecMismatchError",
    "OnnxBot",
    "RulesMismatchError",
    "batch_moves",
    "check_compatible",
    "load_card",
    "masked_argmax",
    "read_card",
    "rules_mismatch_message",
    "sha256_file",
]

CARD_FORMAT = "greed_env/bot-card"
CARD_VERSION = 1
REQUIRED_CARD_KEYS = (
    "format",
    "card_version",
    "id",
    "rules",
    "rules_fingerprint",
    "obs_spec_version",
    "obs_dim",
    "action_catalog_version",
    "num_actions",
    "onnx",
)


class BotLoadError(ValueError):
    """A bot that cannot be used as asked; the message names the file and the mismatch."""


class CorruptBotError(BotLoadError):
    """A bot file that is unreadable: bad JSON, missing fields, checksum or ONNX parse failure."""


class RulesMismatchError(BotLoadError):
    """A bot trained for other rules (different rules fingerprint)."""


class ObsSpecMismatchError(BotLoadError):
    """A bot trained on another observation-spec version or size than this greed_env encodes."""


class CatalogMismatchError(BotLoadError):
    """A bot trained on another action-catalog version or size than this greed_env builds."""


def batch_moves(bot: Bot, rules: Rules, states: Sequence[State], rng: np.random.Generator) -> list[Move]:
    """The bot's moves in ``states``, batched where the bot can take a batch.

    Observation policies (:class:`~greed_env.bots.policy_bots.OnnxBot`,
    :class:`~greed_env.bots.sb3_backend.PPOBot`: ``act_batch(observations, masks)``) and
    training snapshots (:class:`~greed_env.train.policy.PolicyBot`: ``act_ids``) are asked for
    the whole batch at once (greedy: a sampling ``OnnxBot`` goes one position at a time); any
    other bot one position at a time with ``rng``.
    """
    if not states:
        return []
    check = getattr(bot, "check_rules", None)
    if callable(check):
        check(rules)
    act_ids = getattr(bot, "act_ids", None)
    greedy = float(getattr(bot, "temperature", 0.0)) == 0.0
    obs_batch = getattr(bot, "act_batch", None) if hasattr(bot, "act_obs") and greedy else None
    if act_ids is None and obs_batch is None:
        return [bot.act(rules, s, rng) for s in states]
    catalog: ActionCatalog = getattr(bot, "catalog", None) or ActionCatalog(rules)
    obs = np.empty((len(states), OBS_DIM), dtype=np.float32)
    masks = np.empty((len(states), catalog.n), dtype=np.int8)
    legal: list[dict[int, Move]] = []
    for i, s in enumerate(states):
        encode_observation(rules, s, out=obs[i])
        mask, moves = catalog.legal(s)
        masks[i] = mask
        legal.append(moves)
    ids = act_ids(obs, masks) if act_ids is not None else obs_batch(obs, masks)  # type: ignore[misc]
    return [moves[int(a)] for moves, a in zip(legal, np.asarray(ids).reshape(-1), strict=True)]


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def masked_argmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray | int:
    """Index of the largest logit among unmasked actions (first one on exact ties).

    ``logits`` and ``mask`` have shape ``(n,)`` or ``(batch, n)``; the result is an int or an
    int64 array of shape ``(batch,)``.

    Raises:
        ValueError: shapes differ, or a row has no legal action.
    """
    logits = np.asarray(logits)
    legal = np.asarray(mask).astype(bool)
    if logits.shape != legal.shape:
        raise ValueError(f"logits shape {logits.shape} and mask shape {legal.shape} differ")
    if not legal.any(axis=-1).all():
        raise ValueError("a position without legal actions (chance node or game over)")
    masked = np.where(legal, logits, -np.inf)
    best = np.argmax(masked, axis=-1)
    return int(best) if best.ndim == 0 else best.astype(np.int64)


def read_card(path: str | Path) -> dict[str, Any]:
    """The parsed card at ``path`` with its format and required keys checked.

    Raises:
        CorruptBotError: unreadable file, invalid JSON, wrong format tag or version, missing keys.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise CorruptBotError(f"bot card {p}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CorruptBotError(f"bot card {p}: not UTF-8 text") from None
    try:
        card = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptBotError(f"bot card {p}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(card, dict):
        raise CorruptBotError(f"bot card {p}: expected a JSON object, got {type(card).__name__}")
    if card.get("format") != CARD_FORMAT:
        raise CorruptBotError(f"bot card {p}: format is {card.get('format')!r}, expected {CARD_FORMAT!r}")
    if card.get("card_version") != CARD_VERSION:
        raise CorruptBotError(
            f"bot card {p}: card_version {card.get('card_version')!r}, this greed_env reads {CARD_VERSION}"
        )
    missing = [k for k in REQUIRED_CARD_KEYS if k not in card]
    onnx_info = card.get("onnx")
    if not isinstance(onnx_info, dict) or not {"file", "sha256"} <= onnx_info.keys():
        missing.append("onnx.file/onnx.sha256")
    if missing:
        raise CorruptBotError(f"bot card {p}: missing fields {', '.join(missing)}")
    return card


def card_rules(card: Mapping[str, Any], where: str = "bot card") -> Rules:
    """The :class:`Rules` a card was made for, checked against its stored fingerprint.

    Raises:
        CorruptBotError: the rules dict does not build, or its fingerprint differs from the card's.
    """
    try:
        rules = Rules.from_dict(dict(card["rules"]))
    except (RulesError, TypeError, ValueError) as exc:
        raise CorruptBotError(f"{where}: its rules do not build: {exc}") from None
    if rules.fingerprint != card["rules_fingerprint"]:
        if fingerprint_before_revisions(rules) == card["rules_fingerprint"]:
            raise RulesMismatchError(
                f"{where}: made under an earlier reading of the {rules.name!r} rules "
                f"(corrected since: {', '.join(sorted(reading_revisions(rules)))}); it plays "
                "other rules than this greed_env, so it is refused: retrain it"
            )
        raise CorruptBotError(
            f"{where}: rules fingerprint {card['rules_fingerprint']!r} does not match its rules "
            f"dict ({rules.fingerprint!r}); the card was edited or built by another greed_env"
        )
    return rules


def check_compatible(card: Mapping[str, Any], rules: Rules | None = None, where: str = "bot") -> Rules:
    """Check a card against this greed_env (and ``rules`` if given); return the card's rules.

    Raises:
        CorruptBotError: the card's rules do not rebuild to its fingerprint.
        ObsSpecMismatchError: observation-spec version or size differ from this greed_env's.
        CatalogMismatchError: action-catalog version or size differ.
        RulesMismatchError: ``rules`` is given and has another fingerprint than the card.
    """
    bot_rules = card_rules(card, where)
    if not spec_version_reads(card["obs_spec_version"], bot_rules) or card["obs_dim"] != OBS_DIM:
        raise ObsSpecMismatchError(
            f"{where}: trained on observation spec v{card['obs_spec_version']} "
            f"({card['obs_dim']} entries); this greed_env encodes v{OBS_SPEC_VERSION} ({OBS_DIM})"
        )
    catalog = ActionCatalog(bot_rules)
    if card["action_catalog_version"] != catalog.version or card["num_actions"] != catalog.n:
        raise CatalogMismatchError(
            f"{where}: trained on action catalog v{card['action_catalog_version']} "
            f"({card['num_actions']} actions); this greed_env builds v{catalog.version} "
            f"({catalog.n} actions) for {bot_rules.name}"
        )
    if rules is not None and rules.fingerprint != bot_rules.fingerprint:
        raise RulesMismatchError(rules_mismatch_message(where, bot_rules, rules))
    return bot_rules


def rules_mismatch_message(where: str, bot_rules: Rules, rules: Rules) -> str:
    """``where``: made for ``bot_rules``, asked to play ``rules``; both fingerprints and the
    fields that differ (first four)."""
    a, b = bot_rules.to_dict(include_name=False), rules.to_dict(include_name=False)
    diff = [k for k in a if a[k] != b.get(k)]
    shown = ", ".join(f"{k}={b.get(k)!r} (bot: {a[k]!r})" for k in diff[:4])
    more = f" and {len(diff) - 4} more" if len(diff) > 4 else ""
    return (
        f"{where}: made for rules {bot_rules.name!r} (fingerprint {bot_rules.fingerprint}), "
        f"asked to play {rules.name!r} (fingerprint {rules.fingerprint}); differing: {shown}{more}"
    )


def load_card(card_path: str | Path) -> tuple[dict[str, Any], Path]:
    """The checked card and the path of its ONNX file (checksum verified).

    Raises:
        CorruptBotError: card unreadable or invalid, ONNX file missing, or sha256 mismatch.
    """
    cp = Path(card_path)
    card = read_card(cp)
    onnx_path = cp.parent / str(card["onnx"]["file"])
    if not onnx_path.is_file():
        raise CorruptBotError(f"bot {card['id']}: ONNX file {onnx_path} is missing")
    digest = sha256_file(onnx_path)
    if digest != card["onnx"]["sha256"]:
        raise CorruptBotError(
            f"bot {card['id']}: checksum mismatch for {onnx_path.name}: card says "
            f"sha256 {card['onnx']['sha256'][:16]}..., file has {digest[:16]}... "
            "(truncated, replaced or edited file)"
        )
    return card, onnx_path


class OnnxBot:
    """A policy exported to ONNX, run with onnxruntime (no torch needed).

    Greedy by default (``temperature=0``): the legal action with the highest logit, so the bot is
    deterministic and ``rng`` is not used. With ``temperature > 0`` it samples from the masked
    softmax of ``logits / temperature`` with the caller's ``rng``.

    Build one with :meth:`from_card` (checks the card, the checksum and the graph) or let
    :func:`greed_env.bots.registry.load` do it.
    """

    def __init__(
        self,
        card: Mapping[str, Any],
        model: bytes,
        *,
        rules: Rules | None = None,
        temperature: float = 0.0,
        threads: int = 1,
        where: str | None = None,
    ) -> None:
        """Wrap ``model`` (serialized ONNX bytes) described by ``card``.

        Raises:
            BotLoadError: as :func:`check_compatible`; :class:`CorruptBotError` when onnxruntime
                cannot parse the graph or its input/output shapes differ from the card.
            ImportError: onnxruntime is not installed (``pip install greed-env[onnx]``).
        """
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.card = dict(card)
        self.name = str(card.get("id", card.get("name", "onnx")))
        self.description = str(card.get("description", ""))
        self.temperature = float(temperature)
        where = where or f"bot {self.name}"
        self.rules = check_compatible(card, rules, where)
        self.catalog = ActionCatalog(self.rules)
        self._model = bytes(model)
        self._threads = int(threads)
        self._session, self._input, self._output = _session(model, threads, where)
        self._check_graph(where)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the onnxruntime session (rebuilt from the model bytes on load), so
        the bot can play in worker processes."""
        state = dict(self.__dict__)
        for key in ("_session", "catalog"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.catalog = ActionCatalog(self.rules)
        self._session, self._input, self._output = _session(self._model, self._threads, f"bot {self.name}")

    @classmethod
    def from_card(
        cls, card_path: str | Path, rules: Rules | None = None, **kwargs: Any
    ) -> OnnxBot:
        """The bot described by the card file ``card_path`` (its ONNX file lies beside it)."""
        card, onnx_path = load_card(card_path)
        return cls(card, onnx_path.read_bytes(), rules=rules, where=f"bot {card['id']}", **kwargs)

    def _check_graph(self, where: str) -> None:
        probe = np.zeros((2, OBS_DIM), dtype=np.float32)
        try:
            out = self.logits(probe)
        except Exception as exc:
            raise CorruptBotError(f"{where}: the ONNX graph does not run on ({OBS_DIM},) observations: {exc}") from None
        if out.shape != (2, self.catalog.n):
            raise CorruptBotError(
                f"{where}: the ONNX graph gives logits of shape {out.shape[1:]}, "
                f"the card and the catalog say ({self.catalog.n},)"
            )

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Raw logits for a float32 batch ``(batch, OBS_DIM)`` (or one ``(OBS_DIM,)`` vector)."""
        obs = np.asarray(observations, dtype=np.float32)
        single = obs.ndim == 1
        batch = obs[None, :] if single else obs
        out = self._session.run([self._output], {self._input: np.ascontiguousarray(batch)})[0]
        return out[0] if single else out

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Greedy masked actions of a batch: int64 array ``(batch,)``."""
        return np.asarray(masked_argmax(self.logits(observations), masks), dtype=np.int64).reshape(-1)

    def act_obs(
        self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator | None = None
    ) -> int:
        """The action id for one observation and its legal mask (see the class docstring)."""
        logits = self.logits(observation)
        if self.temperature == 0.0:
            return int(masked_argmax(logits, action_mask))
        if rng is None:
            raise ValueError("a sampling OnnxBot (temperature > 0) needs a generator")
        legal = np.asarray(action_mask).astype(bool)
        if not legal.any():
            raise ValueError("a position without legal actions (chance node or game over)")
        z = np.where(legal, logits.astype(np.float64) / self.temperature, -np.inf)
        p = np.exp(z - z.max())
        p /= p.sum()
        return int(rng.choice(len(p), p=p))

    def check_rules(self, rules: Rules) -> None:
        """Raise :class:`RulesMismatchError` unless ``rules`` are the bot's rules."""
        if rules.fingerprint != self.rules.fingerprint:
            raise RulesMismatchError(rules_mismatch_message(f"bot {self.name}", self.rules, rules))

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """The policy's move for ``state.player``.

        Raises:
            RulesMismatchError: ``rules`` differ from the rules the bot was trained for.
            ValueError: ``state`` has no legal move.
        """
        self.check_rules(rules)
        mask, moves = self.catalog.legal(state)
        obs = encode_observation(rules, state)
        return moves[self.act_obs(obs, mask, rng)]

    def __repr__(self) -> str:
        return f"OnnxBot({self.name!r}, rules={self.rules.name!r})"


def _session(model: bytes, threads: int, where: str) -> tuple[Any, str, str]:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ImportError(
            f"{where}: running ONNX bots needs onnxruntime (pip install 'greed-env[onnx]')"
        ) from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, int(threads))
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CorruptBotError(f"{where}: the ONNX file does not parse: {first}") from None
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1 or not outputs:
        raise CorruptBotError(
            f"{where}: expected one input and a logits output, the graph has "
            f"{len(inputs)} inputs and {len(outputs)} outputs"
        )
    return session, inputs[0].name, outputs[0].name
