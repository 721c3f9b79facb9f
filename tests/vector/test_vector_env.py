"""The vector environments against the single Gymnasium environments, on shared dice.

Every sub-environment of a vector env is paired with a single environment whose generator
hands out exactly the dice codes (and uniforms) the vector engine drew for that row, and with
the same actions both must return identical observations, rewards, episode ends, masks and
infos, across autoresets. Where the streams cannot be shared (a single environment with its own
generator) the outcome distributions are compared instead.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from greed_env.bots.base import RandomBot
from greed_env.envs.duel import DuelEnv
from greed_env.envs.solitaire import SolitaireEnv
from greed_env.rules import Move, Rules, State, legal_moves
from greed_env.vector import DuelVectorEnv, SolitaireVectorEnv
from greed_env.vector import kernels as K
from greed_env.vector.engine import EpisodeBatch
from greed_env.vector.tables import VectorUnsupportedError


class SharedStream:
    """A generator stand-in serving one row's logged draws: dice codes, then uniforms."""

    def __init__(self) -> None:
        self.codes: deque[int] = deque()
        self.uniforms: deque[float] = deque()
        self.seat_next = False

    def integers(self, high: int, *args: Any, **kwargs: Any) -> int:
        if self.seat_next:
            self.seat_next = False
            return int(self.uniforms.popleft() * high)
        return self.codes.popleft() % high


class StreamRandomBot:
    """RandomBot whose choice comes from the vector engine's uniforms (same mapping)."""

    name = "stream-random"

    def __init__(self, stream: SharedStream) -> None:
        self.stream = stream

    def act(self, rules: Rules, state: State, rng: Any) -> Move:
        moves = legal_moves(rules, state)
        return moves[int(self.stream.uniforms.popleft() * len(moves))]


def _feed(batch: EpisodeBatch, streams: list[SharedStream], seen: int) -> int:
    log = batch.draw_log
    assert log is not None
    for kind, counts, draws in log[seen:]:
        start = 0
        for i, c in enumerate(counts.tolist()):
            chunk = draws[start : start + c].tolist()
            start += c
            (streams[i].codes if kind == "codes" else streams[i].uniforms).extend(chunk)
    return len(log)


def _check_pairs(
    vec: Any,
    singles: list[Any],
    streams: list[SharedStream],
    steps: int,
    seed: int,
    seat_draw: bool,
) -> dict[str, int]:
    batch = vec.batch
    batch.draw_log = []
    obs, infos = vec.reset(seed=seed)
    seen = _feed(batch, streams, 0)
    single_obs = []
    for env, stream in zip(singles, streams, strict=True):
        env.unwrapped._np_random = stream
        stream.seat_next = seat_draw
        o, info = env.reset()
        single_obs.append(o)
    np.testing.assert_array_equal(obs, np.stack(single_obs))
    rng = np.random.default_rng(seed)
    stats = {"episodes": 0, "illegal": 0, "truncated": 0}
    for _ in range(steps):
        masks = vec.action_masks()
        np.testing.assert_array_equal(
            masks, np.stack([e.unwrapped.action_masks() for e in singles])
        )
        actions = vec.sample_legal_actions(rng)
        wild = rng.random(len(actions)) < 0.02
        actions[wild] = rng.integers(vec.catalog.n, size=int(wild.sum()))
        obs, rewards, terminated, truncated, infos = vec.step(actions)
        seen = _feed(batch, streams, seen)
        for i, (env, stream) in enumerate(zip(singles, streams, strict=True)):
            o, r, te, tr, info = env.step(int(actions[i]))
            assert (r, te, tr) == (rewards[i], terminated[i], truncated[i]), f"row {i}"
            assert info["illegal_action"] == infos["illegal_action"][i]
            stats["illegal"] += int(info["illegal_action"])
            if te or tr:
                stats["episodes"] += 1
                stats["truncated"] += int(tr)
                assert infos["_final_obs"][i]
                np.testing.assert_array_equal(infos["final_obs"][i], o)
                stream.seat_next = seat_draw
                o, info = env.reset()
            np.testing.assert_array_equal(obs[i], o)
            np.testing.assert_array_equal(infos["action_mask"][i], info["action_mask"])
            if "seat" in info:
                assert infos["seat"][i] == info["seat"]
    return stats


