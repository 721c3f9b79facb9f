"""Positions the seeded games rarely reach, played on by the JavaScript host as by Python.

Roll-offs are rare in whole games (two players must go out exactly in the same final round,
then one refuse to split), and Trippn's lock-in (sets of 2s, 3s, 4s and 6s working in a
roll-off turn) rarer still. Here the host starts from positions built in Python (the roll-off
order to choose, a roll-off under way) and random players play them on with the dice of
``PortableRng(seed)``; the events and the last position must be Python's
(:func:`~greed_env.rules.play.play_out`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from greed_env.bots.base import RandomBot
from greed_env.portable import PortableRng, state_to_json
from greed_env.rules import Move, Phase, Rules, State, new_game, preset
from greed_env.rules.play import play_out
from greed_env.rules.record import state_summary

STARTS = 60


def _rolloff_starts(rules: Rules, count: int) -> list[State]:
    """Finishers tied at the target, the first to choose the roll-off order; every third a
    roll-off of three already in its second round."""
    out = []
    for k in range(count):
        n = 2 + k % 2
        s = new_game(rules, n, first_player=0)._replace(
            phase=Phase.ORDER_CHOICE,
            player=0,
            scores=(rules.target,) * n,
            finishers=tuple(range(n)),
            endgame=True,
        )
        if k % 3 == 2:
            s = s._replace(
                phase=Phase.ROLL,
                player=n - 1,
                rolloff=tuple(range(n)),
                rolloff_scores=(350,) * (n - 1),
                rolloff_round=2,
            )
        out.append(s)
    return out


def _python_playout(rules: Rules, state: State, seed: int) -> dict[str, Any]:
    """The events and last position of ``state`` played on; ``how``: what the steps said."""
    events: list[dict[str, Any]] = []
    said: list[str] = []

    def log(before: State, event: Any, after: State) -> None:
        kind = "move" if isinstance(event, Move) else "roll"
        events.append(
            {"player": before.player, kind: str(event) if kind == "move" else list(event)}
        )
        said.append(after.event)

    end = play_out(
        rules, state, [RandomBot().act] * state.num_players, PortableRng(seed), on_step=log
    )
    return {"events": events, "final": state_summary(end), "how": "\n".join(said)}


def test_rolloffs_and_lock_ins_play_as_in_python(
    tmp_path: Path, run_node: Callable[..., Any], bundle_file: Callable[[Any], Path]
) -> None:
    met = {"locked in": 0, "roll-off tied: again": 0, "roll_first": 0, "roll_last": 0}
    for name in ("trippn", "progressive"):
        rules = preset(name)
        starts = _rolloff_starts(rules, STARTS if name == "trippn" else STARTS // 3)
        spec = tmp_path / f"{name}.json"
        spec.write_text(
            json.dumps(
                {
                    "bundle": str(bundle_file(name)),
                    "starts": [
                        {"state": state_to_json(s), "seed": seed} for seed, s in enumerate(starts)
                    ],
                }
            )
        )
        got = run_node("check_playout.mjs", str(spec))
        for seed, (state, host) in enumerate(zip(starts, got, strict=True)):
            expected = _python_playout(rules, state, seed)
            how = expected.pop("how")
            assert host == expected, (
                f"{name} start {seed}: host {host['final']}, Python {expected['final']} ({how})"
            )
            for what in ("locked in", "roll-off tied: again"):
                met[what] += what in how
            for e in expected["events"]:
                if e.get("move") in ("roll_first", "roll_last"):
                    met[e["move"]] += 1
    print(f"roll-offs played on: {met}")
    assert all(met.values()), (
        f"the seeded roll-offs no longer meet {[k for k, v in met.items() if not v]}"
    )
