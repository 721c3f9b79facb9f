"""Invariants of the solver's tables and solutions.

* the roll tables are exactly what the reference scoring says, roll by roll;
* the value after a keep never decreases in points (the assumption behind keeping only the
  best keep of each size), checked on solved in-turn tables;
* caps do not bind; Newton iterations converge; values lie where they must;
* the bot only plays legal moves and values every one of them.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from itertools import combinations_with_replacement, product

import numpy as np
import pytest

from greed_env.rules import (
    Phase,
    Rules,
    State,
    apply_roll,
    keep_options,
    legal_moves,
    new_game,
    preset,
)
from greed_env.rules.scoring import EMPTY_CARRY
from greed_env.solver import OptimalBot, SolverError, solve
from greed_env.solver.model import needs_full_tables, roll_tables
from greed_env.solver.objectives import turn_arrays
from greed_env.solver.optimal_bot import turn_context

SIX = ["ten_thousand", "greed", "farkle", "farkle5", "zilch"]


@pytest.mark.parametrize("name", SIX)
def test_roll_tables_follow_the_reference_scoring(name: str) -> None:
    rules = preset(name)
    tb = roll_tables(rules)
    for n in range(1, rules.num_dice + 1):
        groups = range(tb.grp_start[n], tb.grp_start[n + 1])
        assert abs(sum(tb.grp_prob[g] for g in groups) + tb.p_bust[n] - 1.0) < 1e-12
        seen: dict[tuple[int, ...], float] = {}
        for roll in combinations_with_replacement(range(1, 7), n):
            best = [-1] * (rules.num_dice + 1)
            for o in keep_options(rules, roll, EMPTY_CARRY, n == rules.num_dice):
                best[len(o.dice)] = max(best[len(o.dice)], o.score // tb.unit)
            seen[tuple(best)] = 1.0
        table_vectors = {tuple(int(x) for x in tb.grp_best[g]) for g in groups}
        assert table_vectors == {v for v in seen if max(v) >= 0}


def test_unit_follows_the_point_values() -> None:
    assert roll_tables(preset("ten_thousand")).unit == 50
    assert roll_tables(preset("ten_thousand", single_values=(100, 0, 0, 0, 50, 60))).unit == 10


def _states(rules: Rules, scores: tuple[int, int], entered: tuple[bool, bool]) -> State:
    s = new_game(rules, 2, first_player=0)
    return s._replace(scores=scores, entered=entered)


@pytest.mark.parametrize("name", SIX)
def test_value_after_a_keep_never_decreases_in_points(name: str) -> None:
    rules = preset(name, target=1000)
    tables = [solve(rules, "turn"), solve(rules, "race"), solve(rules, "entry")]
    tables.append(solve(rules, "duel", floor=-100) if rules.bust_penalty else solve(rules, "duel"))
    positions = [((0, 0), (rules.entry_threshold == 0,) * 2), ((600, 700), (True, True)),
                 ((700, 950), (True, True))]
    worst = 0.0
    for table in tables:
        tb = roll_tables(rules, needs_full_tables(rules, table.objective))
        for scores, entered in positions:
            ctx = turn_context(table, rules, _states(rules, scores, entered))
            c = turn_arrays(rules, tb, ctx.t_cap, ctx.bank_val, ctx.bank_ok, ctx.x, ctx.tail)["c"]
            low = np.diff(c[:, 1:], axis=0).min()
            if tb.full:
                worst = min(worst, low)
            else:
                assert low >= -1e-12, (table.objective, scores, low)
    if rules.final_round or (rules.reroll_all and rules.reroll_all_any_time):
        assert worst < -1e-3, "final round / reroll-all make values non-monotone: full tables"
    elif rules.reroll_all:
        # a reroll of the first roll only: no later reroll reads the points kept, so the value
        # after a keep is monotone again (the full tables stay, and give the same values)
        assert worst >= -1e-12, worst


def test_any_time_reroll_makes_values_non_monotone() -> None:
    """Greed's reroll after later keeps (reroll_all_any_time): more points kept raise the bar of
    a later reroll, so the value after a keep can fall with more points."""
    rules = preset("greed", target=1000, reroll_all_any_time=True)
    table = solve(rules, "turn")
    tb = roll_tables(rules, needs_full_tables(rules, "turn"))
    ctx = turn_context(table, rules, _states(rules, (600, 700), (True, True)))
    c = turn_arrays(rules, tb, ctx.t_cap, ctx.bank_val, ctx.bank_ok, ctx.x, ctx.tail)["c"]
    assert np.diff(c[:, 1:], axis=0).min() < -1e-3


def test_progressive_turn_values_never_decrease_in_points() -> None:
    from greed_env.solver.carry import CarryEvaluator

    # without an exact target (a turn under one is not monotone near it: every keep is kept)
    rules = preset("progressive", exact_target=False, tie_rule="shared", min_players=1)
    ev = CarryEvaluator(rules, solve(rules, "turn"))
    c = ev.context(new_game(rules, 1))["arr"]["c"]
    assert np.diff(c, axis=0).min() >= -1e-9


def test_turn_cap_does_not_bind() -> None:
    for name in SIX:
        t = solve(preset(name), "turn")
        assert t.meta["tail_policy_below_cap"] and t.meta["cap_change_when_doubled"] <= 1e-12
    t = solve(preset("ten_thousand"), "turn", cap=20_000)
    assert not t.meta["tail_policy_below_cap"], "20,000 is too low a cap for ten_thousand"


def test_duel_final_round_cap_is_certified_and_values_are_probabilities() -> None:
    t = solve(preset("ten_thousand", target=2000), "duel")
    assert t.meta["cap_certified"]
    v = t.arrays["win"]
    assert v.min() >= 0.0 and v.max() <= 1.0
    assert v[0, 0] > 0.5, "moving first is an advantage"
    assert np.all(np.diff(v[1:, 1:], axis=1) <= 1e-12), "a richer opponent never helps"


def _ten_thousand_keep_score(kept: tuple[int, ...]) -> int | None:
    """Points of a kept set of dice under seed 001's table, written out here apart from the
    package's scoring: a 1 is 100, a 5 is 50, three of a kind 1,000 for 1s and 100 times the
    face otherwise, each further die of the kind doubling it, 1-6 and three pairs 1,500. None
    when a kept die scores nothing."""
    counts = Counter(kept)
    whole = 0
    if len(kept) == 6 and (sorted(kept) == [1, 2, 3, 4, 5, 6] or sorted(counts.values()) == [2, 2, 2]):
        whole = 1500
    points = 0
    for face, n in counts.items():
        if n >= 3:
            points += (1000 if face == 1 else 100 * face) * 2 ** (n - 3)
        elif face in (1, 5):
            points += n * (100 if face == 1 else 50)
        else:
            return whole or None
    return max(whole, points)


def _ten_thousand_entry_probability(threshold: int) -> float:
    """Best probability of banking ``threshold`` points within one turn of six dice, by
    recursion over (dice to roll, points held): every roll as a multiset with its multinomial
    weight, every sub-multiset of it kept, all dice scored giving six fresh ones. Points only
    help (what works from fewer points works from more), so per number of dice kept only the
    highest-scoring keep counts."""
    best: dict[int, list[tuple[float, dict[int, int]]]] = {}
    for n in range(1, 7):
        best[n] = []
        for roll in combinations_with_replacement(range(1, 7), n):
            counts = Counter(roll)
            weight = math.factorial(n) / math.prod(math.factorial(c) for c in counts.values()) / 6**n
            faces = sorted(counts)
            by_size: dict[int, int] = {}
            for take in product(*(range(counts[f] + 1) for f in faces)):
                kept = tuple(f for f, k in zip(faces, take, strict=True) for _ in range(k))
                score = _ten_thousand_keep_score(kept) if kept else None
                if score is not None and score > by_size.get(len(kept), 0):
                    by_size[len(kept)] = score
            best[n].append((weight, by_size))

    @functools.cache
    def p(dice: int, points: int) -> float:
        if points >= threshold:
            return 1.0
        return sum(
            w * max(p(dice - k if k < dice else 6, points + sc) for k, sc in by_size.items())
            for w, by_size in best[dice]
            if by_size
        )

    return p(6, 0)


def test_published_reference_points() -> None:
    """ten_thousand's entry, 0.3273268968, is derived here independently of the solver (its
    own scoring table and recursion above, a quarter of a second); six dice bust with
    probability 5/216 (1,080 of the 46,656 rolls); Zilch's optimum is Matt Busche's published 620.855 points a turn
    (*Maximizing Expected Scores in the Game of Zilch*, 2010; docs/solver.md)."""
    entry = solve(preset("ten_thousand"), "entry").headline
    assert abs(entry - _ten_thousand_entry_probability(1000)) < 1e-12
    assert abs(entry - 0.3273268968) < 1e-9
    assert abs(roll_tables(preset("ten_thousand")).p_bust[6] - 5 / 216) < 1e-15
    assert abs(solve(preset("zilch"), "turn").headline - 620.855) < 1e-3


def test_unsupported_variants_are_refused() -> None:
    with pytest.raises(SolverError, match="piggyback"):
        solve(preset("farkle", piggyback=True), "turn")
    with pytest.raises(SolverError, match="Trippn"):
        solve(preset("trippn"), "turn")
    with pytest.raises(SolverError, match="objective"):
        solve(preset("farkle"), "chess")


@pytest.mark.parametrize("name", ["ten_thousand", "greed", "progressive"])
def test_bot_values_every_legal_move_and_plays_one(name: str) -> None:
    rules = preset(name, target=600, entry_threshold=min(preset(name).entry_threshold, 600))
    bot = OptimalBot(rules, "duel", solve(rules, "duel"))
    rng = np.random.default_rng(0)
    s = new_game(rules, 2, first_player=0)
    for roll in [(1, 1, 1, 5, 2, 3, 4, 6)[: rules.num_dice], (2, 3, 4, 6, 6, 1, 5, 5)[: rules.num_dice]]:
        st = apply_roll(rules, s, roll)
        assert st.phase == Phase.KEEP
        vals = bot.move_values(rules, st)
        assert [m for m, _ in vals] == legal_moves(rules, st)
        assert all(0.0 <= v <= 1.0 for _, v in vals)
        assert bot.act(rules, st, rng) in legal_moves(rules, st)


def test_the_carry_over_evaluator_keeps_a_bounded_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each score pair met in a duel is an in-turn problem of its own; the evaluator keeps only
    the most recently used ones (unbounded, a Progressive ladder calibration ran out of memory)."""
    from greed_env.solver import carry

    monkeypatch.setattr(carry, "CONTEXT_CACHE_SIZE", 3)
    rules = preset("progressive", target=600)
    bot = OptimalBot(rules, "duel", solve(rules, "duel"))
    s = new_game(rules, 2, first_player=0)
    roll = (1, 1, 1, 5, 2, 3, 4, 6)
    first = bot.move_values(rules, apply_roll(rules, s, roll))
    for a in range(0, 550, 50):
        bot.move_values(rules, apply_roll(rules, s._replace(scores=(a, 0)), roll))
    assert isinstance(bot._carry, carry.CarryEvaluator) and len(bot._carry._cache) == 3
    assert bot.move_values(rules, apply_roll(rules, s, roll)) == first  # recomputed, the same
