"""The registry of named bots: ``load("ten_thousand/optimal-duel")`` returns a ready bot.

Ids are ``<rules>/<name>``, where ``<rules>`` is a preset name:

* heuristics, for every preset: ``random``; ``threshold-N`` (bank once the turn total reaches
  ``N``; :class:`~greed_env.bots.base.ThresholdBot`), ``threshold-N-keep-most`` and
  ``threshold-N-keep-fewest`` (other keep styles). Any whole ``N`` works; ``greed bots`` lists
  a few. Heuristics play any rules, so their id's rules part only places them in listings.
* exact solver bots, where the solver models the preset: ``optimal-turn`` (most points per
  turn), ``optimal-entry`` (best chance to come in), ``optimal-race`` (fewest turns to the
  target), ``optimal-duel`` (highest chance to win a two-player game):
  :class:`greed_env.solver.OptimalBot` with that objective. Its table is loaded (or solved and
  cached) when the bot is loaded; listing never solves anything.
* exported policies: ``ppo-*`` and any other card found in the bot folders (below), played by
  :class:`~greed_env.bots.policy_bots.OnnxBot` (onnxruntime only, no torch).

Bot folders, searched in this order (the first card of an id wins): the folders in the
``GREED_BOTS_PATH`` environment variable (``os.pathsep``-separated), ``agents/`` of a source
checkout (where new exports land first), and the package data folder ``greed_env/data/bots/``
(installed with the package; a test keeps it equal to ``agents/``).
A bot ``<rules>/<name>`` is the pair ``<folder>/<rules>/<name>.json`` (its card) and
``<folder>/<rules>/<name>.onnx``. A folder may also hold ``<rules>/standings.csv`` from
``greed tournament``: ``greed bots`` shows those Elo ratings beside the card evaluations.

A spec may carry the ``bot:`` prefix (as in ``greed play --players human,bot:ten_thousand/
ppo-turn``), be a bare name (``optimal-duel``, ``threshold-500``: built for the ``rules``
passed to :func:`load`), the factory's ``threshold:N``, or a file: a bot card ``.json``, an
``.onnx`` beside its card, or an SB3 ``.zip`` (:class:`~greed_env.bots.sb3_backend.PPOBot`).

>>> from greed_env.rules import preset
>>> load("bot:ten_thousand/threshold-500").bank_at
500
>>> load("threshold-300-keep-most", rules=preset("farkle")).keep
'keep-most'
>>> load("ten_thousand/nonsense")
Traceback (most recent call last):
...
greed_env.bots.registry.UnknownBotError: unknown bot 'ten_thousand/nonsense'; ...
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from greed_env.bots.base import Bot, RandomBot, ThresholdBot
from greed_env.bots.policy_bots import (
    BotLoadError,
    CorruptBotError,
    OnnxBot,
    RulesMismatchError,
    read_card,
    rules_mismatch_message,
)
from greed_env.bots.sb3_backend import PPOBot
from greed_env.bots.summary import summarize_card
from greed_env.rules import Move, Rules, State, preset, preset_names

__all__ = [
    "BOTS_PATH_ENV",
    "HEURISTIC_NAMES",
    "OPTIMAL_OBJECTIVES",
    "BotInfo",
    "UnknownBotError",
    "bot_folders",
    "find_card",
    "list_bots",
    "load",
    "optimal_available",
    "resolve_id",
]

BOTS_PATH_ENV = "GREED_BOTS_PATH"
OPTIMAL_OBJECTIVES = ("turn", "entry", "race", "duel")
HEURISTIC_NAMES = (
    "random",
    "threshold-300",
    "threshold-500",
    "threshold-1000",
    "threshold-300-keep-most",
    "threshold-300-keep-fewest",
)
_THRESHOLD = re.compile(r"^threshold-(\d+)(?:-(keep-most|keep-fewest|max-score))?$")


class UnknownBotError(LookupError):
    """A spec that names no bot; the message lists what is known."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown bot"


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
    out.append(package / "data" / "bots")
    seen: list[Path] = []
    for p in out:
        if p.is_dir() and p.resolve() not in [s.resolve() for s in seen]:
            seen.append(p)
    return seen


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


# ------------------------------------------------------------------------------------------
# built-in kinds


def _heuristic(name: str) -> Bot | None:
    if name == "random":
        return RandomBot(name="random")
    m = _THRESHOLD.match(name)
    if m is None:
        return None
    keep = m.group(2) or "max-score"
    return ThresholdBot(bank_at=int(m.group(1)), keep=keep, name=name)


def _heuristic_description(name: str) -> str:
    if name == "random":
        return "uniformly random legal move"
    m = _THRESHOLD.match(name)
    assert m is not None
    keep = {"keep-most": "keeps the most dice", "keep-fewest": "keeps the fewest dice"}.get(
        m.group(2) or "", "keeps the highest-scoring dice"
    )
    return f"banks at {m.group(1)}+ points, {keep}"


