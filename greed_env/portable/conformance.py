"""Conformance vectors: positions from real games with what a host must compute for each.

A host in another language checks itself against them: for every position it reads the raw
state (:mod:`greed_env.portable.state_json`), builds the observation and the legal mask from
its bundle, runs the bot, and compares with the recorded observation (equal as float32), legal
actions (equal) and greedy action (equal). The positions are the decisions of seeded games
played by the bot itself (in every seat, every other game with a random player in seat 1, so
that odd positions come up too) in two-, three- and four-player games the rules allow, dice
from :class:`~greed_env.portable.PortableRng`.

``margin`` is the gap between the bot's best and second-best legal logit: runtimes sum in
different orders, so two logits closer than float32 noise may be ordered either way by another
runtime. A host counts a different action at a margin below :data:`TIE_MARGIN` as a near tie,
not a mismatch (none of the shipped sets has one).

The file::

    {"format": "greed_env.conformance", "version": 1, "bundle_version": 1,
     "rules_name": ..., "rules_fingerprint": ..., "rules": {...},
     "catalog_version": 3, "obs_spec_version": 2,
     "bot": {"id", "sha256", "num_actions", "action_catalog_version"},
     "seed": S, "games": G,
     "positions": [{"game": g, "state": {...}, "observation": [106 floats],
                    "legal": [ids], "action": id, "margin": m}, ...]}
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from greed_env import __version__
from greed_env.bots.base import RandomBot
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.files import atomic_write_bytes
from greed_env.portable.bundle import BUNDLE_VERSION
from greed_env.portable.rng import PortableRng
from greed_env.portable.state_json import state_to_json
from greed_env.rules import Move, Rules, State, new_game
from greed_env.rules.play import play_out
from greed_env.spaces.catalog import ActionCatalog, catalog_version
from greed_env.spaces.observation import OBS_SPEC_VERSION, encode_observation

__all__ = [
    "CONFORMANCE_FORMAT",
    "CONFORMANCE_VERSION",
    "MAX_POSITIONS",
    "TIE_MARGIN",
    "conformance_vectors",
    "game_seed",
    "read_vectors",
    "write_vectors",
]

CONFORMANCE_FORMAT = "greed_env.conformance"
CONFORMANCE_VERSION = 1
TIE_MARGIN = 1e-4
"""Logit gap under which two runtimes may order the best two actions differently."""
MAX_POSITIONS = 1_000_000


def game_seed(seed: int, game: int) -> int:
    """The portable seed of game ``game`` of a set made with ``seed`` (hosts replay a game
    from it): ``seed * 1,000,003 + game``, modulo 2**64."""
    return (seed * 1_000_003 + game) % (1 << 64)


def _player_counts(rules: Rules) -> list[int]:
    wanted = [2, 2, 3, 4]
    counts = [n for n in wanted if rules.min_players <= n <= rules.max_players]
    return counts or [rules.min_players]


def conformance_vectors(bot: OnnxBot, positions: int, seed: int, rules: Rules | None = None) -> dict[str, Any]:
    """``positions`` decision positions of seeded games, with the observation, the legal
    actions and ``bot``'s greedy action of each (see the module docstring).

    Raises:
        ValueError: ``positions`` outside ``1..MAX_POSITIONS``, or a sampling bot.
    """
    if not 1 <= positions <= MAX_POSITIONS:
        raise ValueError(f"positions must be 1..{MAX_POSITIONS:,}, got {positions}")
    if bot.temperature != 0.0:
        raise ValueError("conformance vectors record a greedy bot's action (temperature 0)")
    rules = rules or bot.rules
    bot.check_rules(rules)
    catalog = ActionCatalog(rules)
    counts = _player_counts(rules)
    states: list[tuple[int, State]] = []
    game = 0
    while len(states) < positions:
        n = counts[game % len(counts)]
        seats: list[Any] = [bot.act] * n
        if game % 2 == 1:
            seats[1] = RandomBot().act
        rng = PortableRng(game_seed(seed, game))
        start = new_game(rules, n)
        g = game

        def collect(before: State, event: Any, after: State, g: int = g) -> None:
            if isinstance(event, Move) and len(states) < positions:
                states.append((g, before))

        play_out(rules, start, seats, rng, on_step=collect)  # type: ignore[arg-type]
        game += 1
    obs = np.stack([encode_observation(rules, s) for _, s in states])
    logits = bot.logits(obs)
    out = []
    for (g, s), o, z in zip(states, obs, logits, strict=True):
        mask = catalog.legal(s)[0].astype(bool)
        legal = np.flatnonzero(mask)
        masked = np.where(mask, z.astype(np.float64), -np.inf)
        action = int(np.argmax(masked))
        top = np.sort(masked[legal])[::-1]
        margin = float(top[0] - top[1]) if len(top) > 1 else None
        out.append(
            {
                "game": g,
                "state": state_to_json(s),
                "observation": o.tolist(),
                "legal": legal.tolist(),
                "action": action,
                "margin": margin,
            }
        )
    card = bot.card
    return {
        "format": CONFORMANCE_FORMAT,
        "version": CONFORMANCE_VERSION,
        "generated_by": f"greed_env {__version__}",
        "bundle_version": BUNDLE_VERSION,
        "rules_name": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "rules": rules.to_dict(),
        "catalog_version": catalog_version(rules),
        "obs_spec_version": OBS_SPEC_VERSION,
        "bot": {
            "id": card.get("id"),
            "sha256": card.get("onnx", {}).get("sha256"),
            "num_actions": card.get("num_actions"),
            "action_catalog_version": card.get("action_catalog_version"),
        },
        "seed": seed,
        "seeds": "game g's dice: PortableRng(seed * 1000003 + g); seat 1 of odd games plays random",
        "games": game,
        "positions": out,
    }


def write_vectors(data: dict[str, Any], path: str | Path) -> Path:
    """Write vectors as compact JSON, gzipped when ``path`` ends with ``.gz`` (atomically)."""
    raw = (json.dumps(data, separators=(",", ":")) + "\n").encode("utf-8")
    if str(path).endswith(".gz"):
        raw = gzip.compress(raw, compresslevel=9, mtime=0)
    return atomic_write_bytes(Path(path), raw)


def read_vectors(path: str | Path) -> dict[str, Any]:
    """Read vectors written by :func:`write_vectors`.

    Raises:
        ValueError: not a conformance file of a version this code reads.
    """
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    data = json.loads(raw)
    if not isinstance(data, dict) or data.get("format") != CONFORMANCE_FORMAT:
        raise ValueError(f"{path}: not a greed_env conformance file")
    if data.get("version") != CONFORMANCE_VERSION:
        raise ValueError(f"{path}: conformance version {data.get('version')!r} is not {CONFORMANCE_VERSION}")
    return data
