"""The ONNX backend: an exported bot (``NAME.onnx`` plus its card ``NAME.json``) played with
onnxruntime and numpy, never torch.

The graph maps the float32 observation batch ``obs`` (``(batch, OBS_DIM)``) to the action
logits ``logits`` (``(batch, n_actions)``). Masking happens outside the graph, in numpy: the
greedy action is the highest logit among the legal actions, which is the action
``MaskablePPO.predict(obs, action_masks=mask, deterministic=True)`` returns. The card and its
checks are :mod:`greed_env.bots.cards`; onnxruntime is imported when a bot is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.abilities import Abilities, ObservationPolicy
from greed_env.bots.cards import (
    NEVER,
    ONNX_INPUT,
    ONNX_OUTPUT,
    added_actions,
    check_compatible,
    load_card,
    rules_mismatch_message,
)
from greed_env.bots.errors import CorruptBotError, MissingDependencyError, RulesMismatchError
from greed_env.bots.onnx_graph import MAX_ONNX_BYTES, check_graph
from greed_env.rules.config import Rules
from greed_env.rules.game import Move, State
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM, encode_observation

__all__ = ["OnnxBot", "check_card_graph", "masked_argmax", "read_bot_files"]


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


class OnnxBot:
    """A policy exported to ONNX, run with onnxruntime (no torch needed).

    Greedy by default (``temperature=0``): the legal action with the highest logit, so the bot is
    deterministic and ``rng`` is not used. With ``temperature > 0`` it samples from the masked
    softmax of ``logits / temperature`` with the caller's ``rng``.

    Build one with :meth:`from_card` (checks the card, the checksum and the graph) or let
    :func:`greed_env.bots.load` do it.
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

        The graph is checked before onnxruntime reads it
        (:func:`~greed_env.bots.onnx_graph.check_graph`: its size, its operators, its input and
        output against the card).

        Raises:
            BotLoadError: as :func:`check_compatible`; :class:`CorruptBotError` when the graph
                is refused by that check, onnxruntime cannot parse it or its input/output
                shapes differ from the card.
            MissingDependencyError: (a BotLoadError and an ImportError) onnxruntime is not
                installed (``pip install greed-env[onnx]``; the ``train`` extra includes it).
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
        self._added = added_actions(card, self.catalog)
        self._model = bytes(model)
        self._threads = int(threads)
        check_card_graph(card, self._model, where)
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
        card, model = read_bot_files(card_path)
        return cls(card, model, rules=rules, where=f"bot {card['id']}", **kwargs)

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
        if self._added:  # actions of a newer catalog than the bot's: never its choice
            out = np.concatenate([out, np.full((len(out), self._added), NEVER, dtype=out.dtype)], axis=1)
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
        p = self._sampling_probabilities(logits, action_mask)
        return int(rng.choice(len(p), p=p))

    def _sampling_probabilities(self, logits: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The masked softmax of ``logits / temperature`` (``temperature > 0``): the
        probability of each action id, 0 for the illegal ones."""
        legal = np.asarray(action_mask).astype(bool)
        if not legal.any():
            raise ValueError("a position without legal actions (chance node or game over)")
        z = np.where(legal, logits.astype(np.float64) / self.temperature, -np.inf)
        p = np.exp(z - z.max())
        return p / p.sum()

    def move_probabilities(self, rules: Rules, state: State) -> list[tuple[Move, float]]:
        """The legal moves of ``state`` with the probability a sampling bot (``temperature > 0``)
        plays each, what :meth:`act` draws from; greedy, its move with probability 1.

        Raises:
            RulesMismatchError: ``rules`` differ from the rules the bot was trained for.
        """
        self.check_rules(rules)
        mask, moves = self.catalog.legal(state)
        logits = self.logits(encode_observation(rules, state))
        if self.temperature == 0.0:
            return [(moves[int(masked_argmax(logits, mask))], 1.0)]
        p = self._sampling_probabilities(logits, mask)
        return [(move, float(p[a])) for a, move in moves.items() if p[a] > 0.0]

    def abilities(self) -> Abilities:
        """Its rules only; greedy (``temperature=0``), a deterministic observation policy
        (:meth:`act_batch`); sampling, one position at a time, and the distribution it draws
        from (:meth:`move_probabilities`); its card."""
        if self.temperature == 0.0:
            return Abilities(rules=self.rules, policy=ObservationPolicy(self.act_batch, self.catalog), card=self.card)
        return Abilities(rules=self.rules, move_probabilities=self.move_probabilities, card=self.card)

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


def read_bot_files(card_path: str | Path) -> tuple[dict[str, Any], bytes]:
    """The checked card at ``card_path`` (:func:`load_card`: its fields and its ONNX file's
    checksum) and the bytes of that file, its size checked before it is read.

    Raises:
        CorruptBotError: naming the bot and the first problem found.
    """
    card, onnx_path = load_card(card_path)
    size = onnx_path.stat().st_size
    if size > MAX_ONNX_BYTES:  # refused before it is read into memory
        raise CorruptBotError(
            f"bot {card['id']}: {onnx_path.name} has {size:,} bytes, more than the {MAX_ONNX_BYTES:,} a bot may have"
        )
    return card, onnx_path.read_bytes()


def check_card_graph(card: Mapping[str, Any], model: bytes, where: str) -> None:
    """:func:`check_graph` of ``model`` against what ``card`` says of it (its input, output and
    number of actions).

    Raises:
        CorruptBotError: naming ``where`` and the first problem found.
    """
    onnx_info = card.get("onnx") if isinstance(card.get("onnx"), Mapping) else {}
    check_graph(
        model,
        obs_dim=OBS_DIM,
        num_actions=int(card["num_actions"]),
        input_name=str(onnx_info.get("input", ONNX_INPUT)),
        output_name=str(onnx_info.get("output", ONNX_OUTPUT)),
        where=where,
    )


def _session(model: bytes, threads: int, where: str) -> tuple[Any, str, str]:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise MissingDependencyError(
            f"{where}: running ONNX bots needs onnxruntime (pip install 'greed-env[onnx]', "
            "or the train extra, which includes it)"
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
