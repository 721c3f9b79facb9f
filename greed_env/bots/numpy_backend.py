"""The numpy backend: trained policies as torch-free bots: the actor MLP of a MaskablePPO model in numpy.

:class:`NumpyPolicy` holds the actor's weights (the ``mlp_extractor`` policy layers and the
``action_net``) and computes action logits with numpy; the deterministic masked action is the
arg-max of the logits over legal actions, which is what ``MaskablePPO.predict(obs,
action_masks=mask, deterministic=True)`` returns. :class:`PolicyBot` plays such a policy
through the :class:`~greed_env.bots.base.Bot` protocol and also offers ``act_batch`` so the
evaluation runner can score many positions in one matrix product.

Policies come from a live model (:meth:`NumpyPolicy.from_sb3`, used for evaluations during
training and for the self-play snapshot pool) or from a saved model file
(:func:`load_policy`, which needs torch only while reading the zip: this is what a ``.zip``
bot spec plays, :mod:`greed_env.bots.loader`). Saved snapshots are
``.npz`` files (:meth:`NumpyPolicy.save` / :meth:`NumpyPolicy.load`), never pickles.

>>> import numpy as np
>>> from greed_env.rules import preset
>>> rules = preset("ten_thousand")
>>> n = ActionCatalog(rules).n
>>> layers = [(np.zeros((4, OBS_DIM), np.float32), np.zeros(4, np.float32))]
>>> head = (np.zeros((n, 4), np.float32), np.arange(n, dtype=np.float32))
>>> pol = NumpyPolicy(layers, head, "tanh", meta={"rules_fingerprint": rules.fingerprint})
>>> mask = np.zeros(n, np.int8); mask[[3, 7]] = 1
>>> int(pol.act(np.zeros((1, OBS_DIM), np.float32), mask[None])[0])
7
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.abilities import Abilities, ObservationPolicy
from greed_env.bots.cards import NEVER, check_training_card, read_training_card
from greed_env.bots.errors import BotLoadError, RulesMismatchError
from greed_env.bots.featurize import FeatureConfig, featurize
from greed_env.bots.sb3_backend import load_sb3_model
from greed_env.files import atomic_write_with
from greed_env.rules import Move, Rules, State
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM, encode_observation

__all__ = [
    "ACTIVATIONS",
    "NumpyPolicy",
    "PolicyBot",
    "load_policy",
]

ACTIVATIONS = ("tanh", "relu")


_BLAS: Any = None


def _one_blas_thread() -> AbstractContextManager[Any]:
    """Run numpy's BLAS on one thread inside the block.

    A policy batch is a few small matrix products (0.3 ms for 300 rows on one thread). With
    OpenBLAS's default of a thread per core they took 15 ms on this 2-core machine whenever
    the cores were busy with other work (training, evaluation workers): its threads spin
    waiting for each other. The controller is built once per process (it scans the loaded
    libraries); entering the limit costs about 0.3 ms.
    """
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # an install without the dependency: numpy's own threading
            _BLAS = False
        else:
            _BLAS = ThreadpoolController()
    if _BLAS is False:
        return nullcontext()
    return _BLAS.limit(limits=1, user_api="blas")


def _activation(name: str, x: np.ndarray) -> np.ndarray:
    if name == "tanh":
        return np.tanh(x)
    return np.maximum(x, 0.0)


class NumpyPolicy:
    """A feed-forward actor: hidden layers, an activation, and an action head.

    Args:
        layers: ``(weight, bias)`` per hidden layer, ``weight`` of shape ``(out, in)`` as in
            ``torch.nn.Linear``.
        head: ``(weight, bias)`` of the action head, ``weight`` of shape ``(n_actions, hidden)``.
        activation: ``"tanh"`` or ``"relu"``, applied after every hidden layer.
        meta: free JSON-able facts about the policy (rules fingerprint, spec versions, steps).
        features: the fixed input readings applied before the first layer
            (:mod:`greed_env.bots.featurize`), or None for the raw observation.
    """

    def __init__(
        self,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        head: tuple[np.ndarray, np.ndarray],
        activation: str,
        meta: dict[str, Any] | None = None,
        features: FeatureConfig | None = None,
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        # copies: arrays from a live torch model share its memory and would follow its training
        self.layers = [(np.array(w, np.float32), np.array(b, np.float32)) for w, b in layers]
        self.head = (np.array(head[0], np.float32), np.array(head[1], np.float32))
        self.activation = activation
        self.meta: dict[str, Any] = dict(meta or {})
        self.features = features
        self._wt = [(w.T.copy(), b) for w, b in self.layers]
        self._head_t = (self.head[0].T.copy(), self.head[1])

    @property
    def n_actions(self) -> int:
        return int(self.head[0].shape[0])

    @property
    def obs_dim(self) -> int:
        """Length of the observation the policy reads (before its feature readings)."""
        width = int(self.layers[0][0].shape[1]) if self.layers else int(self.head[0].shape[1])
        return width - self.features.extra_dim if self.features is not None else width

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Action logits of a batch of observations, shape ``(batch, n_actions)``."""
        x = np.asarray(obs, dtype=np.float32)
        if self.features is not None:
            x = featurize(x, self.features)
        with _one_blas_thread():
            for w, b in self._wt:
                x = _activation(self.activation, x @ w + b)
            w, b = self._head_t
            return x @ w + b

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Deterministic masked actions: arg-max of the logits over the legal ids of each row.

        Raises:
            ValueError: a row of ``masks`` has no legal action.
        """
        masks = np.asarray(masks, dtype=bool)
        if not masks.any(axis=1).all():
            raise ValueError("a position without any legal action was given to the policy")
        logits = np.where(masks, self.logits(obs), -np.inf)
        return logits.argmax(axis=1)

    def widened(self, n_actions: int) -> NumpyPolicy:
        """This policy over a catalog with actions appended after its own (a newer catalog
        version): they get the logit :data:`~greed_env.bots.cards.NEVER`, so the policy plays
        on unchanged and never chooses them."""
        weight, bias = self.head
        extra = n_actions - self.n_actions
        if extra < 0:
            raise ValueError(f"cannot narrow a policy of {self.n_actions} actions to {n_actions}")
        head = (
            np.concatenate([weight, np.zeros((extra, weight.shape[1]), np.float32)]),
            np.concatenate([bias, np.full(extra, NEVER, np.float32)]),
        )
        return NumpyPolicy(self.layers, head, self.activation, self.meta, self.features)

    # --------------------------------------------------------------------------------------
    # conversion and files

    @classmethod
    def from_sb3(cls, model: Any, meta: dict[str, Any] | None = None) -> NumpyPolicy:
        """The actor of a MaskablePPO / PPO model whose policy is a plain MLP.

        Raises:
            BotLoadError: the policy has another architecture (image or dict features, a
                custom extractor, an activation other than tanh / relu).
        """
        import torch
        from stable_baselines3.common.torch_layers import FlattenExtractor

        policy = model.policy
        extractor = getattr(policy, "pi_features_extractor", policy.features_extractor)
        config = getattr(extractor, "config", None)
        if isinstance(extractor, FlattenExtractor):
            features: FeatureConfig | None = None
        elif isinstance(config, Mapping):  # the training features (greed_env.train.network) declare their readings
            features = FeatureConfig.from_dict(dict(config))
        else:
            raise BotLoadError(
                f"only flat-vector policies can be converted, this one uses {type(extractor).__name__}"
            )
        layers: list[tuple[np.ndarray, np.ndarray]] = []
        act_names: set[str] = set()
        for module in policy.mlp_extractor.policy_net:
            if isinstance(module, torch.nn.Linear):
                layers.append(
                    (module.weight.detach().cpu().numpy(), module.bias.detach().cpu().numpy())
                )
            elif isinstance(module, torch.nn.Tanh):
                act_names.add("tanh")
            elif isinstance(module, torch.nn.ReLU):
                act_names.add("relu")
            else:
                raise BotLoadError(f"unsupported layer {type(module).__name__} in the policy network")
        if len(act_names) > 1:
            raise BotLoadError(f"mixed activations {sorted(act_names)} are not supported")
        head = policy.action_net
        if isinstance(head, torch.nn.Linear):
            weight, bias = head.weight, head.bias
        elif callable(getattr(head, "effective", None)):  # a structured head states its linear map
            with torch.no_grad():
                weight, bias = head.effective()
        else:
            raise BotLoadError(f"unsupported action head {type(head).__name__}")
        return cls(
            layers,
            (weight.detach().cpu().numpy(), bias.detach().cpu().numpy()),
            act_names.pop() if act_names else "tanh",
            meta,
            features,
        )

    def save(self, path: str | Path) -> Path:
        """Write the weights and ``meta`` to an ``.npz`` file atomically."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        arrays["head_w"], arrays["head_b"] = self.head
        header = {
            "activation": self.activation,
            "hidden": len(self.layers),
            "meta": self.meta,
            "features": self.features.to_dict() if self.features is not None else None,
        }
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez(fh, **arrays)

        return atomic_write_with(path, write)

    @classmethod
    def load(cls, path: str | Path) -> NumpyPolicy:
        """Read a policy written by :meth:`save`.

        Raises:
            BotLoadError: missing or unreadable file.
        """
        path = Path(path)
        if not path.is_file():
            raise BotLoadError(f"policy file {path} does not exist")
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(bytes(data["header"]).decode())
                layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(int(header["hidden"]))]
                head = (data["head_w"], data["head_b"])
            feats = header.get("features")
            features = FeatureConfig.from_dict(feats) if feats else None
        except (OSError, KeyError, ValueError, TypeError, zipfile.BadZipFile) as exc:
            raise BotLoadError(f"policy file {path} is not a readable policy .npz: {exc}") from None
        return cls(layers, head, header["activation"], header.get("meta"), features)


