"""The fixed ``Discrete`` action catalog of a rules configuration and its exact legal mask.

Every decision any position of a rule set can offer has one fixed action id:

* first the non-keep moves the rules can produce, in this order (kinds the rules cannot
  produce are left out): ``bank``, ``roll``, ``roll_for_nothing`` (``exact_target``),
  ``reroll_all`` (``reroll_all``), ``bust`` (``voluntary_bust``), ``piggyback`` and ``fresh``
  (``piggyback``), ``split``, ``refuse``, ``roll_first`` and ``roll_last``
  (``tie_rule == 'split_vote'``);
* then the keeps, ordered by (number of dice, faces, reading). Under order-free rules a keep
  is a multiset of faces, and the catalog holds exactly the multisets that are a legal keep in
  some position: those :func:`~greed_env.rules.read_keep` reads, as part of a roll or as the
  whole of a fresh full roll (which adds the nothing bonus). Under tap-order rules
  (``carry_over``) every multiset of 1..``num_dice`` faces can score through working sets, and
  the same dice can be read in several ways depending on the tap order. A keep action is then
  a multiset with a *reading* (:attr:`~greed_env.rules.KeepOption.reading`), the strongest
  combination the tap order locks: plain (sets and singles), ``pairs`` (three pairs, for dice
  with three faces at least twice), ``small`` (a small straight, for dice holding one) and
  ``large`` (a large straight, for dice holding all six faces). The distinct readings of the
  same dice in one position always differ in it (checked when a position's mask is built).

A keep action is played as the canonical tap order of the matching
:class:`~greed_env.rules.KeepOption`, so ``action_to_move`` and ``legal_moves`` agree move for
move and the unmasked actions of a position are in one-to-one correspondence with its legal
moves.

>>> from greed_env.rules import preset, new_game, apply_roll
>>> cat = ActionCatalog(preset("ten_thousand"))
>>> cat.n, cat.labels[:3]
(136, ('bank', 'roll', 'keep 1'))
>>> s = apply_roll(cat.rules, new_game(cat.rules, 2, first_player=0), (1, 1, 1, 2, 3, 5))
>>> [cat.labels[a] for a in cat.legal_actions(s)][:4]
['keep 1', 'keep 5', 'keep 1,1', 'keep 1,5']
>>> str(cat.action_to_move(s, cat.index_of(("keep", (1, 1, 1, 5)))))
'keep:1,1,1,5'
>>> ActionCatalog("progressive").n, ActionCatalog("progressive").size_of_version(2)
(3696, 3693)
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement
from typing import Any, NamedTuple

import numpy as np

from greed_env.rules import (
    Carry,
    IllegalKeep,
    IllegalMove,
    KeepOption,
    Move,
    Phase,
    Rules,
    RulesError,
    State,
    can_reroll_all,
    current_keep_options,
    fill_faces,
    keep_readings,
    legal_moves,
    parse_move,
    read_keep,
    resolve_rules,
    tap_reading,
)

__all__ = [
    "ACTION_CATALOG_VERSION",
    "TRIPPN_FREE_SETS_REFUSAL",
    "ActionCatalog",
    "ActionEntry",
    "action_index",
    "catalog_version",
    "fill_alternates",
]

ACTION_CATALOG_VERSION = 3
"""The newest catalog format. A rules configuration's catalog carries the version of the last
change to the ids it gets (:func:`catalog_version`): 3 for tap-order rules, which gained the
alternate keeps (:func:`fill_alternates`) after every version-2 id; 2 was theirs when keeps
became (dice, reading) pairs as small straights and three pairs began to lock in tap order;
1 for every order-free rule set, whose ids have not changed."""


def catalog_version(rules: Rules) -> int:
    """The catalog version of ``rules`` (what cards of bots trained on it record)."""
    return 3 if rules.carry_over else 1


TRIPPN_FREE_SETS_REFUSAL = (
    "the action catalog does not key Trippn's keeps under working_set_claims=False: with sets "
    "working across and-rolls one keep can lock three pairs in two ways (2s working, "
    "2,2,3,3,4,4,5,5 reads pairs 3-4-5 and the 2s to their set, 1,900, or four pairs, 2,000), "
    "which one (dice, reading) action cannot tell apart"
)
"""Why Trippn's other reading of a working face has no action catalog (the rules play it)."""