@pytest.mark.parametrize(
    ("rules", "objective", "overrides"),
    [
        ("ten_thousand", "turn", {}),
        ("greed", "turn", {}),
        ("zilch", "turn", {}),
        ("farkle5", "race", {}),
        ("ten_thousand", "race", {"target": 3000}),
        ("greed", "race", {"target": 2000}),
        ("progressive", "turn", {}),
        ("progressive", "race", {"target": 500}),
        ("trippn", "turn", {}),
    ],
)
def test_solitaire_vector_matches_single_envs(
    rules: str, objective: str, overrides: dict[str, Any]
) -> None:
    n = 12
    kw = {
        "rules": rules,
        "objective": objective,
        "rules_overrides": overrides,
        "max_steps": 6,
        "max_turns": 15,
    }
    vec = SolitaireVectorEnv(n, buffer_size=8, **kw)
    singles = [SolitaireEnv(**kw) for _ in range(n)]
    streams = [SharedStream() for _ in range(n)]
    stats = _check_pairs(vec, singles, streams, steps=150, seed=7, seat_draw=False)
    assert stats["episodes"] > 10 and stats["illegal"] > 0


@pytest.mark.parametrize(
    ("rules", "opponent", "players", "seat", "overrides"),
    [
        ("ten_thousand", "threshold", 2, None, {"target": 3000}),
        ("greed", "random", 2, None, {"target": 2000}),
        ("zilch", "threshold:500", 3, 1, {"target": 2500}),
        ("farkle", "random", 2, 0, {"target": 2000}),
        # carry-over: short exact-target games reach finishes, split votes and roll-offs
        ("progressive", "threshold", 2, None, {"target": 300, "horizon_rounds": 6}),
        ("progressive", "random", 3, 1, {"target": 300, "horizon_rounds": 6}),
        ("trippn", "threshold", 2, 0, {"target": 300, "horizon_rounds": 6}),
    ],
)
def test_duel_vector_matches_single_envs(
    rules: str, opponent: str, players: int, seat: int | None, overrides: dict[str, Any]
) -> None:
    n = 10
    vec = DuelVectorEnv(
        n,
        rules=rules,
        opponent=opponent,
        num_players=players,
        seat=seat,
        rules_overrides=overrides,
        buffer_size=8,
    )
    streams = [SharedStream() for _ in range(n)]
    singles = [
        DuelEnv(
            rules=rules,
            rules_overrides=overrides,
            num_players=players,
            seat=seat,
            opponent=StreamRandomBot(s) if opponent == "random" else opponent,
        )
        for s in streams
    ]
    stats = _check_pairs(vec, singles, streams, steps=250, seed=3, seat_draw=seat is None)
    assert stats["episodes"] >= 3


def test_next_step_autoreset_ignores_the_action_after_an_ending() -> None:
    vec = SolitaireVectorEnv(64, objective="turn", autoreset_mode=AutoresetMode.NEXT_STEP)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    vec.reset(seed=1)
    rng = np.random.default_rng(1)
    ended = np.zeros(64, dtype=bool)
    for _ in range(20):
        _, rewards, terminated, truncated, _ = vec.step(vec.sample_legal_actions(rng))
        after = ended
        assert not np.any(rewards[after]) and not np.any(terminated[after])
        assert np.all(vec.action_masks()[terminated] == 1)  # the terminal mask: all ones
        ended = terminated | truncated


