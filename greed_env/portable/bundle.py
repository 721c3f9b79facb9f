"""The bot bundle: everything a host program needs besides a bot's ``.onnx`` file, as data.

A shipped bot reads the 106-float observation of a position and answers with an id of its
rules' action catalog. Building both needs the rules engine; the bundle writes down what a
host in another language (JavaScript, C#, C++, GDScript) needs to do it without porting the
engine's scoring:

* ``rules``: every field of the :class:`~greed_env.rules.Rules` (``Rules.to_dict()``), its
  fingerprint, and ``turn_flow_fields``, the fields the turn flow reads;
* ``catalog``: each action id's kind (bank, roll, ...), kept dice, tap-order reading and label,
  and how many ids each catalog version had (a bot of an older version has fewer logits);
* ``observation``: each index's name, bounds and scaling, and the constants the scalings use;
* ``keeps``: the legal keeps of every roll the rules can meet, as a table. A row is keyed by
  the carry-over working (an index into ``keeps.carries``), whether the roll is a fresh full
  roll, and the roll's sorted faces; it lists the options in the engine's order, each as
  ``[action id, points, tap order, instant win, carry-over after]``, and whether any die of the
  roll scores. Trippn's carry-over survives hot dice, so its rows never close (hundreds of
  millions); its bundle says ``"mode": "reader"`` and a host reads the tap order itself
  (docs/portable.md gives the algorithm).

The format is versioned (:data:`BUNDLE_VERSION`) together with the catalog and observation
versions it carries, and a bot card names the bundle version it plays with
(``bundle_version``); a host refuses a bundle or a card of another version.

>>> b = bundle_for("ten_thousand")
>>> b["format"], b["bundle_version"], b["catalog"]["n"], b["keeps"]["mode"]
('greed_env.bot_bundle', 1, 136, 'table')
>>> row = b["keeps"]["rows"]["0|0|1125"]
>>> row["scoring"], [b["catalog"]["actions"][o[0]]["label"] for o in row["options"]]
(True, ['keep 5', 'keep 1', 'keep 1,5', 'keep 1,1', 'keep 1,1,5'])
"""

from __future__ import annotations

import json
from collections import deque
from itertools import combinations_with_replacement
from pathlib import Path
from typing import Any

from greed_env import __version__
from greed_env.files import atomic_write_text
from greed_env.portable.state_json import STATE_FIELDS, carry_to_json
from greed_env.rules import Carry, Phase, Rules, resolve_rules
from greed_env.rules.game import MOVE_KINDS
from greed_env.rules.scoring import EMPTY_CARRY, has_scoring_keep, keep_options
from greed_env.spaces.bundle_format import BUNDLE_FORMAT, BUNDLE_VERSION
from greed_env.spaces.catalog import ActionCatalog, catalog_version, fill_alternates
from greed_env.spaces.observation import (
    MAX_SEATS,
    OBS_DIM,
    OBS_SPEC_VERSION,
    OBSERVATION_SPEC,
    STREAK_SCALE_DEFAULT,
    score_scale,
)

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_VERSION",
    "MAX_TABLE_STATES",
    "TURN_FLOW_FIELDS",
    "BundleError",
    "bundle_for",
    "catalog_sizes",
    "check_bundle",
    "write_bundle",
]


MAX_TABLE_STATES = 20_000
"""Carry-over states (dice in hand, carry-over) beyond which the keeps are not tabled."""

TURN_FLOW_FIELDS: tuple[str, ...] = (
    "num_dice",
    "target",
    "exact_target",
    "final_round",
    "rounds",
    "final_round_past_rounds",
    "entry_threshold",
    "entry_scope",
    "entry_until_made",
    "min_bank",
    "six_kind_wins",
    "hot_dice",
    "carry_over",
    "trippn",
    "reroll_all",
    "reroll_all_any_time",
    "reroll_all_must_beat",
    "voluntary_bust",
    "piggyback",
    "piggyback_counts_for_entry",
    "bust_penalty_after",
    "bust_penalty",
    "first_player",
    "tie_rule",
    "min_players",
    "max_players",
    "horizon_rounds",
    "rolloff_horizon",
)
"""The rules fields the turn flow reads (the keep table, or the tap-order reader, does the
scoring)."""


