"""The vector engine's optimal duel opponent against the reference ``OptimalBot``.

The numba kernel (:func:`greed_env.vector.kernels.optimal_action`) must choose, in every
position it meets, a move the Python bot values as its best (float32 arrays: ties within
1e-6); evaluations played through it must measure what the Python path measures.
"""

from __future__ import annotations

import numpy as np
import pytest

from greed_env.abilities import Abilities, ObservationPolicy
from greed_env.bots.numpy_backend import NumpyPolicy, PolicyBot
from greed_env.evaluation import evaluate, vector_duel_values
from greed_env.rules import Phase, Rules, State, preset
from greed_env.solver.optimal_bot import OptimalBot
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import OBS_DIM
from greed_env.vector.engine import EpisodeBatch, row_fields
from greed_env.vector.optimal import check_optimal_supported, optimal_arrays
from greed_env.vector.tables import VectorUnsupportedError

VARIANTS = {
    "ten_thousand": preset("ten_thousand", target=2500),  # final round, entry threshold
    "greed": preset("greed", target=2000),  # reroll-all with a bar to beat
    "farkle": preset("farkle", target=3000),  # no final round
}


def _compare(rules: Rules, games: int, steps: int, seed: int) -> dict[str, int]:
    """Step a batch whose learner mixes optimal and random moves; at every learner decision
    compare the kernel's move with OptimalBot's values. Returns counts of what was checked."""
    bot = OptimalBot(rules, "duel")
    eb = EpisodeBatch(rules, games, mode="duel", num_players=2, opponent=bot)
    eb.reset(seed=seed)
    rng = np.random.default_rng(seed)
    catalog = eb.tables.catalog
    seen = {"decisions": 0, "endgame": 0, "keep": 0, "continue": 0, "reroll_all": 0, "differ": 0}
    for _ in range(steps):
        out = eb.optimal_actions()
        for i in range(games):
            state = State(**row_fields(eb.S, i, eb.tables))
            values = dict(bot.move_values(rules, state))
            chosen = catalog.action_to_move(state, int(out[i]))
            best = max(values.values())
            assert values[chosen] >= best - 1e-6, (state, chosen, values)
            seen["decisions"] += 1
            seen["endgame"] += int(state.endgame)
            seen["keep"] += int(state.phase == Phase.KEEP)
            seen["continue"] += int(state.phase == Phase.CONTINUE)
            seen["reroll_all"] += int(chosen.kind == "reroll_all")
            seen["differ"] += int(chosen != bot.act(rules, state, rng))
        actions = out.copy()
        wild = rng.random(games) < 0.15
        actions[wild] = eb.random_actions(rng)[wild]
        eb.step(actions)
    return seen


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_kernel_plays_the_moves_optimalbot_values_best(name: str) -> None:
    seen = _compare(VARIANTS[name], games=48, steps=120, seed=3)
    assert seen["keep"] > 500 and seen["continue"] > 500
    if name == "ten_thousand":
        assert seen["endgame"] > 20  # the final round's contexts were met
    if name == "greed":
        assert seen["reroll_all"] > 0
    assert seen["differ"] <= seen["decisions"] // 1000  # float32 ties only


def test_unsupported_rules_are_named() -> None:
    for name, what in (("progressive", "carry-over"), ("zilch", "bust penalty")):
        with pytest.raises(VectorUnsupportedError, match=what):
            check_optimal_supported(preset(name))
    with pytest.raises(VectorUnsupportedError, match="two seats"):
        EpisodeBatch(VARIANTS["farkle"], 4, mode="duel", num_players=3, opponent="optimal")
    other = OptimalBot(VARIANTS["ten_thousand"], "duel")
    with pytest.raises(VectorUnsupportedError, match="solved for rules"):
        EpisodeBatch(VARIANTS["farkle"], 4, mode="duel", num_players=2, opponent=other)
    with pytest.raises(ValueError, match="opponent is 'optimal'"):
        EpisodeBatch(VARIANTS["farkle"], 4, mode="duel", num_players=2, opponent="random").optimal_actions()


def test_arrays_are_built_once_per_rule_set() -> None:
    rules = VARIANTS["farkle"]
    a = optimal_arrays(rules)
    assert optimal_arrays(rules) is a
    tu = a.target_units
    assert a.index.shape == (tu * tu + 2 * a.deficit_max, 3) and a.deficit_max == 0
    assert a.vals.dtype == np.float32 and a.flags.dtype == np.int8


def test_optimal_against_itself_is_even_in_the_vector_engine() -> None:
    rules = VARIANTS["ten_thousand"]
    bot = OptimalBot(rules, "duel")
    values = vector_duel_values(bot, bot, rules, games=6000, seed=4, batch=512)
    se = values.std() / np.sqrt(values.size)
    assert abs(values.mean() - 0.5) < 3.5 * se
    again = vector_duel_values(bot, bot, rules, games=6000, seed=4, batch=512)
    assert np.array_equal(values, again)
    assert not np.array_equal(values, vector_duel_values(bot, bot, rules, 6000, seed=5, batch=512))