FACES = (1, 2, 3, 4, 5, 6)
_KEEP_CACHE_LIMIT = 1 << 18


class ActionEntry(NamedTuple):
    """One row of the catalog: a non-keep move kind, or a keep of ``dice`` (sorted faces).

    ``fills``: an alternate keep (:func:`fill_alternates`), the reading of ``dice`` that fills
    a straight made on an earlier keep where another reading of the same kind does not."""

    index: int
    kind: str
    dice: tuple[int, ...] = ()
    reading: str = ""
    fills: bool = False

    @property
    def large_first(self) -> bool:
        return self.reading == "large"

    @property
    def label(self) -> str:
        if self.kind != "keep":
            return self.kind
        text = "keep " + ",".join(map(str, self.dice))
        if self.fills:
            return text + f" ({_READING_LABELS[self.reading]}, filling the straight)"
        return text + f" ({_READING_LABELS[self.reading]})" if self.reading else text


_READING_LABELS = {
    "large": "large straight",
    "small": "small straight first",
    "pairs": "three pairs first",
}


def _non_keep_kinds(rules: Rules) -> list[str]:
    kinds = ["bank", "roll"]
    if rules.exact_target:
        kinds.append("roll_for_nothing")
    if rules.reroll_all:
        kinds.append("reroll_all")
    if rules.voluntary_bust:
        kinds.append("bust")
    if rules.piggyback:
        kinds += ["piggyback", "fresh"]
    if rules.tie_rule == "split_vote":
        kinds += ["split", "refuse", "roll_first", "roll_last"]
    return kinds


def _readable(rules: Rules, dice: tuple[int, ...], fresh: bool) -> bool:
    try:
        read_keep(rules, dice, fresh=fresh)
    except IllegalKeep:
        return False
    return True


def _keep_keys(rules: Rules) -> list[tuple[tuple[int, ...], str]]:
    keys: list[tuple[tuple[int, ...], str]] = []
    short = [set(faces) for faces, _ in rules.straights if len(faces) < 6]
    has_large = any(len(faces) == 6 for faces, _ in rules.straights)
    for size in range(1, rules.num_dice + 1):
        for dice in combinations_with_replacement(FACES, size):
            if rules.carry_over:
                faces = set(dice)
                keys.append((dice, ""))
                if rules.three_pairs and sum(dice.count(f) >= 2 for f in FACES) >= 3:
                    keys.append((dice, "pairs"))
                if any(s <= faces for s in short):
                    keys.append((dice, "small"))
                if has_large and len(faces) == 6:
                    keys.append((dice, "large"))
            elif _readable(rules, dice, False) or (
                size == rules.num_dice and _readable(rules, dice, True)
            ):
                keys.append((dice, ""))
    return keys


def _fills(opt: KeepOption) -> bool:
    return any(p.name.startswith("fills straight") for p in opt.parts)


