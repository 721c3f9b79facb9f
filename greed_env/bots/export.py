"""Export a MaskablePPO model (SB3 ``.zip``) to an ONNX policy plus a JSON bot card.

``greed export MODEL --out DIR`` calls :func:`export_model`, which

1. loads the model on the CPU (torch and sb3-contrib are imported here, not at import time),
   and its training card (``model.json`` beside ``model.zip``) for the rules and the run;
2. refuses a model whose spaces, rules, observation-spec or action-catalog versions do not
   match this greed_env (:class:`~greed_env.bots.errors.BotLoadError` subclasses);
3. exports the *logits* of the actor (features extractor -> ``mlp_extractor.forward_actor`` ->
   ``action_net``) with a dynamic batch axis; masking stays outside the graph, in numpy;
4. checks the ONNX bot against ``MaskablePPO.predict(obs, action_masks=mask,
   deterministic=True)`` on random positions (:func:`sample_positions`) and refuses to write
   a bot that disagrees;
5. writes ``DIR/NAME.onnx`` then ``DIR/NAME.json`` (the card, with the sha256 of the ONNX
   bytes), each atomically (temporary file + ``os.replace``).

Evaluation results can be measured at export time (``evaluate_games``) or added later with
:func:`update_card_evaluation`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.base import RandomBot, ThresholdBot, check_seats
from greed_env.bots.cards import (
    ONNX_INPUT,
    ONNX_OPSET,
    ONNX_OUTPUT,
    build_card,
    objective_problem,
    onnx_metadata,
    read_card,
    training_card_path,
    write_card,
)
from greed_env.bots.errors import CatalogMismatchError, CorruptBotError, ObsSpecMismatchError
from greed_env.bots.loader import load
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.bots.sb3_backend import load_sb3_model, model_rules
from greed_env.bots.tournament import default_opponents, evaluate_bot
from greed_env.files import atomic_write_bytes
from greed_env.rules import (
    Rules,
    State,
    apply,
    apply_roll,
    is_chance,
    is_over,
    new_game,
    sample_roll,
)
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import (
    OBS_DIM,
    OBS_SPEC_VERSION,
    encode_observation,
)

__all__ = [
    "ExportResult",
    "encode_positions",
    "export_model",
    "onnx_logits_bytes",
    "portable_args",
    "sample_positions",
    "update_card_evaluation",
]


# ------------------------------------------------------------------------------------------
# checks


def _check_spaces(model: Any, rules: Rules, where: str) -> ActionCatalog:
    catalog = ActionCatalog(rules)
    n = getattr(model.action_space, "n", None)
    if n is None or int(n) != catalog.n:
        raise CatalogMismatchError(
            f"{where}: action space {model.action_space}, the {rules.name} catalog "
            f"v{catalog.version} has {catalog.n} actions"
        )
    shape = tuple(getattr(model.observation_space, "shape", None) or ())
    if shape != (OBS_DIM,):
        raise ObsSpecMismatchError(
            f"{where}: observation shape {shape}, spec v{OBS_SPEC_VERSION} has ({OBS_DIM},)"
        )
    return catalog


def _linear_head(head: Any) -> Any:
    """The action head as one ``Linear`` layer: a structured head (free logits plus a shared
    term over fixed action descriptions, :class:`greed_env.train.network.StructuredActionHead`)
    is folded into its effective weight and bias, so the graph does not carry the description
    matrix (Progressive's keep parts are 3,696 x 61) beside the weights it already determines."""
    import torch

    if isinstance(head, torch.nn.Linear) or not callable(getattr(head, "effective", None)):
        return head
    with torch.no_grad():
        weight, bias = head.effective()
        folded = torch.nn.Linear(weight.shape[1], weight.shape[0])
        folded.weight.copy_(weight)
        folded.bias.copy_(bias)
    return folded


def _logits_module(policy: Any) -> Any:
    import torch
    from stable_baselines3.common.preprocessing import preprocess_obs

    class PolicyLogits(torch.nn.Module):
        """Actor logits of an SB3 actor-critic policy: extractor, actor MLP, action head."""

        def __init__(self, policy: Any) -> None:
            super().__init__()
            self.extractor = getattr(policy, "pi_features_extractor", policy.features_extractor)
            self.mlp_extractor = policy.mlp_extractor
            self.action_net = _linear_head(policy.action_net)
            self.observation_space = policy.observation_space
            self.normalize_images = policy.normalize_images

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            x = preprocess_obs(obs, self.observation_space, normalize_images=self.normalize_images)
            latent = self.mlp_extractor.forward_actor(self.extractor(x))
            return self.action_net(latent)

    return PolicyLogits(policy).eval()


def onnx_logits_bytes(module: Any, metadata: Mapping[str, str]) -> bytes:
    """Serialise a torch module mapping observations ``(batch, OBS_DIM)`` to action logits as
    an ONNX graph (dynamic batch, metadata attached, checked); used by every exporter."""
    import contextlib
    import io
    import logging

    import onnx
    import torch

    example = (torch.zeros((2, OBS_DIM), dtype=torch.float32),)
    batch = torch.export.Dim("batch", min=1)
    buffer = io.StringIO()
    loggers = [logging.getLogger(n) for n in ("torch.onnx", "torch.export", "onnxscript")]
    levels = [lg.level for lg in loggers]
    try:
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                module,
                example,
                input_names=[ONNX_INPUT],
                output_names=[ONNX_OUTPUT],
                dynamic_shapes=({0: batch},),
                opset_version=ONNX_OPSET,
                dynamo=True,
                external_data=False,
                verbose=False,
            )
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
    proto = program.model_proto
    for node in proto.graph.node:
        # torch records the exporting process's source paths per node: not part of the policy
        kept = [p for p in node.metadata_props if not p.key.startswith("pkg.torch.onnx.stack_trace")]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(proto)
    return proto.SerializeToString()


