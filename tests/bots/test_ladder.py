"""The difficulty ladder: a softened optimal duel policy, its measurement and its shipped rungs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots import UnknownBotError, load, registry
from greed_env.rules import (
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    preset,
    sample_roll,
)
from greed_env.solver import OptimalBot, SolverError
from greed_env.solver.ladder import (
    BAND,
    LADDER_FILE,
    LadderBot,
    LadderError,
    Rung,
    measure,
    read_ladder,
    write_ladder,
)

ROOT = Path(__file__).resolve().parents[2]


def _positions(rules_name: str, count: int, seed: int) -> list:
    """Decision positions of games between two optimal-duel bots."""
    r = preset(rules_name)
    opt = OptimalBot(r, "duel")
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = new_game(r, 2, first_player=0)
        while not is_over(s) and len(out) < count:
            if is_chance(s):
                s = apply_roll(r, s, sample_roll(r, s, rng))
                continue
            out.append(s)
            s = apply(r, s, opt.act(r, s, rng))
    return out


def _play(bot: object, rules_name: str, seed: int) -> list[str]:
    """One game of ``bot`` against itself; the moves, each checked legal."""
    r = preset(rules_name)
    rng = np.random.default_rng(seed)
    s = new_game(r, 2, first_player=0)
    moves = []
    while not is_over(s):
        if is_chance(s):
            s = apply_roll(r, s, sample_roll(r, s, rng))
            continue
        m = bot.act(r, s, rng)  # type: ignore[attr-defined]
        assert m in legal_moves(r, s)
        moves.append(str(m))
        s = apply(r, s, m)
    return moves


def test_temperature_zero_plays_the_optimal_moves() -> None:
    r = preset("farkle5")
    opt = OptimalBot(r, "duel")
    bot = LadderBot(r, 0.0, optimal=opt)
    rng = np.random.default_rng(0)
    for s in _positions("farkle5", 300, seed=3):
        assert bot.act(r, s, rng) == opt.act(r, s, rng)
        assert bot.expected_regret(r, s) == 0.0


def test_probabilities_are_a_softmax_of_the_win_probabilities() -> None:
    r = preset("farkle5")
    opt = OptimalBot(r, "duel")
    hot, cold = LadderBot(r, 0.05, optimal=opt), LadderBot(r, 0.002, optimal=opt)
    checked = 0
    for s in _positions("farkle5", 200, seed=4):
        values = dict(opt.move_values(r, s))
        if len(values) < 2 or s.phase.name not in ("KEEP", "CONTINUE"):
            continue
        p = hot.probabilities(r, s)
        assert sum(p.values()) == pytest.approx(1.0)
        best = max(values.values())
        w = {m: np.exp((v - best) / 0.05) for m, v in values.items()}
        for m in values:
            assert p[m] == pytest.approx(w[m] / sum(w.values()))
        assert hot.expected_regret(r, s) >= cold.expected_regret(r, s) - 1e-12
        checked += 1
    assert checked > 20


def test_a_game_is_legal_and_reproducible_from_its_seed() -> None:
    bot = LadderBot("farkle5", 0.02)
    first = _play(bot, "farkle5", seed=11)
    assert first == _play(bot, "farkle5", seed=11)
    assert first != _play(bot, "farkle5", seed=12)


def test_bad_temperature_and_odd_games_are_refused() -> None:
    with pytest.raises(SolverError, match="temperature"):
        LadderBot("farkle5", -0.1)
    with pytest.raises(SolverError, match="temperature"):
        LadderBot("farkle5", float("nan"))
    with pytest.raises(SolverError, match="even"):
        measure("farkle5", 0.01, 7, seed=1)
    bot = LadderBot("farkle5", 0.01)
    with pytest.raises(SolverError, match="plays farkle5"):
        bot.act(preset("ten_thousand"), new_game(preset("ten_thousand"), 2, first_player=0), np.random.default_rng(0))


def test_measure_optimal_is_a_tie_and_softening_loses() -> None:
    exact = measure("farkle5", 0.0, 40, seed=2)
    assert exact.regret_estimate == 0.5 and exact.regret_ci95 == 0.0
    weak = measure("farkle5", 0.05, 40, seed=2)
    assert weak.regret_estimate < 0.45
    assert weak.decisions > 0 and weak.games == 40


def test_ladder_file_round_trip_and_refusals(tmp_path: Path) -> None:
    r = preset("farkle5")
    rungs = [Rung("ladder-30", 0.02, 0.301, 0.004, 2000, "regret estimate")]
    path = tmp_path / LADDER_FILE
    write_ladder(path, r, rungs, [], "test")
    assert read_ladder(path, r) == rungs
    with pytest.raises(LadderError, match="made for 'farkle5'"):
        read_ladder(path, preset("farkle"))
    data = json.loads(path.read_text())
    data["rungs"][0].pop("temperature")
    path.write_text(json.dumps(data))
    with pytest.raises(LadderError, match="malformed rung"):
        read_ladder(path, r)
    path.write_text("{not json")
    with pytest.raises(LadderError, match="cannot be read"):
        read_ladder(path, r)


SHIPPED = sorted(p for p in (ROOT / "agents").glob(f"*/{LADDER_FILE}"))


def test_a_ladder_ships_for_ten_thousand() -> None:
    assert ROOT / "agents" / "ten_thousand" / LADDER_FILE in SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_shipped_rungs_are_graded_within_their_bands(path: Path) -> None:
    r = preset(path.parent.name)
    rungs = read_ladder(path, r)
    assert len(rungs) >= 4
    for rung in rungs:
        target = int(rung.name.removeprefix("ladder-")) / 100
        assert abs(rung.win_rate - target) <= BAND + rung.win_ci95, rung
    temps = [x.temperature for x in sorted(rungs, key=lambda x: x.win_rate)]
    assert temps == sorted(temps, reverse=True)


def test_a_shipped_rung_measures_what_its_file_says() -> None:
    """ten_thousand's ladder-40 re-measured by the regret estimate over 200 fresh games: it
    agrees with the rate its file stores and lies in its band. The estimate's standard error
    here is about 0.0023 (0.032 a game), so the bounds are 3.29 standard errors (a correct
    rung fails one seed in a thousand); the next rungs are 5 points away."""
    r = preset("ten_thousand")
    rung = next(x for x in read_ladder(ROOT / "agents" / "ten_thousand" / LADDER_FILE, r) if x.name == "ladder-40")
    m = measure(r, rung.temperature, 200, seed=20_261_203)
    se_new, se_file = m.regret_ci95 / 1.959964, rung.win_ci95 / 1.959964
    assert se_new < 0.004
    assert abs(m.regret_estimate - rung.win_rate) <= 3.29 * np.hypot(se_new, se_file), (m, rung)
    assert abs(m.regret_estimate - 0.40) <= BAND + 3.29 * se_new, m


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_registry_lists_and_loads_the_rungs(path: Path) -> None:
    name = path.parent.name
    listed = {b.id: b for b in registry.list_bots(name)}
    rungs = read_ladder(path, preset(name))
    for rung in rungs:
        info = listed[f"{name}/{rung.name}"]
        assert info.kind == "ladder" and "vs optimal-duel" in info.strength and not info.problem
    bot = load(f"{name}/{rungs[0].name}")
    moves = _play(bot, name, seed=5)
    assert moves == _play(load(f"{name}/{rungs[0].name}"), name, seed=5)
    with pytest.raises(UnknownBotError, match="ladder bots for"):
        load(f"{name}/ladder-99")


def test_calibration_writes_a_ladder_that_loads(tmp_path: Path) -> None:
    from greed_env.solver.ladder import PROBE_TEMPERATURES, main

    assert main(["farkle5", "--out", str(tmp_path), "--targets", "0.3", "--probe-games", "20", "--games", "20"]) == 0
    rungs = read_ladder(tmp_path / LADDER_FILE, preset("farkle5"))
    assert [r.name for r in rungs] == ["ladder-30"]
    assert min(PROBE_TEMPERATURES) <= rungs[0].temperature <= max(PROBE_TEMPERATURES)
    data = json.loads((tmp_path / LADDER_FILE).read_text())
    assert len(data["measurements"]) >= len(PROBE_TEMPERATURES) + 1
    assert data["command"].startswith("python -m greed_env.solver.ladder farkle5")