class PolicyBot:
    """A :class:`NumpyPolicy` playing deterministic masked actions as a bot.

    The observation of a position is :func:`~greed_env.spaces.observation.encode_observation`
    from the acting player's seat, as the environments encode it for the learner.

    Raises (from :meth:`act`):
        BotLoadError: the position's rules are not the rules the policy was made for.
    """

    def __init__(self, policy: NumpyPolicy, rules: Rules, name: str = "policy") -> None:
        self.policy = policy
        self.rules = rules
        self.name = name
        self.catalog = ActionCatalog(rules)
        if policy.n_actions != self.catalog.n or policy.obs_dim != OBS_DIM:
            raise BotLoadError(
                f"policy {name!r} has {policy.obs_dim} inputs and {policy.n_actions} actions; "
                f"{rules.name} needs {OBS_DIM} inputs and {self.catalog.n} actions"
            )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["catalog"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.catalog = ActionCatalog(self.rules)

    def abilities(self) -> Abilities:
        """Its rules only; a deterministic observation policy (:meth:`act_ids`); its training card."""
        return Abilities(
            rules=self.rules, policy=ObservationPolicy(self.act_ids, self.catalog), card=self.policy.meta or None
        )

    def check_rules(self, rules: Rules) -> None:
        """Raise :class:`RulesMismatchError` unless ``rules`` are the policy's rules."""
        if rules is not self.rules and rules != self.rules:
            raise RulesMismatchError(
                f"policy {self.name!r} was built for rules {self.rules.name!r}, asked to play {rules.name!r}"
            )

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        return self.act_batch(rules, [state], [rng])[0]

    def act_ids(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Action ids of a batch of encoded observations under their masks."""
        return self.policy.act(obs, masks)

    def act_batch(
        self, rules: Rules, states: Sequence[State], rngs: Sequence[np.random.Generator]
    ) -> list[Move]:
        """The moves of several positions, scored in one batch."""
        self.check_rules(rules)
        obs = np.empty((len(states), OBS_DIM), dtype=np.float32)
        masks = np.empty((len(states), self.catalog.n), dtype=np.int8)
        legal = []
        for i, s in enumerate(states):
            encode_observation(rules, s, out=obs[i])
            mask, moves = self.catalog.legal(s)
            masks[i] = mask
            legal.append(moves)
        actions = self.policy.act(obs, masks)
        return [moves[int(a)] for moves, a in zip(legal, actions, strict=True)]


# ------------------------------------------------------------------------------------------
# model files


def load_policy(path: str | Path, rules: Rules) -> NumpyPolicy:
    """The actor of a saved SB3 model (``.zip``) or policy snapshot (``.npz``) for ``rules``.

    The card beside the file (``model.json``), when present, must match ``rules`` and the
    current observation-spec and action-catalog versions; the network's input and output sizes
    must match in any case.

    Raises:
        BotLoadError: missing file, not a model, corrupt, or made for other rules / specs.
    """
    path = Path(path)
    if path.suffix.lower() == ".npz":
        if not path.is_file():
            raise BotLoadError(f"model file {path} does not exist")
        policy = NumpyPolicy.load(path)
        check_training_card(policy.meta, rules, str(path))
        card = read_training_card(path)
    else:
        model, card = load_sb3_model(path)
        policy = NumpyPolicy.from_sb3(model, meta=dict(card))
    if card:
        check_training_card(card, rules, str(path))
    catalog = ActionCatalog(rules)
    if policy.n_actions == catalog.size_of_version(2) != catalog.n:
        policy = policy.widened(catalog.n)  # a policy of the version-2 catalog of these rules
    if policy.obs_dim != OBS_DIM or policy.n_actions != catalog.n:
        raise BotLoadError(
            f"{path} has {policy.obs_dim} inputs and {policy.n_actions} actions; {rules.name} needs "
            f"{OBS_DIM} inputs and {catalog.n} actions (was it trained for other rules?)"
        )
    return policy
