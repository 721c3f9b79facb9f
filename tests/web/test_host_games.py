"""Whole games played by the JavaScript host are Python's games, record for record.

``node web/host/cli.mjs play`` plays seeded games (game ``g`` of seed ``S``: dice and random
choices from ``PortableRng(S * 1000003 + g)``) and writes one ``greed_env.game_record`` per
game; Python plays the same games with :func:`~greed_env.rules.record.record_game` and the
same generator. The records must be equal as parsed JSON, and :func:`~greed_env.rules.record.replay`
(what ``greed replay`` runs) must accept each record the host wrote.

Every preset plays 100 games over four seatings (two bots; a bot and a random player; three
and four players with random seats among the bots), so the who-starts roll, final rounds,
exact targets, voluntary busts, bust penalties and rerolls come up. Variants of the presets,
played by random players, reach the parts of the turn flow no preset uses or the bots rarely
meet: piggyback, six of a kind, a fixed number of rounds, come-in rules, split votes and
roll-offs, the first finisher's tie, the horizon. Each test says which parts its games met,
and fails when one it is there to cover is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from host_games import (
    GAME_BOTS,
    GAMES_PER_SEATING,
    MET,
    SEATINGS,
    VARIANT_GAMES,
    VARIANT_SEATINGS,
    VARIANTS,
    BundleFile,
    HostCli,
    _compare,
)

from greed_env.rules import preset


@pytest.mark.parametrize("name", sorted(set(GAME_BOTS) - {"trippn"}))
def test_host_games_are_pythons(
    name: str, host_cli: HostCli, bundle_file: BundleFile, tmp_path: Path
) -> None:
    rules = preset(name)
    played, equal, met, node_s, python_s = _compare(
        rules, host_cli, bundle_file(name), SEATINGS, GAME_BOTS[name], GAMES_PER_SEATING, tmp_path
    )
    print(
        f"{name}: {played} games, {equal} equal, {played} replayed; node {node_s:.1f} s, Python {python_s:.1f} s CPU; met {sorted(met)}"
    )
    assert played == equal == GAMES_PER_SEATING * len(SEATINGS)
    assert MET[name] <= met, (
        f"the seeded games no longer meet {sorted(MET[name] - met)}: choose other seeds"
    )


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_host_games_of_variants_are_pythons(
    name: str, host_cli: HostCli, bundle_file: BundleFile, tmp_path: Path
) -> None:
    base, changes, parts = VARIANTS[name]
    rules = preset(base, **changes)
    seatings = [s for s in VARIANT_SEATINGS if rules.min_players <= len(s) <= rules.max_players]
    if rules.min_players == 1:
        seatings.append(("random",))
    played, equal, met, node_s, python_s = _compare(
        rules, host_cli, bundle_file(rules), seatings, None, VARIANT_GAMES, tmp_path
    )
    print(
        f"{name}: {played} games, {equal} equal, {played} replayed; node {node_s:.1f} s, Python {python_s:.1f} s CPU; met {sorted(met)}"
    )
    assert played == equal == VARIANT_GAMES * len(seatings)
    assert parts <= met, (
        f"the seeded games no longer meet {sorted(parts - met)}: choose other seeds"
    )
