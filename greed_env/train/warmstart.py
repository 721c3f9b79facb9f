"""Warm starts (``--init-from``, ``--init-temperature``): copy a trained model's weights into a
new network, bridging added feature inputs and a wider or deeper value network, and soften
the moves other than keeps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.save_util import load_from_zip_file

from greed_env.bots.cards import check_training_card as check_card
from greed_env.bots.cards import read_training_card as read_card
from greed_env.bots.errors import BotLoadError
from greed_env.bots.featurize import FeatureConfig
from greed_env.rules import Rules
from greed_env.spaces.catalog import ActionCatalog

__all__ = ["CRITIC_KEYS", "fit_weights", "init_weights", "is_critic", "soften"]


def init_weights(model: MaskablePPO, path: Path, rules: Rules) -> None:
    """Copy the policy weights of the model at ``path`` into ``model``.

    Raises:
        BotLoadError: missing file, another network shape, or a card naming other rules.
    """

    if not path.is_file():
        raise BotLoadError(f"--init-from: model file {path} does not exist")
    card = read_card(path)
    if card is not None:
        check_card(card, rules, f"--init-from {path}")
    # a failed strict load still copies the tensors that fit, so keep the initial weights apart
    initial = {key: value.clone() for key, value in model.policy.state_dict().items()}
    try:
        model.set_parameters(str(path), exact_match=True, device="cpu")
        return
    except Exception as exc:
        error = str(exc)

    try:
        _, params, _ = load_from_zip_file(str(path), device="cpu")
        fitted = fit_weights(model, (params or {}).get("policy", {}), initial, ActionCatalog(rules))
    except Exception as exc:
        raise BotLoadError(f"--init-from {path}: cannot read its weights: {exc}") from None
    if fitted is None:
        raise BotLoadError(f"--init-from {path}: its weights do not fit this network: {error}")
    state, fresh_critic = fitted
    model.policy.load_state_dict(state, strict=True)
    if fresh_critic:
        print(f"--init-from {path}: policy weights loaded; the value network has another depth and starts afresh")


def soften(model: MaskablePPO, temperature: float, rules: Rules) -> None:
    """Divide the policy's logits of every move but keeps by ``temperature``.

    Those moves (bank, roll on, ...) are only ever legal among themselves, never beside a
    keep, so each such decision is softened and no keep decision changes. Their rows of the
    structured head's action features are zero, so scaling the free rows is enough.
    """
    if temperature < 1.0:
        raise ValueError(f"--init-temperature must be >= 1, got {temperature}")
    if temperature == 1.0:
        return
    rows = torch.as_tensor([e.index for e in ActionCatalog(rules).entries if e.kind != "keep"])
    head = model.policy.action_net
    layer = head.free if hasattr(head, "free") else head
    if hasattr(head, "phi") and bool(head.phi[rows].abs().sum() > 0):
        raise ValueError("non-keep moves with action features cannot be softened")
    with torch.no_grad():
        layer.weight[rows] /= temperature
        layer.bias[rows] /= temperature


CRITIC_KEYS = ("mlp_extractor.value_net.", "value_net.")


def is_critic(key: str) -> bool:
    return key.startswith(CRITIC_KEYS)


def fit_weights(
    model: MaskablePPO,
    old: dict[str, torch.Tensor],
    new: dict[str, torch.Tensor],
    catalog: ActionCatalog | None = None,
) -> tuple[dict[str, torch.Tensor], bool] | None:
    """``old`` fitted to ``model``'s policy whose initial weights are ``new``, and whether its
    value network starts afresh; None when the policy (actor) does not fit.

    Three differences are bridged. Margin readings (or crossing readings) and readings of the
    points needed that the old network lacks are inputs of the first layers, each at its place
    among the readings (:func:`_missing_readings`); a network without them is the same function
    as one whose weights on them are zero, so those columns start at zero. A wider value network
    (``--vf-width``, same depth) is the same function as the old one: the old units keep their
    weights and see only the old inputs, the new units start from the new model's initial
    weights and their outgoing weights are zero (so they learn from the first update on). A value network of another depth
    keeps the new model's initial weights, all of it, never a mix of layers. An action head
    made for an older ``catalog`` version (its ids are the first of today's) gets a row for
    each action added since, a copy of the row of the keep it is the alternate reading of
    (:func:`~greed_env.spaces.catalog.fill_alternates`), so both readings start where the old
    one was and training tells them apart. The optimizer starts afresh either way.
    """
    older = _older_catalog_rows(catalog)
    extractor = model.policy.features_extractor
    cfg = FeatureConfig.from_dict(extractor.config) if hasattr(extractor, "config") else None
    layouts = _missing_readings(cfg, int(extractor.features_dim)) if cfg else {}

    def fit(key: str) -> torch.Tensor | None:
        src, target = old.get(key), new[key]
        if src is None:
            return None
        if src.shape == target.shape:
            return src.to(target.dtype)
        if (
            older is not None
            and key.startswith("action_net.")
            and src.shape[1:] == target.shape[1:]
            and (src.shape[0], target.shape[0]) == (int(older.max()) + 1, len(older))
        ):  # an action head of an older catalog: rows for the actions added since
            return src.to(target.dtype)[torch.as_tensor(older)]
        kept = layouts.get(int(src.shape[1])) if src.dim() == 2 else None
        if kept is not None and src.shape[0] == target.shape[0] and target.shape[1] == len(kept):
            wide = torch.zeros_like(target)
            wide[:, torch.as_tensor(kept)] = src.to(target.dtype)
            return wide
        return None

    if {k for k in old if not is_critic(k)} != {k for k in new if not is_critic(k)}:
        return None
    out: dict[str, torch.Tensor] = {}
    for key in new:
        if not is_critic(key):
            value = fit(key)
            if value is None:
                return None
            out[key] = value

    def widen(key: str) -> torch.Tensor | None:
        src, target = old.get(key), new[key]
        if src is None or src.dim() != target.dim():
            return None
        if any(a > b for a, b in zip(src.shape, target.shape, strict=True)):
            return None
        out = target.clone()
        if src.dim() == 2:
            out[: src.shape[0]] = 0
            kept = layouts.get(int(src.shape[1])) if src.shape[1] != target.shape[1] else None
            if kept is not None and len(kept) == target.shape[1]:  # a first layer: readings added
                out[: src.shape[0], torch.as_tensor(kept)] = src.to(target.dtype)
            else:
                out[: src.shape[0], : src.shape[1]] = src.to(target.dtype)
        else:
            out[: src.shape[0]] = src.to(target.dtype)
        return out

    critic = {key: widen(key) for key in new if is_critic(key)}
    fresh = {k for k in old if is_critic(k)} != set(critic) or any(v is None for v in critic.values())
    for key, value in critic.items():
        out[key] = value if value is not None and not fresh else new[key]
    return out, fresh


def _older_catalog_rows(catalog: ActionCatalog | None) -> np.ndarray | None:
    """For each of ``catalog``'s actions, the row of a version-2 action head that starts it:
    its own, or for an alternate keep the row of the keep it is the alternate of (None when
    the catalog has no actions added since version 2)."""
    if catalog is None or catalog.size_of_version(2) in (None, catalog.n):
        return None
    rows = np.arange(catalog.n)
    for entry in catalog.entries[catalog.size_of_version(2) :]:
        rows[entry.index] = catalog.primary_of(entry.index)
    return rows


def _missing_readings(cfg: FeatureConfig, width: int) -> dict[int, np.ndarray]:
    """For each input width an older network may have, the boolean mask over this network's
    ``width`` inputs of the ones it had: the first layers of networks without the margin
    readings, the crossing readings or the readings of the points needed (which sit between,
    or after, the other readings; see :func:`greed_env.bots.featurize.featurize`)."""
    m = cfg.margin_dim
    later = m * (2 if cfg.margin_cross else 1) + cfg.bar_dim + cfg.set_dim + cfg.need_dim
    segments = [("base", width - later)]
    segments += [("margin", m), ("cross", m if cfg.margin_cross else 0), ("bar", cfg.bar_dim),
                 ("set", cfg.set_dim), ("need", cfg.need_dim)]  # fmt: skip
    optional = [name for name in ("margin", "cross", "need") if dict(segments)[name]]
    out: dict[int, np.ndarray] = {}
    for k in range(1, 1 << len(optional)):
        missing = {optional[j] for j in range(len(optional)) if k >> j & 1}
        if "margin" in missing and "cross" in optional and "cross" not in missing:
            continue  # crossing readings only come with the margin readings
        mask = np.concatenate([np.full(n, name not in missing) for name, n in segments])
        out.setdefault(int(mask.sum()), mask)
    return out
