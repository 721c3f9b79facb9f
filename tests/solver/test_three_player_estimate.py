"""The three-player solve's size estimate answers at once at any target, and its long compiled
passes leave the interrupt watcher room to run (greed_env.solver.three)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from greed_env.rules import Rules, preset
from greed_env.solver import SolveTooBigError, estimate, solve
from greed_env.solver import three_kernels as k3
from greed_env.solver.model import roll_tables
from greed_env.solver.three import _units, level_cost, three_cost


def _rows_by_cycles(rules: Rules) -> float:
    """The estimate as it was first written: every cycle of every level listed."""
    tb = roll_tables(rules, True)
    target, thr = _units(rules, tb)
    margin = 0.45 * tb.max_keep if rules.final_round else 0.0
    total = 0.0
    for level in range(3 * target - 2):
        cycles = k3.level_cycles(level, target, thr)
        starts = sum(1 if a == b == c else 3 for a, b, c in cycles)
        total += (k3.cycle_rows(cycles, target, thr, 0) + margin * starts) * 2.8
    return total


@pytest.mark.parametrize(
    "rules",
    [preset("ten_thousand", target=2500, entry_threshold=500), preset("farkle", target=3000), preset("ten_thousand", target=1000)],
    ids=["threshold", "no-final-round", "small"],
)
def test_the_closed_form_counts_every_cycle(rules: Rules) -> None:
    listed = _rows_by_cycles(rules)
    assert three_cost(rules) == pytest.approx(listed, rel=1e-12)
    assert level_cost(rules).sum() == pytest.approx(listed, rel=1e-12)


def test_a_huge_target_is_estimated_and_refused_at_once() -> None:
    rules = preset("farkle", target=1_000_000_000)
    t0 = time.perf_counter()
    size = estimate(rules, "3p")
    assert time.perf_counter() - t0 < 5.0  # listing its cycles took longer than anyone waited
    assert size.positions == pytest.approx((1_000_000_000 // 50) ** 3)
    with pytest.raises(SolveTooBigError, match="would hold about"):
        solve(rules, "3p")


def test_the_last_turn_kernel_lets_other_threads_run() -> None:
    """At a big target the last player's tables take seconds; holding the GIL meanwhile, the
    compiled pass kept the interrupt watcher (a thread) from ending the process on Ctrl-C."""
    tab = roll_tables(preset("farkle"), True).kernel_tables()
    k3.last_turn_tables(100, tab, 0.5, 0)  # compiled before timing
    ticks = [0]
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        t0 = time.perf_counter()
        eq, gt = k3.last_turn_tables(400_000, tab, 0.5, 0)
        took = time.perf_counter() - t0
    finally:
        stop.set()
        thread.join()
    assert np.isfinite(eq).all() and np.isfinite(gt).all()
    assert took > 0.2 and ticks[0] > 20, (took, ticks[0])
