"""Progressive and Trippn (carry-over, eight dice, exact target) in the vector engine, against
the reference engine on the same dice codes and actions.

* every dice code of every number of dice decodes in the kernels to the roll that
  :func:`~greed_env.rules.sample_roll` draws from it;
* game level: :class:`~greed_env.vector.engine.BatchGame` rows and reference states receive
  the same codes and actions (random legal ones, steered toward exact finishes, plus a few
  random ids that may be illegal); after every transition each row must equal its reference
  state in every field the engine models (carry-over, finishers, split votes, roll-off order,
  scores and rounds included), with identical masks and observations from every seat, the
  kernels' opponents must choose as ``ThresholdBot`` and ``RandomBot`` do, and loading the
  reference state into a row (``BatchGame.load``) must give the row play reached. The
  low-target games must reach the exact finish, the split vote, the roll-off order choice
  and roll-offs;
* Trippn: its tables grow while games meet new (dice state, roll) pairs, alike on numba's
  thread pool, and survive pickling; its roll-off lock-in is played from a loaded position;
* environment level: the Solitaire (turn, race) and Duel vector envs against the single
  environments on shared dice are rows of the parametrized tests in ``tests/vector/test_vector_env.py``.
"""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any

import numpy as np
import pytest
from test_vector_equivalence import CodeRng

from greed_env.bots.base import ThresholdBot
from greed_env.envs.conventions import forfeit
from greed_env.rules import (
    Carry,
    Move,
    Phase,
    Rules,
    State,
    apply,
    apply_roll,
    current_keep_options,
    keep_options,
    legal_moves,
    new_game,
    preset,
    sample_roll,
)
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import encode_observation
from greed_env.vector import DuelVectorEnv
from greed_env.vector import kernels as K
from greed_env.vector.engine import BatchGame
from greed_env.vector.tables import (
    VectorTables,
    VectorUnsupportedError,
    _build,
    check_vector_supported,
    vector_tables,
)

THRESHOLD_MOST = ThresholdBot(bank_at=500, keep="keep-most", min_dice=3)
TURN_PHASES = (Phase.ROLL, Phase.KEEP, Phase.CONTINUE)


def reference_fields(s: State) -> dict[str, Any]:
    """Every field of the reference state but ``piggy``, ``taken_over`` (no piggyback in the
    vector engine), ``shares`` and ``event``."""
    skip = {"piggy", "taken_over", "shares", "event"}
    out = {k: v for k, v in s._asdict().items() if k not in skip}
    out["phase"] = int(s.phase)
    return out


def test_carry_over_without_hot_dice_is_refused() -> None:
    with pytest.raises(VectorUnsupportedError, match="hot_dice=False"):
        check_vector_supported(preset("trippn", hot_dice=False))
    check_vector_supported(preset("progressive"))
    check_vector_supported(preset("trippn"))


def test_every_dice_code_decodes_like_sample_roll() -> None:
    rules = preset("progressive")
    tables = vector_tables(rules)
    solo = new_game(rules, 1)
    rng = CodeRng(0)
    for k in range(1, rules.num_dice + 1):
        codes = np.arange(6**k, dtype=np.int64)
        got = np.empty_like(codes)
        K.batch_decode(codes, k, tables.tab, got)
        state = solo._replace(phase=Phase.ROLL, dice=k)
        want = np.empty_like(codes)
        for code in range(6**k):
            rng.code = code
            want[code] = tables.roll_id(sample_roll(rules, state, rng))
        np.testing.assert_array_equal(got, want, err_msg=f"{k} dice")
    # a code of the full set serves a roll of fewer dice through its low digits
    high = np.array([6**8 - 1, 6**8 - 2, 12345678], dtype=np.int64)
    got = np.empty_like(high)
    K.batch_decode(high, 3, tables.tab, got)
    assert [tables.roll_of(int(r)) for r in got] == [
        sample_roll(rules, solo._replace(phase=Phase.ROLL, dice=3), CodeRng(int(c)))
        for c in high
    ]


