"""The bot folders and the list of named bots, as ``greed bots`` shows them.

Ids are ``<rules>/<name>``, where ``<rules>`` is a preset name:

* heuristics, for every preset: ``random``; ``threshold-N`` (bank once the turn total reaches
  ``N``; :class:`~greed_env.bots.base.ThresholdBot`), ``threshold-N-keep-most`` and
  ``threshold-N-keep-fewest`` (other keep styles). Any whole ``N`` works; the list shows a few.
  Heuristics play any rules, so their id's rules part only places them in listings.
* exact solver bots, where the solver models the preset: ``optimal-turn``, ``optimal-entry``,
  ``optimal-race``, ``optimal-duel`` (:mod:`greed_env.bots.solver_backend`). Listing never solves
  anything.
* exported policies: ``ppo-*`` and any other card found in the bot folders (below), played by
  :class:`~greed_env.bots.onnx_backend.OnnxBot` (onnxruntime only, no torch).

Bot folders, searched in this order (the first card of an id wins): the folders in the
``GREED_BOTS_PATH`` environment variable (``os.pathsep``-separated), ``agents/`` of a source
checkout (new exports land there), and the installed package's ``greed_env/agents/``: the
same folder, whose files this registry reads (:data:`SHIPPED_PATTERNS`) the package installs
(``setup.py`` maps ``agents/`` to ``greed_env.agents``), so a checkout holds each bot once.
A bot ``<rules>/<name>`` is the pair ``<folder>/<rules>/<name>.json`` (its card) and
``<folder>/<rules>/<name>.onnx``. A folder may also hold ``<rules>/standings.csv`` from
``greed tournament``: ``greed bots`` shows those Elo ratings beside the card evaluations.

Loading any of them, by id or any other spec, is :func:`greed_env.bots.load`.

>>> "ten_thousand/threshold-300" in {b.id for b in list_bots("ten_thousand")}
True
"""

from __future__ import annotations

import csv
import importlib.resources
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from greed_env.bots import solver_backend
from greed_env.bots.base import Bot
from greed_env.bots.cards import check_compatible, read_card, summarize_card
from greed_env.bots.errors import BotLoadError, UnknownBotError
from greed_env.bots.onnx_backend import check_card_graph, read_bot_files
from greed_env.bots.spec import parse_spec
from greed_env.rules import Rules, preset, preset_names

__all__ = [
    "BOTS_PATH_ENV",
    "HEURISTIC_NAMES",
    "SHIPPED_PATTERNS",
    "BotInfo",
    "bot_folders",
    "find_card",
    "ladder_bot",
    "ladder_rungs",
    "list_bots",
    "shipped_files",
]

BOTS_PATH_ENV = "GREED_BOTS_PATH"
HEURISTIC_NAMES = (
    "random",
    "threshold-300",
    "threshold-500",
    "threshold-1000",
    "threshold-300-keep-most",
    "threshold-300-keep-fewest",
)


@dataclass(frozen=True)
class BotInfo:
    """One registry entry, as ``greed bots`` lists it.

    Attributes:
        id: ``<rules>/<name>``.
        rules: the preset name.
        name: the bot name within the preset.
        kind: ``heuristic``, ``optimal`` or ``onnx-policy``.
        description: one line.
        strength: measured strength (card evaluation and tournament Elo), or ``""``.
        source: ``built-in`` or the card's path.
        problem: why the bot cannot be loaded (broken card), or ``""``.
    """

    id: str
    rules: str
    name: str
    kind: str
    description: str
    strength: str = ""
    source: str = "built-in"
    problem: str = ""


SHIPPED_PATTERNS = ("*.json", "*.onnx", "standings.csv")
"""The files of a ``<folder>/<rules>/`` that the registry reads: cards (and the ladder's
``ladder.json``), ONNX policies and the round robin's ratings. The package installs these of
``agents/``; the round robin's report (``tournament.md``, ``pairs.csv``) stays in the checkout."""


def shipped_files(folder: Path) -> list[Path]:
    """The files of the bot folder ``folder`` the registry reads, relative to it, sorted."""
    found = {p for pattern in SHIPPED_PATTERNS for p in folder.glob(f"*/{pattern}") if p.is_file()}
    return sorted(p.relative_to(folder) for p in found)


# ------------------------------------------------------------------------------------------
# folders and cards


def bot_folders() -> list[Path]:
    """The folders searched for exported bots, in priority order (existing ones only)."""
    out: list[Path] = []
    for part in os.environ.get(BOTS_PATH_ENV, "").split(os.pathsep):
        if part.strip():
            out.append(Path(part.strip()).expanduser())
    package = Path(__file__).resolve().parent.parent
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file():
        out.append(checkout / "agents")
    out.append(_installed_agents(package))
    seen: list[Path] = []
    for p in out:
        if p.is_dir() and p.resolve() not in [s.resolve() for s in seen]:
            seen.append(p)
    return seen


def _installed_agents(package: Path) -> Path:
    """The folder of the installed ``greed_env.agents`` (``agents/`` of the repository): inside
    the package when installed from a wheel; found through the import system otherwise."""
    inside = package / "agents"
    if inside.is_dir():
        return inside
    try:
        found = importlib.resources.files("greed_env.agents")
    except ModuleNotFoundError:
        return inside
    return Path(str(found))


def _card_files() -> Iterator[tuple[str, Path]]:
    """``(id, card path)`` of every ``<folder>/<rules>/<name>.json`` with a sibling ``.onnx``."""
    for folder in bot_folders():
        for card in sorted(folder.glob("*/*.json")):
            if card.with_suffix(".onnx").is_file():
                yield f"{card.parent.name}/{card.stem}", card


