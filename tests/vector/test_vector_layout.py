"""The vector engine's row layout is derived from ``State._fields``: every field has a place,
the columns tile the row, a new field fails the derivation, and states round-trip to rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from greed_env.rules import State, apply, apply_roll, is_chance, legal_moves, new_game, preset
from greed_env.rules import sample_roll as draw_roll
from greed_env.vector import layout
from greed_env.vector.engine import BatchGame


def test_every_state_field_has_a_place_in_the_row() -> None:
    assert tuple(layout.STATE_FIELDS) == State._fields


def test_the_columns_tile_the_row_without_overlap() -> None:
    width = {
        name: w
        for h in layout.STATE_FIELDS.values()
        for name, w in zip(h.names, layout._WIDTH[h.kind], strict=True)
    }
    width.update(dict.fromkeys(layout.EXTRA_COLUMNS, 1))
    covered = [
        c
        for name, w in width.items()
        for c in range(layout.COLUMNS[name], layout.COLUMNS[name] + w)
    ]
    assert sorted(covered) == list(range(layout.N_COLS))
    for name, col in layout.COLUMNS.items():
        assert getattr(layout, name) == col, name


def test_a_state_field_without_a_place_fails_the_derivation() -> None:
    with pytest.raises(ValueError, match="no place for shoe_size"):
        layout.derive_layout((*State._fields, "shoe_size"))
    with pytest.raises(ValueError, match="no State field votes"):
        layout.derive_layout(f for f in State._fields if f != "votes")


def _held_fields(state: State) -> dict[str, Any]:
    held = {
        name: getattr(state, name) for name, h in layout.STATE_FIELDS.items() if h.kind != "absent"
    }
    held["phase"] = int(state.phase)
    held["rules_name"] = state.rules_name
    return held


@pytest.mark.parametrize(
    ("name", "players", "overrides"),
    [
        ("ten_thousand", 3, {"final_round": True}),
        ("farkle", 2, {}),
        ("zilch", 2, {"bust_penalty_after": 2}),
        ("greed", 4, {"exact_target": True, "target": 1500}),
    ],
)
def test_states_round_trip_to_a_row_and_back(
    name: str, players: int, overrides: dict[str, Any]
) -> None:
    rules = preset(name, **overrides)
    game = BatchGame(rules, 1, players)
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(3):
        state = new_game(rules, players)
        for _ in range(150):
            game.load(0, state)
            assert game.fields(0) == _held_fields(state)
            row = game.S[0].copy()
            game.load(0, State(**{**state._asdict(), **game.fields(0)}))
            np.testing.assert_array_equal(game.S[0], row)
            checked += 1
            if is_chance(state):
                state = apply_roll(rules, state, draw_roll(rules, state, rng))
            else:
                moves = legal_moves(rules, state)
                if not moves:
                    break
                state = apply(rules, state, moves[int(rng.integers(len(moves)))])
    assert checked > 150


def test_a_state_the_row_cannot_hold_is_refused() -> None:
    state = new_game(preset("ten_thousand"), 2)
    with pytest.raises(ValueError, match="piggy"):
        layout.encode_state(state._replace(piggy=(0, 300)), -1, 0)


def test_every_kernel_is_cached_under_one_stamp_of_all_kernel_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    from greed_env.vector import jit
    from greed_env.vector import kernels as K

    for kernel in (K.batch_masks, K.step_range, K.decode_roll, K.threshold_action, K.turns_played):
        assert kernel._cache._impl._locator.get_source_stamp() == jit.group_stamp()
    before = jit.group_stamp.__wrapped__()
    constants = layout.constants()
    monkeypatch.setattr(layout, "constants", lambda: {**constants, "C_PHASE": constants["C_PHASE"] + 1})
    assert jit.group_stamp.__wrapped__() != before  # a moved column recompiles every kernel
