"""The one reference implementation of scoring.

A *keep* is the ordered tuple of faces the player sets aside from one roll (the tap order).
It is read against the turn's carry-over and returns the points and the new carry-over, or
is refused with :class:`IllegalKeep` naming the rule.

Two readings exist:

* **Order-free rules** (every preset but ``progressive``/``trippn``): the kept dice are read
  as a multiset, choosing the best partition into scoring combinations ("where order cannot
  matter the reading is the best one"). Every kept die must belong to a combination.

* **Tap-order rules** (``carry_over=True``, seed 002). The taps are processed one at a time:

  1. a die whose face has a *working set* (made earlier this turn or earlier in this keep)
     extends it at once: it scores ``set_value(face, n + 1) - set_value(face, n)``;
  2. otherwise it joins the *pending* dice of this keep. A set *locks* the moment its third
     die is tapped, and a large straight (all of 1..6, when the rules list it) locks the moment
     the pending dice contain every face: "combinations lock as they complete in tap order";
  3. when the keep ends, the pending dice (at most two of a face) are read as a multiset,
     taking the best partition into singles, pairs, small straights, fills of small straights
     made on an earlier keep, three or four pairs, and the upgrade of working three pairs to
     four pairs by a new pair.

  Small straights, three pairs and sets made in a keep stay *working* (the carry-over) for the
  rest of the turn; an and-roll clears them unless the rules are Trippn.

  The seed's examples hold: ``6,6,6,1,2,3,4,5`` locks the trip of 6s at its third die, so the
  1-5 left is a small straight (600 + 750 = 1,350); any tap order of 1..6 leaves all six
  faces pending at once and locks a large straight (1,500). Consequently one set of kept dice
  has at most two readings - "sets first" and "large straight first" - and the legal-move list
  offers each distinct outcome once, with a canonical tap order that produces it.

>>> from greed_env.rules.config import preset
>>> read_keep(preset("progressive"), (6, 6, 6, 1, 2, 3, 4, 5)).score
1350
>>> read_keep(preset("progressive"), (3, 1, 6, 2, 5, 4)).score
1500
>>> read_keep(preset("ten_thousand"), (2, 2, 2, 2)).score
400
>>> read_keep(preset("ten_thousand"), (2, 3))
Traceback (most recent call last):
...
greed_env.rules.scoring.IllegalKeep: every kept die must score: 2, 3 score nothing in this keep
"""

from __future__ import annotations

from functools import lru_cache
from itertools import pairwise, product
from typing import NamedTuple

from greed_env.rules.config import Rules

__all__ = [
    "EMPTY_CARRY",
    "Carry",
    "IllegalKeep",
    "KeepOption",
    "KeepResult",
    "Part",
    "best_keep_score",
    "counts_of",
    "has_scoring_keep",
    "keep_options",
    "read_keep",
]

FACES = (1, 2, 3, 4, 5, 6)
Counts = tuple[int, int, int, int, int, int]


class IllegalKeep(ValueError):
    """A keep the rules refuse. ``rule`` is a short machine-readable name of the rule."""

    def __init__(self, message: str, rule: str = "keep") -> None:
        super().__init__(message)
        self.rule = rule


class Carry(NamedTuple):
    """What stays working for the rest of a turn (carry-over rules only).

    Attributes:
        sets: dice count of the working set of each face 1..6 (0: no set).
        fills: faces that would fill a small straight made on an earlier keep, sorted.
        pairs: faces of working three pairs that a new pair can turn into four pairs.
    """

    sets: Counts = (0, 0, 0, 0, 0, 0)
    fills: tuple[int, ...] = ()
    pairs: tuple[int, ...] = ()

    def is_empty(self) -> bool:
        return not any(self.sets) and not self.fills and not self.pairs

    def describe(self) -> str:
        bits = [f"set of {f}s ({n})" for f, n in zip(FACES, self.sets, strict=True) if n]
        bits += [f"straight open for a {f}" for f in self.fills]
        if self.pairs:
            bits.append("three pairs " + "-".join(map(str, self.pairs)))
        return ", ".join(bits) if bits else "nothing working"


EMPTY_CARRY = Carry()


class Part(NamedTuple):
    """One scoring component of a keep."""

    name: str
    dice: tuple[int, ...]
    points: int


