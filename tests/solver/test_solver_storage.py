"""Solver tables on disk: round trip, refusal of corrupt or mismatched files, atomic writes."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

import greed_env.solver as solver
from greed_env.rules import preset
from greed_env.solver import SolverTable, TableError, load_table, solve
from greed_env.solver.table import arrays_checksum, package_table_dir


@pytest.fixture
def table() -> SolverTable:
    return solve(preset("farkle5", target=500, entry_threshold=500), "race")


def test_round_trip(table: SolverTable, tmp_path: Path) -> None:
    path = table.save(tmp_path)
    assert path.name == table.filename()
    back = SolverTable.load(path, table.rules, "race")
    assert back.headline == table.headline
    assert back.objective == "race"
    assert set(back.arrays) == set(table.arrays)
    for k, v in table.arrays.items():
        np.testing.assert_array_equal(back.arrays[k], v)
    with zipfile.ZipFile(path) as zf:
        import json

        meta = json.loads(zf.read("meta.json"))
    assert meta["rules_fingerprint"] == table.rules.fingerprint
    assert meta["sha256"] == arrays_checksum(table.arrays)
    assert meta["objective"] == "race" and meta["format_version"] >= 1
    assert np.load(path)["expected_turns"].shape == table.arrays["expected_turns"].shape


def test_mismatched_rules_and_objective_are_refused(table: SolverTable, tmp_path: Path) -> None:
    path = table.save(tmp_path)
    with pytest.raises(TableError, match="fingerprint"):
        SolverTable.load(path, preset("farkle5", target=550, entry_threshold=500), "race")
    with pytest.raises(TableError, match="objective"):
        SolverTable.load(path, table.rules, "duel")


def test_corrupt_and_truncated_files_are_refused(table: SolverTable, tmp_path: Path) -> None:
    path = table.save(tmp_path / "t.npz")
    data = path.read_bytes()
    (tmp_path / "trunc.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(TableError, match="unreadable or truncated"):
        SolverTable.load(tmp_path / "trunc.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a table")
    with pytest.raises(TableError):
        SolverTable.load(tmp_path / "junk.npz")
    bad = dict(table.arrays)
    bad["expected_turns"] = bad["expected_turns"] + 1e-9
    forged = tmp_path / "forged.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(forged, "w") as dst:
        for name in src.namelist():
            if name == "expected_turns.npy":
                import io

                buf = io.BytesIO()
                np.lib.format.write_array(buf, bad["expected_turns"])
                dst.writestr(name, buf.getvalue())
            else:
                dst.writestr(name, src.read(name))
    with pytest.raises(TableError, match="checksum"):
        SolverTable.load(forged)


def test_interrupted_write_leaves_nothing(table: SolverTable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "t.npz"
    table.save(target)
    before = target.read_bytes()

    def boom(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(zipfile.ZipFile, "writestr", boom)
    with pytest.raises(KeyboardInterrupt):
        table.save(target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npz"]


def test_load_table_solves_once_then_reads_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path))
    rules = preset("farkle5", target=450, entry_threshold=450)
    first = load_table(rules, "race")
    assert (tmp_path / first.filename()).exists()

    def no_solve(*args: object, **kwargs: object) -> None:
        raise AssertionError("should have read the cache")

    monkeypatch.setattr(solver, "solve", no_solve)
    again = load_table(rules, "race")
    assert again.headline == first.headline
    with pytest.raises(TableError, match="greed solve"):
        load_table(preset("farkle5", target=400, entry_threshold=400), "race", solve_if_missing=False)


def test_corrupt_cache_file_is_not_silently_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREED_ENV_CACHE", str(tmp_path))
    rules = preset("farkle5", target=400, entry_threshold=400)
    path = tmp_path / SolverTable(rules, "race", {}).filename()
    path.write_bytes(b"garbage")
    with pytest.raises(TableError):
        load_table(rules, "race")


SHIPPED = sorted(package_table_dir().glob("*.npz"))
DUEL_CHECK_TARGET = {"progressive": 600}
"""Target of the reduced duel solved against each shipped duel table (default 1,000)."""


def _assert_same_arrays(fresh: SolverTable, shipped: SolverTable) -> None:
    assert set(fresh.arrays) == set(shipped.arrays)
    for name, want in shipped.arrays.items():
        got = fresh.arrays[name]
        assert got.shape == want.shape and got.dtype == want.dtype, name
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=0.0, atol=1e-9, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_tables_load_and_match_their_rules(path: Path) -> None:
    t = SolverTable.load(path)
    assert path.name == t.filename()
    # the three-player table ships at a reduced target (ten_thousand/ffa3-exact-v1 plays it)
    assert t.rules == preset(t.rules.name, **({"target": t.rules.target} if t.objective == "3p" else {}))


def _resolved_in_the_suite(path: Path) -> bool:
    """Turn, entry and race tables, but Trippn's turn (65 CPU-minutes and 17 GB to solve)."""
    if path.name.endswith(("-duel.npz", "-3p.npz")):
        return False
    return not (path.name.startswith("trippn-") and path.name.endswith("-turn.npz"))


