"""Bot cards: read them, check them against this greed_env, build them, summarise them.

Two kinds of card describe a policy:

* the **bot card** of an exported bot, ``NAME.json`` beside ``NAME.onnx`` (format
  :data:`CARD_FORMAT`, version :data:`CARD_VERSION`)::

      id (<rules_name>/<name>), name, kind (onnx-policy), description,
      objective (one of CARD_OBJECTIVES, or selfplayN),
      rules (Rules.to_dict()), rules_name, rules_fingerprint,
      obs_spec_version, obs_dim, action_catalog_version, num_actions,
      bundle_version (the bot bundle a host outside Python plays it with; docs/portable.md),
      onnx: {file, sha256, bytes, input, output, opset, graph},
      training: {...}   # the training run's own card
      evaluation: [...] # measured results (greed_env.bots.tournament.evaluate_bot)
      export: {...}     # when and how it was exported, and the equivalence check

  read by :func:`read_card` (format and fields), :func:`load_card` (plus the ONNX checksum)
  and checked by :func:`check_compatible`; built by :func:`build_card` for every exporter;
* the **training card** of a saved model, ``model.json`` beside ``model.zip`` (or the
  ``meta`` of a ``.npz`` snapshot): looser, every field optional, ``rules`` a rules dict or a
  preset name. :func:`training_card_path` names it, :func:`read_training_card` reads it and
  :func:`check_training_card` checks it.

Every refusal is a :class:`~greed_env.bots.errors.BotLoadError` naming the file and the field.

>>> summarize_evaluation([{"opponent": "random", "score_rate": 0.975, "ci95": [0.961, 0.984], "games": 400}])
'vs random 97.5% [96.1-98.4] (n=400)'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from greed_env.bots.errors import (
    CatalogMismatchError,
    CorruptBotError,
    ObsSpecMismatchError,
    RulesMismatchError,
)
from greed_env.files import atomic_write_text, strict_json
from greed_env.rules.config import (
    Rules,
    RulesError,
    fingerprint_before_revisions,
    reading_revisions,
    resolve_rules,
)
from greed_env.spaces.bundle_format import BUNDLE_VERSION
from greed_env.spaces.catalog import ActionCatalog, catalog_version
from greed_env.spaces.observation import OBS_DIM, OBS_SPEC_VERSION, spec_version_reads

__all__ = [
    "CARD_FORMAT",
    "CARD_KIND",
    "CARD_OBJECTIVES",
    "CARD_VERSION",
    "ONNX_INPUT",
    "ONNX_OPSET",
    "ONNX_OUTPUT",
    "build_card",
    "card_rules",
    "check_compatible",
    "check_training_card",
    "load_card",
    "objective_problem",
    "onnx_metadata",
    "read_card",
    "read_training_card",
    "rules_mismatch_message",
    "sha256_file",
    "summarize_card",
    "summarize_evaluation",
    "training_card_path",
    "write_card",
]

CARD_FORMAT = "greed_env/bot-card"
CARD_VERSION = 1
CARD_KIND = "onnx-policy"
CARD_OBJECTIVES = ("turn", "entry", "race", "duel", "3p", "selfplay", "unknown")
"""What a card's policy was trained for: an objective of the solver, ``selfplay`` (or
``selfplayN``, self-play with N seats), or ``unknown`` (a model whose training card does not
say)."""
ONNX_OPSET = 18
ONNX_INPUT = "obs"
ONNX_OUTPUT = "logits"
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


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ------------------------------------------------------------------------------------------
# bot cards


def objective_problem(objective: object) -> str:
    """Why ``objective`` is no card objective (:data:`CARD_OBJECTIVES`), or ``""``.

    >>> objective_problem("selfplay3"), objective_problem("fly")
    ('', "objective 'fly' is none of turn, entry, race, duel, 3p, selfplay, selfplayN, unknown")
    """
    if isinstance(objective, str) and (
        objective in CARD_OBJECTIVES or re.fullmatch(r"selfplay[1-9][0-9]?", objective)
    ):
        return ""
    known = ", ".join((*CARD_OBJECTIVES[:-1], "selfplayN", CARD_OBJECTIVES[-1]))
    return f"objective {objective!r} is none of {known}"


def _field_problem(card: Mapping[str, Any]) -> str:
    """The first of the card's descriptive fields that contradicts the others or is unknown:
    ``kind``, ``objective``, ``rules_name`` against its rules, ``id`` against its rules and
    name (``""`` when they agree)."""
    if card.get("kind", CARD_KIND) != CARD_KIND:
        return f"kind {card.get('kind')!r} is not {CARD_KIND!r}"
    why = objective_problem(card.get("objective", "unknown"))
    if why:
        return why
    rules = card.get("rules")
    rules_name = rules.get("name") if isinstance(rules, Mapping) else None
    if isinstance(rules_name, str):
        if card.get("rules_name", rules_name) != rules_name:
            return f"rules_name {card.get('rules_name')!r} does not match its rules ({rules_name!r})"
        expected = f"{rules_name}/{card.get('name', str(card['id']).partition('/')[2])}"
        if card["id"] != expected:
            return f"id {card['id']!r} does not match its rules and name ({expected!r})"
    return ""


def read_card(path: str | Path) -> dict[str, Any]:
    """The parsed bot card at ``path`` with its format, required keys and descriptive fields
    (``kind``, ``objective``, ``rules_name``, ``id``) checked.

    Raises:
        CorruptBotError: unreadable file, invalid JSON, wrong format tag or version, missing keys,
            an unknown kind or objective, a rules name or id that contradicts the card's rules.
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
    why = _field_problem(card)
    if why:
        raise CorruptBotError(f"bot card {p}: {why}")
    return card


