"""Tournaments: seeded and worker-independent results, Elo fitting, intervals, output files."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.tournament import (
    fit_elo,
    play_match,
    run_tournament,
    wilson_interval,
)
from greed_env.cli import main as greed_main
from greed_env.rules import preset

RULES = preset("ten_thousand")
BOTS = ["random", "threshold-300", "threshold-1000-keep-most"]


@pytest.fixture(scope="module")
def result():
    return run_tournament(RULES, BOTS, 20, seed=11)


def test_round_robin_counts_and_anchor(result) -> None:
    assert len(result.pairs) == 3
    for p in result.pairs:
        assert p.games == 20
        assert p.a_score + p.b_score == pytest.approx(20)
        assert p.a_wins + p.b_wins + p.draws == 20
    by = {s.bot: s for s in result.standings}
    assert by["random"].elo == 1000.0 and by["random"].elo_se == 0.0
    assert by["threshold-300"].elo > 1000.0
    assert sum(s.games for s in result.standings) == 2 * 3 * 20


def test_results_depend_on_seed_not_on_workers(result) -> None:
    again = run_tournament(RULES, BOTS, 20, seed=11, workers=2)
    assert again.pairs == result.pairs
    other = run_tournament(RULES, BOTS, 20, seed=12)
    assert other.pairs != result.pairs


def test_outputs(result, tmp_path: Path) -> None:
    paths = result.write(tmp_path / "out")
    assert sorted(p.name for p in paths) == ["pairs.csv", "standings.csv", "tournament.md"]
    md = (tmp_path / "out" / "tournament.md").read_text()
    assert "| rank | bot | Elo |" in md and "threshold-300" in md
    rows = list(csv.DictReader((tmp_path / "out" / "standings.csv").open()))
    assert {r["bot"] for r in rows} == set(BOTS)
    assert all(float(r["ci_low"]) <= float(r["rate"]) <= float(r["ci_high"]) for r in rows)
    pairs = list(csv.DictReader((tmp_path / "out" / "pairs.csv").open()))
    assert len(pairs) == 3


def test_seats_alternate_so_a_mirror_match_is_even() -> None:
    """A deterministic bot against itself: games ``2k`` and ``2k + 1`` roll the same dice with
    the seats swapped, so they are one game played from each seat and each pair of games is
    split exactly. A seat bias (the first-listed bot kept in one seat, or the pair's dice not
    shared) makes a two-game match 2-0 or 0-2: twenty matches would all have to tie by chance."""
    for seed in range(20):
        r = play_match(RULES, "threshold-300", "threshold-300", 2, seed=seed)
        assert (r.games, r.a_score, r.b_score) == (2, 1.0, 1.0), (seed, r)
    r = play_match(RULES, "threshold-300", "threshold-300", 200, seed=1)
    assert r.a_score == r.b_score == 100.0 and r.a_rate == 0.5


def test_listing_order_only_swaps_the_sides() -> None:
    """``a`` against ``b`` is ``b`` against ``a`` with the sides read the other way: the same
    games, each from the other seat (the bots here use no random moves)."""
    ab = play_match(RULES, "threshold-300", "threshold-1000-keep-most", 60, seed=4)
    ba = play_match(RULES, "threshold-1000-keep-most", "threshold-300", 60, seed=4)
    assert (ab.a_score, ab.b_score, ab.draws) == (ba.b_score, ba.a_score, ba.draws)
    assert ab.a_score not in (0.0, 60.0)  # both bots win games: the identity has something to hold


def test_wilson_interval_contains_the_rate_and_shrinks() -> None:
    lo, hi = wilson_interval(30, 40)
    assert lo < 0.75 < hi
    lo2, hi2 = wilson_interval(300, 400)
    assert hi2 - lo2 < hi - lo
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


def test_fit_elo_recovers_known_ratings() -> None:
    true = np.array([1000.0, 1200.0, 1400.0, 900.0])
    k = len(true)
    games = np.full((k, k), 20_000.0)
    np.fill_diagonal(games, 0.0)
    p = 1.0 / (1.0 + 10 ** ((true[None, :] - true[:, None]) / 400.0))
    score = games * p
    elo, se = fit_elo(list("abcd"), score, games, anchor=0, prior_draws=0.0)
    assert np.allclose(elo, true, atol=0.5)
    assert se[0] == 0.0 and np.all(se[1:] > 0) and np.all(se[1:] < 10)


def test_fit_elo_stays_finite_for_a_perfect_record() -> None:
    score = np.array([[0.0, 0.0], [50.0, 0.0]])
    games = np.array([[0.0, 50.0], [50.0, 0.0]])
    elo, se = fit_elo(["random", "strong"], score, games, anchor=0)
    assert math.isfinite(elo[1]) and elo[1] > 1500
    assert math.isfinite(se[1])


def test_bad_tournaments_are_refused() -> None:
    with pytest.raises(ValueError, match="at least two"):
        run_tournament(RULES, ["random"], 2)
    with pytest.raises(ValueError, match="distinct"):
        run_tournament(RULES, ["random", "random"], 2)
    with pytest.raises(LookupError):
        run_tournament(RULES, ["random", "ten_thousand/nope"], 2)


def test_greed_tournament_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = greed_main([
        "tournament", "--rules", "farkle", "--bots", "random,threshold-300", "--games", "6",
        "--seed", "3", "--out", str(tmp_path), "--no-progress",
    ])
    assert code == 0
    out = capsys.readouterr().out
    assert "# Tournament: farkle" in out
    assert (tmp_path / "standings.csv").is_file()
    assert greed_main(["tournament", "--rules", "farkle", "--bots", "random,nope", "--games", "2"]) == 2
