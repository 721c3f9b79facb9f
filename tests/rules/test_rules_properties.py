"""Property tests of the rules engine (hypothesis): invariants that hold in every position.

Positions are reached by seeded random play from a fresh game (sometimes from scores near the
target, to reach endgames), so a failing example shrinks to a preset, a seed and a step count.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable
from math import sqrt

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.rules import (
    EMPTY_CARRY,
    Carry,
    GameRecord,
    IllegalKeep,
    IllegalMove,
    Move,
    Phase,
    Recorder,
    Rules,
    State,
    apply,
    apply_roll,
    chance_outcomes,
    current_keep_options,
    is_chance,
    is_over,
    keep_options,
    legal_moves,
    new_game,
    preset,
    preset_names,
    read_keep,
    replay,
    returns,
    sample_roll,
)

PRESETS = preset_names()
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random_step(rules: Rules, s: State, rng: np.random.Generator) -> State:
    if is_chance(s):
        return apply_roll(rules, s, sample_roll(rules, s, rng))
    moves = legal_moves(rules, s)
    return apply(rules, s, moves[int(rng.integers(len(moves)))])


@st.composite
def positions(
    draw: Callable[..., object], keep_phase: bool = False
) -> tuple[Rules, State, np.random.Generator]:
    """A decision node of some preset reached by seeded random play (a KEEP node if asked)."""
    name = draw(st.sampled_from(PRESETS))
    rules = preset(name)
    n = draw(st.integers(rules.min_players, min(rules.max_players, 4)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    s = new_game(rules, n)
    if draw(st.booleans()):
        near = tuple(int(x) * 50 for x in rng.integers(170, 200, size=n))
        s = s._replace(scores=near, entered=(True,) * n)
    for _ in range(draw(st.integers(0, 120))):
        if is_over(s):
            break
        s = _random_step(rules, s, rng)
    for _ in range(400):
        if is_over(s) or (not is_chance(s) and (s.phase == Phase.KEEP or not keep_phase)):
            break
        s = _random_step(rules, s, rng)
    assume(not is_over(s) and not is_chance(s) and (s.phase == Phase.KEEP or not keep_phase))
    return rules, s, rng


# ------------------------------------------------------------------------------------------
# chance


@pytest.mark.parametrize("k", range(1, 9))
def test_chance_probabilities_sum_to_one_and_match_counting(k: int) -> None:
    """chance_outcomes lists distinct sorted rolls with exact probabilities; for k <= 4 they
    equal a brute-force count over all 6**k ordered rolls."""
    rules = preset("progressive")
    s = new_game(rules, 1)._replace(dice=k)
    outcomes = chance_outcomes(rules, s)
    assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-12
    rolls = [roll for roll, _ in outcomes]
    assert len(rolls) == len(set(rolls)) and all(list(r) == sorted(r) for r in rolls)
    assert all(len(r) == k for r in rolls)
    if k <= 4:
        counts = Counter(tuple(sorted(t)) for t in itertools.product(range(1, 7), repeat=k))
        assert {r: p for r, p in outcomes} == pytest.approx(
            {r: c / 6**k for r, c in counts.items()}, abs=1e-15
        )


@pytest.mark.parametrize("k", [1, 2, 3])
def test_sample_roll_follows_chance_outcomes(k: int) -> None:
    """sample_roll draws from the distribution chance_outcomes states (chi-square bound)."""
    rules = preset("ten_thousand")
    s = new_game(rules, 2, first_player=0)._replace(dice=k)
    probs = dict(chance_outcomes(rules, s))
    rng = np.random.default_rng(12345)
    draws = 20_000
    seen = Counter(sample_roll(rules, s, rng) for _ in range(draws))
    assert set(seen) <= set(probs)
    chi2 = sum((seen.get(r, 0) - draws * p) ** 2 / (draws * p) for r, p in probs.items())
    df = len(probs) - 1
    assert chi2 < df + 6 * sqrt(2 * df)


# ------------------------------------------------------------------------------------------
# moves


@FAST
@given(positions())
def test_every_listed_move_applies(pos: tuple[Rules, State, np.random.Generator]) -> None:
    rules, s, _ = pos
    moves = legal_moves(rules, s)
    assert moves, "a decision node always has a legal move"
    assert len(moves) == len(set(moves)), "each move is listed once"
    snapshot = tuple(s)
    for move in moves:
        after = apply(rules, s, move)
        assert isinstance(after, State)
    assert tuple(s) == snapshot


@FAST
@given(positions(keep_phase=True), st.data())
def test_unlisted_keeps_are_refused(
    pos: tuple[Rules, State, np.random.Generator], data: st.DataObject
) -> None:
    """A keep (sub-multiset of the roll, in any tap order) applies exactly when a listed keep
    of the same dice has the same outcome; otherwise it raises IllegalMove, state untouched."""
    rules, s, _ = pos
    picks = data.draw(st.lists(st.booleans(), min_size=len(s.roll), max_size=len(s.roll)))
    sub = [f for f, keep in zip(s.roll, picks, strict=True) if keep]
    taps = tuple(data.draw(st.permutations(sub)))
    listed = {
        (o.score, o.carry, o.wins)
        for o in current_keep_options(rules, s)
        if o.dice == tuple(sorted(taps))
    }
    try:
        res = read_keep(rules, taps, s.carry, s.fresh and len(s.roll) == rules.num_dice)
        outcome = (res.score, res.carry, res.wins)
    except IllegalKeep:
        outcome = None
    snapshot = tuple(s)
    if outcome is not None and outcome in listed:
        after = apply(rules, s, Move("keep", taps))
        assert after.phase != Phase.CONTINUE or after.turn_total == s.turn_total + res.score
    else:
        if outcome is not None:
            assert 0 <= res.score <= s.bar, f"legal keep {taps} of {s.roll} is not listed"
        with pytest.raises(IllegalMove):
            apply(rules, s, Move("keep", taps))
    assert tuple(s) == snapshot


@FAST
@given(positions(keep_phase=True), st.lists(st.integers(1, 6), min_size=1, max_size=8))
def test_keeps_of_dice_not_showing_are_refused(
    pos: tuple[Rules, State, np.random.Generator], taps: list[int]
) -> None:
    rules, s, _ = pos
    shown = Counter(s.roll)
    assume(any(c > shown[f] for f, c in Counter(taps).items()))
    with pytest.raises(IllegalMove) as info:
        apply(rules, s, Move("keep", tuple(taps)))
    assert info.value.rule in ("not-showing", "too-many-dice")


@FAST
@given(positions(keep_phase=True))
def test_dice_are_conserved(pos: tuple[Rules, State, np.random.Generator]) -> None:
    """dice kept + dice left == dice in hand; keeping every die gives a full set back (hot
    dice) or none (without hot dice)."""
    rules, s, _ = pos
    assert s.dice == len(s.roll)
    for move in legal_moves(rules, s):
        if move.kind != "keep":
            continue
        after = apply(rules, s, move)
        if after.phase != Phase.CONTINUE or after.player != s.player:
            continue
        left = s.dice - len(move.taps)
        if left == 0 and rules.hot_dice:
            assert after.dice == rules.num_dice and after.fresh
        else:
            assert after.dice == left


# ------------------------------------------------------------------------------------------
# tap order (002): every reading reachable, each listed once


@st.composite
def carries(draw: Callable[..., object]) -> Carry:
    """A carry-over reachable in a progressive turn: up to two earlier keeps of random rolls."""
    rules = preset("progressive")
    carry = EMPTY_CARRY
    for _ in range(draw(st.integers(0, 2))):
        roll = tuple(sorted(draw(st.lists(st.integers(1, 6), min_size=1, max_size=8))))
        opts = keep_options(rules, roll, carry, False)
        if not opts:
            break
        carry = opts[draw(st.integers(0, len(opts) - 1))].carry
    return carry


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=8).map(lambda x: tuple(sorted(x))),
    carries(),
    st.booleans(),
    st.sampled_from(["progressive", "trippn"]),
)
def test_every_tap_order_reading_is_listed_once(
    dice: tuple[int, ...], carry: Carry, fresh: bool, name: str
) -> None:
    """Brute force over ALL tap orders of the kept dice: the set of (score, carry) outcomes
    equals the outcomes keep_options lists for exactly that multiset, each listed once."""
    rules = preset(name)
    by_order: set[tuple[int, Carry]] = set()
    for taps in set(itertools.permutations(dice)):
        try:
            res = read_keep(rules, taps, carry, fresh)
        except IllegalKeep:
            continue
        by_order.add((res.score, res.carry))
    listed = [o for o in keep_options(rules, dice, carry, fresh) if o.dice == dice]
    assert {(o.score, o.carry) for o in listed} == by_order
    assert len(listed) == len(by_order)
    for o in listed:
        res = read_keep(rules, o.taps, carry, fresh)
        assert (res.score, res.carry) == (o.score, o.carry)


# ------------------------------------------------------------------------------------------
# whole games


def _bots(rng: np.random.Generator, n: int) -> list[RandomBot | ThresholdBot]:
    out: list[RandomBot | ThresholdBot] = []
    for _ in range(n):
        if rng.integers(2):
            out.append(RandomBot())
        else:
            out.append(ThresholdBot(bank_at=int(rng.integers(1, 20)) * 50))
    return out


def _play(rules: Rules, n: int, seed: int, perturb: bool = False) -> list[State]:
    rng = np.random.default_rng(seed)
    bots = _bots(rng, n)
    s = new_game(rules, n)
    states = [s]
    for step in range(200_000):
        if is_over(s):
            return states
        if perturb:
            random.seed(step * 7919)
            np.random.seed(step % 2**32)
            random.random()
            np.random.random()
        if is_chance(s):
            s = apply_roll(rules, s, sample_roll(rules, s, rng))
        else:
            s = apply(rules, s, bots[s.player].act(rules, s, rng))
        states.append(s)
    raise AssertionError("game did not end")


@st.composite
def games(draw: Callable[..., object], horizon: int = 0) -> tuple[Rules, int, int]:
    """A preset (with ``horizon_rounds`` cut to ``horizon`` if given), a seat count, a seed."""
    rules = preset(draw(st.sampled_from(PRESETS)))
    if horizon:
        rules = rules.replace(horizon_rounds=horizon)
    n = draw(st.integers(rules.min_players, min(8, rules.max_players)))
    return rules, n, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=12, deadline=None)
@given(games())
def test_random_games_end_and_shares_sum_to_one(game: tuple[Rules, int, int]) -> None:
    rules, n, seed = game
    end = _play(rules, n, seed)[-1]
    assert is_over(end) and end.winners
    assert abs(sum(end.shares) - 1.0) < 1e-12 and min(end.shares) >= 0.0
    assert all(abs(end.shares[w] - 1.0 / len(end.winners)) < 1e-12 for w in end.winners)
    assert abs(sum(returns(end))) < 1e-9


@pytest.mark.parametrize("name", PRESETS)
def test_every_player_count_plays_to_the_end(name: str) -> None:
    """Every seat count the preset allows plays to the end (a short horizon keeps it quick;
    a game stopped by the horizon must end as well)."""
    rules = preset(name)
    short = rules.replace(horizon_rounds=12)
    for n in range(rules.min_players, rules.max_players + 1):
        end = _play(short, n, seed=1000 + n)[-1]
        assert abs(sum(end.shares) - 1.0) < 1e-12
    with pytest.raises(IllegalMove):
        new_game(rules, rules.max_players + 1)
    if rules.min_players > 1:
        with pytest.raises(IllegalMove):
            new_game(rules, rules.min_players - 1)


@settings(max_examples=8, deadline=None)
@given(games(horizon=15))
def test_replaying_a_record_reproduces_the_game(game: tuple[Rules, int, int]) -> None:
    rules, n, seed = game
    rng = np.random.default_rng(seed)
    bots = _bots(rng, n)
    rec = Recorder(rules, n, seed=seed)
    while not is_over(rec.state):
        if is_chance(rec.state):
            rec.sample(rng)
        else:
            rec.move(bots[rec.state.player].act(rules, rec.state, rng))
    assert replay(rec.record()) == rec.states
    through_json = GameRecord.from_dict(json.loads(json.dumps(rec.record().to_dict())))
    assert through_json.rules == rules
    assert replay(through_json) == rec.states


@settings(max_examples=8, deadline=None)
@given(games(horizon=15))
def test_global_rngs_change_nothing(game: tuple[Rules, int, int]) -> None:
    """Reseeding and drawing from `random` and `np.random` between steps changes nothing in a
    game driven by an explicitly passed Generator."""
    rules, n, seed = game
    state = random.getstate()
    np_state = np.random.get_state()
    try:
        assert _play(rules, n, seed, perturb=True) == _play(rules, n, seed)
    finally:
        random.setstate(state)
        np.random.set_state(np_state)