def find_card(bot_id: str) -> Path | None:
    """The card path of the exported bot ``bot_id`` (first bot folder that has it), or None."""
    for cid, path in _card_files():
        if cid == bot_id:
            return path
    return None


def _ratings(rules_name: str) -> dict[str, str]:
    """Elo lines per bot name from the first ``<folder>/<rules>/standings.csv`` found."""
    for folder in bot_folders():
        path = folder / rules_name / "standings.csv"
        if not path.is_file():
            continue
        out: dict[str, str] = {}
        try:
            with path.open(newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    name = row["bot"].removeprefix("bot:").removeprefix(f"{rules_name}/")
                    se = float(row.get("elo_se") or 0.0)
                    pm = f" ±{1.96 * se:.0f} (95%)" if se > 0 else " (anchor)"
                    out[name] = f"Elo {float(row['elo']):.0f}{pm}"
        except (OSError, KeyError, ValueError):
            return {}
        return out
    return {}


def _heuristic_description(name: str) -> str:
    spec = parse_spec(name)
    if spec.kind == "random":
        return "uniformly random legal move"
    keep = {"keep-most": "keeps the most dice", "keep-fewest": "keeps the fewest dice"}.get(
        spec.keep, "keeps the highest-scoring dice"
    )
    return f"banks at {spec.bank_at}+ points, {keep}"


def ladder_rungs(rules: Rules) -> list[Any]:
    """The rungs of the first ``<folder>/<rules>/ladder.json`` (:mod:`greed_env.solver.ladder`);
    none without the file or a duel bot for ``rules``.

    Raises:
        ValueError: a ladder file made for other rules, or malformed.
    """
    if not solver_backend.optimal_available(rules, "duel"):
        return []
    from greed_env.solver import ladder  # numba kernels: loaded when a ladder is asked for

    for folder in bot_folders():
        path = folder / rules.name / ladder.LADDER_FILE
        if path.is_file():
            return list(ladder.read_ladder(path, rules))
    return []


def ladder_bot(rules: Rules, name: str, bot_id: str) -> Bot:
    """The ladder rung ``name`` (``ladder-NN``) of ``rules``.

    Raises:
        UnknownBotError: no such rung (the message lists the rungs).
    """
    rungs = {r.name: r for r in ladder_rungs(rules)}
    if name not in rungs:
        known = ", ".join(f"{rules.name}/{n}" for n in rungs) or "none"
        raise UnknownBotError(f"unknown bot {bot_id!r}; ladder bots for {rules.name}: {known}")
    from greed_env.solver import ladder

    return ladder.LadderBot(rules, rungs[name].temperature, optimal=solver_backend.optimal_bot(rules, "duel"), name=bot_id)


# ------------------------------------------------------------------------------------------
# listing


def list_bots(rules_name: str | None = None) -> list[BotInfo]:
    """Every registered bot (of one preset when ``rules_name`` is given), sorted by id.

    Policy bots with a broken card are listed with :attr:`BotInfo.problem` set.
    """
    names = preset_names() if rules_name is None else [rules_name]
    unknown = [n for n in names if n not in preset_names()]
    if unknown:
        raise UnknownBotError(f"no rules preset {unknown[0]!r}; presets: {', '.join(preset_names())}")
    out: dict[str, BotInfo] = {}
    for rn in names:
        ratings = _ratings(rn)
        for h in HEURISTIC_NAMES:
            out[f"{rn}/{h}"] = BotInfo(f"{rn}/{h}", rn, h, "heuristic", _heuristic_description(h), ratings.get(h, ""))
        r = preset(rn)
        for objective in solver_backend.objectives():
            if solver_backend.optimal_available(r, objective):
                name = f"optimal-{objective}"
                text = solver_backend.OPTIMAL_DESCRIPTIONS.get(objective, f"exact solver: objective {objective}")
                out[f"{rn}/{name}"] = BotInfo(
                    f"{rn}/{name}", rn, name, "optimal", text + solver_backend.table_note(r, objective), ratings.get(name, "")
                )
        try:
            rungs = ladder_rungs(r)
        except ValueError as exc:  # a ladder.json made for other rules, or malformed
            out[f"{rn}/ladder"] = BotInfo(f"{rn}/ladder", rn, "ladder", "ladder", "", problem=str(exc))
            rungs = []
        for rung in rungs:
            info = f"optimal-duel's moves drawn by a softmax of their win probabilities, temperature {rung.temperature:g}"
            out[f"{rn}/{rung.name}"] = BotInfo(f"{rn}/{rung.name}", rn, rung.name, "ladder", info, rung.strength())
    seen: set[str] = set()
    for bot_id, path in _card_files():
        rn, name = bot_id.split("/", 1)
        if rn not in names or bot_id in seen:
            continue
        seen.add(bot_id)
        out[bot_id] = _card_info(bot_id, rn, name, path, _ratings(rn).get(name, ""))
    return [out[k] for k in sorted(out)]


def _card_info(bot_id: str, rn: str, name: str, path: Path, rating: str) -> BotInfo:
    try:
        card = read_card(path)
    except BotLoadError as exc:
        return BotInfo(bot_id, rn, name, "onnx-policy", "", rating, str(path), str(exc))
    problem = ""
    if card.get("id") != bot_id:
        problem = f"card id {card.get('id')!r} does not match its place {bot_id!r}"
    else:
        try:
            check_compatible(card, preset(rn), where=f"bot {bot_id}")
            check_card_graph(card, read_bot_files(path)[1], f"bot {bot_id}")  # its checksum and graph
        except BotLoadError as exc:
            problem = str(exc)
    strength = "" if problem else summarize_card(card)
    if rating:
        strength = f"{rating}; {strength}" if strength else rating
    return BotInfo(bot_id, rn, name, str(card.get("kind", "onnx-policy")), str(card.get("description", "")), strength, str(path), problem)