# ------------------------------------------------------------------------------------------
# positions


def sample_positions(
    rules: Rules,
    n: int,
    rng: np.random.Generator,
    players: Sequence[int] = (1, 2, 3, 4),
    keep_prob: float = 0.35,
) -> list[State]:
    """``n`` decision positions from games of random and threshold bots (deterministic in ``rng``).

    Games have a player count drawn from ``players`` (those the rules allow) and seats played by
    a mix of :class:`RandomBot` and :class:`ThresholdBot` with random bank-at values and keep
    styles, so positions cover early, late, entered and not-entered situations. Each decision
    position is kept with probability ``keep_prob``.
    """
    counts = [k for k in players if rules.min_players <= k <= rules.max_players]
    if not counts:
        counts = [rules.min_players]
    out: list[State] = []
    styles = ("max-score", "keep-most", "keep-fewest")
    while len(out) < n:
        k = int(counts[int(rng.integers(len(counts)))])
        bots = [
            RandomBot()
            if rng.random() < 0.4
            else ThresholdBot(
                bank_at=int(rng.integers(1, 41)) * 50, keep=styles[int(rng.integers(3))]
            )
            for _ in range(k)
        ]
        s = new_game(rules, k)
        for _ in range(20_000):
            if is_over(s) or len(out) >= n:
                break
            if is_chance(s):
                s = apply_roll(rules, s, sample_roll(rules, s, rng))
                continue
            if rng.random() < keep_prob:
                out.append(s)
            s = apply(rules, s, bots[s.player].act(rules, s, rng))
    return out


def encode_positions(rules: Rules, states: Sequence[State]) -> tuple[np.ndarray, np.ndarray]:
    """Observations ``(len, OBS_DIM)`` float32 and int8 masks ``(len, n)`` of decision positions."""
    catalog = ActionCatalog(rules)
    obs = np.empty((len(states), OBS_DIM), dtype=np.float32)
    masks = np.empty((len(states), catalog.n), dtype=np.int8)
    for i, s in enumerate(states):
        encode_observation(rules, s, out=obs[i])
        masks[i] = catalog.legal(s)[0]
    return obs, masks


# ------------------------------------------------------------------------------------------
# export