def test_same_seed_same_episodes_and_global_rngs_unused() -> None:
    runs = []
    for perturb in (False, True):
        vec = DuelVectorEnv(32, rules="farkle", opponent="random")
        obs, _ = vec.reset(seed=11)
        rng = np.random.default_rng(5)
        trace = [obs]
        for _ in range(40):
            if perturb:
                np.random.seed(123)
                np.random.random(7)
            obs, rewards, *_ = vec.step(vec.sample_legal_actions(rng))
            trace += [obs, rewards]
        runs.append(trace)
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_turn_rewards_match_the_single_env_in_distribution() -> None:
    n_episodes = 1000
    vec = SolitaireVectorEnv(n_episodes, rules="ten_thousand", objective="turn", parallel=False)
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    returns = np.zeros(n_episodes)
    open_rows = np.ones(n_episodes, dtype=bool)
    while open_rows.any():
        _, rewards, terminated, truncated, _ = vec.step(vec.sample_legal_actions(rng))
        returns[open_rows] += rewards[open_rows]
        open_rows &= ~(terminated | truncated)
    env = SolitaireEnv(rules="ten_thousand", objective="turn")
    single = np.zeros(n_episodes)
    for k in range(n_episodes):
        _, info = env.reset(seed=10_000 + k)
        done = False
        while not done:
            a = rng.choice(np.flatnonzero(info["action_mask"]))
            _, r, te, tr, info = env.step(a)
            single[k] += r
            done = te or tr
    se = np.sqrt(returns.var() / n_episodes + single.var() / n_episodes)
    assert abs(returns.mean() - single.mean()) < 4 * se


def test_unsupported_rules_and_opponents_are_refused() -> None:
    with pytest.raises(VectorUnsupportedError, match="hot_dice=False"):
        SolitaireVectorEnv(2, rules="progressive", rules_overrides={"hot_dice": False})
    with pytest.raises(VectorUnsupportedError, match="piggyback"):
        SolitaireVectorEnv(2, rules="farkle", rules_overrides={"piggyback": True})

    class Custom(RandomBot):  # plays otherwise: the kernels' random bot is not it
        def act(self, rules: Any, state: Any, rng: np.random.Generator) -> Any:
            return super().act(rules, state, rng)

    with pytest.raises(VectorUnsupportedError, match="RandomBot, ThresholdBot and the optimal duel bot"):
        DuelVectorEnv(2, opponent=Custom())

    class Renamed(RandomBot):  # the same play under another name: played by the kernels
        pass

    DuelVectorEnv(2, opponent=Renamed(name="renamed")).close()


def test_raise_mode_refuses_masked_actions() -> None:
    from greed_env.rules import IllegalMove

    vec = SolitaireVectorEnv(3, illegal_action="raise")
    vec.reset(seed=0)
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in vec.action_masks()])
    with pytest.raises(IllegalMove):
        vec.step(bad)


def test_reset_mask_restarts_only_the_flagged_rows() -> None:
    vec = DuelVectorEnv(8, rules="farkle", opponent="threshold")
    vec.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(5):
        vec.step(vec.sample_legal_actions(rng))
    before = [vec.batch.fields(i) for i in range(8)]
    flagged = np.zeros(8, dtype=bool)
    flagged[[1, 6]] = True
    _, infos = vec.reset(options={"reset_mask": flagged})
    for i in range(8):
        fields = vec.batch.fields(i)
        if flagged[i]:
            assert vec.batch.E[i, K.E_STEPS] == 0 and fields["rounds"] <= 2
        else:
            assert fields == before[i]
    assert np.all(infos["action_mask"].sum(axis=1) > 0)


def test_thread_pool_gives_the_same_episodes_as_one_thread() -> None:
    runs = []
    for parallel in (False, True):
        vec = DuelVectorEnv(1024, rules="ten_thousand", opponent="random", parallel=parallel)
        assert vec.batch.parallel is parallel
        obs, _ = vec.reset(seed=4)
        rng = np.random.default_rng(4)
        trace = [obs]
        for _ in range(15):
            obs, rewards, terminated, *_ = vec.step(vec.sample_legal_actions(rng))
            trace += [obs, rewards, terminated]
        runs.append(trace)
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_make_vec_uses_the_native_vector_entry_point() -> None:
    import gymnasium as gym

    import greed_env  # noqa: F401

    venv = gym.make_vec(
        "greed_env/Duel-v0", 3, vectorization_mode="vector_entry_point", rules="farkle", opponent="random"
    )
    obs, _ = venv.reset(seed=1)
    assert type(venv).__name__ == "DuelVectorEnv"
    assert obs.shape == (3, 106) and venv.action_masks().shape[0] == 3