class BundleError(ValueError):
    """A bundle that cannot be built for these rules, or one that this code cannot read."""


def catalog_sizes(catalog: ActionCatalog) -> dict[str, int]:
    """Number of action ids under each catalog version a bot of these rules may have been
    trained on (its logits): the current version and the older ones whose ids are a prefix."""
    sizes = {}
    for version in range(1, catalog.version + 1):
        size = catalog.size_of_version(version)
        if size is not None:
            sizes[str(version)] = size
    return sizes


def _catalog(catalog: ActionCatalog) -> dict[str, Any]:
    return {
        "version": catalog.version,
        "n": catalog.n,
        "sizes": catalog_sizes(catalog),
        "actions": [
            {
                "id": e.index,
                "kind": e.kind,
                "dice": list(e.dice),
                "reading": e.reading,
                "fills": e.fills,
                "label": e.label,
            }
            for e in catalog.entries
        ],
        "alternates": [
            {"dice": list(dice), "reading": reading} for dice, reading in fill_alternates(catalog.rules)
        ],
    }


def _observation(rules: Rules) -> dict[str, Any]:
    return {
        "version": OBS_SPEC_VERSION,
        "dim": OBS_DIM,
        "dtype": "float32",
        "max_seats": MAX_SEATS,
        "score_scale": score_scale(rules),
        "streak_scale": rules.bust_penalty_after or STREAK_SCALE_DEFAULT,
        "rounds_scale": rules.rounds or rules.horizon_rounds,
        "entries": [e._asdict() for e in OBSERVATION_SPEC],
    }


def _rolls(k: int) -> list[tuple[int, ...]]:
    return list(combinations_with_replacement(range(1, 7), k))


class _Keeps:
    """The keep table: carry-overs, rows, and the search over the dice states that fill it."""

    def __init__(self, rules: Rules, catalog: ActionCatalog) -> None:
        self.rules = rules
        self.catalog = catalog
        self.carries: list[Carry] = []
        self._carry_index: dict[Carry, int] = {}
        self.rows: dict[str, dict[str, Any]] = {}
        self.carry_of(EMPTY_CARRY)

    def carry_of(self, carry: Carry) -> int:
        i = self._carry_index.get(carry)
        if i is None:
            i = len(self.carries)
            self.carries.append(carry)
            self._carry_index[carry] = i
        return i

    def add_row(self, roll: tuple[int, ...], carry: Carry, fresh: bool) -> list[tuple[int, Carry]]:
        """Table the row of ``roll``; return the dice states its keeps lead to."""
        rules = self.rules
        opts = keep_options(rules, roll, carry, fresh)
        records = []
        nexts = []
        for o in opts:
            records.append(
                [
                    self.catalog.index_of(o),
                    o.score,
                    "".join(map(str, o.taps)),
                    int(o.wins),
                    self.carry_of(o.carry),
                ]
            )
            left = len(roll) - len(o.taps)
            if left > 0:
                nexts.append((left, o.carry))
            elif rules.hot_dice:
                nexts.append((rules.num_dice, EMPTY_CARRY))
        key = f"{self.carry_of(carry)}|{int(fresh)}|{''.join(map(str, roll))}"
        self.rows[key] = {"scoring": has_scoring_keep(rules, roll, carry), "options": records}
        return nexts

    def fill(self) -> None:
        rules = self.rules
        nd = rules.num_dice
        if not rules.carry_over:
            for k in range(1, nd + 1):
                for roll in _rolls(k):
                    self.add_row(roll, EMPTY_CARRY, False)
            for roll in _rolls(nd):
                self.add_row(roll, EMPTY_CARRY, True)
            return
        start = [(nd, EMPTY_CARRY)]
        if rules.piggyback:  # a turn taken over starts with fewer dice and nothing working
            start += [(d, EMPTY_CARRY) for d in range(1, nd)]
        seen = set(start)
        queue = deque(start)
        while queue:
            dice, carry = queue.popleft()
            if len(seen) > MAX_TABLE_STATES:
                raise BundleError(
                    f"{rules.name}: more than {MAX_TABLE_STATES:,} carry-over states; "
                    "the keeps cannot be tabled"
                )
            for fresh in (False, True) if dice == nd else (False,):
                for roll in _rolls(dice):
                    for nxt in self.add_row(roll, carry, fresh):
                        if nxt not in seen:
                            seen.add(nxt)
                            queue.append(nxt)

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": "table",
            "carries": [carry_to_json(c) for c in self.carries],
            "row_key": "CARRY|FRESH|FACES",
            "option_fields": ["action", "points", "taps", "wins", "carry"],
            "rows": self.rows,
        }