class KeepResult(NamedTuple):
    """The reading of a keep: points, the carry-over after it, its parts, instant win."""

    score: int
    carry: Carry
    parts: tuple[Part, ...]
    wins: bool = False


class KeepOption(NamedTuple):
    """One legal keep of a roll: a distinct outcome with a canonical tap order."""

    dice: tuple[int, ...]
    taps: tuple[int, ...]
    score: int
    carry: Carry
    parts: tuple[Part, ...]
    wins: bool
    large_first: bool


def counts_of(dice: tuple[int, ...] | list[int]) -> Counts:
    c = [0, 0, 0, 0, 0, 0]
    for d in dice:
        if d not in FACES:
            raise IllegalKeep(f"a die shows 1..6, got {d!r}", rule="face")
        c[d - 1] += 1
    return (c[0], c[1], c[2], c[3], c[4], c[5])


def _dice_of(counts: Counts) -> tuple[int, ...]:
    return tuple(f for f in FACES for _ in range(counts[f - 1]))


# -----------------------------------------------------------------------------------------
# combinations


class _Combo(NamedTuple):
    name: str
    use: Counts
    points: int
    # carry-over made by this combination (tap-order rules): fill face of a small straight,
    # faces of three pairs, or a marker that working three pairs were upgraded.
    fill: int = 0
    pairs: tuple[int, ...] = ()
    upgrade: bool = False


def _vec(**kw: int) -> Counts:
    c = [0] * 6
    for k, v in kw.items():
        c[int(k[1:]) - 1] = v
    return (c[0], c[1], c[2], c[3], c[4], c[5])


def _one_hot(faces: tuple[int, ...], n: int = 1) -> Counts:
    c = [0] * 6
    for f in faces:
        c[f - 1] += n
    return (c[0], c[1], c[2], c[3], c[4], c[5])


def _sequential(faces: tuple[int, ...]) -> bool:
    s = sorted(faces)
    return all(b - a == 1 for a, b in pairwise(s))


def _pairs_value(rules: Rules, faces: tuple[int, ...]) -> int:
    if len(faces) == 3:
        base, seq = rules.three_pairs, rules.three_pairs_sequential
    else:
        base, seq = rules.four_pairs, rules.four_pairs_sequential
    if base <= 0:
        return 0
    return seq if (seq and _sequential(faces)) else base


def _fill_face(rules: Rules, straight: tuple[int, ...]) -> int:
    """The face that turns `straight` into a longer listed straight (0 if none)."""
    s = set(straight)
    for faces, _ in rules.straights:
        extra = set(faces) - s
        if len(faces) == len(straight) + 1 and s <= set(faces) and len(extra) == 1:
            return extra.pop()
    return 0


@lru_cache(maxsize=64)
def _combos(rules: Rules, order_free: bool) -> tuple[_Combo, ...]:
    """Every scoring combination the rules list, for multiset reading.

    `order_free`: True for order-free rules (sets and set combos included); False for the end
    of a tap-order keep, where sets have already locked and at most two of a face are pending.
    """
    out: list[_Combo] = []
    for f in FACES:
        if rules.single_values[f - 1]:
            out.append(_Combo(f"single {f}", _one_hot((f,)), rules.single_values[f - 1]))
        if rules.pair_values[f - 1]:
            out.append(_Combo(f"pair of {f}s", _one_hot((f,), 2), rules.pair_values[f - 1]))
    for faces, pts in rules.straights:
        fill = 0 if order_free else _fill_face(rules, faces)
        label = "-".join(map(str, sorted(faces)))
        out.append(_Combo(f"straight {label}", _one_hot(faces), pts, fill=fill))
    if order_free:
        for f in FACES:
            for n in range(3, rules.num_dice + 1):
                v = rules.set_value(f, n)
                if v:
                    out.append(_Combo(f"{n} {f}s", _one_hot((f,), n), v))
        if rules.four_kind_plus_pair and rules.num_dice >= 6:
            for f in FACES:
                for g in FACES:
                    if f != g:
                        use = list(_one_hot((f,), 4))
                        use[g - 1] += 2
                        out.append(
                            _Combo(f"four {f}s and a pair", tuple(use), rules.four_kind_plus_pair)  # type: ignore[arg-type]
                        )
        if rules.two_triplets and rules.num_dice >= 6:
            for f in FACES:
                for g in FACES:
                    if f < g:
                        use = list(_one_hot((f,), 3))
                        use[g - 1] += 3
                        out.append(_Combo(f"triples {f}s {g}s", tuple(use), rules.two_triplets))  # type: ignore[arg-type]
    from itertools import combinations

    for k in (3, 4):
        if k * 2 > rules.num_dice:
            continue
        for faces in combinations(FACES, k):
            v = _pairs_value(rules, faces)
            if v:
                out.append(
                    _Combo(
                        f"{'three' if k == 3 else 'four'} pairs {'-'.join(map(str, faces))}",
                        _one_hot(faces, 2),
                        v,
                        pairs=faces if (k == 3 and not order_free) else (),
                    )
                )
        if order_free and rules.quad_counts_as_two_pairs and k == 3:
            for f in FACES:
                for g in FACES:
                    if f != g:
                        v = _pairs_value(rules, (f, f, g))
                        if v:
                            use = list(_one_hot((f,), 4))
                            use[g - 1] += 2
                            out.append(_Combo(f"three pairs {f}-{f}-{g}", tuple(use), v))  # type: ignore[arg-type]
    return tuple(out)


