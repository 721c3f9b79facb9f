"""``benchmarks/bench_solver.py`` compiles the kernels with an untimed solve at a small target
first; those rules must be valid for every preset (ten_thousand's entry threshold, 1,000, does
not fit under a target of 500, which once stopped the whole run at its first job)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from greed_env.rules import PRESETS, preset
from greed_env.solver import SolverError, solve

_spec = importlib.util.spec_from_file_location(
    "bench_solver", Path(__file__).resolve().parents[2] / "benchmarks" / "bench_solver.py"
)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_warmup_rules_are_valid_and_small(name: str) -> None:
    rules = preset(name)
    small = bench.warmup_rules(rules)
    assert small.target <= 500 and small.entry_threshold < max(small.target, 1)
    assert small.num_dice == rules.num_dice and small.carry_over == rules.carry_over


def test_the_ten_thousand_warmup_solves() -> None:
    try:
        table = solve(bench.warmup_rules(preset("ten_thousand")), "race")
    except SolverError as exc:  # pragma: no cover - the race is solvable at any target
        pytest.fail(str(exc))
    assert table.rules.target == 500 and table.rules.entry_threshold == 250


def test_the_threads_table_puts_both_runs_of_a_pair_on_one_row() -> None:
    def row(obj: str, wall: float, cpu: float, rss: float) -> dict[str, object]:
        return {"preset": "farkle", "objective": obj, "headline": 0.5, "seconds": wall, "cpu_seconds": cpu,
                "peak_rss_mib": rss, "load_before": 1.0, "load_after": 1.0, "meta": {"mean_iterations": 2.5}}

    text = bench.threads_markdown([row("duel", 30.0, 29.0, 176), row("turn", 1.0, 0.9, 170)],
                                  [row("duel", 16.0, 31.0, 180), row("race", 2.0, 2.0, 175)])
    lines = text.splitlines()[2:]
    assert len(lines) == 3
    duel = next(line for line in lines if "| duel |" in line)
    assert "| 30.0 | 29.0 | 176 |" in duel and "| 16.0 | 31.0 | 180 |" in duel and "1.88x" in duel
    assert "2.50 passes/pair" in duel
    race = next(line for line in lines if "| race |" in line)
    assert "| 2.0 | 2.0 | 175 |" in race and not race.rstrip(" |").endswith("x")