def test_dice_states_come_from_the_solver_search() -> None:
    tables = vector_tables("progressive")
    assert tables.n_dice_states == 204
    assert tables.max_options <= 27
    for d, (dice, _carry) in enumerate(tables.dice_states):
        lo, hi = tables.roll_start[dice], tables.roll_start[dice + 1]
        for r in (lo, hi - 1):
            for _, _, used, _, nxt in tables.options(d, int(r)):
                left = dice - used
                assert tables.dice_states[nxt][0] == (left or tables.num_dice)


def _steered(rules: Rules, s: State, catalog: ActionCatalog, rng: np.random.Generator) -> int:
    """Keep the most dice that do not go past the target (toward exact finishes), or -1."""
    if s.phase != Phase.KEEP or s.in_rolloff:
        return -1
    room = rules.target - s.scores[s.player] - s.turn_total
    fits = [o for o in current_keep_options(rules, s) if o.score <= room]
    if not fits:
        return -1
    most = max(len(o.dice) for o in fits)
    picks = [o for o in fits if len(o.dice) == most]
    return catalog.index_of(picks[int(rng.integers(len(picks)))])


def _check_bots(
    rules: Rules,
    game: BatchGame,
    ref: list[State],
    decide: np.ndarray,
    catalog: ActionCatalog,
    rng: np.random.Generator,
) -> None:
    """The kernels' opponents choose as ``ThresholdBot`` (two settings) and as ``RandomBot``
    (``moves[int(u * len(moves))]``) would in every decision row."""
    tab = game.tables.tab
    for bot, style in ((ThresholdBot(), K.KEEP_MAX_SCORE), (THRESHOLD_MOST, K.KEEP_MOST)):
        got = np.empty(game.num_games, dtype=np.int64)
        K.batch_threshold_actions(game.S, decide, bot.bank_at, style, bot.min_dice, tab, got)
        for i in np.flatnonzero(decide):
            assert got[i] == _action_of(catalog, ref[i], bot.act(rules, ref[i], rng)), i
    u = rng.random(game.num_games)
    got = np.empty(game.num_games, dtype=np.int64)
    K.random_actions(0, game.num_games, game.S, u, tab, got)
    for i in np.flatnonzero(decide):
        moves = legal_moves(rules, ref[i])
        assert got[i] == _action_of(catalog, ref[i], moves[int(u[i] * len(moves))]), i


def _action_of(catalog: ActionCatalog, s: State, move: Move) -> int:
    return next(a for a, m in catalog.legal(s)[1].items() if m == move)


