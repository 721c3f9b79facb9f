"""The solver as a teacher: move values of vector-engine rows equal OptimalBot's, the teacher's
distribution (ties split, temperature), context sampling and saved turn value arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from greed_env.rules import Phase, State, preset
from greed_env.solver import solve
from greed_env.solver.optimal_bot import OptimalBot
from greed_env.spaces.catalog import ActionCatalog
from greed_env.train.teacher import (
    TeacherLabeller,
    TurnValueArrays,
    display_values,
    solve_turn_arrays,
    teacher_distribution,
)
from greed_env.vector import kernels as K
from greed_env.vector.engine import EpisodeBatch, row_fields


def _rows(rules_name: str, mode: str, steps: int, envs: int = 48, seed: int = 0, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    """Rows and masks of random play in the vector engine (the learner to act in each)."""
    rules = preset(rules_name, **kw)  # type: ignore[arg-type]
    extra = {"num_players": 2, "opponent": "threshold-1000"} if mode == "duel" else {}
    batch = EpisodeBatch(rules, envs, mode=mode, **extra)  # type: ignore[arg-type]
    batch.reset(seed=seed)
    rng = np.random.default_rng(seed + 1)
    rows, masks = [], []
    for _ in range(steps):
        rows.append(batch.S.copy())
        masks.append(batch.mask.copy())
        batch.step(batch.random_actions(rng))
    return np.concatenate(rows), np.concatenate(masks)


def _reference(rules_name: str, objective: str, rows: np.ndarray, lab: TeacherLabeller) -> list[dict[int, float]]:
    """OptimalBot's move values of each row, by catalog action id."""
    rules = lab.rules
    bot = OptimalBot(rules, objective)
    cat = ActionCatalog(rules)
    out = []
    for i in range(rows.shape[0]):
        state = State(**row_fields(rows, i, lab.tables))
        _, moves = cat.legal(state)
        ids = {m: a for a, m in moves.items()}
        out.append({ids[m]: v for m, v in bot.move_values(rules, state)})
    return out


@pytest.mark.parametrize(
    ("rules_name", "mode", "objective", "steps"),
    [
        ("greed", "turn", "turn", 25),  # order-free, reroll-all with a bar to beat
        ("progressive", "turn", "turn", 25),  # carry-over, exact target: one context
        ("progressive", "race", "race", 12),  # a context per banked score, lower is better
        ("progressive", "duel", "duel", 6),  # a context per score pair and mover
        ("ten_thousand", "duel", "duel", 10),  # order-free duel with a final round
    ],
)
def test_labeller_values_equal_optimal_bot_move_values(rules_name: str, mode: str, objective: str, steps: int) -> None:
    rows, masks = _rows(rules_name, mode, steps)
    lab = TeacherLabeller(preset(rules_name), objective)
    values = lab.values(rows, masks)
    reference = _reference(rules_name, objective, rows, lab)
    phases = set()
    for i, (item, ref) in enumerate(zip(values, reference, strict=True)):
        assert item is not None, f"row {i} not valued"
        ids, v = item
        assert set(ids.tolist()) == set(np.flatnonzero(masks[i]).tolist())  # every legal move, no other
        got = dict(zip(ids.tolist(), display_values(objective, v).tolist(), strict=True))
        assert got.keys() == ref.keys()
        for a, value in ref.items():
            assert got[a] == pytest.approx(value, rel=1e-12, abs=1e-12)
        phases.add(int(rows[i, K.C_PHASE]))
    assert {Phase.KEEP, Phase.CONTINUE} <= phases
    if objective == "duel":
        assert lab.contexts_computed > 10  # one pass per score pair met, not per row


def test_best_actions_are_optimal_bot_moves() -> None:
    rules = preset("progressive")
    rows, masks = _rows("progressive", "turn", 15, seed=3)
    lab = TeacherLabeller(rules, "turn")
    best = lab.best_actions(rows, masks)
    bot = OptimalBot(rules, "turn")
    cat = ActionCatalog(rules)
    checked = 0
    for i in range(rows.shape[0]):
        state = State(**row_fields(rows, i, lab.tables))
        vals = sorted((v for _, v in bot.move_values(rules, state)), reverse=True)
        if len(vals) > 1 and vals[0] - vals[1] < 1e-9:
            continue  # a tie: OptimalBot takes the first in legal-move order
        move = bot.act(rules, state, np.random.default_rng(0))
        assert cat.index_of(move, state) == best[i]
        checked += 1
    assert checked > 300


def test_teacher_distribution_splits_ties_and_softens_by_temperature() -> None:
    v = np.array([10.0, 12.0, 12.0, 11.0])
    assert teacher_distribution(v, 0.0).tolist() == [0.0, 0.5, 0.5, 0.0]
    p = teacher_distribution(v, 1.0)
    assert p[1] == p[2] and p.sum() == pytest.approx(1.0)
    assert p[3] / p[1] == pytest.approx(np.exp(-1.0)) and p[0] / p[1] == pytest.approx(np.exp(-2.0))
    warm = np.array([np.exp(-1.0), 1.0, 1.0, np.exp(-0.5)])  # gaps 2, 0, 0, 1 divided by 2
    assert teacher_distribution(v, 2.0) == pytest.approx(warm / warm.sum(), rel=1e-12)
    sharp = np.array([np.exp(-4.0), 1.0, 1.0, np.exp(-2.0)])  # divided by 0.5
    assert teacher_distribution(v, 0.5) == pytest.approx(sharp / sharp.sum(), rel=1e-12)
    cold = teacher_distribution(v, 1e-3)
    assert cold[1] == pytest.approx(0.5) and cold[3] < 1e-300
    assert teacher_distribution(np.array([5.0]), 0.3).tolist() == [1.0]
    with pytest.raises(ValueError, match="temperature"):
        teacher_distribution(v, -1.0)
    with pytest.raises(ValueError, match="finite"):
        teacher_distribution(np.array([1.0, np.nan]), 0.0)