def test_evaluate_measures_the_same_win_rate_either_way() -> None:
    """A weak fixed policy: the numba games and the Python games agree within their CIs."""
    rules = VARIANTS["ten_thousand"]
    n = ActionCatalog(rules).n
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(8, OBS_DIM)).astype(np.float32), np.zeros(8, np.float32))]
    head = (rng.normal(size=(n, 8)).astype(np.float32), np.zeros(n, np.float32))
    policy = NumpyPolicy(layers, head, "relu", meta={"rules_fingerprint": rules.fingerprint})
    bot = PolicyBot(policy, rules, name="tiny")
    fast = evaluate(bot, rules, "duel", episodes=3000, seed=2, regret_episodes=0)
    slow = evaluate(bot, rules, "duel", episodes=1500, seed=2, regret_episodes=0, vector=False)
    gap = abs(fast.score.mean - slow.score.mean)
    assert gap < 1.1 * np.hypot(fast.score.half_width, slow.score.half_width)
    assert fast.score.high < 0.5
    mixed = evaluate(bot, rules, "duel", episodes=300, seed=2, regret_episodes=100)
    assert mixed.score.n == 300 and mixed.decisions > 0  # regret games in Python, the rest in numba


class _FirstLegal:
    """An observation bot that declares its batched greedy policy, as OnnxBot and PPOBot do."""

    name = "first-legal"

    def __init__(self, rules: Rules) -> None:
        self.catalog = ActionCatalog(rules)

    def abilities(self) -> Abilities:
        return Abilities(policy=ObservationPolicy(self.act_batch, self.catalog))

    def act_obs(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.argmax(np.asarray(masks) > 0, axis=1)

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> object:
        raise AssertionError("the vector path acts on observations only")


def test_observation_bots_with_a_batch_method_play_in_the_vector_engine() -> None:
    from greed_env.evaluation import vector_duel_supported

    rules = VARIANTS["farkle"]
    opponent = OptimalBot(rules, "duel")
    bot = _FirstLegal(rules)
    assert vector_duel_supported(bot, opponent, rules)

    class Undeclared:  # the same methods, no declaration: played one position at a time
        name = "undeclared"
        act_obs, act_batch, act = _FirstLegal.act_obs, _FirstLegal.act_batch, _FirstLegal.act

    assert not vector_duel_supported(Undeclared(), opponent, rules)
    values = vector_duel_values(bot, opponent, rules, games=400, seed=1)
    assert values.size == 400 and values.mean() < 0.3


@pytest.mark.parametrize("spec", ["threshold-300", "random", "leader-duel"])
def test_heuristic_and_leader_bots_play_the_duel_in_the_vector_engine(spec: str) -> None:
    """Threshold, random and leader-duel bots play their duel games in numba (the benchmark's
    duel tasks), measuring what the Python games measure."""
    from greed_env.bots import load
    from greed_env.evaluation import vector_duel_act, vector_duel_supported

    rules = VARIANTS["ten_thousand"]
    bot = load(spec, rules)
    assert vector_duel_supported(bot, OptimalBot(rules, "duel"), rules)
    fast = evaluate(spec, rules, "duel", episodes=4000, seed=2, regret_episodes=0)
    slow = evaluate(spec, rules, "duel", episodes=600, seed=2, regret_episodes=0, vector=False)
    assert abs(fast.score.mean - slow.score.mean) < 1.1 * np.hypot(fast.score.half_width, slow.score.half_width)
    again = evaluate(spec, rules, "duel", episodes=500, seed=2, regret_episodes=0)
    assert again.score.mean == evaluate(spec, rules, "duel", episodes=500, seed=2, regret_episodes=0).score.mean
    if spec == "leader-duel":  # with two seats it is the optimal duel bot, move for move
        eb = EpisodeBatch(rules, 64, mode="duel", num_players=2, opponent="optimal")
        eb.reset(seed=5)
        act = vector_duel_act(bot, rules)
        assert act is not None
        catalog = eb.tables.catalog
        values_of = bot.duel_bot.move_values
        rng = np.random.default_rng(0)
        compared = {Phase.KEEP: 0, Phase.CONTINUE: 0}
        for _ in range(30):
            chosen = act(eb)
            assert np.array_equal(chosen, np.maximum(eb.optimal_actions(), 0))
            for i in range(0, 64, 8):
                state = State(**row_fields(eb.S, i, eb.tables))
                kernel = int(chosen[i])
                python = catalog.index_of(bot.act(rules, state, rng), state)  # keeps: by dice and reading
                if kernel != python:  # a tie of the float32 arrays: both moves are best
                    values = {catalog.index_of(m, state): v for m, v in values_of(rules, state)}
                    assert values[kernel] >= values[python] - 1e-6, (state, kernel, python, values)
                compared[state.phase] = compared.get(state.phase, 0) + 1
            eb.step(chosen)
        assert compared[Phase.KEEP] > 50 and compared[Phase.CONTINUE] > 50, compared


def test_a_threshold_bot_with_an_unknown_keep_style_stays_in_python() -> None:
    from greed_env.bots.base import ThresholdBot
    from greed_env.evaluation import vector_duel_act

    assert vector_duel_act(ThresholdBot(keep="odd"), VARIANTS["farkle"]) is None