class _Reading(NamedTuple):
    score: int
    parts: tuple[Part, ...]
    fills: tuple[int, ...]
    pairs: tuple[int, ...]
    upgraded: bool


@lru_cache(maxsize=1 << 16)
def _best_partition(
    rules: Rules,
    counts: Counts,
    order_free: bool,
    fills: tuple[int, ...],
    pairs: tuple[int, ...],
) -> _Reading | None:
    """Best reading of a multiset: every die in a combination, most points. None if impossible.

    `fills`/`pairs` are the carry-over's open small straights and working three pairs
    (tap-order rules only); the reading may fill the former and upgrade the latter.
    """
    if not any(counts):
        return _Reading(0, (), (), (), False)
    first = next(i for i in range(6) if counts[i])
    candidates: list[_Combo] = [c for c in _combos(rules, order_free) if c.use[first]]
    face = first + 1
    if face in fills and rules.straight_fill_bonus:
        candidates.append(
            _Combo(f"fills straight with {face}", _one_hot((face,)), rules.straight_fill_bonus)
        )
    if pairs and face not in pairs and counts[first] >= 2 and rules.four_pairs:
        gain = _pairs_value(rules, (*pairs, face)) - _pairs_value(rules, pairs)
        if gain > 0:
            candidates.append(
                _Combo(f"pair of {face}s makes four pairs", _one_hot((face,), 2), gain, upgrade=True)
            )
    best: _Reading | None = None
    for combo in candidates:
        if any(u > c for u, c in zip(combo.use, counts, strict=True)):
            continue
        rest = tuple(c - u for c, u in zip(counts, combo.use, strict=True))
        sub_fills = tuple(x for x in fills if not (combo.name.startswith("fills") and x == face))
        sub_pairs = () if combo.upgrade else pairs
        sub = _best_partition(rules, rest, order_free, sub_fills, sub_pairs)  # type: ignore[arg-type]
        if sub is None:
            continue
        if combo.upgrade and sub.upgraded:
            continue
        part = Part(combo.name, _dice_of(combo.use), combo.points)
        cand = _Reading(
            combo.points + sub.score,
            (part, *sub.parts),
            tuple(sorted((*sub.fills, combo.fill) if combo.fill else sub.fills)),
            combo.pairs or sub.pairs,
            combo.upgrade or sub.upgraded,
        )
        if best is None or _reading_key(cand) > _reading_key(best):
            best = cand
    return best


def _reading_key(r: _Reading) -> tuple[int, int, int]:
    # most points; on a tie keep the reading that leaves more working for later keeps
    return (r.score, len(r.fills), len(r.pairs))


def _no_score_message(counts: Counts) -> str:
    dice = _dice_of(counts)
    verb = "scores" if len(dice) == 1 else "score"
    return f"every kept die must score: {', '.join(map(str, dice))} {verb} nothing in this keep"


