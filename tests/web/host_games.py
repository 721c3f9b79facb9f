"""Whole games of the JavaScript host against Python's: the seatings, bots and variants the
tests of test_host_games.py and test_host_games_trippn.py play, and the comparison itself
(a module of their own so that pytest-xdist runs the long Trippn games beside the rest)."""

from __future__ import annotations

import itertools
import json
import resource
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from greed_env.bots.base import RandomBot
from greed_env.bots.loader import load
from greed_env.portable import PortableRng
from greed_env.portable.conformance import game_seed
from greed_env.rules import Phase, Rules, State
from greed_env.rules.record import record_game, replay

ROOT = Path(__file__).resolve().parents[2]
GAMES_PER_SEATING = 25
SEATINGS: tuple[tuple[str, ...], ...] = (
    ("bot", "bot"),
    ("bot", "random"),
    ("random", "bot", "bot"),
    ("bot", "random", "bot", "random"),
)
GAME_BOTS = {
    "greed": "greed/ppo-duel",
    "ten_thousand": "ten_thousand/ppo-duel",
    "progressive": "progressive/ppo-duel",
    "trippn": "trippn/ppo-turn-kick",
    "farkle": "farkle/ppo-duel",
    "farkle5": "farkle5/ppo-duel",
    "zilch": "zilch/ppo-duel",
}
"""The bot of each preset's games: the shipped duel bot, the small one where the strongest
(progressive/ppo-duel-kick, four times the weights) would cost most of the time."""

MET = {
    "greed": {"who-starts tie", "reroll_all", "bar", "entry"},
    "ten_thousand": {"who-starts tie", "final round", "hot dice", "entry"},
    "progressive": {
        "final round",
        "exact target",
        "roll_for_nothing",
        "bust",
        "hot dice",
        "carry-over",
        "split",
    },
    "trippn": {
        "final round",
        "exact target",
        "roll_for_nothing",
        "bust",
        "hot dice",
        "carry-over",
        "horizon",
    },
    "farkle": {"who-starts tie", "hot dice", "entry"},
    "farkle5": {"who-starts tie", "hot dice", "entry"},
    "zilch": {"who-starts tie", "hot dice", "bust penalty", "min bank"},
}
"""The parts of the turn flow each preset's seeded games must meet (roll-offs, rare in whole
games, are played from built positions in test_host_playout.py)."""

VARIANTS: dict[str, tuple[str, dict[str, Any], set[str]]] = {
    "piggyback_six_kind": (
        "farkle",
        {
            "num_dice": 8,
            "six_kind_wins": True,
            "piggyback": True,
            "piggyback_counts_for_entry": False,
            "target": 3000,
        },
        {"piggyback", "fresh", "six of a kind", "entry"},
    ),
    "piggyback_roll_entry": (
        "farkle",
        {
            "piggyback": True,
            "entry_scope": "roll",
            "entry_threshold": 300,
            "target": 2500,
            "hot_dice": False,
        },
        {"piggyback", "fresh", "entry"},
    ),
    "come_in_once": (
        "ten_thousand",
        {
            "entry_scope": "roll",
            "entry_until_made": False,
            "entry_threshold": 350,
            "target": 3000,
            "reroll_all": True,
            "reroll_all_any_time": True,
            "reroll_all_must_beat": False,
            "horizon_rounds": 30,
        },
        {"reroll_all", "final round", "entry"},
    ),
    "first_finisher": (
        "ten_thousand",
        {"target": 2000, "entry_threshold": 0, "tie_rule": "first_finisher", "horizon_rounds": 30},
        {"final round", "first finisher"},
    ),
    "exact_split_vote": (
        "farkle",
        {
            "exact_target": True,
            "target": 500,
            "entry_threshold": 0,
            "final_round": True,
            "tie_rule": "split_vote",
            "voluntary_bust": True,
            "horizon_rounds": 40,
        },
        {"exact target", "refuse", "roll_first", "roll-off", "bust", "horizon", "shared"},
    ),
    "exact_first_finisher": (
        "farkle5",
        {
            "exact_target": True,
            "target": 1000,
            "entry_threshold": 0,
            "final_round": True,
            "tie_rule": "first_finisher",
            "horizon_rounds": 40,
            "bust_penalty_after": 2,
            "bust_penalty": 100,
        },
        {"exact target", "first finisher", "bust penalty"},
    ),
    "rounds_split_vote": (
        "farkle5",
        {
            "rounds": 2,
            "exact_target": True,
            "target": 2000,
            "entry_threshold": 500,
            "final_round": True,
            "tie_rule": "split_vote",
            "rolloff_horizon": 3,
        },
        {
            "rounds",
            "split",
            "refuse",
            "roll_first",
            "roll_last",
            "roll-off",
            "roll-off again",
            "entry",
        },
    ),
    "rounds_past_target": (
        "farkle5",
        {
            "rounds": 3,
            "exact_target": True,
            "target": 600,
            "entry_threshold": 0,
            "final_round": True,
            "final_round_past_rounds": True,
            "tie_rule": "split_vote",
        },
        {"rounds", "exact target", "final round"},
    ),
    "rounds_no_target": (
        "greed",
        {"rounds": 3, "target": 0, "entry_threshold": 0},
        {"rounds", "reroll_all", "bar"},
    ),
    "one_player": (
        "farkle5",
        {
            "exact_target": True,
            "target": 800,
            "entry_threshold": 0,
            "final_round": True,
            "tie_rule": "shared",
            "horizon_rounds": 30,
            "min_players": 1,
        },
        {"exact target", "one player"},
    ),
}
"""Rules the presets do not reach, played by random players: base preset, changes, parts met."""

