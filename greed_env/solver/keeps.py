"""Keep options of tap-order (carry-over) rules, tabulated per carry-over from the reference.

:func:`greed_env.rules.scoring.keep_options` reads a roll by walking every tap order of every
sub-multiset of the roll against the carry-over, afresh for each (roll, carry-over): an
eight-dice roll costs 12-70 ms, an eight-dice dice state (1,287 rolls) about 15 s. The walk's
work is shared far more widely than that: the reading states reached by tapping a multiset
``M`` in some order are the same in every sub-multiset and every roll that contains ``M``.

:class:`CarryKeeps` tabulates them once per carry-over, forward over the tapped multisets by
size: ``T(M) = {tap(t, f) : t in T(M - f), f in M}`` with the reference's own tap step
(``scoring._tap``), starting from ``scoring._tap_start(carry)``; each reading state keeps the
first tap order (in lexicographic order) that reaches it. Finishing every state of ``T(sub)``
with ``scoring._tap_finish`` gives the distinct (points, carry-over) readings of ``sub``, in
the order the reference's depth-first walk finds them (first tap order first), and the
reference's roll-level bonuses (``scoring._roll_level``) go on top for a whole fresh roll.
Nothing here reads a face or a combination: the rules stay in :mod:`greed_env.rules.scoring`,
and ``tests/solver/test_carry_keeps.py`` checks the options against ``keep_options`` on random
(roll, carry-over) pairs of Progressive and Trippn.

An eight-dice carry-over tabulates in about 0.2 s (some 10,000 taps: one or two reading states
per multiset); ``scripts/bench_carry_keeps.py`` measures the speedup per dice state.
"""

from __future__ import annotations

from functools import lru_cache

from greed_env.rules.config import Rules
from greed_env.rules.scoring import (
    Carry,
    Counts,
    KeepResult,
    _dice_of,
    _roll_level,
    _submultisets,
    _tap,
    _tap_finish,
    _tap_start,
    _Tapping,
    counts_of,
)

__all__ = ["CarryKeeps", "carry_keeps", "roll_subsets"]

Reading = tuple[int, Carry]
"""(points, carry-over after the keep) of one reading of a kept multiset."""

_ZERO: Counts = (0, 0, 0, 0, 0, 0)


@lru_cache(maxsize=1 << 14)
def roll_subsets(roll: tuple[int, ...]) -> tuple[tuple[Counts, int], ...]:
    """The non-empty sub-multisets of ``roll`` (sorted faces) with their sizes, in the order
    :func:`~greed_env.rules.scoring.keep_options` lists them."""
    return tuple((sub, sum(sub)) for sub in _submultisets(counts_of(roll)))


class CarryKeeps:
    """The keep options of every roll against one carry-over (tap-order rules).

    ``readings(sub)``: the distinct (points, carry-over) readings of keeping the multiset
    ``sub`` (counts per face), without roll-level bonuses, in the reference's order. Multisets
    are tabulated up to ``dice`` dice and grown on demand.
    """

    def __init__(self, rules: Rules, carry: Carry) -> None:
        if not rules.carry_over:
            raise ValueError(f"{rules.name}: tabulated keeps are for tap-order (carry-over) rules")
        self.rules = rules
        self.carry = carry
        self.dice = 0
        self._layer: dict[Counts, dict[_Tapping, tuple[int, ...]]] = {_ZERO: {_tap_start(carry): ()}}
        self._readings: dict[Counts, tuple[Reading, ...]] = {}
        self._carries: dict[Carry, Carry] = {}

    def grow(self, dice: int) -> None:
        """Tabulate every multiset of up to ``dice`` dice."""
        rules = self.rules
        while self.dice < dice:
            nxt: dict[Counts, dict[_Tapping, tuple[int, ...]]] = {}
            for m, states in self._layer.items():
                for t, taps in states.items():
                    for i in range(6):
                        grown = (*m[:i], m[i] + 1, *m[i + 1:])
                        t2 = _tap(rules, t, i + 1)._replace(parts=())
                        order = (*taps, i + 1)
                        row = nxt.setdefault(grown, {})  # type: ignore[arg-type]
                        old = row.get(t2)
                        if old is None or order < old:
                            row[t2] = order
            for m, states in nxt.items():
                self._readings[m] = self._finish(states)
            self._layer = nxt
            self.dice += 1

    def _finish(self, states: dict[_Tapping, tuple[int, ...]]) -> tuple[Reading, ...]:
        first: dict[Reading, tuple[int, ...]] = {}
        for t, taps in states.items():
            done = _tap_finish(self.rules, t, self.carry)
            if done is None:
                continue
            res = done[0]
            key = (res.score, self._carries.setdefault(res.carry, res.carry))
            old = first.get(key)
            if old is None or taps < old:
                first[key] = taps
        return tuple(sorted(first, key=first.__getitem__))

    def readings(self, sub: Counts) -> tuple[Reading, ...]:
        """Distinct (points, carry-over) readings of keeping ``sub``; () if a die scores nothing."""
        if sum(sub) > self.dice:
            self.grow(sum(sub))
        return self._readings[sub]

    def roll(
        self, roll: tuple[int, ...], fresh: bool
    ) -> tuple[list[tuple[Counts, int, int, Carry]], bool]:
        """(options, scoring) of a sorted ``roll``: every keep as (kept multiset, dice kept,
        points, carry-over after it), in the order and with the points of
        ``keep_options(rules, roll, carry, fresh)``, and whether any keep scores
        (``has_scoring_keep``)."""
        rules = self.rules
        if len(roll) > self.dice:
            self.grow(len(roll))
        full = fresh and len(roll) == rules.num_dice
        table = self._readings
        out: list[tuple[Counts, int, int, Carry]] = []
        scoring = False
        for sub, k in roll_subsets(roll):
            found = table[sub]
            if found:
                scoring = True
            if full and k == len(roll):
                found = self._whole_roll(sub, found)
            out.extend((sub, k, score, c) for score, c in found)
        return out, scoring

    def _whole_roll(self, sub: Counts, found: tuple[Reading, ...]) -> tuple[Reading, ...]:
        """The readings of keeping a whole fresh roll, with the reference's roll-level bonuses."""
        dice = _dice_of(sub)
        if not found:
            res = _roll_level(self.rules, None, dice, sub, self.carry, True)
            return () if res is None else ((res.score, res.carry),)
        out = []
        for score, c in found:
            res = _roll_level(self.rules, KeepResult(score, c, ()), dice, sub, self.carry, True)
            if res is not None:
                out.append((res.score, res.carry))
        return tuple(out)


@lru_cache(maxsize=128)
def carry_keeps(rules: Rules, carry: Carry) -> CarryKeeps:
    """The :class:`CarryKeeps` of ``carry``, cached for the 128 carry-overs used last (an
    eight-dice table holds 3,003 multisets, about a megabyte)."""
    return CarryKeeps(rules, carry)