def load_card(card_path: str | Path) -> tuple[dict[str, Any], Path]:
    """The checked bot card and the path of its ONNX file (checksum verified).

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


def card_rules(card: Mapping[str, Any], where: str = "bot card") -> Rules:
    """The :class:`Rules` a bot card was made for, checked against its stored fingerprint.

    Raises:
        CorruptBotError: the rules dict does not build, or its fingerprint differs from the card's.
        RulesMismatchError: the card was made under an earlier reading of the rules.
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
    """Check a bot card against this greed_env (and ``rules`` if given); return the card's rules.

    Raises:
        CorruptBotError: the card's rules do not rebuild to its fingerprint.
        ObsSpecMismatchError: observation-spec version or size differ from this greed_env's.
        CatalogMismatchError: action-catalog version or size differ (a catalog older than this
            greed_env's is accepted where its ids are the first of today's,
            :meth:`~greed_env.spaces.catalog.ActionCatalog.size_of_version`: the bot plays on
            and never chooses the actions added since, see :func:`added_actions`).
        RulesMismatchError: ``rules`` is given and has another fingerprint than the card.
    """
    bot_rules = card_rules(card, where)
    if not spec_version_reads(card["obs_spec_version"], bot_rules) or card["obs_dim"] != OBS_DIM:
        raise ObsSpecMismatchError(
            f"{where}: trained on observation spec v{card['obs_spec_version']} "
            f"({card['obs_dim']} entries); this greed_env encodes v{OBS_SPEC_VERSION} ({OBS_DIM})"
        )
    catalog = ActionCatalog(bot_rules)
    if catalog.size_of_version(card["action_catalog_version"]) != card["num_actions"]:
        raise CatalogMismatchError(
            f"{where}: trained on action catalog v{card['action_catalog_version']} "
            f"({card['num_actions']} actions); this greed_env builds v{catalog.version} "
            f"({catalog.n} actions) for {bot_rules.name}"
        )
    if rules is not None and rules.fingerprint != bot_rules.fingerprint:
        raise RulesMismatchError(rules_mismatch_message(where, bot_rules, rules))
    return bot_rules


NEVER = -3.4028234663852886e38  # the lowest finite float32
"""The logit of an action a bot's network has no output for (an action its catalog version
predates): below every finite logit, so a legal move of the bot's own always wins."""