def _play_both(
    rules: Rules,
    players: int,
    n_games: int,
    n_steps: int,
    seed: int,
    steer: float,
    roll_on: float = 0.0,
) -> Counter[str]:
    """Play both engines in lockstep; count what the games reached. ``steer``: how often a
    keep is :func:`_steered`; ``roll_on``: how often the roll is taken when it is legal."""
    game = BatchGame(rules, n_games, players)
    scratch = BatchGame(rules, 1, players)
    catalog = ActionCatalog(rules)
    rng = np.random.default_rng(seed)
    bot_rng = np.random.default_rng(seed + 1000)
    ref = [new_game(rules, players) for _ in range(n_games)]
    high = 6**rules.num_dice
    seen: Counter[str] = Counter()
    carries = set()
    roll = catalog.index_of(("roll", ()))
    for _ in range(n_steps):
        over = np.array([s.phase == Phase.OVER for s in ref])
        if over.any():
            for i in np.flatnonzero(over):
                seen["games over"] += 1
                seen["won by going out"] += int(bool(ref[i].finishers))
                seen["roll-off finish"] += int(bool(ref[i].rolloff))
                seen["split pot"] += int(len(ref[i].winners) > 1 and not ref[i].rolloff)
                seen["roll-off shared"] += int(len(ref[i].winners) > 1 and bool(ref[i].rolloff))
                seen["locked in"] += int("locked in" in ref[i].event)
                ref[i] = new_game(rules, players)
            game.new_games(rows=over)
        chance = game.chance_rows()
        codes = rng.integers(0, high, size=n_games)
        for i in np.flatnonzero(chance):
            seen["rolls for nothing"] += int(ref[i].for_nothing)
            ref[i] = apply_roll(rules, ref[i], sample_roll(rules, ref[i], CodeRng(codes[i])))
        game.apply_rolls(codes, chance)
        masks = game.masks()
        decide = game.decision_rows()
        _check_bots(rules, game, ref, decide, catalog, bot_rng)
        actions = np.zeros(n_games, dtype=np.int64)
        for i in np.flatnonzero(decide):
            s = ref[i]
            seen[Phase(s.phase).name] += 1
            seen["roll-off decisions"] += int(s.in_rolloff)
            seen["roll-off round 2+"] += int(s.in_rolloff and s.rolloff_round > 1)
            seen["carry-over working"] += int(s.phase == Phase.KEEP and not s.carry.is_empty())
            seen["full set, carry-over working"] += int(
                s.phase == Phase.KEEP and s.dice == rules.num_dice and not s.carry.is_empty()
            )
            carries.add((s.dice, s.carry))
            legal = np.flatnonzero(masks[i])
            steered = _steered(rules, s, catalog, rng) if rng.random() < steer else -1
            if rng.random() < 0.03:
                actions[i] = rng.integers(catalog.n)
            elif steered >= 0:
                actions[i] = steered
            elif roll_on and masks[i, roll] and rng.random() < roll_on:
                actions[i] = roll
            else:
                actions[i] = legal[rng.integers(len(legal))]
            move = catalog.legal(s)[1].get(int(actions[i]))
            seen["illegal"] += int(move is None)
            ref[i] = apply(rules, s, move) if move is not None else forfeit(rules, s)
        illegal = game.apply_actions(actions, decide)
        for i in np.flatnonzero(decide):
            assert bool(illegal[i]) == (masks[i, actions[i]] == 0)
        masks = game.masks()
        for seat in range(players):
            obs = game.observations(np.full(n_games, seat))
            for i in range(n_games):
                np.testing.assert_array_equal(obs[i], encode_observation(rules, ref[i], seat))
        for i in range(n_games):
            assert game.fields(i) == reference_fields(ref[i]), f"row {i}"
            np.testing.assert_array_equal(masks[i], catalog.mask(ref[i]))
            scratch.load(0, ref[i])
            same = np.ones(K.N_COLS, dtype=bool)
            if ref[i].carry.is_empty() and ref[i].phase not in TURN_PHASES:
                same[K.C_DSTATE] = False
            np.testing.assert_array_equal(scratch.S[0, same], game.S[i, same])
        seen["steps"] += 1
    seen["dice states"] = len(carries)
    return seen


def test_progressive_rows_follow_the_reference_through_long_turns() -> None:
    rules = preset("progressive")
    seen = _play_both(rules, 2, n_games=16, n_steps=240, seed=1, steer=0.0, roll_on=0.9)
    assert seen["carry-over working"] > 500 and seen["dice states"] > 60, seen
    assert seen["illegal"] > 10, seen
    assert seen["rolls for nothing"] == 0 or seen["CONTINUE"] > 0


@pytest.mark.parametrize(
    ("overrides", "players", "seed"),
    [
        ({"target": 500, "rolloff_horizon": 2}, 5, 5),
        ({"target": 600, "rolloff_horizon": 1}, 3, 3),
    ],
)
def test_progressive_endgames_follow_the_reference(
    overrides: dict[str, Any], players: int, seed: int
) -> None:
    rules = preset("progressive", **overrides)
    seen = _play_both(rules, players, n_games=24, n_steps=260, seed=seed, steer=0.7)
    for phase in ("KEEP", "CONTINUE", "SPLIT", "ORDER_CHOICE"):
        assert seen[phase] > 0, (phase, seen)
    assert seen["won by going out"] > 5 and seen["roll-off decisions"] > 0, seen
    assert seen["rolls for nothing"] > 50 and seen["roll-off finish"] > 0, seen


