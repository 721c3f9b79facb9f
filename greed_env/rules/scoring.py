"""The one reference implementation of scoring.

A *keep* is the ordered tuple of faces the player sets aside from one roll (the tap order).
It is read against the turn's carry-over and returns the points and the new carry-over, or
is refused with :class:`IllegalKeep` naming the rule.

Two readings exist:

* **Order-free rules** (every preset but ``progressive``/``trippn``): the kept dice are read
  as a multiset, choosing the best partition into scoring combinations ("where order cannot
  matter the reading is the best one"). Every kept die must belong to a combination.

* **Tap-order rules** (``carry_over=True``, seed 002): "The order you tap the dice decides how
  the roll is read". The taps are read one at a time and combinations lock as they complete:

  1. a die that fills a straight locked earlier in this keep completes it (1-5 then 6 is the
     large straight);
  2. a die whose face has a *working set* (made earlier this turn or earlier in this keep) is
     *held* for it: it scores the set's value again when the keep ends, unless a large straight
     takes it first ("A complete 1-6 inside one selection is always a large straight, whatever
     order you tap it in"); under ``working_set_claims=False`` a small straight or three pairs
     that it completes as it is tapped (with the pending and the held dice) takes it too;
  3. any other die joins the *pending* dice, and what it completes locks at once: a set at its
     third die, a large straight when the pending and held dice show every face, a small
     straight when the pending dice hold one, three pairs when a third face has two;
  4. when the keep ends, held dice grow their sets and the pending dice are read as a multiset,
     best reading first, into singles, listed pairs, fills of a small straight made on an
     earlier keep, and a new pair that makes working three pairs four pairs.

  Small straights, three pairs and sets made in a keep stay *working* (the carry-over) for the
  rest of the turn; an and-roll clears them unless the rules are Trippn.

  The seed's examples hold: ``6,6,6,1,2,3,4,5`` locks the trip of 6s at its third die, so the
  1-5 left is a small straight (600 + 750 = 1,350); any tap order of 1..6 is a large straight
  (1,500). One set of kept dice can read differently in different orders; the legal-move list
  walks every tap order and offers each distinct outcome once, with a canonical tap order that
  produces it and the strongest combination it locks (:attr:`KeepOption.reading`).

>>> from greed_env.rules.config import preset
>>> read_keep(preset("progressive"), (6, 6, 6, 1, 2, 3, 4, 5)).score
1350
>>> read_keep(preset("progressive"), (3, 1, 6, 2, 5, 4)).score
1500
>>> read_keep(preset("progressive"), (1, 1, 5, 5, 2, 2, 1)).score  # three pairs lock, then a 1
1200
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
    "fill_faces",
    "has_scoring_keep",
    "keep_options",
    "keep_readings",
    "read_keep",
    "tap_reading",
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
    """The reading of a keep: points, the carry-over after it, its parts, and ``wins``: six of
    one face under ``six_kind_wins``. The engine ends the game on the roll that shows them
    (``apply_roll``), before any keep; ``wins`` tells a reader such as ``greed score``."""

    score: int
    carry: Carry
    parts: tuple[Part, ...]
    wins: bool = False


class KeepOption(NamedTuple):
    """One legal keep of a roll: a distinct outcome with a canonical tap order.

    ``reading`` (tap-order rules) names the strongest combination the tap order locks:
    ``"large"`` (a large straight), ``"small"`` (a shorter straight), ``"pairs"`` (three or
    four pairs) or ``""`` (sets and singles only). The distinct readings of the same dice in
    one position differ in it, so (dice, reading) identifies a keep action.
    """

    dice: tuple[int, ...]
    taps: tuple[int, ...]
    score: int
    carry: Carry
    parts: tuple[Part, ...]
    wins: bool
    reading: str = ""

    @property
    def large_first(self) -> bool:
        """Whether this reading locks a large straight."""
        return self.reading == "large"


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
    set_face: int = 0  # the face of a set (n of a kind), 0 for other combinations


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
                    out.append(_Combo(f"{n} {f}s", _one_hot((f,), n), v, set_face=f))
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
    no_set: int = 0,
) -> _Reading | None:
    """Best reading of a multiset: every die in a combination, most points. None if impossible.

    `fills`/`pairs` are the carry-over's open small straights and working three pairs
    (tap-order rules only); the reading may fill the former and upgrade the latter.
    `no_set`: a face already read as a set in this keep, which may not form a second one
    (``rules.repeat_sets`` False).
    """
    if not any(counts):
        return _Reading(0, (), (), (), False)
    first = next(i for i in range(6) if counts[i])
    candidates: list[_Combo] = [
        c for c in _combos(rules, order_free) if c.use[first] and not (no_set and c.set_face == no_set)
    ]
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
        sub_no_set = combo.set_face if (combo.set_face and not rules.repeat_sets) else no_set
        sub = _best_partition(rules, rest, order_free, sub_fills, sub_pairs, sub_no_set)  # type: ignore[arg-type]
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
            ok = bool(_tap_readings(rules, rest, carry))  # type: ignore[arg-type]
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
        if not rules.carry_over:
            raise IllegalKeep(_explain_failure(rules, counts, True, carry), rule="dead-die")
        message = _explain_tap_failure(rules, taps, carry)
        other = _sub_readings(rules, counts, carry, fresh and len(taps) == rules.num_dice)
        if other:
            best = max(other, key=lambda r: r[1].score)
            message += (
                f"; tapped as {','.join(map(str, best[0]))} these dice read {best[1].score}"
            )
        raise IllegalKeep(message, rule="dead-die")
    return result


def _explain_tap_failure(rules: Rules, taps: tuple[int, ...], carry: Carry) -> str:
    """Which dice this tap order leaves scoring nothing (tap-order rules)."""
    t = _tap_start(carry)
    for d in taps:
        t = _tap(rules, t, d)
    dead = [0, 0, 0, 0, 0, 0]
    for i in range(6):  # a held die that cannot grow its set
        d = i + 1
        if t.held[i] and rules.set_value(d, t.sets[i] + 1) <= rules.set_value(d, t.sets[i]):
            dead[i] += t.held[i]
    if _best_partition(rules, t.pending, False, carry.fills, t.pairs) is not None:
        removals: list[Counts] = []
    else:
        removals = sorted(_submultisets(t.pending), key=sum)
    for removed in removals:
        rest = tuple(c - r for c, r in zip(t.pending, removed, strict=True))
        if _best_partition(rules, rest, False, carry.fills, t.pairs) is not None:  # type: ignore[arg-type]
            dead = [a + b for a, b in zip(dead, removed, strict=True)]
            break
    dice = _dice_of(tuple(dead))  # type: ignore[arg-type]
    verb = "scores" if len(dice) == 1 else "score"
    shown = ", ".join(map(str, dice)) if dice else ", ".join(map(str, taps))
    return f"every kept die must score: in this tap order {shown} {verb} nothing"


def _read(
    rules: Rules, taps: tuple[int, ...], counts: Counts, carry: Carry, fresh: bool
) -> KeepResult | None:
    """The reading of a keep of valid faces, or None if a kept die scores nothing."""
    if rules.carry_over:
        result = _read_taps(rules, taps, carry)
    else:
        reading = _best_partition(rules, counts, True, (), ())
        result = None if reading is None else KeepResult(reading.score, EMPTY_CARRY, reading.parts)
    return _roll_level(rules, result, taps, counts, carry, fresh and len(taps) == rules.num_dice)


def _roll_level(
    rules: Rules, result: KeepResult | None, taps: tuple[int, ...], counts: Counts, carry: Carry,
    full: bool,
) -> KeepResult | None:
    """The roll-level part of a keep's reading on top of its combinations ``result`` (None if a
    kept die scores nothing): the nothing bonus and the all-dice bonus (``full``: the keep is a
    whole fresh roll) and the six-of-a-kind win. :func:`_read` and the solver's tabulated keeps
    (``greed_env.solver.keeps``) both apply it, so they cannot disagree on the bonuses."""
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


class _Tapping(NamedTuple):
    """Where the reading of a keep stands after some taps (tap-order rules)."""

    sets: Counts  # dice in each face's working set (earlier keeps and this one)
    pending: Counts  # dice tapped that no combination has claimed yet
    held: Counts  # dice of faces with a working set, waiting to extend it at the end
    score: int
    parts: tuple[Part, ...]
    open_fills: tuple[int, ...]  # fill faces of straights locked in this keep, not yet filled
    pairs: tuple[int, ...]  # faces of working three pairs (the carry's, or locked in this keep)
    reading: str  # the strongest kind locked so far: "", "pairs", "small" or "large"


_READING_RANK = {"": 0, "pairs": 1, "small": 2, "large": 3}


def _strongest(a: str, b: str) -> str:
    return a if _READING_RANK[a] >= _READING_RANK[b] else b


@lru_cache(maxsize=64)
def _straight_table(rules: Rules) -> tuple[tuple[Counts, int, str, int], ...]:
    """Listed straights, longest first: (faces as counts, points, label, fill face)."""
    rows = []
    for faces, pts in sorted(rules.straights, key=lambda e: -len(e[0])):
        label = "straight " + "-".join(map(str, sorted(faces)))
        rows.append((_one_hot(faces), pts, label, _fill_face(rules, faces)))
    return tuple(rows)


def _straight_points(rules: Rules, counts: Counts) -> int:
    for use, pts, _, _ in _straight_table(rules):
        if use == counts:
            return pts
    return 0


def _tap_start(carry: Carry) -> _Tapping:
    zero = (0, 0, 0, 0, 0, 0)
    return _Tapping(carry.sets, zero, zero, 0, (), (), carry.pairs, "")


def _tap(rules: Rules, t: _Tapping, d: int) -> _Tapping:
    """Read one more tapped die ``d``: combinations lock the moment they complete."""
    i = d - 1
    if d in t.open_fills:
        # a straight locked earlier in this keep grows by its fill face: 1-5 then 6 is 1-6
        for use, pts, _label, fill in _straight_table(rules):
            if fill == d and use[i] == 0:
                grown = tuple(u + (k == i) for k, u in enumerate(use))
                gain = _straight_points(rules, grown) - pts  # type: ignore[arg-type]
                if gain > 0:
                    grown_label = "straight " + "-".join(
                        str(f) for f in FACES if grown[f - 1]
                    )
                    return t._replace(
                        score=t.score + gain,
                        parts=(*t.parts, Part(f"{d} completes {grown_label}", (d,), gain)),
                        open_fills=tuple(f for f in t.open_fills if f != d),
                        reading=_strongest(
                            t.reading, "large" if sum(grown) == 6 else "small"
                        ),
                    )
    if t.sets[i]:
        held = _bump(t.held, i, 1)
        t = t._replace(held=held)
        locked = _lock_large(rules, t)
        if locked is None and not rules.working_set_claims:
            locked = _lock_with_held(rules, t, i)
        return locked or t
    pending = _bump(t.pending, i, 1)
    t = t._replace(pending=pending)
    n = pending[i]
    if n == 3 and rules.triple_values[i]:
        value = rules.set_value(d, 3)
        return t._replace(
            sets=_bump(t.sets, i, 3),
            pending=_bump(pending, i, -3),
            score=t.score + value,
            parts=(*t.parts, Part(f"3 {d}s", (d, d, d), value)),
        )
    if n == 1:
        locked = _lock_large(rules, t)
        if locked is not None:
            return locked
        for use, pts, label, fill in _straight_table(rules):
            if sum(use) < 6 and all(p >= u for p, u in zip(pending, use, strict=True)):
                return t._replace(
                    pending=tuple(p - u for p, u in zip(pending, use, strict=True)),  # type: ignore[arg-type]
                    score=t.score + pts,
                    parts=(*t.parts, Part(label, _dice_of(use), pts)),
                    open_fills=(*t.open_fills, fill) if fill else t.open_fills,
                    reading=_strongest(t.reading, "small"),
                )
        return t
    if n == 2:
        faces = tuple(f for f in FACES if pending[f - 1] >= 2)
        if len(faces) == 3 and rules.num_dice >= 2 * 3:
            value = _pairs_value(rules, faces)
            if value:
                used = _one_hot(faces, 2)
                return t._replace(
                    pending=tuple(p - u for p, u in zip(pending, used, strict=True)),  # type: ignore[arg-type]
                    score=t.score + value,
                    parts=(*t.parts, Part(f"three pairs {'-'.join(map(str, faces))}", _dice_of(used), value)),
                    pairs=faces,
                    reading=_strongest(t.reading, "pairs"),
                )
    return t


def _lock_large(rules: Rules, t: _Tapping) -> _Tapping | None:
    """Lock a large straight if the pending and held dice now show every face."""
    large = _straight_table(rules)[0] if rules.straights else None
    if large is None or sum(large[0]) != 6:
        return None
    if not all(p + h for p, h in zip(t.pending, t.held, strict=True)):
        return None
    pending = list(t.pending)
    held = list(t.held)
    for k in range(6):  # a die no set claims goes first; a held die leaves its set's growth
        if pending[k]:
            pending[k] -= 1
        else:
            held[k] -= 1
    return t._replace(
        pending=tuple(pending),  # type: ignore[arg-type]
        held=tuple(held),  # type: ignore[arg-type]
        score=t.score + large[1],
        parts=(*t.parts, Part(large[2], FACES, large[1])),
        reading=_strongest(t.reading, "large"),
    )


def _take(t: _Tapping, use: Counts) -> tuple[Counts, Counts]:
    """Pending and held dice left after ``use`` is taken, pending dice first."""
    pending = list(t.pending)
    held = list(t.held)
    for k in range(6):
        from_pending = min(use[k], pending[k])
        pending[k] -= from_pending
        held[k] -= use[k] - from_pending
    return (
        (pending[0], pending[1], pending[2], pending[3], pending[4], pending[5]),
        (held[0], held[1], held[2], held[3], held[4], held[5]),
    )


def _lock_with_held(rules: Rules, t: _Tapping, i: int) -> _Tapping | None:
    """``working_set_claims=False``: the die of face ``i + 1`` just tapped (and held, its face
    has a working set) locks a small straight or three pairs that the pending dice and the
    held dice hold with it, instead of growing its set; None if it completes neither."""
    pool = tuple(p + h for p, h in zip(t.pending, t.held, strict=True))
    for use, pts, label, fill in _straight_table(rules):
        if sum(use) < 6 and use[i] and all(p >= u for p, u in zip(pool, use, strict=True)):
            pending, held = _take(t, use)
            return t._replace(
                pending=pending,
                held=held,
                score=t.score + pts,
                parts=(*t.parts, Part(label, _dice_of(use), pts)),
                open_fills=(*t.open_fills, fill) if fill else t.open_fills,
                reading=_strongest(t.reading, "small"),
            )
    if pool[i] < 2 or rules.num_dice < 6:
        return None
    others = [f for f in FACES if f != i + 1 and t.pending[f - 1] >= 2]
    others += [f for f in FACES if f != i + 1 and f not in others and pool[f - 1] >= 2]
    if len(others) < 2:
        return None
    faces = tuple(sorted((i + 1, *others[:2])))
    value = _pairs_value(rules, faces)
    if not value:
        return None
    used = _one_hot(faces, 2)
    pending, held = _take(t, used)
    return t._replace(
        pending=pending,
        held=held,
        score=t.score + value,
        parts=(*t.parts, Part(f"three pairs {'-'.join(map(str, faces))}", _dice_of(used), value)),
        pairs=faces,
        reading=_strongest(t.reading, "pairs"),
    )


def _bump(c: Counts, i: int, by: int) -> Counts:
    out = list(c)
    out[i] += by
    return (out[0], out[1], out[2], out[3], out[4], out[5])


def _tap_finish(rules: Rules, t: _Tapping, carry: Carry) -> tuple[KeepResult, str] | None:
    """End of the keep: held dice grow their sets, the rest is read as singles, pairs and fills
    of straights made on an earlier keep. None if a kept die scores nothing."""
    score = t.score
    parts = list(t.parts)
    sets = list(t.sets)
    for i in range(6):
        for _ in range(t.held[i]):
            d = i + 1
            gain = rules.set_value(d, sets[i] + 1) - rules.set_value(d, sets[i])
            if gain <= 0:
                return None
            sets[i] += 1
            score += gain
            parts.append(Part(f"{d} added to set", (d,), gain))
    reading = _best_partition(rules, t.pending, False, carry.fills, t.pairs)
    if reading is None:
        return None
    score += reading.score
    parts.extend(reading.parts)
    fills = set(carry.fills)
    for p in reading.parts:
        if p.name.startswith("fills straight"):
            fills.discard(p.dice[0])
    fills.update(t.open_fills)
    new_carry = Carry(
        (sets[0], sets[1], sets[2], sets[3], sets[4], sets[5]),
        tuple(sorted(fills)),
        () if reading.upgraded else t.pairs,
    )
    return KeepResult(score, new_carry, tuple(parts)), t.reading


def tap_reading(rules: Rules, taps: tuple[int, ...], carry: Carry = EMPTY_CARRY) -> str:
    """The strongest combination ``taps`` lock in tap order (see :attr:`KeepOption.reading`):
    ``"large"``, ``"small"``, ``"pairs"`` or ``""``; always ``""`` under order-free rules.

    >>> from greed_env.rules.config import preset
    >>> [tap_reading(preset("progressive"), t) for t in ((6, 6, 6, 1, 2, 3, 4, 5), (1, 2, 3, 4, 5, 6))]
    ['small', 'large']
    """
    if not rules.carry_over:
        return ""
    t = _tap_start(carry)
    for d in taps:
        t = _tap(rules, t, d)
    return t.reading


def _read_taps(rules: Rules, taps: tuple[int, ...], carry: Carry) -> KeepResult | None:
    return _read_taps_with_reading(rules, taps, carry)[0]


def _read_taps_with_reading(
    rules: Rules, taps: tuple[int, ...], carry: Carry
) -> tuple[KeepResult | None, str]:
    t = _tap_start(carry)
    for d in taps:
        t = _tap(rules, t, d)
    done = _tap_finish(rules, t, carry)
    return (None, "") if done is None else done


@lru_cache(maxsize=1 << 17)
def _tap_readings(
    rules: Rules, sub: Counts, carry: Carry
) -> tuple[tuple[tuple[int, ...], KeepResult, str], ...]:
    """Every distinct reading of the multiset ``sub`` over all its tap orders, each once, as
    (a tap order that gives it, the reading, its kind).

    A depth-first walk over the taps that visits each reading state once; the walk tries faces
    in ascending order, so the tap order kept for a reading is the first in that order.
    """
    found: dict[tuple[int, Carry], tuple[tuple[int, ...], KeepResult, str]] = {}
    seen: set[tuple[Counts, _Tapping]] = set()

    def walk(rest: Counts, t: _Tapping, taps: tuple[int, ...]) -> None:
        key = (rest, t._replace(parts=()))
        if key in seen:
            return
        seen.add(key)
        if not any(rest):
            done = _tap_finish(rules, t, carry)
            if done is not None:
                res, kind = done
                found.setdefault((res.score, res.carry), (taps, res, kind))
            return
        for i in range(6):
            if rest[i]:
                walk(_bump(rest, i, -1), _tap(rules, t, i + 1), (*taps, i + 1))

    walk(sub, _tap_start(carry), ())
    return tuple(_readable_order(rules, carry, taps, res, kind) for taps, res, kind in found.values())


def _readable_order(
    rules: Rules, carry: Carry, taps: tuple[int, ...], res: KeepResult, kind: str
) -> tuple[tuple[int, ...], KeepResult, str]:
    """Prefer the tap order that taps each locked combination together, in the order they
    lock, then the other dice ascending (6,6,6,1,2,3,4,5 rather than 1,6,6,6,2,3,4,5), when
    it gives the same reading."""
    grouped: list[int] = []
    rest = list(counts_of(taps))
    for part in res.parts:
        if part.name.startswith(("3 ", "straight", "three pairs", "pair of")) or " completes " in part.name:
            for d in part.dice:
                if rest[d - 1]:
                    rest[d - 1] -= 1
                    grouped.append(d)
    grouped += _dice_of(tuple(rest))  # type: ignore[arg-type]
    order = tuple(grouped)
    if order != taps:
        again, again_kind = _read_taps_with_reading(rules, order, carry)
        if again is not None and (again.score, again.carry) == (res.score, res.carry):
            return order, again, again_kind
    return taps, res, kind


# -----------------------------------------------------------------------------------------
# legal keeps of a roll


def _submultisets(counts: Counts) -> list[Counts]:
    out = []
    for sub in product(*(range(c + 1) for c in counts)):
        if any(sub):
            out.append(sub)
    return out  # type: ignore[return-value]


_SubReadings = tuple[tuple[tuple[int, ...], KeepResult, str], ...]


@lru_cache(maxsize=1 << 17)
def _sub_readings(rules: Rules, sub: Counts, carry: Carry, fresh: bool) -> _SubReadings:
    """The distinct readings of keeping the multiset ``sub`` (see :func:`keep_options`).

    Under tap-order rules the working sets of faces that ``sub`` does not hold take no part in
    its reading and come out unchanged in every carry-over: the readings are those of the
    carry-over without them (cached once for every such carry-over), with them put back.
    """
    if not rules.carry_over:
        res = _read(rules, _dice_of(sub), sub, carry, fresh)
        return () if res is None else ((_dice_of(sub), res, ""),)
    sets = carry.sets
    if any(n and not k for n, k in zip(sets, sub, strict=True)):
        own = tuple(n if k else 0 for n, k in zip(sets, sub, strict=True))
        readings = _sub_readings(rules, sub, carry._replace(sets=own), fresh)  # type: ignore[arg-type]
        return tuple(
            (taps, res._replace(carry=_sets_outside(res.carry, sets, sub)), kind)
            for taps, res, kind in readings
        )
    return _tap_order_readings(rules, sub, carry, fresh)


def _sets_outside(carry: Carry, sets: Counts, sub: Counts) -> Carry:
    """``carry`` with the working sets of the faces ``sub`` does not hold taken from ``sets``."""
    merged = tuple(n if k else m for n, m, k in zip(carry.sets, sets, sub, strict=True))
    return carry._replace(sets=merged)  # type: ignore[arg-type]


def _tap_order_readings(rules: Rules, sub: Counts, carry: Carry, fresh: bool) -> _SubReadings:
    """:func:`_sub_readings` under tap-order rules, read against the whole ``carry``."""
    out = []
    for taps, _, kind in _tap_readings(rules, sub, carry):
        res = _read(rules, taps, sub, carry, fresh)
        if res is not None:
            out.append((taps, res, kind))
    if not out and fresh:
        res = _read(rules, _dice_of(sub), sub, carry, fresh)  # the nothing bonus
        if res is not None:
            out.append((_dice_of(sub), res, ""))
    return tuple(out)


@lru_cache(maxsize=1 << 17)
def keep_options(
    rules: Rules, roll: tuple[int, ...], carry: Carry = EMPTY_CARRY, fresh: bool = True
) -> tuple[KeepOption, ...]:
    """Every legal keep of `roll` (sorted faces), each distinct outcome once.

    Order-free rules give one option per scoring sub-multiset (its best reading); tap-order
    rules give one option per distinct (dice, score, carry-over) outcome over every tap order,
    with a canonical tap order that produces it and the kind of combination it locks
    (:attr:`KeepOption.reading`). The nothing bonus appears as the keep of the whole roll.
    """
    counts = counts_of(roll)
    full = fresh and len(roll) == rules.num_dice
    opts: list[KeepOption] = []
    for sub in _submultisets(counts):
        for taps, res, kind in _sub_readings(rules, sub, carry, full and sum(sub) == len(roll)):
            opts.append(
                KeepOption(_dice_of(sub), taps, res.score, res.carry, res.parts, res.wins, kind)
            )
    return tuple(opts)


def keep_readings(
    rules: Rules, dice: tuple[int, ...], carry: Carry = EMPTY_CARRY, fresh: bool = False
) -> tuple[KeepOption, ...]:
    """The distinct outcomes of keeping exactly ``dice`` (sorted faces), as in
    :func:`keep_options`; ``fresh``: they are the whole of a fresh full roll."""
    counts = counts_of(dice)
    full = fresh and len(dice) == rules.num_dice
    return tuple(
        KeepOption(_dice_of(counts), taps, res.score, res.carry, res.parts, res.wins, kind)
        for taps, res, kind in _sub_readings(rules, counts, carry, full)
    )


def fill_faces(rules: Rules) -> tuple[int, ...]:
    """The faces that fill a straight made on an earlier keep (tap-order rules), sorted."""
    if not rules.carry_over:
        return ()
    return tuple(sorted({row[3] for row in _straight_table(rules) if row[3]}))


def has_scoring_keep(rules: Rules, roll: tuple[int, ...], carry: Carry = EMPTY_CARRY) -> bool:
    """Whether any die or combination of `roll` scores (the nothing bonus not counted)."""
    return _has_scoring(rules, tuple(sorted(roll)), carry)


@lru_cache(maxsize=1 << 16)
def _has_scoring(rules: Rules, roll: tuple[int, ...], carry: Carry) -> bool:
    counts = counts_of(roll)
    return any(_sub_readings(rules, sub, carry, False) for sub in _submultisets(counts))


def best_keep_score(
    rules: Rules, roll: tuple[int, ...], carry: Carry = EMPTY_CARRY, fresh: bool = True
) -> int:
    """Most points any single keep of `roll` scores (0 if none)."""
    opts = keep_options(rules, tuple(sorted(roll)), carry, fresh)
    return max((o.score for o in opts), default=0)
