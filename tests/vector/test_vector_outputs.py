"""The arrays a vector env returns: written straight by the kernels, never changed afterwards.

A step's observations and masks are written into an array that nothing outside the batch
references when the step starts, and returned without a copy; the random policy picks from the
legal actions the step listed. These tests hold a caller's arrays across later steps (fewer and
more than the batch's output slots, one thread and the pool) and check they never change, that
the episodes are those of a caller who keeps nothing, and that the listed pick is the walk's.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from greed_env.vector import SolitaireVectorEnv
from greed_env.vector import engine as engine_module
from greed_env.vector import kernels as K
from greed_env.vector.engine import OUTPUT_SLOTS


def _run(threads: int, keep: int, steps: int = 24, mask_in_obs: bool = False) -> list[np.ndarray]:
    """Step a batch at random, holding the last ``keep`` steps' arrays; returns a snapshot of
    every step's results taken when it was returned, after checking the held arrays against
    their snapshots at every step."""
    vec = SolitaireVectorEnv(
        1536, rules="farkle", objective="race", parallel=threads, mask_in_obs=mask_in_obs
    )
    obs, infos = vec.reset(seed=3)
    rng = np.random.default_rng(3)
    held: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    trace = []
    for _ in range(steps):
        obs, rewards, terminated, truncated, infos = vec.step(vec.sample_legal_actions(rng))
        vector = obs["observation"] if mask_in_obs else obs
        mask = infos["action_mask"]
        if mask_in_obs:
            assert obs["action_mask"] is mask
        held.append((vector, mask, vector.copy(), mask.copy()))
        held = held[len(held) - keep :] if keep else []
        for kept, kept_mask, vector_then, mask_then in held:
            np.testing.assert_array_equal(kept, vector_then)
            np.testing.assert_array_equal(kept_mask, mask_then)
        trace += [vector.copy(), rewards, terminated, truncated, mask.copy()]
    return trace


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("keep", [0, 1, OUTPUT_SLOTS - 1, OUTPUT_SLOTS + 2])
def test_arrays_a_caller_keeps_never_change(threads: int, keep: int) -> None:
    want = _run(1, 0)
    for a, b in zip(want, _run(threads, keep), strict=True):
        np.testing.assert_array_equal(a, b)


def test_dict_observations_are_kept_too() -> None:
    want = _run(1, 0, mask_in_obs=True)
    for a, b in zip(want, _run(2, OUTPUT_SLOTS + 1, mask_in_obs=True), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_partial_reset_keeps_the_other_rows_and_the_callers_arrays() -> None:
    vec = SolitaireVectorEnv(64, rules="ten_thousand", objective="turn")
    first, infos = vec.reset(seed=1)
    first_then, mask_then = first.copy(), infos["action_mask"].copy()
    rows = np.zeros(64, dtype=np.bool_)
    rows[::3] = True
    again, infos_again = vec.reset(options={"reset_mask": rows})
    np.testing.assert_array_equal(first, first_then)
    np.testing.assert_array_equal(infos["action_mask"], mask_then)
    np.testing.assert_array_equal(again[~rows], first_then[~rows])
    np.testing.assert_array_equal(infos_again["action_mask"][~rows], mask_then[~rows])


@pytest.mark.parametrize(
    ("rules", "listed"), [("ten_thousand", engine_module.LISTED_ACTIONS), ("progressive", 2)]
)
def test_the_listed_pick_is_the_walks_pick(
    rules: str, listed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sample_legal_actions`` draws from the actions the step listed; with room for only
    two (Progressive keeps many more) the rest are walked: the same action as the walk of
    every legal action (RandomBot's ``moves[int(u * len(moves))]``) either way."""
    monkeypatch.setattr(engine_module, "LISTED_ACTIONS", listed)
    vec = SolitaireVectorEnv(256, rules=rules, objective="race")
    vec.reset(seed=2)
    batch = vec.batch
    assert batch._legal.shape[1] == 1 + listed
    rng = np.random.default_rng(2)
    for _ in range(30):
        u = np.random.default_rng(int(rng.integers(1 << 30))).random(batch.num_envs)
        got = np.empty(batch.num_envs, dtype=np.int64)
        K.pick_listed(batch.S, batch._tab, batch._legal, u, got)
        want = np.empty(batch.num_envs, dtype=np.int64)
        K.random_actions(0, batch.num_envs, batch.S, u, batch._tab, want)
        np.testing.assert_array_equal(got, want)
        counts = batch.mask.sum(axis=1)
        np.testing.assert_array_equal(batch._legal[:, 0], counts)
        vec.step(vec.sample_legal_actions(rng))


def test_next_step_autoreset_terminal_rows_pick_zero() -> None:
    vec = SolitaireVectorEnv(
        128, rules="ten_thousand", objective="turn", autoreset_mode=AutoresetMode.NEXT_STEP
    )
    vec.reset(seed=4)
    rng = np.random.default_rng(4)
    seen = 0
    for _ in range(40):
        _, _, terminated, truncated, infos = vec.step(vec.sample_legal_actions(rng))
        ended = terminated | truncated
        if ended.any():
            assert (infos["action_mask"][ended] == 1).all()
            assert (vec.sample_legal_actions(rng)[ended] == 0).all()
            seen += int(ended.sum())
    assert seen > 0


def test_a_row_a_caller_keeps_holds_its_array() -> None:
    """A view of one row references the whole array, which then stays as it was."""
    vec = SolitaireVectorEnv(1024, rules="ten_thousand", objective="race", parallel=2)
    vec.reset(seed=5)
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(OUTPUT_SLOTS + 3):
        obs, *_, infos = vec.step(vec.sample_legal_actions(rng))
        rows.append((obs[7], obs[7].copy(), infos["action_mask"][7], infos["action_mask"][7].copy()))
        del obs, infos
    for row, then, mask_row, mask_then in rows:
        np.testing.assert_array_equal(row, then)
        np.testing.assert_array_equal(mask_row, mask_then)


def test_step_flags_are_new_each_step_and_terminal_masks_are_read_only() -> None:
    """``terminated``, ``truncated`` and ``infos["illegal_action"]`` are rows of one array made
    by the step (a later step leaves them alone; they equal the episode columns), and
    ``infos["final_info"]["action_mask"]`` is the all-ones terminal mask, read-only."""
    vec = SolitaireVectorEnv(512, rules="ten_thousand", objective="turn")
    vec.reset(seed=5)
    rng = np.random.default_rng(5)
    kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    ended_steps = 0
    for _ in range(30):
        _, _, terminated, truncated, infos = vec.step(vec.sample_legal_actions(rng))
        np.testing.assert_array_equal(terminated, vec.batch.terminated)
        np.testing.assert_array_equal(truncated, vec.batch.truncated)
        np.testing.assert_array_equal(infos["illegal_action"], vec.batch.illegal)
        assert terminated.flags.c_contiguous and terminated.dtype == np.bool_
        kept.append((terminated, terminated.copy(), infos["illegal_action"].copy()))
        for held, then, _ in kept:
            np.testing.assert_array_equal(held, then)
        if "final_info" in infos:
            ended_steps += 1
            done = infos["_final_info"]
            np.testing.assert_array_equal(done, vec.batch.done)
            masks = infos["final_info"]["action_mask"]
            assert masks.shape == (512, vec.catalog.n) and (masks == 1).all()
            assert not masks.flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                masks[0, 0] = 0
    assert ended_steps > 0