@pytest.mark.parametrize("path", [p for p in SHIPPED if _resolved_in_the_suite(p)], ids=lambda p: p.name)
def test_shipped_turn_entry_and_race_tables_are_what_the_solver_gives(path: Path) -> None:
    """Each shipped turn, entry and race table re-solved from its rules: every array the same."""
    t = SolverTable.load(path)
    _assert_same_arrays(solve(t.rules, t.objective), t)


def _penalty_duel(path: Path) -> bool:
    rules = SolverTable.load(path).rules
    return bool(rules.bust_penalty and rules.bust_penalty_after)


_DUELS = [p for p in SHIPPED if p.name.endswith("-duel.npz")]


@pytest.mark.parametrize("path", [p for p in _DUELS if not _penalty_duel(p)], ids=lambda p: p.name)
def test_shipped_duel_tables_end_as_a_fresh_solve_of_a_shorter_game(path: Path) -> None:
    """A full duel table takes one to forty-five minutes to solve; its corner does not. Once both
    players have come in, only the points each still needs count, so the shipped table's last
    ``n`` score units on each side are the whole table of the same rules with the target
    ``n`` units away and no threshold to come in: solved here and compared value for value."""
    t = SolverTable.load(path)
    short = DUEL_CHECK_TARGET.get(t.rules.name, 1000)
    unit = t.meta["unit"]
    shift = (t.rules.target - short) // unit
    assert shift * unit >= t.rules.entry_threshold  # the corner's scores have all come in
    fresh = solve(t.rules.replace(target=short, entry_threshold=0), "duel")
    n = short // unit
    assert fresh.arrays["win"].shape == (n, n)
    np.testing.assert_allclose(t.arrays["win"][shift:, shift:], fresh.arrays["win"], rtol=0.0, atol=1e-9)


@pytest.mark.parametrize("path", [p for p in _DUELS if _penalty_duel(p)], ids=lambda p: p.name)
def test_shipped_bust_penalty_duel_tables_are_a_fixed_point_of_the_turn(path: Path) -> None:
    """Under a bust penalty a player can fall back below any score, so no corner of the table is
    a shorter game (Zilch's duel takes over twenty CPU-minutes to re-solve). Instead: at sampled
    turn starts, one in-turn pass over the table's successor values (``OptimalBot``'s own
    recomputation) gives back the stored value, and a table with one stored value changed fails
    at that position."""
    from greed_env.rules import new_game
    from greed_env.solver.optimal_bot import OptimalBot

    t = SolverTable.load(path)
    rules, win = t.rules, t.arrays["win"]
    unit = int(t.meta["unit"])
    low = int(t.meta["floor_points"]) // unit
    top = -(-rules.target // unit)
    start = new_game(rules, 2)
    rng = np.random.default_rng(2024)

    def value(table: SolverTable, a: int, b: int, sa: int, sb: int) -> float:
        state = start._replace(scores=(a * unit, b * unit), streaks=(sa, sb), entered=(True, True))
        return OptimalBot(rules, "duel", table).turn_start_value(rules, state)

    streaks = rules.bust_penalty_after
    for _ in range(24):
        a, b = (int(x) for x in rng.integers(low, top, size=2))
        sa, sb = (int(x) for x in rng.integers(0, streaks, size=2))
        assert value(t, a, b, sa, sb) == pytest.approx(win[a - low, b - low, sa, sb], abs=1e-9), (a, b, sa, sb)
    a, b = 20, 30
    changed = win.copy()
    changed[a - low, b - low, 0, 0] += 0.01
    broken = SolverTable(rules, "duel", {"win": changed}, dict(t.meta))
    assert abs(value(broken, a, b, 0, 0) - changed[a - low, b - low, 0, 0]) > 0.005
