"""Exact turn values of bots that sample: each move weighted by the probability the bot declares,
and a bot that samples without declaring it refused (greed_env.evaluation.policy_value)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from greed_env.abilities import Abilities, abilities_of
from greed_env.bots import load
from greed_env.bots.base import RandomBot, ThresholdBot
from greed_env.evaluation import evaluate
from greed_env.evaluation.policy_value import SamplingBotError, turn_value
from greed_env.rules import Rules, State, apply_roll, legal_moves, new_game, preset
from greed_env.rules.game import Move

FARKLE_RANDOM_SIMULATED = 203.69
"""The random bot's mean farkle turn over 300,000 simulated turns (95% half-width 0.86); the
enumeration that took its first draw for its play gave 173.65. 400,000 more turns (seed 7) give
204.30 ± 0.75; the full enumeration (cap 20,000: 675,642 positions) gives 204.114."""


def test_random_bot_is_valued_by_every_move_it_may_play() -> None:
    rules = preset("farkle")
    res = turn_value(RandomBot(), rules, cap_points=2500)  # ~70,000 positions, a few seconds
    assert res.p_cap < 1e-3  # the cap changes the value by less than p_cap * a turn total
    assert abs(res.value - FARKLE_RANDOM_SIMULATED) < 1.0
    assert res.edges > res.positions  # decisions with several moves, each an edge


def test_random_bot_declares_the_distribution_it_draws_from() -> None:
    rules = preset("ten_thousand")
    state = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 5, 2, 2, 3, 4))
    declared = abilities_of(RandomBot()).move_probabilities
    assert declared is not None
    probs = dict(declared(rules, state))
    assert set(probs) == set(legal_moves(rules, state)) and sum(probs.values()) == pytest.approx(1.0)

    class Cautious(RandomBot):  # plays otherwise: declares nothing of RandomBot's
        def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
            return legal_moves(rules, state)[0]

    assert abilities_of(Cautious()).move_probabilities is None


class Coin:
    """A user's bot that samples and declares nothing."""

    name = "coin"

    def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
        moves = legal_moves(rules, state)
        return moves[int(rng.integers(len(moves)))]


def test_a_sampling_bot_without_a_distribution_is_refused() -> None:
    with pytest.raises(SamplingBotError, match=r"'coin' plays .* declares no move probabilities"):
        turn_value(Coin(), preset("farkle"))


def test_evaluate_refuses_it_before_any_episode() -> None:
    started: list[int] = []
    with pytest.raises(ValueError, match="declares no move probabilities"):
        evaluate(Coin(), preset("farkle"), "turn", episodes=50, regret_episodes=0, exact=True, progress=started.append)
    assert started == []


def test_a_deterministic_bot_without_a_declaration_is_valued() -> None:
    class Plain:  # ThresholdBot's play, declaring nothing: asked twice, agrees with itself
        name = "plain"

        def act(self, rules: Rules, state: State, rng: np.random.Generator) -> Move:
            return ThresholdBot(bank_at=300).act(rules, state, rng)

    rules = preset("ten_thousand")
    assert turn_value(Plain(), rules).value == pytest.approx(turn_value(ThresholdBot(bank_at=300), rules).value)


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        (lambda moves: [(m, 0.5 / len(moves)) for m in moves], "summing to 0.5"),
        (lambda moves: [(moves[0], float("nan"))], "probability nan"),
        (lambda moves: [(moves[0], 1.5), (moves[-1], -0.5)], "probability -0.5"),
    ],
)
def test_a_declared_distribution_that_is_not_one_is_refused(pairs: Any, match: str) -> None:
    class Declares(Coin):
        def abilities(self) -> Abilities:
            return Abilities(move_probabilities=lambda rules, state: pairs(legal_moves(rules, state)))

    with pytest.raises(SamplingBotError, match=match):
        turn_value(Declares(), preset("farkle"))


def test_a_sampling_onnx_bot_declares_what_it_samples() -> None:
    import onnxruntime  # noqa: F401  (the dev extra installs it)
    rules = preset("farkle")
    bot = load("farkle/ppo-turn", rules, temperature=2.0)
    declared = abilities_of(bot)
    assert declared.policy is None and declared.move_probabilities is not None
    state = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 5, 5, 2, 3, 1))
    probs = dict(declared.move_probabilities(rules, state))
    assert sum(probs.values()) == pytest.approx(1.0) and len(probs) > 2
    rng = np.random.default_rng(3)
    n = 4000
    seen = Counter(bot.act(rules, state, rng) for _ in range(n))
    for move, p in probs.items():
        assert abs(seen[move] / n - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-3
    greedy = abilities_of(load("farkle/ppo-turn", rules))
    assert greedy.policy is not None and greedy.move_probabilities is None


def test_the_benchmark_samples_the_turns_of_a_bot_it_cannot_enumerate(tmp_path: Path) -> None:
    """The turn task's documented fallback: the sampled share, where before it valued one draw."""
    from greed_env.benchmark.runner import run_task
    from greed_env.benchmark.tasks import get_task

    path = tmp_path / "coin.py"
    path.write_text(
        "from greed_env.rules import legal_moves\n\n\n"
        "class Coin:\n"
        "    name = 'coin'\n\n"
        "    def act(self, rules, state, rng):\n"
        "        moves = legal_moves(rules, state)\n"
        "        return moves[int(rng.integers(len(moves)))]\n"
    )
    result = run_task(get_task("farkle/turn-v1"), f"py:{path}:Coin")
    assert "sampled share" in result.extra["note"] and result.ci95 > 0
    assert abs(result.extra["sampled_mean"] - FARKLE_RANDOM_SIMULATED) < 3 * result.extra["sampled_ci95"]