def _explain_failure(rules: Rules, counts: Counts, order_free: bool, carry: Carry) -> str:
    """Name the fewest dice whose removal leaves a readable keep (for the error message)."""
    subs = sorted(_submultisets(counts), key=sum)
    for removed in subs:
        rest = tuple(c - r for c, r in zip(counts, removed, strict=True))
        if not any(rest):
            break
        if order_free:
            ok = _best_partition(rules, rest, True, (), ()) is not None  # type: ignore[arg-type]
        else:
            ok = _read_taps(rules, _dice_of(rest), carry) is not None  # type: ignore[arg-type]
        if ok:
            return _no_score_message(removed)
    return _no_score_message(counts)


# -----------------------------------------------------------------------------------------
# reading a keep


def read_keep(
    rules: Rules,
    taps: tuple[int, ...] | list[int],
    carry: Carry = EMPTY_CARRY,
    fresh: bool = False,
) -> KeepResult:
    """Read one keep (faces in tap order) against the carry-over.

    Args:
        rules: the rule set.
        taps: the kept faces in the order tapped.
        carry: what is working from earlier keeps this turn (tap-order rules).
        fresh: whether the keep comes from a full fresh roll of ``rules.num_dice`` dice. Only
            then do the roll-level bonuses apply (all dice kept: ``all_dice_bonus``; nothing
            scores: ``nothing_bonus``). The seed's example "6,6,6 then 1,2,3,4,5 ... (1,350
            total)" is the reading alone; kept as all eight of a fresh roll it earns the
            all-eight bonus on top (2,350).

    Raises:
        IllegalKeep: no dice kept, a face outside 1..6, or a kept die that scores nothing.
    """
    taps = tuple(taps)
    if not taps:
        raise IllegalKeep("keep at least one scoring die", rule="empty-keep")
    if len(taps) > rules.num_dice:
        raise IllegalKeep(
            f"cannot keep {len(taps)} dice with {rules.num_dice} in play", rule="too-many-dice"
        )
    counts = counts_of(taps)
    result = _read(rules, taps, counts, carry, fresh)
    if result is None:
        raise IllegalKeep(
            _explain_failure(rules, counts, not rules.carry_over, carry), rule="dead-die"
        )
    return result


def _read(
    rules: Rules, taps: tuple[int, ...], counts: Counts, carry: Carry, fresh: bool
) -> KeepResult | None:
    """The reading of a keep of valid faces, or None if a kept die scores nothing."""
    if rules.carry_over:
        result = _read_taps(rules, taps, carry)
    else:
        reading = _best_partition(rules, counts, True, (), ())
        result = None if reading is None else KeepResult(reading.score, EMPTY_CARRY, reading.parts)
    full = fresh and len(taps) == rules.num_dice
    if result is None:
        if full and rules.nothing_bonus and not has_scoring_keep(rules, tuple(sorted(taps)), carry):
            part = Part("nothing scores", tuple(sorted(taps)), rules.nothing_bonus)
            return KeepResult(rules.nothing_bonus, carry, (part,))
        return None
    if full and rules.all_dice_bonus:
        part = Part(f"all {rules.num_dice} dice", (), rules.all_dice_bonus)
        result = result._replace(
            score=result.score + rules.all_dice_bonus, parts=(*result.parts, part)
        )
    if rules.six_kind_wins and max(counts) >= 6:
        result = result._replace(wins=True)
    return result


def _read_taps(rules: Rules, taps: tuple[int, ...], carry: Carry) -> KeepResult | None:
    sets = list(carry.sets)
    pending = [0, 0, 0, 0, 0, 0]
    score = 0
    parts: list[Part] = []
    large = next((pts for faces, pts in rules.straights if len(faces) == 6), 0)
    for d in taps:
        i = d - 1
        if sets[i]:
            gain = rules.set_value(d, sets[i] + 1) - rules.set_value(d, sets[i])
            if gain <= 0:
                return None
            sets[i] += 1
            score += gain
            parts.append(Part(f"{d} added to set", (d,), gain))
            continue
        pending[i] += 1
        if pending[i] == 3 and rules.triple_values[i]:
            pending[i] = 0
            sets[i] = 3
            value = rules.set_value(d, 3)
            score += value
            parts.append(Part(f"3 {d}s", (d, d, d), value))
        elif large and all(pending):
            pending = [p - 1 for p in pending]
            score += large
            parts.append(Part("straight 1-2-3-4-5-6", FACES, large))
    rest = (pending[0], pending[1], pending[2], pending[3], pending[4], pending[5])
    reading = _best_partition(rules, rest, False, carry.fills, carry.pairs)
    if reading is None:
        return None
    score += reading.score
    parts.extend(reading.parts)
    fills = set(carry.fills)
    for p in reading.parts:
        if p.name.startswith("fills straight"):
            fills.discard(p.dice[0])
    fills.update(reading.fills)
    pairs = () if reading.upgraded else (reading.pairs or carry.pairs)
    new_carry = Carry(
        (sets[0], sets[1], sets[2], sets[3], sets[4], sets[5]), tuple(sorted(fills)), pairs
    )
    return KeepResult(score, new_carry, tuple(parts))