@pytest.mark.parametrize(("horizon", "reached"), [(2, "roll-off round 2+"), (1, "roll-off shared")])
def test_order_free_exact_target_follows_the_reference(horizon: int, reached: str) -> None:
    rules = preset(
        "ten_thousand",
        exact_target=True,
        tie_rule="split_vote",
        target=500,
        entry_threshold=0,
        rolloff_horizon=horizon,
    )
    seen = _play_both(rules, 3, n_games=24, n_steps=300, seed=4, steer=0.7)
    assert seen["SPLIT"] > 0 and seen["ORDER_CHOICE"] > 0 and seen["roll-off finish"] > 0, seen
    assert seen[reached] > 0 and seen["split pot"] > 0, seen


def test_trippn_tables_grow_while_rows_follow_the_reference() -> None:
    rules = preset("trippn")
    seen = _play_both(rules, 2, n_games=12, n_steps=200, seed=9, steer=0.0, roll_on=0.9)
    assert seen["full set, carry-over working"] > 20 and seen["dice states"] > 100, seen
    assert vector_tables(rules).n_dice_states > 204, "Trippn's states go past Progressive's"


def test_trippn_roll_off_lock_in_wins_like_the_reference() -> None:
    """Sets of 2s, 3s and 4s working in a roll-off: a third 6 locks the player in."""
    rules = preset("trippn")
    catalog = ActionCatalog(rules)
    start = new_game(rules, 2)._replace(
        phase=Phase.ROLL,
        player=1,
        scores=(10_000, 10_000),
        turns=(9, 9),
        rounds=16,
        endgame=True,
        finishers=(0, 1),
        rolloff=(0, 1),
        rolloff_scores=(1_200,),
        rolloff_round=1,
        turn_total=900,
        dice=3,
        fresh=False,
        entry_met=True,
        carry=Carry(sets=(0, 3, 3, 3, 0, 0)),
    )
    game = BatchGame(rules, 1, 2)
    game.load(0, start)
    assert game.fields(0) == reference_fields(start)
    six_six_six = 5 + 5 * 6 + 5 * 36
    s = apply_roll(rules, start, sample_roll(rules, start, CodeRng(six_six_six)))
    game.apply_rolls(np.array([six_six_six]))
    assert s.roll == (6, 6, 6) and game.fields(0) == reference_fields(s)
    np.testing.assert_array_equal(game.masks()[0], catalog.mask(s))
    keep = catalog.index_of(("keep", (6, 6, 6)))
    s = apply(rules, s, catalog.legal(s)[1][keep])
    game.apply_actions(np.array([keep]))
    assert s.phase == Phase.OVER and s.winners == (1,) and "locked in" in s.event
    assert game.fields(0) == reference_fields(s)
    for seat in (0, 1):
        obs = game.observations(np.array([seat]))[0]
        np.testing.assert_array_equal(obs, encode_observation(rules, s, seat))


def test_trippn_endgames_follow_the_reference() -> None:
    rules = preset("trippn", target=500, rolloff_horizon=2)
    seen = _play_both(rules, 5, n_games=24, n_steps=260, seed=5, steer=0.7)
    assert seen["won by going out"] > 5 and seen["rolls for nothing"] > 50, seen
    assert seen["SPLIT"] > 0 and seen["roll-off decisions"] > 0, seen


