"""Quick end-to-end check that every preset plays to the end under random play."""

from collections.abc import Callable

import pytest

from greed_env.rules import is_over, preset, preset_names


@pytest.mark.parametrize("name", preset_names())
def test_random_game_ends(name: str, random_game: Callable) -> None:  # type: ignore[type-arg]
    _, s = random_game(preset(name), 2, 1)
    assert is_over(s)
    assert abs(sum(s.shares) - 1.0) < 1e-12