@lru_cache(maxsize=64)
def fill_alternates(rules: Rules) -> tuple[tuple[tuple[int, ...], str], ...]:
    """The (dice, reading) keeps that have an alternate action: a keep of the same dice and
    reading that fills a straight made on an earlier keep, where another does not.

    Found by the rules' own readings, over the keeps where a fill can compete with a reading
    of the same kind: a pair of a fill face beside three or more other pairs (three pairs
    locked from the other faces leave the fill face to fill the straight; locked with it,
    the fourth pair makes four pairs), with each set of open straights and nothing else
    working (working sets only hold their own faces aside). An exhaustive search over every
    carry-over and keep (``scripts/catalog_collisions.py``) finds no other shared action under
    the shipped presets. Sorted; empty for rules without straights to fill or three pairs.

    >>> fill_alternates(resolve_rules("progressive"))[0]
    ((1, 1, 2, 2, 3, 3, 4, 4), 'pairs')
    """
    faces = fill_faces(rules)
    if not rules.carry_over or not rules.three_pairs or not faces or rules.num_dice < 8:
        return ()
    opened = [
        Carry(fills=tuple(f for i, f in enumerate(faces) if mask >> i & 1))
        for mask in range(1, 1 << len(faces))
    ]
    found: set[tuple[tuple[int, ...], str]] = set()
    for size in range(8, rules.num_dice + 1):
        for dice in combinations_with_replacement(FACES, size):
            paired = [f for f in FACES if dice.count(f) >= 2]
            if len(paired) < 4 or not set(paired) & set(faces):
                continue
            for carry in opened:
                for fresh in (False, True):
                    kinds: dict[str, set[bool]] = {}
                    for opt in keep_readings(rules, dice, carry, fresh):
                        kinds.setdefault(opt.reading, set()).add(_fills(opt))
                    found.update((dice, kind) for kind, seen in kinds.items() if len(seen) == 2)
    return tuple(sorted(found))