def test_labels_are_legal_normalised_and_follow_the_values() -> None:
    rules = preset("greed")
    rows, masks = _rows("greed", "turn", 20, seed=5)
    lab = TeacherLabeller(rules, "turn", temperature=50.0)
    labels = lab.label(rows, masks)
    greedy = TeacherLabeller(rules, "turn").label(rows, masks)
    assert greedy.dense(lab.catalog.n).max(axis=1).min() >= 0.5 - 1e-6  # T=0: the best moves, ties split
    assert labels.labelled.all()
    dense = labels.dense(lab.catalog.n)
    assert np.all(dense[masks == 0] == 0.0)  # nothing on an illegal move
    assert np.allclose(dense.sum(axis=1), 1.0, atol=1e-6)
    for i, (ids, v) in enumerate(lab.values(rows, masks)):  # type: ignore[misc]
        expect = teacher_distribution(v, 50.0)
        big = expect >= 1e-6
        assert np.allclose(dense[i, ids[big]], expect[big] / expect[big].sum(), atol=1e-6)
    assert (dense.max(axis=1) < 0.9).sum() >= 3  # at 50 points several rows spread over their moves


def _pairs(rows: np.ndarray, labelled: np.ndarray) -> set[tuple[object, ...]]:
    return {
        (tuple(rows[i, K.B_SCORE : K.B_SCORE + 2]), rows[i, K.C_PLAYER], rows[i, K.C_ENDGAME])
        for i in np.flatnonzero(labelled)
    }


def test_max_contexts_labels_a_seeded_subset_of_new_contexts() -> None:
    rules = preset("progressive")
    rows, masks = _rows("progressive", "duel", 4, envs=32, seed=2)
    lab = TeacherLabeller(rules, "duel", cache_contexts=0)
    full = lab.label(rows, masks)
    assert len(_pairs(rows, full.labelled)) > 8
    some = lab.label(rows, masks, max_contexts=5, rng=np.random.default_rng(9))
    again = lab.label(rows, masks, max_contexts=5, rng=np.random.default_rng(9))
    assert np.array_equal(some.labelled, again.labelled)
    assert len(_pairs(rows, some.labelled)) == 5 and 0 < some.labelled.sum() < full.labelled.sum()
    on = some.labelled
    assert np.array_equal(some.dense(lab.catalog.n)[on], full.dense(lab.catalog.n)[on])
    with pytest.raises(ValueError, match="generator"):
        lab.label(rows, masks, max_contexts=5)
    cached = TeacherLabeller(rules, "duel", cache_contexts=10_000)
    first = cached.label(rows, masks, max_contexts=5, rng=np.random.default_rng(9))
    done = cached.contexts_computed
    second = cached.label(rows, masks, max_contexts=3, rng=np.random.default_rng(4))
    assert cached.contexts_computed == done + 3  # the cached pairs cost nothing and are labelled
    assert len(_pairs(rows, second.labelled)) == 8 and np.all(second.labelled[first.labelled])


def test_saved_turn_arrays_teach_as_the_table_does(tmp_path: Path) -> None:
    rules = preset("progressive", target=2000)
    arrays = solve_turn_arrays(rules)
    table = solve(rules, "turn")
    assert arrays.headline == pytest.approx(table.headline, rel=1e-12)
    path = arrays.save(tmp_path / "turn.npz")
    loaded = TurnValueArrays.load(path, rules)
    rows, masks = _rows("progressive", "turn", 20, seed=4, target=2000)
    from_table = TeacherLabeller(rules, "turn", table=table).values(rows, masks)
    from_file = TeacherLabeller(rules, "turn", arrays=loaded).values(rows, masks)
    lost = 0
    for a, b in zip(from_table, from_file, strict=True):
        assert a is not None and b is not None
        assert np.array_equal(a[0], b[0])
        assert np.allclose(a[1], b[1], rtol=0, atol=1e-9)
        lost += int(np.any(b[1] == 0.0))
    assert lost > 0  # keeps past the target read the lost turn's row
    with pytest.raises(ValueError, match="made for rules"):
        TurnValueArrays.load(path, preset("progressive"))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a turn value file"):
        TurnValueArrays.load(bad, rules)


def test_labeller_refuses_bad_settings() -> None:
    rules = preset("greed")
    with pytest.raises(ValueError, match="teacher objective"):
        TeacherLabeller(rules, "entry")
    with pytest.raises(ValueError, match="temperature"):
        TeacherLabeller(rules, "turn", temperature=float("inf"))
