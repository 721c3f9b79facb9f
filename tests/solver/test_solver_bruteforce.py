"""The solver against an independent brute force written directly over greed_env.rules.game.

The brute force walks the engine itself (``legal_moves`` / ``apply`` / ``chance_outcomes`` /
``apply_roll``) with memoised expectimax inside a turn and plain value iteration over the
positions at the start of a turn. It knows nothing of turn totals, dice counts, roll groups,
Newton steps or score levels. Configurations are tiny (two or three dice, low targets) so that
it runs in seconds; values must agree to 1e-9.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from greed_env.rules import (
    BANK,
    Phase,
    State,
    apply,
    apply_roll,
    chance_outcomes,
    legal_moves,
    new_game,
    preset,
)
from greed_env.solver import solve

sys.setrecursionlimit(20_000)

TINY = {"num_dice": 3, "straights": (), "three_pairs": 0}


def _key(s: State) -> State:
    return s._replace(event="")


class Expectimax:
    """Best value of a position for ``root``, descending into chance and decision nodes.

    ``leaf(state)`` returns the value of a position where the search stops (or None);
    ``force_bank(state)`` says when a CONTINUE position must bank (the truncation both sides
    share, or a bank that is provably best). Decisions of ``root`` maximise, others minimise.
    """

    def __init__(self, rules: Any, root: int, leaf: Callable[[State], float | None],
                 force_bank: Callable[[State], bool] = lambda s: False,
                 maximise: bool = True, static: dict[State, float] | None = None) -> None:
        self.rules = rules
        self.root = root
        self.leaf = leaf
        self.force_bank = force_bank
        self.sign = 1.0 if maximise else -1.0
        self.memo: dict[State, float] = {}
        self.static = static if static is not None else {}

    def value(self, s: State) -> float:
        k = _key(s)
        memo = self.static if s.endgame else self.memo
        hit = memo.get(k)
        if hit is not None:
            return hit
        v = self.leaf(s)
        if v is None:
            if s.phase in (Phase.ROLL, Phase.ORDER_ROLL):
                v = sum(p * self.value(apply_roll(self.rules, s, roll)) for roll, p in chance_outcomes(self.rules, s))
            else:
                moves = legal_moves(self.rules, s)
                if s.phase == Phase.CONTINUE and BANK in moves and self.force_bank(s):
                    moves = [BANK]
                vals = [self.value(apply(self.rules, s, m)) for m in moves]
                own = s.player == self.root
                v = max(vals, key=lambda z: self.sign * z) if own else min(vals, key=lambda z: self.sign * z)
        memo[k] = v
        return v


def _turn_start(rules: Any, players: int, scores: tuple[int, ...], streaks: tuple[int, ...] | None = None,
                entered: tuple[bool, ...] | None = None) -> State:
    s = new_game(rules, players, first_player=0)
    return s._replace(
        scores=scores,
        entered=entered if entered is not None else tuple(rules.entry_threshold == 0 or x > 0 for x in scores),
        streaks=streaks or (0,) * players,
    )


# ------------------------------------------------------------------------------------------
# turn and entry


def _one_turn(rules: Any, entered: bool, cap: int | None, bust_values: list[float] | None = None,
              streak: int = 0) -> float:
    """Expected points of one turn of seat 0 (bank worth the points, a bust ``bust_values``)."""
    start = _turn_start(rules, 2, (0, 0), (streak, 0), (entered, True))

    def leaf(s: State) -> float | None:
        if s.player == 0 and s.phase != Phase.OVER:
            return None
        if s.scores[0] > 0:
            return float(s.scores[0])
        return bust_values[streak] if bust_values is not None else 0.0

    em = Expectimax(rules, 0, leaf, (lambda s: s.turn_total >= cap) if cap else (lambda s: False))
    return em.value(start)


@pytest.mark.parametrize(
    ("name", "overrides", "cap"),
    [
        ("ten_thousand", {**TINY, "hot_dice": False}, None),
        ("ten_thousand", TINY, 1500),
        ("greed", TINY, None),
        ("farkle", {**TINY, "hot_dice": True}, 1200),
    ],
)
def test_turn_matches_brute_force(name: str, overrides: dict[str, Any], cap: int | None) -> None:
    rules = preset(name, **overrides)
    table = solve(rules, "turn", cap=cap) if cap else solve(rules, "turn")
    assert abs(table.headline - _one_turn(rules, True, cap)) < 1e-9


def test_turn_with_bust_penalty_matches_relative_value_iteration() -> None:
    rules = preset("zilch", **{**TINY, "num_dice": 2}, nothing_bonus=0, min_bank=150)
    cap = 600
    table = solve(rules, "turn", cap=cap)
    k = rules.bust_penalty_after
    h = np.zeros(k)
    rho = 0.0
    for _ in range(200):
        bust = [h[s + 1] if s + 1 < k else -rules.bust_penalty + h[0] for s in range(k)]
        new = np.array([_one_turn(rules, True, cap, bust, s) for s in range(k)])
        rho, prev = new[0], h
        h = new - new[0]
        if np.max(np.abs(h - prev)) < 1e-13:
            break
    assert abs(table.headline - rho) < 1e-9
    assert np.allclose(table.arrays["turn_value"] - table.headline, h, atol=1e-9)


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("ten_thousand", {**TINY, "entry_threshold": 450}),
        ("greed", {**TINY, "entry_threshold": 400}),
        ("farkle", {**TINY, "entry_threshold": 300}),
    ],
)
def test_entry_matches_brute_force(name: str, overrides: dict[str, Any]) -> None:
    rules = preset(name, **overrides)
    start = _turn_start(rules, 2, (0, 0), entered=(False, True))

    def leaf(s: State) -> float | None:
        if s.player != 0 or s.phase == Phase.OVER:
            return 1.0 if s.scores[0] > 0 else 0.0
        return None

    em = Expectimax(rules, 0, leaf, lambda s: True)
    assert abs(solve(rules, "entry").headline - em.value(start)) < 1e-9


# ------------------------------------------------------------------------------------------
# race and duel: value iteration over turn starts, expectimax inside a turn


def _race_brute(rules: Any, floor: int = 0) -> dict[tuple[int, int], float]:
    """Expected turns to the target from every (score, streak) start, by value iteration."""
    solo = rules.replace(min_players=1)
    penalised = bool(rules.bust_penalty_after and rules.bust_penalty)
    unit = 50
    keys = [(b, s) for b in range(rules.target - unit, floor - 1, -unit)
            for s in reversed(range(max(1, rules.bust_penalty_after if rules.bust_penalty else 1)))]
    est = dict.fromkeys(keys, 0.0)
    for _ in range(2000):
        change = 0.0
        for b, st in keys:
            start = _turn_start(solo, 1, (b,), (st,))
            turns0 = start.turns

            def leaf(s: State, turns0: tuple[int, ...] = turns0) -> float | None:
                if s.phase == Phase.OVER:
                    return 1.0
                if s.turns != turns0:
                    return 1.0 + est[(max(s.scores[0], floor), s.streaks[0] if penalised else 0)]
                return None

            def force(s: State) -> bool:
                return s.scores[0] + s.turn_total >= solo.target

            em = Expectimax(solo, 0, leaf, force, maximise=False)
            new = em.value(start)
            change = max(change, abs(new - est[(b, st)]))
            est[(b, st)] = new
        if change < 1e-12:
            return est
    raise AssertionError("value iteration did not converge")


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("ten_thousand", {**TINY, "entry_threshold": 150, "target": 400}),
        ("greed", {**TINY, "entry_threshold": 100, "target": 300}),
        ("farkle", {**TINY, "entry_threshold": 100, "target": 350}),
    ],
)
def test_race_matches_brute_force(name: str, overrides: dict[str, Any]) -> None:
    rules = preset(name, **overrides)
    table = solve(rules, "race")
    brute = _race_brute(rules)
    r = table.arrays["expected_turns"]
    for (b, _), v in brute.items():
        if b == 0 or b >= rules.entry_threshold:
            assert abs(r[b // 50] - v) < 1e-9, (b, r[b // 50], v)


def test_race_with_bust_penalty_and_floor() -> None:
    rules = preset("zilch", **TINY, nothing_bonus=0, min_bank=100, target=250, bust_penalty=100)
    floor = -200
    table = solve(rules, "race", floor=floor)
    brute = _race_brute(rules, floor)
    r = table.arrays["expected_turns"]
    lo = floor // 50
    for (b, st), v in brute.items():
        assert abs(r[b // 50 - lo, st] - v) < 1e-9, (b, st)


def test_progressive_race_matches_brute_force() -> None:
    rules = preset("progressive", num_dice=3, straights=(), target=250)
    table = solve(rules, "race")
    brute = _race_brute(rules)
    r = table.arrays["expected_turns"]
    for (b, _), v in brute.items():
        if np.isfinite(r[b // 50]):
            assert abs(r[b // 50] - v) < 1e-9, (b, r[b // 50], v)


def _duel_brute(rules: Any, margin: int, floor: int = 0) -> dict[tuple[Any, ...], float]:
    """P(player to move wins) at every turn start (mover first), by value iteration."""
    unit = 50
    k = rules.bust_penalty_after if rules.bust_penalty else 1
    scores = range(floor, rules.target, unit)
    keys = sorted(((a, b, sa, sb) for a in scores for b in scores for sa in range(k) for sb in range(k)),
                  key=lambda x: (-(x[0] + x[1]), -(x[2] + x[3])))
    est = dict.fromkeys(keys, 0.5)
    static: dict[State, float] = {}

    def key_of(s: State) -> tuple[Any, ...]:
        p = s.player
        if k == 1:
            return (max(s.scores[p], floor), max(s.scores[1 - p], floor), 0, 0)
        return (max(s.scores[p], floor), max(s.scores[1 - p], floor), s.streaks[p], s.streaks[1 - p])

    for _ in range(3000):
        change = 0.0
        for key in keys:
            a, b, sa, sb = key
            start = _turn_start(rules, 2, (a, b), (sa, sb))

            def leaf(s: State) -> float | None:
                if s.phase == Phase.OVER:
                    return s.shares[0]
                if s.player != 0 and not s.endgame and s.phase in (Phase.ROLL, Phase.START):
                    return 1.0 - est[key_of(s)]
                return None

            def force(s: State) -> bool:
                p = s.player
                if s.endgame:
                    top = max(s.scores[q] for q in range(2) if q != p)
                    return s.scores[p] + s.turn_total > top
                return s.scores[p] + s.turn_total >= rules.target + (margin if rules.final_round else 0)

            em = Expectimax(rules, 0, leaf, force, static=static)
            new = em.value(start)
            change = max(change, abs(new - est[key]))
            est[key] = new
        if change < 1e-12:
            return est
    raise AssertionError("value iteration did not converge")


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("ten_thousand", {**TINY, "num_dice": 2, "entry_threshold": 100, "target": 150}),
        ("greed", {**TINY, "num_dice": 2, "entry_threshold": 100, "target": 250}),
    ],
)
def test_duel_matches_brute_force(name: str, overrides: dict[str, Any]) -> None:
    rules = preset(name, **overrides)
    table = solve(rules, "duel")
    v = table.arrays["win"]
    margin = table.meta.get("max_margin_points", 0) + 200
    brute = _duel_brute(rules, margin=margin)
    for (a, b, _, _), val in brute.items():
        if (a == 0 or a >= rules.entry_threshold) and (b == 0 or b >= rules.entry_threshold):
            assert abs(v[a // 50, b // 50] - val) < 1e-9, (a, b, v[a // 50, b // 50], val)


def test_duel_with_bust_penalty_matches_brute_force() -> None:
    rules = preset("zilch", **{**TINY, "num_dice": 2}, nothing_bonus=0, min_bank=50, target=150,
                   bust_penalty=50, bust_penalty_after=2)
    floor = -50
    table = solve(rules, "duel", floor=floor)
    v = table.arrays["win"]
    lo = floor // 50
    brute = _duel_brute(rules, margin=0, floor=floor)
    for (a, b, sa, sb), val in brute.items():
        assert abs(v[a // 50 - lo, b // 50 - lo, sa, sb] - val) < 1e-9, (a, b, sa, sb)


def test_progressive_duel_matches_brute_force() -> None:
    rules = preset("progressive", num_dice=3, straights=(), target=150, tie_rule="shared")
    table = solve(rules, "duel")
    v = table.arrays["win"]
    brute = _duel_brute(rules, margin=0)
    for (a, b, _, _), val in brute.items():
        assert abs(v[a // 50, b // 50] - val) < 1e-9, (a, b, v[a // 50, b // 50], val)
