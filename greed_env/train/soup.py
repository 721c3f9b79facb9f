"""Model soups: the weights of several runs fine-tuned from one model, averaged into one model.

Runs that start from the same model (``--init-from``) and differ only in their seed end near
each other in weight space, each off the common path by its own sampling noise. Averaging
their weights ("model soups", Wortsman et al. 2022; stochastic weight averaging, Izmailov et
al. 2018) cancels part of that noise at no cost in play: the result is one network of the
same shape, which plays, evaluates and exports like any trained model. Averaging runs that did
not share a starting model mixes unrelated units and is refused unless asked for.

:func:`soup` writes ``model.zip`` (a MaskablePPO model: the mean of the members' actor and
critic weights, a fresh optimizer) and its card ``model.json`` into a new directory. The card
lists the members; its ``cpu_time_s`` is the sum of theirs (the training the soup cost beyond
the common parent) and ``args.init_from`` names that parent, so CPU accounting that follows
``init_from`` counts the whole chain once (``training/ppo_duel.py --chain`` makes its soups here).

Example::

    greed train soup runs/a/model.zip runs/b/model.zip runs/c/model.zip --out runs/soup
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from greed_env.bots.cards import check_training_card, read_training_card
from greed_env.bots.errors import BotLoadError
from greed_env.files import atomic_write_text
from greed_env.rules import Rules

__all__ = ["add_arguments", "cli", "run", "soup"]

SCRIPT = "greed_env.train.soup"


def _init_from(card: dict[str, Any]) -> str | None:
    """The ``--init-from`` model a card names, as written there."""
    init = (card.get("args") or {}).get("init_from")
    return str(init) if init else None


def _parent(card: dict[str, Any]) -> str | None:
    """The ``--init-from`` model a card names, resolved (for comparing members)."""
    init = _init_from(card)
    return str(Path(init).resolve()) if init else None


def _read_member(path: Path) -> tuple[Any, dict[str, Any]]:
    from sb3_contrib import MaskablePPO


    if not path.is_file():
        raise BotLoadError(f"soup member {path} does not exist")
    card = read_training_card(path)
    if card is None:
        raise BotLoadError(f"soup member {path} has no card {path.with_suffix('.json')}: cannot check what it was trained for")
    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as exc:
        raise BotLoadError(f"soup member {path} could not be loaded as a MaskablePPO model: {exc}") from None
    return model, card


def soup(models: Sequence[str | Path], out: str | Path, *, any_parent: bool = False) -> Path:
    """Write the weight average of ``models`` to ``out/model.zip`` (with ``out/model.json``).

    Args:
        models: at least two MaskablePPO model files with their cards, trained for the same
            rules, objective, observation spec and network, each fine-tuned from the same model.
        out: a directory for the soup; created if missing, refused if it holds a model already.
        any_parent: allow members whose cards name different ``init_from`` models.

    Returns:
        The path of the soup's ``model.zip``.

    Raises:
        ValueError: fewer than two members, or the same file twice.
        BotLoadError: a member is missing, corrupt, without a card, or differs from the first
            in rules, objective, specs, network shape or input readings, or in its parent.
        FileExistsError: ``out`` holds a model already.
    """
    import torch

    from greed_env.train.checkpoints import save_model_atomic

    paths = [Path(m) for m in models]
    if len(paths) < 2:
        raise ValueError(f"a soup needs at least two models, got {len(paths)}")
    if len({p.resolve() for p in paths}) != len(paths):
        raise ValueError("a soup member is named twice: " + ", ".join(str(p) for p in paths))
    out_dir = Path(out)
    target = out_dir / "model.zip"
    if target.exists() or target.with_suffix(".json").exists():
        raise FileExistsError(f"{out_dir} already holds a model; choose a new --out directory")

    first_model, first_card = _read_member(paths[0])
    rules = Rules.from_dict(dict(first_card["rules"]))
    check_training_card(first_card, rules, f"soup member {paths[0]}")  # its specs against this greed_env's
    first_state = first_model.policy.state_dict()
    first_features = getattr(first_model.policy.features_extractor, "config", None)
    sums = {k: v.detach().clone().to(torch.float64) for k, v in first_state.items() if v.is_floating_point()}
    cards = [first_card]
    for path in paths[1:]:
        model, card = _read_member(path)
        check_training_card(card, rules, f"soup member {path}")
        if card.get("objective") != first_card.get("objective"):
            raise BotLoadError(f"soup member {path} was trained for objective {card.get('objective')!r}, {paths[0]} for {first_card.get('objective')!r}")
        if not any_parent and _parent(card) != _parent(first_card):
            raise BotLoadError(
                f"soup member {path} was fine-tuned from {_parent(card)}, {paths[0]} from {_parent(first_card)}; "
                "a soup averages runs from one model (any_parent / --any-parent to average anyway)"
            )
        if getattr(model.policy.features_extractor, "config", None) != first_features:
            raise BotLoadError(f"soup member {path} reads other input features than {paths[0]}")
        state = model.policy.state_dict()
        if set(state) != set(first_state) or any(state[k].shape != first_state[k].shape for k in state):
            raise BotLoadError(f"soup member {path} has another network shape than {paths[0]}")
        for key, value in state.items():
            if key in sums:
                sums[key] += value.detach().to(torch.float64)
            elif not torch.equal(value, first_state[key]):
                raise BotLoadError(f"soup member {path} differs from {paths[0]} in its non-float tensor {key}")
        cards.append(card)

    n = len(paths)
    mean = {k: (sums[k] / n).to(v.dtype) if k in sums else v for k, v in first_state.items()}
    first_model.policy.load_state_dict(mean, strict=True)
    policy = first_model.policy
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=first_model.lr_schedule(1.0), **policy.optimizer_kwargs)

    card = {key: first_card[key] for key in ("format", "format_version", "algorithm", "rules", "rules_fingerprint", "objective", "obs_spec_version", "action_catalog_version", "versions") if key in first_card}
    parents = {_parent(c) for c in cards}
    card.update(
        {
            "script": SCRIPT,
            "args": {**dict(first_card.get("args") or {}), "init_from": _init_from(first_card) if len(parents) == 1 else None, "exp_name": "soup", "run_name": out_dir.name},
            "members": [
                {"model": str(p), "seed": c.get("seed"), "steps": c.get("steps"), "cpu_time_s": c.get("cpu_time_s"), "init_from": _init_from(c)}
                for p, c in zip(paths, cards, strict=True)
            ],
            "seed": first_card.get("seed"),
            "steps": sum(int(c.get("steps") or 0) for c in cards),
            "wall_time_s": round(sum(float(c.get("wall_time_s") or 0.0) for c in cards), 1),
            "cpu_time_s": round(sum(float(c.get("cpu_time_s") or 0.0) for c in cards), 1),
            "cpu_time_note": "the members' CPU seconds summed (training beyond their common parent, periodic evaluations included)",
            "sessions": 1,
            "evaluation": None,
        }
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    save_model_atomic(first_model, target)
    atomic_write_text(target.with_suffix(".json"), json.dumps(card, indent=1) + "\n")
    return target


DESCRIPTION = "Average the weights of models fine-tuned from one model into one model (a model soup)."


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command line of ``greed train soup``."""
    ap = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_arguments(ap)
    return ap


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """Add the soup's options to ``ap``."""
    ap.add_argument("models", nargs="+", help="member model files (.zip, each with its card model.json), at least two")
    ap.add_argument("--out", required=True, help="new directory for the soup's model.zip and model.json")
    ap.add_argument("--any-parent", action="store_true", help="average members that name different --init-from models (usually meaningless)")


def run(ns: argparse.Namespace) -> Path:
    """Make the soup the parsed options ask for and print where it went."""
    path = soup(ns.models, ns.out, any_parent=ns.any_parent)
    print(f"saved {path}: the mean of {len(ns.models)} models")
    return path


def cli(argv: Sequence[str] | None = None) -> int:
    """``python -m greed_env.train.soup MODEL MODEL ... --out DIR`` (``greed train soup``); user errors exit 2."""

    ns = build_parser().parse_args(argv)
    try:
        run(ns)
    except (BotLoadError, ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