def optimal_available(rules: Rules, objective: str) -> bool:
    """Whether the exact solver offers ``objective`` for ``rules`` (cheap: nothing is solved).

    True when the solver package and its bot are importable, ``objective`` is one of its
    objectives, the solver models the rule variant (``check_supported``; carry-over rules need
    the carry-over engine) and, for ``duel``, the rules allow two players.
    """
    solver = _solver()
    if solver is None or objective not in _solver_objectives():
        return False
    try:
        from greed_env.solver.model import check_supported

        check_supported(rules)
    except (ImportError, ValueError):
        return False
    if rules.carry_over and importlib.util.find_spec("greed_env.solver.carry") is None:
        return False
    if objective == "duel" and not rules.min_players <= 2 <= rules.max_players:
        return False
    return _optimal_class() is not None


def _solver() -> Any:
    try:
        return importlib.import_module("greed_env.solver")
    except ImportError:
        return None


def _solver_objectives() -> tuple[str, ...]:
    solver = _solver()
    if solver is None:
        return ()
    return tuple(getattr(solver, "OBJECTIVES", OPTIMAL_OBJECTIVES))


def _optimal_class() -> Any:
    solver = _solver()
    if solver is None:
        return None
    try:
        return solver.OptimalBot
    except (ImportError, AttributeError):
        return None


def _table_note(rules: Rules, objective: str) -> str:
    solver = _solver()
    paths = getattr(solver, "table_paths", None)
    if paths is None:
        return ""
    try:
        found = [p for p in paths(rules, objective) if p.exists()]
    except (OSError, ValueError):
        return ""
    return "" if found else " (solved on first use)"


class _RulesBound:
    """A bot built for one rule set that refuses to play another (wraps solver bots)."""

    def __init__(self, inner: Any, rules: Rules, name: str) -> None:
        self.inner = inner
        self.rules = rules
        self.name = name
        self.description = getattr(inner, "description", name)

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        """The inner bot's move, after checking ``rules`` are the bot's rules.

        Raises:
            RulesMismatchError: ``rules`` differ from the rules the bot was built for.
        """
        if rules.fingerprint != self.rules.fingerprint:
            raise RulesMismatchError(rules_mismatch_message(f"bot {self.name}", self.rules, rules))
        return self.inner.act(rules, state, rng)

    def move_values(self, rules: Rules, state: State) -> Any:
        """The solver's value of every legal move (see :class:`greed_env.solver.OptimalBot`)."""
        return self.inner.move_values(rules, state)

    def __repr__(self) -> str:
        return f"{self.name} ({self.inner!r})"


def _optimal(rules: Rules, objective: str, name: str) -> Bot:
    if not optimal_available(rules, objective):
        why = "the solver is not available"
        try:
            from greed_env.solver import model as solver_model

            solver_model.check_supported(rules)
            if objective not in _solver_objectives():
                why = f"the solver has no objective {objective!r} (it has {', '.join(_solver_objectives())})"
        except ImportError:
            pass
        except ValueError as exc:
            why = str(exc)
        raise UnknownBotError(f"bot {name!r}: no optimal bot for {rules.name}: {why}")
    cls = _optimal_class()
    return _RulesBound(cls(rules, objective), rules, name)


def _ladder_rungs(rules: Rules) -> list[Any]:
    """The rungs of the first ``<folder>/<rules>/ladder.json`` (:mod:`greed_env.solver.ladder`);
    none without the solver, the file, or a duel bot for ``rules``."""
    if not optimal_available(rules, "duel"):
        return []
    ladder = importlib.import_module("greed_env.solver.ladder")
    for folder in bot_folders():
        path = folder / rules.name / ladder.LADDER_FILE
        if path.is_file():
            return list(ladder.read_ladder(path, rules))
    return []


def _ladder_bot(rules: Rules, name: str, bot_id: str) -> Bot:
    rungs = {r.name: r for r in _ladder_rungs(rules)}
    if name not in rungs:
        known = ", ".join(f"{rules.name}/{n}" for n in rungs) or "none"
        raise UnknownBotError(f"unknown bot {bot_id!r}; ladder bots for {rules.name}: {known}")
    ladder = importlib.import_module("greed_env.solver.ladder")
    return _RulesBound(ladder.LadderBot(rules, rungs[name].temperature, name=bot_id), rules, bot_id)


# ------------------------------------------------------------------------------------------
# loading


def resolve_id(spec: str) -> tuple[str | None, str]:
    """Split a spec into ``(rules preset or None, name)``, dropping a ``bot:`` prefix.

    >>> resolve_id("bot:ten_thousand/ppo-turn")
    ('ten_thousand', 'ppo-turn')
    >>> resolve_id("optimal-duel")
    (None, 'optimal-duel')
    """
    text = spec.strip()
    if text[:4].lower() == "bot:":
        text = text[4:].strip()
    if "/" in text:
        rules_name, _, name = text.partition("/")
        return rules_name.strip(), name.strip()
    return None, text


BOT_FILE_SUFFIXES = (".json", ".onnx", ".zip", ".npz")


def _is_file_spec(text: str) -> bool:
    return text.lower().endswith((".json", ".onnx", ".zip")) and Path(text).exists()