VARIANT_SEATINGS: tuple[tuple[str, ...], ...] = (
    ("random", "random"),
    ("random", "random", "random"),
)
VARIANT_GAMES = 20

HostCli = Callable[..., subprocess.CompletedProcess[str]]
BundleFile = Callable[[Any], Path]


# ------------------------------------------------------------------------------------------
# parts of the turn flow a game met


def _parts(rules: Rules, record: dict[str, Any], states: Sequence[State]) -> set[str]:
    """The parts of the turn flow the replayed game met."""
    met = {e["move"] for e in record["events"] if "move" in e and not e["move"].startswith("keep")}
    n = record["num_players"]
    order_rolls = sum(
        1
        for s, e in zip(states, record["events"], strict=False)
        if s.phase == Phase.ORDER_ROLL and "roll" in e
    )
    checks = {
        "who-starts tie": order_rolls > n,
        "final round": any(s.endgame for s in states),
        "exact target": rules.exact_target and any(s.finishers for s in states),
        "bar": any(s.bar >= 0 for s in states),
        "hot dice": any(
            s.phase == Phase.CONTINUE and s.dice == rules.num_dice and s.fresh for s in states
        ),
        "carry-over": any(s.carry.sets != (0,) * 6 or s.carry.fills for s in states),
        "entry": rules.entry_threshold > 0
        and any(s.phase == Phase.CONTINUE and not s.entered[s.player] for s in states),
        "bust penalty": any(
            b.scores[b.player] > a.scores[b.player] for b, a in itertools.pairwise(states)
        ),
        "min bank": any(
            s.phase == Phase.CONTINUE and 0 < s.turn_total < rules.min_bank for s in states
        ),
        "roll-off": any(s.rolloff for s in states),
        "roll-off again": any(s.rolloff_round > 1 for s in states),
        "six of a kind": any(
            s.phase == Phase.OVER and s.roll and rules.six_kind_wins for s in states[-1:]
        ),
        "first finisher": rules.tie_rule == "first_finisher"
        and len(states[-1].winners) == 1
        and bool(states[-1].finishers),
        "horizon": states[-1].rounds >= rules.horizon_rounds * n and not rules.rounds,
        "rounds": bool(rules.rounds) and states[-1].rounds >= rules.rounds * n,
        "shared": len(states[-1].winners) > 1,
        "one player": n == 1,
    }
    return met | {name for name, hit in checks.items() if hit}


# ------------------------------------------------------------------------------------------
# playing both sides


def _names(seating: Sequence[str], bot_id: str | None) -> list[str]:
    return [bot_id if seat == "bot" and bot_id else "random" for seat in seating]


def _host_records(
    host_cli: HostCli,
    bundle: Path,
    seating: Sequence[str],
    bot_id: str | None,
    seed: int,
    games: int,
    folder: Path,
) -> list[dict[str, Any]]:
    onnx = str(ROOT / "agents" / f"{bot_id}.onnx") if bot_id else ""
    bots = ",".join(onnx if seat == "bot" else "random" for seat in seating)
    proc = host_cli(
        "play",
        "--bundle",
        str(bundle),
        "--bots",
        bots,
        "--seed",
        str(seed),
        "--games",
        str(games),
        "--record-dir",
        str(folder),
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == games, proc.stdout
    return [
        json.loads((folder / f"game-{g}.json").read_text(encoding="utf-8")) for g in range(games)
    ]


def _python_record(
    rules: Rules, seating: Sequence[str], bot: Any, bot_id: str | None, seed: int, g: int
) -> dict[str, Any]:
    acts = [bot.act if seat == "bot" else RandomBot().act for seat in seating]
    s = game_seed(seed, g)
    record = record_game(rules, acts, PortableRng(s), seed=s, players=_names(seating, bot_id))
    return json.loads(json.dumps(record.to_dict()))


def _compare(
    rules: Rules,
    host_cli: HostCli,
    bundle: Path,
    seatings: Sequence[Sequence[str]],
    bot_id: str | None,
    games: int,
    tmp_path: Path,
) -> tuple[int, int, set[str], float, float]:
    """Play every seating both ways; return games, equal records, parts met, and the CPU
    seconds of node and of Python."""
    bot = load(bot_id) if bot_id else None
    equal, played, met = 0, 0, set()
    node_s = python_s = 0.0
    for k, seating in enumerate(seatings):
        seed = 100 + k
        started = _children_cpu()
        host = _host_records(
            host_cli, bundle, seating, bot_id, seed, games, tmp_path / f"seating{k}"
        )
        node_s += _children_cpu() - started
        started = time.process_time()
        for g, record in enumerate(host):
            expected = _python_record(rules, seating, bot, bot_id, seed, g)
            where = f"seating {','.join(seating)}, game {g} (seed {game_seed(seed, g)})"
            assert record == expected, f"{where}: {_first_difference(record, expected)}"
            equal += 1
            states = replay(record)
            met |= _parts(rules, record, states)
            played += 1
        python_s += time.process_time() - started
    return played, equal, met, node_s, python_s


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _first_difference(got: dict[str, Any], expected: dict[str, Any]) -> str:
    for key in expected:
        if got.get(key) != expected[key]:
            if key == "events":
                for i, (a, b) in enumerate(zip(got["events"], expected["events"], strict=False)):
                    if a != b:
                        return f"event {i}: host {a}, Python {b}"
                return f"host {len(got['events'])} events, Python {len(expected['events'])}"
            return f"{key}: host {got.get(key)!r}, Python {expected[key]!r}"
    return "extra keys " + ", ".join(sorted(set(got) - set(expected)))