def added_actions(card: Mapping[str, Any], catalog: ActionCatalog) -> int:
    """How many actions ``catalog`` has after the card's own (0 for a bot of today's catalog):
    the alternate keeps of a catalog version newer than the bot's, appended after its ids.
    A backend gives them a logit no legal move can lose to, so the bot plays its own policy."""
    return catalog.n - int(card["num_actions"])


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


def onnx_metadata(bot_id: str, rules: Rules) -> dict[str, str]:
    """The metadata every exporter attaches to a bot's ONNX graph."""
    return {
        "greed_env.bot_id": bot_id,
        "greed_env.rules_fingerprint": rules.fingerprint,
        "greed_env.obs_spec_version": str(OBS_SPEC_VERSION),
        "greed_env.action_catalog_version": str(ActionCatalog(rules).version),
    }


def build_card(
    *,
    name: str,
    rules: Rules,
    onnx_bytes: bytes,
    description: str,
    objective: str,
    training: Mapping[str, Any],
    num_actions: int | None = None,
) -> dict[str, Any]:
    """A bot card for the ONNX graph ``onnx_bytes`` of the bot ``<rules name>/<name>``.

    ``evaluation`` starts empty and ``export`` blank: the exporter fills them after its
    equivalence check. The keys come in the order every shipped card has. ``num_actions``:
    the graph's number of logits when it was made on an older catalog version of ``rules``
    (its card records that version); default today's catalog.

    Raises:
        ValueError: ``num_actions`` is the size of no catalog version of ``rules``, or an
            objective that is none of :data:`CARD_OBJECTIVES`.
    """
    why = objective_problem(objective)
    if why:
        raise ValueError(why)
    catalog = ActionCatalog(rules)
    versions = [v for v in (catalog.version, 2) if catalog.size_of_version(v) == (num_actions or catalog.n)]
    if not versions:
        raise ValueError(f"{num_actions} actions: no action catalog of {rules.name} has that many")
    return {
        "format": CARD_FORMAT,
        "card_version": CARD_VERSION,
        "id": f"{rules.name}/{name}",
        "name": name,
        "kind": CARD_KIND,
        "description": description,
        "objective": objective,
        "rules_name": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "rules": rules.to_dict(),
        "obs_spec_version": OBS_SPEC_VERSION,
        "obs_dim": OBS_DIM,
        "action_catalog_version": versions[0],
        "num_actions": num_actions or catalog.n,
        "bundle_version": BUNDLE_VERSION,
        "onnx": {
            "file": f"{name}.onnx",
            "sha256": hashlib.sha256(onnx_bytes).hexdigest(),
            "bytes": len(onnx_bytes),
            "input": ONNX_INPUT,
            "output": ONNX_OUTPUT,
            "opset": ONNX_OPSET,
            "graph": "actor logits; mask outside the graph: argmax over legal actions",
        },
        "training": dict(training),
        "evaluation": [],
        "export": {},
    }


def write_card(path: str | Path, card: Mapping[str, Any]) -> Path:
    """Write a card as indented standard JSON (a NaN or infinity becomes null), atomically."""
    return atomic_write_text(path, json.dumps(strict_json(card), indent=2, sort_keys=False, allow_nan=False) + "\n")


# ------------------------------------------------------------------------------------------
# training cards


def training_card_path(model_path: str | Path) -> Path:
    """The training card of a saved model: ``model.json`` beside ``model.zip``."""
    return Path(model_path).with_suffix(".json")


def read_training_card(model_path: str | Path) -> dict[str, Any] | None:
    """The training card beside ``model_path``, or None when there is none.

    Raises:
        CorruptBotError: the card exists but is not a JSON object.
    """
    path = training_card_path(model_path)
    if not path.is_file():
        return None
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CorruptBotError(f"model card {path} is not valid JSON: {exc}") from None
    if not isinstance(card, dict):
        raise CorruptBotError(f"model card {path}: expected a JSON object")
    return card