def load(spec: str, rules: Rules | None = None, **options: Any) -> Bot:
    """The bot named by ``spec`` (see the module docstring), ready to play.

    Args:
        spec: a registry id, a bare name, ``threshold:N``, or a file path; ``bot:`` allowed.
        rules: the rules the bot will play. Required for bare optimal names; when given, a
            solver or policy bot made for other rules is refused at once.
        options: passed to :class:`OnnxBot` (``temperature``, ``threads``).

    Raises:
        UnknownBotError: no such bot (lists the known ids of the preset).
        RulesMismatchError: the bot was made for other rules than ``rules``.
        BotLoadError: a policy bot whose files are corrupt or made for another observation spec
            or action catalog (:mod:`greed_env.bots.policy_bots`).
    """
    text = spec.strip()
    if text[:4].lower() == "bot:":
        text = text[4:].strip()
    if not text:
        raise UnknownBotError("empty bot spec")
    if _is_file_spec(text):
        return _load_file(Path(text), rules, **options)
    if text.lower().endswith(BOT_FILE_SUFFIXES) or text.startswith(("/", "./", "../", "~")):
        raise UnknownBotError(f"bot file {text!r} does not exist")
    rules_name, name = resolve_id(text)
    if rules_name is None and ":" in name:
        kind, _, arg = name.partition(":")
        if kind == "threshold" and arg.isdigit():
            return ThresholdBot(bank_at=int(arg), name=f"threshold:{arg}")
    heuristic = _heuristic(name)
    if heuristic is not None:
        if rules_name is not None and rules_name not in preset_names():
            raise UnknownBotError(f"unknown bot {text!r}: no rules preset {rules_name!r}; presets: {', '.join(preset_names())}")
        if rules_name is not None:
            heuristic.name = f"{rules_name}/{name}"
        return heuristic
    if rules_name is None:
        if rules is None:
            raise UnknownBotError(
                f"unknown bot {text!r}: give an id <rules>/{name} (e.g. ten_thousand/{name}) or the rules to play"
            )
        target = rules
        bot_id = f"{rules.name}/{name}"
    else:
        if rules_name not in preset_names():
            raise UnknownBotError(f"unknown bot {text!r}: no rules preset {rules_name!r}; presets: {', '.join(preset_names())}")
        target = preset(rules_name)
        bot_id = f"{rules_name}/{name}"
        if rules is not None and rules.fingerprint != target.fingerprint:
            advice = (
                f"the bare name {name!r} builds the solver bot for these rules"
                if name.startswith("optimal-")
                else "a trained bot plays only the rules it was trained for"
            )
            raise RulesMismatchError(f"{rules_mismatch_message(f'bot {bot_id}', target, rules)}; {advice}")
    if name.startswith("optimal-"):
        objective = name.removeprefix("optimal-")
        if objective not in OPTIMAL_OBJECTIVES and objective not in _solver_objectives():
            raise UnknownBotError(
                f"unknown bot {text!r}: optimal objectives are {', '.join(_solver_objectives() or OPTIMAL_OBJECTIVES)}"
            )
        return _optimal(target, objective, bot_id)
    if name.startswith("ladder-"):
        return _ladder_bot(target, name, bot_id)
    card = find_card(bot_id)
    if card is None:
        preset_name = bot_id.split("/", 1)[0]
        known = [b.id for b in list_bots(preset_name)] if preset_name in preset_names() else []
        raise UnknownBotError(f"unknown bot {text!r}; known for {preset_name}: {', '.join(known) or 'none'}")
    return OnnxBot.from_card(card, rules=rules, **options)


def _load_file(path: Path, rules: Rules | None, **options: Any) -> Bot:
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return PPOBot(path, rules)
    card = path if suffix == ".json" else path.with_suffix(".json")
    if not card.is_file():
        raise CorruptBotError(f"bot file {path}: no card {card.name} beside it")
    return OnnxBot.from_card(card, rules=rules, **options)


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
        for objective in _solver_objectives():
            if optimal_available(r, objective):
                name = f"optimal-{objective}"
                text = _OPTIMAL_DESCRIPTIONS.get(objective, f"exact solver: objective {objective}")
                out[f"{rn}/{name}"] = BotInfo(
                    f"{rn}/{name}", rn, name, "optimal", text + _table_note(r, objective), ratings.get(name, "")
                )
        try:
            rungs = _ladder_rungs(r)
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


_OPTIMAL_DESCRIPTIONS = {
    "turn": "exact solver: most expected points per turn",
    "entry": "exact solver: best chance to come in this turn",
    "race": "exact solver: fewest expected turns to the target",
    "duel": "exact solver: highest chance to win a two-player game",
}


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
            from greed_env.bots.policy_bots import check_compatible

            check_compatible(card, preset(rn), where=f"bot {bot_id}")
        except BotLoadError as exc:
            problem = str(exc)
    strength = summarize_card(card)
    if rating:
        strength = f"{rating}; {strength}" if strength else rating
    return BotInfo(bot_id, rn, name, str(card.get("kind", "onnx-policy")), str(card.get("description", "")), strength, str(path), problem)