def test_order_free_eight_dice_follow_the_reference() -> None:
    rules = preset("farkle", num_dice=8, target=3000, all_dice_bonus=1000)
    seen = _play_both(rules, 2, n_games=12, n_steps=150, seed=8, steer=0.0, roll_on=0.5)
    assert seen["KEEP"] > 500 and seen["games over"] > 0, seen


def test_trippn_grows_alike_on_the_thread_pool() -> None:
    """Games stopping for rows on several threads at once give the same episodes."""
    runs = []
    for parallel in (False, True):
        _build.cache_clear()  # each run grows its own table from nothing
        vec = DuelVectorEnv(1024, rules="trippn", opponent="random", parallel=parallel)
        assert vec.batch.parallel is parallel
        obs, _ = vec.reset(seed=2)
        rng = np.random.default_rng(2)
        trace = [obs]
        for _ in range(20):
            obs, rewards, terminated, _, infos = vec.step(vec.sample_legal_actions(rng))
            trace += [obs, rewards, terminated, infos["action_mask"]]
        runs.append(trace)
    _build.cache_clear()
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_torn_row_requests_are_dropped() -> None:
    """Two threads writing one request slot can leave a (dice state, roll id) pair that names
    no row; growing skips it (the game asks again when it resumes) and builds the rest."""
    tables = VectorTables(preset("trippn"))
    lo, hi = tables._block(0)
    req = tables._views["req"]
    req[0] = (0, hi)  # roll id of another dice count
    req[1] = (len(tables.dice_states), lo)  # dice state not known yet
    req[2] = (0, lo + 7)
    tables.tab[K.T_NREQ] = 3
    rows = tables.n_rows
    assert tables.grow()
    assert tables.n_rows == rows + 1 and tables.tab[K.T_NREQ] == 0


def test_growing_tables_pickle_and_keep_growing() -> None:
    tables = VectorTables(preset("trippn"))
    first = tables.options(0, 2000)
    copy = pickle.loads(pickle.dumps(tables))
    assert copy.options(0, 2000) == first and copy.catalog.n == tables.catalog.n
    rows = copy.n_rows
    assert copy.options(0, 2500) == tables.options(0, 2500)
    assert copy.n_rows == rows + 1


def test_rounds_game_ties_go_to_the_split_vote_like_the_reference() -> None:
    """A tie for the highest score after the last round goes to the vote under split_vote."""
    rules = preset(
        "ten_thousand",
        exact_target=True,
        tie_rule="split_vote",
        target=5000,
        entry_threshold=0,
        rounds=1,
        rolloff_horizon=2,
    )
    seen = _play_both(rules, 3, n_games=24, n_steps=300, seed=5, steer=0.7)
    assert seen["SPLIT"] > 0 and seen["ORDER_CHOICE"] > 0, seen


def test_trippn_rows_give_both_readings_of_a_fill_keep_their_own_action() -> None:
    """With a straight open for a 1 and eight dice to roll (Trippn's and-rolls keep it), the
    roll 1,1,2,2,3,3,4,4 keeps all eight as four pairs or as three pairs with a 1 filling the
    straight: the kernels' option row holds both, under two action ids, each with its points
    (eight dice of an and-roll: the all-eight bonus too) and its own next dice state."""
    tables = vector_tables("trippn")
    carry = Carry((0,) * 6, (1,), ())
    roll = (1, 1, 2, 2, 3, 3, 4, 4)
    rows = tables.options(tables.state_id(8, carry), tables.roll_id(roll))
    full = {a: (pts, nxt) for a, pts, kept, _win, nxt in rows if kept == 8}
    want = {
        tables.catalog.index_of(o): o.score
        for o in keep_options(tables.rules, roll, carry, True)
        if len(o.dice) == 8
    }
    assert len(full) == len(want) == 2
    assert {a: pts for a, (pts, _) in full.items()} == want == {2303: 3000, 3693: 3100}
    assert len({nxt for _, nxt in full.values()}) == 2
    assert sorted(tables.catalog.entries[a].fills for a in full) == [False, True]