def _training_card_rules(card: Mapping[str, Any], where: str) -> Rules | None:
    raw = card.get("rules")
    try:
        if isinstance(raw, Mapping) and len(raw) > 1:
            return Rules.from_dict(dict(raw))
        if isinstance(raw, Mapping) and raw.get("name"):
            return resolve_rules(str(raw["name"]))
        if isinstance(raw, str):
            return resolve_rules(raw, **dict(card.get("rules_overrides") or {}))
        if card.get("rules_name"):
            return resolve_rules(str(card["rules_name"]))
    except (RulesError, TypeError, ValueError) as exc:
        raise CorruptBotError(f"{where}: the training card's rules do not build: {exc}") from None
    return None


def check_training_card(card: Mapping[str, Any], rules: Rules | None, where: str) -> Rules | None:
    """Check a training card (or a snapshot's ``meta``) against this greed_env and ``rules``.

    Every field is optional: ``rules`` (a rules dict or a preset name), ``rules_fingerprint``,
    ``obs_spec_version``, ``action_catalog_version``. Returns ``rules`` when given, else the
    card's rules, else None.

    Raises:
        CorruptBotError: the card's rules do not build or do not match its fingerprint.
        RulesMismatchError: the card's fingerprint is not that of ``rules``.
        ObsSpecMismatchError / CatalogMismatchError: trained on another observation spec or
            action catalog than this greed_env builds for these rules.
    """
    own = _training_card_rules(card, where)
    fp = card.get("rules_fingerprint")
    if own is not None and fp is not None and fp != own.fingerprint:
        raise CorruptBotError(
            f"{where}: training card fingerprint {fp!r} does not match its rules ({own.fingerprint!r})"
        )
    read = rules if rules is not None else own
    version = card.get("obs_spec_version")
    if version is not None and version != OBS_SPEC_VERSION and (read is None or not spec_version_reads(version, read)):
        raise ObsSpecMismatchError(
            f"{where}: trained on observation spec v{version}, this greed_env encodes v{OBS_SPEC_VERSION}"
        )
    have = card.get("action_catalog_version")
    if have is not None and read is not None and ActionCatalog(read).size_of_version(have) is None:
        raise CatalogMismatchError(
            f"{where}: trained on action catalog v{have}, this greed_env builds v{catalog_version(read)} "
            "for these rules"
        )
    if rules is not None:
        want = fp if fp is not None else (own.fingerprint if own is not None else None)
        if want is not None and want != rules.fingerprint:
            name = own.name if own is not None else "?"
            raise RulesMismatchError(
                f"{where}: trained for other rules ({name!r}, fingerprint {want}); asked to play "
                f"{rules.name!r} (fingerprint {rules.fingerprint})"
            )
        return rules
    return own


# ------------------------------------------------------------------------------------------
# summaries


def summarize_card(card: Mapping[str, Any]) -> str:
    """The measured strength stated by a bot card: the training run's own evaluation (for
    example points per turn beside the optimum) and the card's match records."""
    parts = []
    training = card.get("training")
    ev = training.get("evaluation") if isinstance(training, Mapping) else None
    if isinstance(ev, Mapping) and isinstance(ev.get("mean"), int | float):
        units = ev.get("units", "")
        text = f"{ev.get('objective', 'objective')}: {ev['mean']:.3g} ± {float(ev.get('ci95', 0.0)):.2g} {units}"
        if isinstance(ev.get("optimal"), int | float):
            text += f" (optimal {ev['optimal']:.4g})"
        parts.append(text)
    records = card.get("evaluation") or []
    if records:
        parts.append(summarize_evaluation(records))
    return "; ".join(p for p in parts if p)


def summarize_evaluation(records: Iterable[Mapping[str, Any]]) -> str:
    """One line per the card's evaluation records, e.g. ``vs random 97.5% [96.1-98.4] (n=400)``."""
    parts = []
    for r in records:
        if "score_rate" in r:
            lo, hi = r.get("ci95", [0, 1])
            parts.append(f"vs {r['opponent']} {100 * r['score_rate']:.1f}% [{100 * lo:.1f}-{100 * hi:.1f}] (n={r['games']})")
        elif "mean_turn_score" in r:
            lo, hi = r.get("ci95", [0, 0])
            parts.append(f"turn score {r['mean_turn_score']:.0f} [{lo:.0f}-{hi:.0f}] (n={r['turns']})")
    return "; ".join(parts)
