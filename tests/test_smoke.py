"""Quick end-to-end check that every preset plays to the end under random play."""

import numpy as np
import pytest

from greed_env.rules import (
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
    preset_names,
    sample_roll,
)


@pytest.mark.parametrize("name", preset_names())
def test_random_game_ends(name: str) -> None:
    r = preset(name)
    rng = np.random.default_rng(1)
    s = new_game(r, 2)
    while not is_over(s):
        if is_chance(s):
            s = apply_roll(r, s, sample_roll(r, s, rng))
        else:
            moves = legal_moves(r, s)
            s = apply(r, s, moves[int(rng.integers(len(moves)))])
    assert abs(sum(s.shares) - 1.0) < 1e-12