@dataclass
class ExportResult:
    """Where an export went and what its check found."""

    onnx_path: Path
    card_path: Path
    card: dict[str, Any] = field(repr=False)
    positions: int = 0
    mismatches: int = 0
    max_abs_logit_diff: float = 0.0


def export_model(
    model_path: str | Path,
    out_dir: str | Path,
    *,
    name: str | None = None,
    rules: Rules | None = None,
    description: str | None = None,
    objective: str | None = None,
    check_positions: int = 2000,
    seed: int = 0,
    evaluate_games: int = 0,
    evaluate_opponents: Sequence[str] | None = None,
    workers: int = 1,
    notes: str | None = None,
    log: Callable[[str], None] | None = None,
) -> ExportResult:
    """Export ``model_path`` to ``out_dir/NAME.onnx`` and ``out_dir/NAME.json``.

    Args:
        model_path: a MaskablePPO ``.zip``; its training card ``model.json`` supplies the rules
            and the run information unless ``rules`` is given.
        out_dir: destination folder (created).
        name: bot name (default ``ppo-<objective>`` or the model file's stem); the card id is
            ``<rules name>/<name>``.
        rules: the rules, when the training card does not name them (or to check they match).
        description: one line for ``greed bots``.
        objective: what the policy was trained for (``turn``, ``race``, ``duel``, ...);
            default from the training card.
        check_positions: random positions on which ONNX and SB3 actions must agree.
        seed: seed of the position sampler and of the evaluation games.
        evaluate_games: games per opponent to measure and store in the card (0: none).
        evaluate_opponents: opponent bot specs (default :func:`default_opponents`).
        workers: processes for the evaluation games.
        notes: free text stored in the card (for example what the training run was).
        log: called with one line when the model has been read and checked and the export
            starts (``greed export`` prints it on stderr).

    Every argument is checked before anything is written: the objective, the name, the
    evaluation's opponents (each loaded for the bot's rules and two seats), its games and
    workers.

    Raises:
        BotLoadError: the model does not fit this greed_env or ``rules``, or an evaluation
            opponent does not load; :class:`CorruptBotError` also when the ONNX bot disagrees
            with the model.
        ValueError: an objective that is none of
            :data:`~greed_env.bots.cards.CARD_OBJECTIVES`, a bad name, a negative number of
            games or fewer than one worker.
    """
    why = objective_problem(objective) if objective is not None else ""
    if why:
        raise ValueError(why)
    if evaluate_games < 0 or workers < 1:
        raise ValueError(f"evaluate_games must be >= 0 and workers >= 1, got {evaluate_games} and {workers}")
    mp = Path(model_path)
    model, tcard = load_sb3_model(mp)
    bot_rules = model_rules(tcard, rules, where=f"model {mp}")
    _check_spaces(model, bot_rules, f"model {mp}")
    objective = objective or _training_field(tcard, "objective") or "unknown"
    why = objective_problem(objective)
    if why:
        raise ValueError(f"{why} (the training card's; give the objective)")
    name = name or (f"ppo-{objective}" if objective != "unknown" else mp.stem)
    if "/" in name or not name:
        raise ValueError(f"bot name {name!r} must be a non-empty name without '/'")
    bot_id = f"{bot_rules.name}/{name}"
    opponents = list(evaluate_opponents or default_opponents(bot_rules)) if evaluate_games > 0 else []
    for spec in opponents:
        check_seats(load(spec, bot_rules), 2, f"evaluation opponent {spec}")
    if log is not None:
        log(f"{mp} read and checked: exporting {bot_id} to {out_dir}, checking {check_positions:,} positions ...")
    data = onnx_logits_bytes(_logits_module(model.policy), onnx_metadata(bot_id, bot_rules))
    card = build_card(
        name=name,
        rules=bot_rules,
        onnx_bytes=data,
        description=description
        or f"MaskablePPO policy ({objective} objective) for {bot_rules.name}, greedy masked actions",
        objective=objective,
        training=_training_summary(tcard, mp, model),
    )
    if notes:
        card["notes"] = notes
    bot = OnnxBot(card, data, where=f"exported {bot_id}")
    result = _check_against_model(model, bot, bot_rules, check_positions, seed)
    card["export"] = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source_model": mp.name if mp.is_absolute() else mp.as_posix(),
        "source_sha256": _sha256_bytes(mp.read_bytes()),
        "exporter": "torch.onnx.export(dynamo=True)",
        "equivalence_check": result,
    }
    if result["mismatches"]:
        raise CorruptBotError(
            f"exported {bot_id}: ONNX greedy actions differ from MaskablePPO.predict on "
            f"{result['mismatches']} of {result['positions']} positions; nothing written"
        )
    out = Path(out_dir)
    onnx_path = atomic_write_bytes(out / f"{name}.onnx", data)
    card_path = write_card(out / f"{name}.json", card)
    if opponents:
        card["evaluation"] = evaluate_bot(
            str(card_path), bot_rules, opponents, evaluate_games, seed=seed, workers=workers
        )
        write_card(card_path, card)
    return ExportResult(
        onnx_path,
        card_path,
        card,
        positions=result["positions"],
        mismatches=result["mismatches"],
        max_abs_logit_diff=result["max_abs_logit_diff"],
    )


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _training_field(card: Mapping[str, Any], key: str) -> Any:
    if key in card:
        return card[key]
    for sub in ("args", "config"):
        inner = card.get(sub)
        if isinstance(inner, Mapping) and key in inner:
            return inner[key]
    return None