# -----------------------------------------------------------------------------------------
# legal keeps of a roll


def _submultisets(counts: Counts) -> list[Counts]:
    out = []
    for sub in product(*(range(c + 1) for c in counts)):
        if any(sub):
            out.append(sub)
    return out  # type: ignore[return-value]


def _canonical_orders(rules: Rules, sub: Counts, carry: Carry) -> list[tuple[tuple[int, ...], bool]]:
    """Tap orders that reach every distinct reading of the kept multiset `sub`."""
    plain = tuple(
        sorted(_dice_of(sub), key=lambda d: (0 if sub[d - 1] >= 3 else 1, d))
    )  # sets first
    orders = [(plain, False)]
    has_large = any(len(faces) == 6 for faces, _ in rules.straights)
    if has_large and all(sub) and not any(carry.sets):
        rest = list(sub)
        for i in range(6):
            rest[i] -= 1
        orders.append(((*FACES, *_dice_of(tuple(rest))), True))  # type: ignore[arg-type]
    return orders


@lru_cache(maxsize=1 << 17)
def keep_options(
    rules: Rules, roll: tuple[int, ...], carry: Carry = EMPTY_CARRY, fresh: bool = True
) -> tuple[KeepOption, ...]:
    """Every legal keep of `roll` (sorted faces), each distinct outcome once.

    Order-free rules give one option per scoring sub-multiset (its best reading); tap-order
    rules give one option per distinct (dice, score, carry-over) outcome with a canonical tap
    order that produces it. The nothing bonus appears as the keep of the whole roll.
    """
    counts = counts_of(roll)
    opts: list[KeepOption] = []
    seen: set[tuple[object, ...]] = set()
    for sub in _submultisets(counts):
        orders = (
            _canonical_orders(rules, sub, carry)
            if rules.carry_over
            else [(_dice_of(sub), False)]
        )
        for taps, large_first in orders:
            res = _read(rules, taps, sub, carry, fresh and len(roll) == rules.num_dice)
            if res is None:
                continue
            dice = _dice_of(sub)
            key = (dice, res.score, res.carry, res.wins)
            if key in seen:
                continue
            seen.add(key)
            opts.append(KeepOption(dice, taps, res.score, res.carry, res.parts, res.wins, large_first))
    return tuple(opts)


def has_scoring_keep(rules: Rules, roll: tuple[int, ...], carry: Carry = EMPTY_CARRY) -> bool:
    """Whether any die or combination of `roll` scores (the nothing bonus not counted)."""
    return _has_scoring(rules, tuple(sorted(roll)), carry)


@lru_cache(maxsize=1 << 16)
def _has_scoring(rules: Rules, roll: tuple[int, ...], carry: Carry) -> bool:
    counts = counts_of(roll)
    for sub in _submultisets(counts):
        orders = _canonical_orders(rules, sub, carry) if rules.carry_over else [(_dice_of(sub), False)]
        for taps, _ in orders:
            try:
                if rules.carry_over:
                    ok = _read_taps(rules, taps, carry) is not None
                else:
                    ok = _best_partition(rules, sub, True, (), ()) is not None
            except IllegalKeep:
                ok = False
            if ok:
                return True
    return False


def best_keep_score(
    rules: Rules, roll: tuple[int, ...], carry: Carry = EMPTY_CARRY, fresh: bool = True
) -> int:
    """Most points any single keep of `roll` scores (0 if none)."""
    opts = keep_options(rules, tuple(sorted(roll)), carry, fresh)
    return max((o.score for o in opts), default=0)