class ActionCatalog:
    """The fixed action ids of one rules configuration (one shared instance per rules).

    ``ActionCatalog(rules)`` accepts a :class:`~greed_env.rules.Rules` or a preset name and
    returns the cached catalog of an equal configuration if one exists.

    Attributes:
        rules: the configuration.
        n: number of actions (the size of the ``Discrete`` space).
        entries: one :class:`ActionEntry` per action id.
        labels: ``entries[i].label`` for every id.
        version: :data:`ACTION_CATALOG_VERSION`.
    """

    _instances: dict[Rules, ActionCatalog] = {}  # noqa: RUF012

    rules: Rules
    n: int
    entries: tuple[ActionEntry, ...]
    labels: tuple[str, ...]
    version: int

    def __new__(cls, rules: Rules | str) -> ActionCatalog:
        resolved = resolve_rules(rules)
        cached = cls._instances.get(resolved)
        if cached is not None:
            return cached
        inst = super().__new__(cls)
        inst._build(resolved)
        cls._instances[resolved] = inst
        return inst

    def _build(self, rules: Rules) -> None:
        if rules.trippn and not rules.working_set_claims:  # two "pairs" readings of one keep
            raise RulesError(f"{rules.name}: {TRIPPN_FREE_SETS_REFUSAL}")
        self.rules = rules
        self.version = catalog_version(rules)
        entries = [ActionEntry(i, k) for i, k in enumerate(_non_keep_kinds(rules))]
        self._kind_index = {e.kind: e.index for e in entries}
        self._keep_index: dict[tuple[tuple[int, ...], str, bool], int] = {}
        for dice, reading in _keep_keys(rules):
            idx = len(entries)
            entries.append(ActionEntry(idx, "keep", dice, reading))
            self._keep_index[(dice, reading, False)] = idx
        self._v2_n = len(entries)
        self._alternates = frozenset(fill_alternates(rules))
        for dice, reading in sorted(self._alternates):
            idx = len(entries)
            entries.append(ActionEntry(idx, "keep", dice, reading, True))
            self._keep_index[(dice, reading, True)] = idx
        self.entries = tuple(entries)
        self.labels = tuple(e.label for e in entries)
        self.n = len(entries)
        self._keep_cache: dict[tuple[Any, ...], tuple[np.ndarray, dict[int, Move]]] = {}

    def __repr__(self) -> str:
        return f"ActionCatalog({self.rules.name!r}, n={self.n}, version={self.version})"

    def __reduce__(self) -> tuple[Any, tuple[Rules]]:
        """Pickle and deep-copy as ``ActionCatalog(rules)``: the copy is the shared catalog of
        its rules (the catalog is immutable, so envs that copy it stay interchangeable)."""
        return (ActionCatalog, (self.rules,))

    # --------------------------------------------------------------------------------------
    # positions

    def legal(self, state: State) -> tuple[np.ndarray, dict[int, Move]]:
        """The int8 mask of ``state`` and the move each unmasked action plays.

        The mask is all zeros at chance and terminal nodes. The returned array is shared
        with a cache: copy it before writing to it.
        """
        if state.phase == Phase.KEEP:
            # the keeps depend on the dice and what is working; reroll-all also on the turn
            key = (
                state.roll,
                state.carry,
                state.fresh,
                state.bar,
                state.in_rolloff,
                can_reroll_all(self.rules, state),
            )
            hit = self._keep_cache.get(key)
            if hit is None:
                hit = self._legal_uncached(state)
                if len(self._keep_cache) >= _KEEP_CACHE_LIMIT:
                    self._keep_cache.clear()
                self._keep_cache[key] = hit
            return hit
        return self._legal_uncached(state)

    def _legal_uncached(self, state: State) -> tuple[np.ndarray, dict[int, Move]]:
        mask = np.zeros(self.n, dtype=np.int8)
        moves: dict[int, Move] = {}
        for move in legal_moves(self.rules, state):
            if move.kind != "keep":
                idx = self._kind_index[move.kind]
                mask[idx] = 1
                moves[idx] = move
        for opt in current_keep_options(self.rules, state):
            idx = self._keep_index[self._key(opt)]
            if mask[idx]:
                raise RuntimeError(
                    f"two readings of keep {opt.dice} share action {idx} ({self.labels[idx]}) "
                    "in this position: the catalog cannot tell them apart"
                )
            mask[idx] = 1
            moves[idx] = Move("keep", opt.taps)
        return mask, moves

    def mask(self, state: State) -> np.ndarray:
        """Exact legal-action mask of ``state``: a fresh int8 array of shape ``(n,)``."""
        return self.legal(state)[0].copy()

    def legal_actions(self, state: State) -> list[int]:
        """Unmasked action ids of ``state``, ascending."""
        return sorted(self.legal(state)[1])

    def action_to_move(self, state: State, action: int) -> Move:
        """The move action ``action`` plays in ``state`` (keeps in canonical tap order).

        Raises:
            IllegalMove: the action is outside ``0..n-1`` or masked in ``state``.
        """
        a = self._check_index(action)
        move = self.legal(state)[1].get(a)
        if move is None:
            raise IllegalMove(
                f"action {a} ({self.labels[a]}) is not legal in phase "
                f"{Phase(state.phase).name}; legal: "
                + ", ".join(self.labels[i] for i in self.legal_actions(state)),
                rule="masked-action",
            )
        return move

    def index_of(
        self,
        item: Move | KeepOption | ActionEntry | str | tuple[str, tuple[int, ...]],
        state: State | None = None,
    ) -> int:
        """The action id of a move, a keep option, a label, or a ``(kind, taps)`` pair.

        A keep move in tap-order rules is matched by its reading: with ``state`` given, by the
        outcome it has there (any tap order works); without it, by the strongest combination
        the taps lock read with nothing working (:func:`~greed_env.rules.tap_reading`).

        Raises:
            KeyError: the move kind or the keep is not in this catalog.
        """
        if isinstance(item, ActionEntry):
            return self._check_index(item.index)
        if isinstance(item, KeepOption):
            return self._keep_lookup(*self._key(item))
        if isinstance(item, str):
            if item in self.labels:
                return self.labels.index(item)
            item = parse_move(item)
        kind, taps = (item.kind, item.taps) if isinstance(item, Move) else item
        if kind != "keep":
            try:
                return self._kind_index[kind]
            except KeyError:
                raise KeyError(
                    f"move {kind!r} is not in the {self.rules.name} action catalog; kinds: "
                    + ", ".join(self._kind_index)
                ) from None
        dice = tuple(sorted(taps))
        if not self.rules.carry_over:
            return self._keep_lookup(dice, "")
        if state is not None and state.phase == Phase.KEEP:
            try:
                res = read_keep(
                    self.rules,
                    tuple(taps),
                    state.carry,
                    state.fresh and len(state.roll) == self.rules.num_dice,
                )
            except IllegalKeep as exc:
                raise KeyError(f"keep {taps} is not legal here: {exc}") from None
            for opt in current_keep_options(self.rules, state):
                if opt.dice == dice and (opt.score, opt.carry, opt.wins) == (
                    res.score,
                    res.carry,
                    res.wins,
                ):
                    return self._keep_lookup(*self._key(opt))
            raise KeyError(f"keep {taps} is not legal in this position")
        return self._keep_lookup(dice, tap_reading(self.rules, tuple(taps)))

    def _key(self, opt: KeepOption) -> tuple[tuple[int, ...], str, bool]:
        """The catalog key of a keep option: its dice, reading, and whether it is the
        alternate (fill) reading of a keep that has one."""
        alternate = (opt.dice, opt.reading) in self._alternates and _fills(opt)
        return (opt.dice, opt.reading, alternate)

    def _keep_lookup(self, dice: tuple[int, ...], reading: str, fills: bool = False) -> int:
        try:
            return self._keep_index[(tuple(dice), reading, fills)]
        except KeyError:
            what = "keep " + ",".join(map(str, dice))
            if reading:
                what += f" ({_READING_LABELS[reading]})"
            raise KeyError(f"{what} is never legal under the {self.rules.name} rules") from None

    def primary_of(self, action: int) -> int:
        """The keep an alternate keep is the other reading of (same dice and reading, no
        fill); any other action is its own."""
        entry = self.entries[self._check_index(action)]
        return self._keep_index[(entry.dice, entry.reading, False)] if entry.fills else entry.index

    def size_of_version(self, version: int) -> int | None:
        """How many actions this catalog had under catalog ``version``: its ids are the first
        that many of today's, with the same meaning (None: no such catalog for these rules).

        A tap-order catalog of version 2 is today's without the alternate keeps, which come
        last; an older bot plays on with them never chosen."""
        if version == self.version:
            return self.n
        if version == 2 and self.rules.carry_over:
            return self._v2_n
        return None

    def _check_index(self, action: Any) -> int:
        try:
            return action_index(action, self.n)
        except ValueError as exc:
            raise IllegalMove(str(exc), rule="action") from None

    # --------------------------------------------------------------------------------------
    # documentation

    def table(self) -> list[dict[str, Any]]:
        """One row per action: ``index``, ``kind``, ``dice``, ``reading``, ``fills``, ``label``."""
        return [
            {
                "index": e.index,
                "kind": e.kind,
                "dice": e.dice,
                "reading": e.reading,
                "fills": e.fills,
                "label": e.label,
            }
            for e in self.entries
        ]

    def summary(self) -> dict[str, Any]:
        """Counts for docs: total, non-keep, keeps, keeps with each reading (the alternate
        fill keeps counted apart), version."""
        keeps = [e for e in self.entries if e.kind == "keep"]
        return {
            "rules": self.rules.name,
            "version": self.version,
            "n": self.n,
            "non_keep": self.n - len(keeps),
            "keeps": len(keeps),
            "large_first": sum(e.reading == "large" for e in keeps),
            "small_first": sum(e.reading == "small" for e in keeps),
            "pairs_first": sum(e.reading == "pairs" and not e.fills for e in keeps),
            "fill_alternates": sum(e.fills for e in keeps),
            "kinds": [e.kind for e in self.entries if e.kind != "keep"],
        }


def action_index(action: Any, n: int) -> int:
    """The action id ``action`` stands for, in ``0..n-1``.

    Python and numpy integers and 0-d integer arrays are accepted; ``True``/``False``, floats
    (even ``2.0``), strings and arrays of other shapes are refused, so a bug that feeds a
    probability or a flag as an action fails at once.

    Raises:
        ValueError: the action is not an integer id, or lies outside ``0..n-1``.
    """
    value = action
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(
            f"action must be an integer id in 0..{n - 1}, got {action!r} ({type(action).__name__})"
        )
    a = int(value)
    if not 0 <= a < n:
        raise ValueError(f"action {a} is outside the action space 0..{n - 1}")
    return a