def _keeps(rules: Rules, catalog: ActionCatalog) -> dict[str, Any]:
    if rules.trippn:
        return {
            "mode": "reader",
            "why": "Trippn's carry-over survives hot dice, so the carry-overs a turn can meet never "
            "close: a host reads each keep's tap order itself (docs/portable.md)",
        }
    keeps = _Keeps(rules, catalog)
    keeps.fill()
    return keeps.as_json()


def bundle_for(rules: Rules | str) -> dict[str, Any]:
    """The bundle of ``rules`` (a :class:`Rules` or a preset name) as a JSON-able dict.

    Raises:
        BundleError: rules the action catalog cannot key, or whose keeps cannot be tabled.
    """
    resolved = resolve_rules(rules)
    try:
        catalog = ActionCatalog(resolved)
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    return {
        "format": BUNDLE_FORMAT,
        "bundle_version": BUNDLE_VERSION,
        "catalog_version": catalog_version(resolved),
        "obs_spec_version": OBS_SPEC_VERSION,
        "generated_by": f"greed_env {__version__}",
        "rules_name": resolved.name,
        "rules_fingerprint": resolved.fingerprint,
        "rules": resolved.to_dict(),
        "turn_flow_fields": list(TURN_FLOW_FIELDS),
        "phases": [p.name for p in Phase],
        "move_kinds": list(MOVE_KINDS),
        "state_fields": list(STATE_FIELDS),
        "catalog": _catalog(catalog),
        "observation": _observation(resolved),
        "keeps": _keeps(resolved, catalog),
    }


def write_bundle(rules: Rules | str, path: str | Path) -> Path:
    """Write the bundle of ``rules`` to ``path`` as compact JSON (atomically).

    Raises:
        BundleError: as :func:`bundle_for`.
        OSError: the file cannot be written.
    """
    text = json.dumps(bundle_for(rules), separators=(",", ":"))
    return atomic_write_text(Path(path), text + "\n")


def check_bundle(bundle: Any, card: dict[str, Any] | None = None) -> None:
    """Refuse a bundle this code cannot read, or one the bot of ``card`` cannot play with.

    Raises:
        BundleError: one line naming the first problem (format, version, rules, catalog or
            observation version).
    """
    if not isinstance(bundle, dict) or bundle.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"not a greed_env bot bundle (format {BUNDLE_FORMAT!r} expected)")
    version = bundle.get("bundle_version")
    if version != BUNDLE_VERSION:
        raise BundleError(f"bundle version {version!r} is not {BUNDLE_VERSION}, the version this greed_env reads")
    if card is None:
        return
    want = card.get("bundle_version", BUNDLE_VERSION)
    if want != version:
        raise BundleError(f"bot {card.get('id')} plays with bundle version {want!r}, the bundle is version {version!r}")
    if card.get("rules_fingerprint") != bundle.get("rules_fingerprint"):
        raise BundleError(
            f"bot {card.get('id')} was made for rules {card.get('rules_fingerprint')}, the bundle is "
            f"for {bundle.get('rules_fingerprint')} ({bundle.get('rules_name')})"
        )
    sizes = bundle["catalog"]["sizes"]
    cv = str(card.get("action_catalog_version"))
    if cv not in sizes or sizes[cv] != card.get("num_actions"):
        raise BundleError(
            f"bot {card.get('id')} has action catalog version {cv} with {card.get('num_actions')} "
            f"actions; the bundle knows versions {', '.join(sizes)}"
        )
    ov = card.get("obs_spec_version")
    rounds = bundle["rules"].get("rounds", 0)
    if not (ov == bundle["obs_spec_version"] or (ov == 1 and rounds == 0)):
        raise BundleError(
            f"bot {card.get('id')} reads observation spec version {ov!r}, the bundle encodes "
            f"version {bundle['obs_spec_version']}"
        )