def portable_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """A run's arguments as a bot card records them, without machine paths: an absolute
    ``runs_dir`` becomes ``runs``, an absolute ``init_from`` ``runs/<its run>/<file>`` (or
    ``runs/<its run>/checkpoints/<file>`` for a checkpoint), and any other absolute path its
    file name (``teacher_arrays``, say)."""
    out = dict(args)
    for key, value in args.items():
        if not (isinstance(value, str) and Path(value).is_absolute()):
            continue
        path = Path(value)
        if key == "runs_dir":
            out[key] = "runs"
        elif key == "init_from":
            run = path.parent.parent if path.parent.name == "checkpoints" else path.parent
            out[key] = str(Path("runs", run.name, path.relative_to(run)).as_posix())
        else:
            out[key] = path.name
    return out


def _training_summary(card: Mapping[str, Any], model_path: Path, model: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict(card)
    if isinstance(out.get("args"), Mapping):
        out["args"] = portable_args(out["args"])
    out.setdefault("algorithm", type(model).__name__)
    out.setdefault("num_timesteps", int(getattr(model, "num_timesteps", 0)))
    out["card_file"] = training_card_path(model_path).name if card else None
    out["model_file"] = model_path.name
    return out


def _check_against_model(
    model: Any, bot: OnnxBot, rules: Rules, positions: int, seed: int
) -> dict[str, Any]:
    import torch

    if positions <= 0:
        return {"positions": 0, "mismatches": 0, "max_abs_logit_diff": 0.0, "seed": seed}
    states = sample_positions(rules, positions, np.random.default_rng([seed, 0x0E7]))
    obs, masks = encode_positions(rules, states)
    ours = bot.act_batch(obs, masks)
    theirs, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    module = _logits_module(model.policy)
    with torch.no_grad():
        ref = module(torch.from_numpy(obs)).numpy()
    diff = float(np.max(np.abs(ref - bot.logits(obs)))) if len(obs) else 0.0
    return {
        "positions": len(states),
        "mismatches": int(np.sum(np.asarray(theirs).reshape(-1) != ours)),
        "max_abs_logit_diff": diff,
        "seed": seed,
        "reference": "MaskablePPO.predict(obs, action_masks=mask, deterministic=True)",
    }


def update_card_evaluation(card_path: str | Path, evaluation: list[dict[str, Any]]) -> dict[str, Any]:
    """Replace the ``evaluation`` list of a bot card (atomically) and return the card.

    Raises:
        CorruptBotError: the card is unreadable or invalid.
    """
    card = read_card(card_path)
    card["evaluation"] = evaluation
    write_card(Path(card_path), card)
    return card
