"""The duel recipe's bookkeeping (``greed train recipe duel``, run by benchmarks/bench_ppo_duel.py):
CPU followed through the stages, and the held-out column."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from greed_env.rules import preset
from greed_env.train.recipes import duel as bench

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _benchmark(name: str) -> ModuleType:
    """A script of benchmarks/ loaded from its file (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _run(path: Path, card: dict, evals: list[tuple[int, float, float]] | None = None) -> Path:
    path.mkdir(parents=True)
    (path / "model.json").write_text(json.dumps(card))
    if evals is not None:
        rows = ["step,cpu_s,value"] + [f"{step},{cpu},{value}" for step, cpu, value in evals]
        (path / "eval.csv").write_text("\n".join(rows) + "\n")
    return path


def test_rows_count_every_stage_and_read_the_held_out_games(tmp_path: Path) -> None:
    turn = _run(tmp_path / "turn", {"cpu_time_s": 600.0, "args": {"init_from": None}})
    duel = _run(
        tmp_path / "duel",
        {
            "cpu_time_s": 1200.0,
            "steps": 3_000_000,
            "args": {"seed": 4, "init_from": str(turn / "model.zip")},
            "evaluation": {"mean": 0.4954, "ci95": 0.0031, "episodes": 100_000},
        },
        [(0, 10.0, 0.48), (500_000, 300.0, 0.496), (1_000_000, 600.0, 0.49)],
    )
    (duel / "fresh_eval_7.json").write_text(json.dumps({"episodes": 1000, "mean": 0.4877, "ci95": 0.0031}))
    row = bench.collect(duel, 0.495, (7, 1000))
    assert row["turn_cpu_min"] == pytest.approx(10.0) and row["total_cpu_min"] == pytest.approx(30.0)
    assert row["goal_step"] == 500_000 and row["goal_cpu_min"] == pytest.approx(15.0)
    assert row["fresh_win"] == 0.4877
    text = bench.table([row, {**row, "seed": 5, "win": 0.4854, "fresh_win": 0.4817}], 0.495, 7)
    assert "held-out games, evaluation seed 7" in text
    assert "| 49.54% ± 0.31 (100,000 games) | 500,000, 15.0 | 48.77% ± 0.31 |" in text
    assert text.splitlines()[-1].endswith("| 49.04% ± 0.71 (sd), worst 48.54% | | 48.47% ± 0.42 (sd), worst 48.17% |")
    assert "held-out" not in bench.table([row], 0.495)
    # the regret estimate's column, read from its own cached evaluation
    (duel / "regret_eval_5.json").write_text(
        json.dumps({"episodes": 2000, "mean": 0.49, "regret_estimate": 0.4924, "regret_estimate_ci95": 0.0009})
    )
    both = bench.collect(duel, 0.495, (7, 1000), (5, 2000))
    assert both["regret_win"] == 0.4924 and both["regret_games"] == 2000 and both["fresh_win"] == 0.4877
    text = bench.table([both, {**both, "seed": 5, "regret_win": 0.4918}], 0.495, 7, 5)
    assert "| 48.77% ± 0.31 | 49.24% ± 0.09 (2,000 games) |" in text
    assert text.splitlines()[-1].endswith("| 49.21% ± 0.04 (sd), worst 49.18% |")
    assert "0.5 - regret per game, evaluation seed 5 (95% CI)" in text.splitlines()[0]
    # a stage whose card names a start that never finished is refused
    orphan = _run(tmp_path / "orphan", {"cpu_time_s": 1.0, "args": {"init_from": str(tmp_path / "gone" / "model.zip")}})
    with pytest.raises(SystemExit, match="cannot follow --init-from"):
        bench.earlier_cpu_min(orphan)


def test_a_soup_row_counts_its_members_and_reads_its_play_on_the_cards_games(tmp_path: Path) -> None:
    import argparse

    turn = _run(tmp_path / "turn", {"cpu_time_s": 600.0, "args": {"init_from": None}})
    # the soup's card: its members' CPU summed, their common parent, no evaluation of its own
    soup = _run(
        tmp_path / "soup",
        {"cpu_time_s": 1800.0, "steps": 9_000_000, "args": {"seed": 11, "init_from": str(turn / "model.zip")}, "evaluation": None},
    )
    (soup / "fresh_eval_12345.json").write_text(json.dumps({"episodes": 100_000, "mean": 0.4941, "ci95": 0.0031}))
    row = bench.collect(soup, 0.495, seed=1)
    assert row["seed"] == 1 and row["win"] == 0.4941 and row["games"] == 100_000
    assert row["turn_cpu_min"] == pytest.approx(10.0) and row["total_cpu_min"] == pytest.approx(40.0)
    assert row["goal_step"] is None and "not reached" in bench.table([row], 0.495)
    ns = argparse.Namespace(runs_dir=str(tmp_path), rules="ten_thousand", tag="s", soup_of=["a", "b"])
    assert bench.make_soup(ns, 1)[0] == 2 and not (tmp_path / "ten_thousand__duel__s__1").exists()


def test_duel_ensemble_averages_logits_and_estimates_each_policy() -> None:
    import numpy as np

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.envs.catalog import ActionCatalog
    from greed_env.envs.observation import OBS_DIM
    from greed_env.rules import preset

    ens_mod = _benchmark("duel_ensemble")
    rules = preset("ten_thousand")
    n = ActionCatalog(rules).n
    rng = np.random.default_rng(0)

    def policy(seed: int) -> NumpyPolicy:
        r = np.random.default_rng(seed)
        layers = [(r.normal(size=(8, OBS_DIM)).astype(np.float32), np.zeros(8, np.float32))]
        head = (r.normal(size=(n, 8)).astype(np.float32), np.zeros(n, np.float32))
        return NumpyPolicy(layers, head, "tanh", meta={"rules_fingerprint": rules.fingerprint})

    a, b = policy(1), policy(2)
    obs = rng.random((5, OBS_DIM)).astype(np.float32)
    ens = ens_mod.MeanLogits([a, b])
    assert np.allclose(ens.logits(obs), (a.logits(obs) + b.logits(obs)) / 2, atol=1e-6)
    assert np.allclose(ens_mod.MeanLogits([a]).logits(obs), a.logits(obs))
    small = NumpyPolicy([(np.zeros((8, OBS_DIM - 1), np.float32), np.zeros(8, np.float32))], a.head, "tanh")
    with pytest.raises(ValueError, match="different observations"):
        ens_mod.MeanLogits([a, small])
    mean, half = ens_mod.estimate(ens, rules, 3, 5, "ensemble")
    assert np.isfinite(mean) and mean <= 0.5 + 1e-9 and half >= 0.0  # regrets are never negative


def test_turn_tag_and_args_choose_the_turn_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--turn-tag names the turn stage's runs and --turn-args trains them, and the duel stage
    starts from that run."""
    trained: list[tuple[str, list[str]]] = []

    def fake_train(rules: str, seed: int, steps: int, runs_dir: Path, tag: str, extra: list[str]) -> tuple[int, float]:
        trained.append((tag, extra))
        run = runs_dir / bench.turn.run_name(rules, seed, tag)
        if not run.exists():
            _run(run, {"cpu_time_s": 1.0})
        return 0, 0.0

    calls: list[list[str]] = []
    monkeypatch.setattr(bench.turn, "train", fake_train)
    monkeypatch.setattr(bench.subprocess, "call", lambda cmd, **kw: calls.append(cmd) or 0)
    ns = bench.argparse.Namespace(
        rules="ten_thousand", turn_runs_dir=str(tmp_path / "turn"), runs_dir=str(tmp_path / "duel"),
        turn_steps=10, duel_steps=10, tag="wide", after=None, turn_tag="w", turn_args="--net-width 256",
        seed_offset=0, soup_of=None,
    )  # fmt: skip
    rc, _ = bench.run_seed(ns, 3, ["--net-width", "256"])
    assert rc == 0 and trained == [("w", ["--net-width", "256"])]
    cmd = calls[0]
    assert cmd[cmd.index("--init-from") + 1] == str(tmp_path / "turn" / "ten_thousand__turn__w__3" / "model.zip")
    assert cmd[-2:] == ["--net-width", "256"] and cmd[cmd.index("--run-name") + 1] == "ten_thousand__duel__wide__3"
    assert cmd[cmd.index("--seed") + 1] == "3"
    # a branch: another training seed, the same run name pattern and chain
    ns.tag, ns.seed_offset = "branch", 10
    assert bench.run_seed(ns, 3, [])[0] == 0
    cmd = calls[-1]
    assert cmd[cmd.index("--seed") + 1] == "13" and cmd[cmd.index("--run-name") + 1] == "ten_thousand__duel__branch__3"


def test_the_duel_recipe_starts_final_round_turns_only_where_the_rules_have_one() -> None:
    """greed, farkle and farkle5 have no final round, and progressive's (an exact target) is not
    built by the curriculum: the recipe must not ask for its starts (``FinalRoundStarts``
    refuses such rules), while ten_thousand keeps them."""
    from greed_env.train.curriculum import final_round_start

    def starts(rules: str) -> str:
        recipe = bench.duel_recipe(rules)
        return recipe[recipe.index("--final-round-starts") + 1]

    assert starts("ten_thousand") == "0.5" == bench.DUEL_RECIPE[bench.DUEL_RECIPE.index("--final-round-starts") + 1]
    for name in ("greed", "farkle", "farkle5", "progressive"):
        assert starts(name) == "0"
        with pytest.raises(ValueError):
            final_round_start(preset(name), 0, np.random.default_rng(0))
    assert len(bench.duel_recipe("farkle")) == len(bench.DUEL_RECIPE)
