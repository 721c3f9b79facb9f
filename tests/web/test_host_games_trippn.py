"""Trippn's 100 whole games played by the JavaScript host are Python's games, record for
record (apart from the other presets: they run to the horizon and take the longest)."""

from __future__ import annotations

from pathlib import Path

from host_games import GAME_BOTS, GAMES_PER_SEATING, MET, SEATINGS, BundleFile, HostCli, _compare

from greed_env.rules import preset


def test_trippn_host_games_are_pythons(host_cli: HostCli, bundle_file: BundleFile, tmp_path: Path) -> None:
    rules = preset("trippn")
    played, equal, met, node_s, python_s = _compare(
        rules, host_cli, bundle_file("trippn"), SEATINGS, GAME_BOTS["trippn"], GAMES_PER_SEATING, tmp_path
    )
    print(f"trippn: {played} games, {equal} equal; node {node_s:.1f} s, Python {python_s:.1f} s CPU; met {sorted(met)}")
    assert played == equal == GAMES_PER_SEATING * len(SEATINGS)
    assert MET["trippn"] <= met, f"the seeded games no longer meet {sorted(MET['trippn'] - met)}: choose other seeds"
