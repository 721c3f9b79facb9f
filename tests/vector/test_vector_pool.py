"""The vector engine's thread pool: rows claimed by several threads, steps shared or alone."""

from __future__ import annotations

import time

import numpy as np
import pytest

from greed_env.vector import DuelVectorEnv, SolitaireVectorEnv
from greed_env.vector import pool as P
from greed_env.vector import threads as T


def _trace(threads: int, steps: int, seed: int) -> list[np.ndarray]:
    vec = SolitaireVectorEnv(1536, rules="farkle", objective="race", parallel=threads)
    assert vec.batch.threads == threads
    obs, infos = vec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs, infos["action_mask"]]
    for _ in range(steps):
        obs, rewards, terminated, truncated, infos = vec.step(vec.sample_legal_actions(rng))
        out += [obs, rewards, terminated, truncated, infos["action_mask"]]
    return out


@pytest.mark.parametrize("threads", [2, 3])
def test_every_thread_count_plays_the_same_episodes(threads: int) -> None:
    for a, b in zip(_trace(1, 40, 5), _trace(threads, 40, 5), strict=True):
        np.testing.assert_array_equal(a, b)


def test_small_batches_run_on_the_calling_thread() -> None:
    vec = DuelVectorEnv(64, rules="ten_thousand", opponent="threshold", parallel=True)
    assert vec.batch.threads == 1 and not vec.batch.parallel


def test_parallel_takes_a_thread_count_and_refuses_nonsense() -> None:
    vec = SolitaireVectorEnv(2048, rules="ten_thousand", objective="turn", parallel=4)
    assert vec.batch.threads == 4
    with pytest.raises(ValueError, match="parallel"):
        SolitaireVectorEnv(2048, rules="ten_thousand", objective="turn", parallel=0)


def _pool_and_args(n: int, threads: int) -> tuple[P.RowPool, tuple[np.ndarray, ...]]:
    vec = SolitaireVectorEnv(n, rules="ten_thousand", objective="race", parallel=threads)
    vec.reset(seed=1)
    return vec.batch._pool, vec.batch._job_args()


def test_a_job_runs_every_row_once_whoever_claims_it() -> None:
    """The random policy's job writes every row's action: with a worker serving, the result
    is the single-threaded kernel's, and the rows counted done are the batch's."""
    pool, args = _pool_and_args(2048, 2)
    S, unif01, out, tab = args[0], args[-2], args[-1], args[3]
    rng = np.random.default_rng(3)
    for _ in range(30):
        unif01[:] = rng.random(unif01.shape[0])
        out[:] = -7
        pool.run(T.JOB_RANDOM, args)
        assert pool._ctl[T.CTL_DONE] == 2048
        want = np.empty_like(out)
        T.random_actions(0, 2048, S, unif01, tab, want)
        np.testing.assert_array_equal(out, want)


def test_a_worker_serves_between_calls_then_sleeps() -> None:
    pool, args = _pool_and_args(2048, 2)
    for _ in range(5):
        pool.run(T.JOB_RANDOM, args)
    ctl = pool._ctl
    deadline = time.monotonic() + 10.0
    while ctl[T.CTL_ACTIVE] > 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert ctl[T.CTL_ACTIVE] == 0  # gone back to sleep without work
    pool.run(T.JOB_RANDOM, args)  # and woken again
    assert ctl[T.CTL_DONE] == 2048


def test_a_claim_past_a_segment_end_runs_nothing() -> None:
    """A late claim on a finished job (its counter at the segment's end) is void."""
    pool, args = _pool_and_args(2048, 2)
    pool.run(T.JOB_RANDOM, args)
    ctl = pool._ctl
    before = ctl.copy()
    assert T.claim_rows(ctl, 1, *args) == 0
    assert ctl[T.CTL_DONE] == before[T.CTL_DONE]


def test_steps_run_alone_while_sharing_is_slower() -> None:
    """The mode choice: timed steps that are slower shared move the pool to run alone, a probe
    that finds sharing faster moves it back, and confirmed modes probe less often."""
    pool = P.RowPool(4096, 2)
    assert not pool._alone
    for _ in range(8):
        pool._record(False, 2e-3)
    modes = []
    for _ in range(P.PROBE_EVERY[0] + P.PROBE_STEPS):
        alone = pool._mode_of_step()
        modes.append(alone)
        pool._record(alone, 1e-3 if alone else 2e-3)
    assert modes[-P.PROBE_STEPS :] == [True] * P.PROBE_STEPS
    assert pool._alone and pool._every == P.PROBE_EVERY[0]
    for _ in range(P.PROBE_EVERY[0] + P.PROBE_STEPS):
        alone = pool._mode_of_step()
        pool._record(alone, 1e-3 if alone else 2e-3)
    assert pool._alone and pool._every == 2 * P.PROBE_EVERY[0]  # confirmed: probes less often
    for _ in range(2 * P.PROBE_EVERY[0] + P.PROBE_STEPS):
        alone = pool._mode_of_step()
        pool._record(alone, 1e-3 if alone else 0.5e-3)
    assert not pool._alone  # sharing got faster


def _drive(pool: P.RowPool, steps: int, seconds: object) -> list[bool]:
    """Run ``steps`` mode choices, each step timed by ``seconds(alone, step)``."""
    modes = []
    for k in range(steps):
        alone = pool._mode_of_step()
        modes.append(alone)
        pool._record(alone, seconds(alone, k))  # type: ignore[operator]
    return modes


def test_alternating_light_and_heavy_steps_do_not_fool_the_choice() -> None:
    """A game's steps often alternate a light and a heavy kind; sharing twice as fast must keep
    the pool sharing whichever steps its probes of running alone happen to draw (an odd sample
    of them, three light of five, once sent the pool to run alone at half speed)."""
    for phase in (0, 1):
        pool = P.RowPool(4096, 2)

        def seconds(alone: bool, k: int, phase: int = phase) -> float:
            light = (k + phase) % 2 == 0
            return (0.45e-3 if light else 1.0e-3) * (1.55 if alone else 1.0)

        modes = _drive(pool, 3000, seconds)
        assert not pool._alone
        assert sum(modes) / len(modes) < 0.1  # probes only


def test_a_probe_ends_at_its_first_step_that_waited_for_a_worker() -> None:
    """Running alone with a busy neighbour, a probe of sharing whose first timed step is far
    slower ends there: one slow step per probe, not a probe's worth."""
    pool = P.RowPool(4096, 2)
    pool._switch(True)
    for _ in range(P.RECENT):
        pool._record(True, 1e-3)
    shared_steps = []

    def seconds(alone: bool, k: int) -> float:
        if not alone:
            shared_steps.append(k)
        return 1e-3 if alone else 5e-3

    _drive(pool, P.PROBE_EVERY[0] + P.PROBE_STEPS, seconds)
    assert pool._alone
    assert len(shared_steps) == 2  # the untimed first step and one timed step
    assert pool._every == 2 * P.PROBE_EVERY[0]


def test_new_arrays_give_a_new_control_block() -> None:
    pool, args = _pool_and_args(2048, 2)
    pool.run(T.JOB_RANDOM, args)
    old = pool._ctl
    changed = (*args[:-1], args[-1].copy())
    pool.run(T.JOB_RANDOM, changed)
    assert pool._ctl is not old and old[T.CTL_STOP] == 1
