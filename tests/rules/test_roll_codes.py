"""``sample_roll``'s one draw read as dice: every code of up to eight dice gives the sorted
base-6 digits of its low ``k`` places, as the canonical roll object ``apply_roll`` accepts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from greed_env.rules import Phase, apply_roll, new_game, preset, sample_roll
from greed_env.rules.game import _CANONICAL_ROLLS


class _CodeRng:
    """The next ``integers(high)`` is ``code % high``."""

    def __init__(self, code: int) -> None:
        self.code = code

    def integers(self, high: int, *args: Any, **kwargs: Any) -> int:
        return self.code % high


def _digits(code: int, k: int) -> tuple[int, ...]:
    return tuple(sorted(code // 6**p % 6 + 1 for p in range(k)))


@pytest.mark.parametrize("k", range(1, 9))
def test_codes_read_as_sorted_base6_digits(k: int) -> None:
    rules = preset("progressive")
    state = new_game(rules, 2, first_player=0)._replace(phase=Phase.ROLL, dice=k)
    codes = range(6**k) if k <= 7 else np.random.default_rng(8).integers(0, 6**8, 60_000).tolist()
    for code in codes:
        roll = sample_roll(rules, state, _CodeRng(code))
        assert roll == _digits(code, k)
        assert roll is _CANONICAL_ROLLS[roll]
    # a generator drawing past 6**k (a code of the full set) is read through its low k places
    assert sample_roll(rules, state, _CodeRng(6**8 + 6**k - 1)) == (6,) * k


def test_a_sampled_roll_applies() -> None:
    rules = preset("progressive")
    state = new_game(rules, 2, first_player=0)
    rng = np.random.default_rng(1)
    roll = sample_roll(rules, state, rng)
    assert apply_roll(rules, state, roll).roll is roll
