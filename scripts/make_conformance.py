"""Write the shipped conformance vectors ``web/conformance/<preset>.json.gz``, one set per preset.

Each set holds 10,000 decision positions of games seeded with 1, with what a host must compute
for each (docs/portable.md, "Conformance vectors"); the JavaScript host is checked against
them in ``tests/web/test_host_conformance.py``, which also fails when a file is no longer what
this script writes. Run it after a change to the rules, the observation, the catalog, the
portable generator or a shipped bot below. ``--bundles DIR`` also writes each preset's bundle
(``DIR/<preset>.bundle.json``), which the host needs to read the vectors.

Usage::

    python scripts/make_conformance.py                       # every preset
    python scripts/make_conformance.py --presets progressive --bundles /tmp/bundles
    node web/host/cli.mjs conformance web/conformance/progressive.json.gz \\
        --bundle /tmp/bundles/progressive.bundle.json --bot agents/progressive/ppo-duel-kick.onnx
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from greed_env.bots.loader import load
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.portable.bundle import write_bundle
from greed_env.portable.conformance import conformance_vectors, write_vectors

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "web" / "conformance"
POSITIONS = 10_000
SEED = 1
BOTS = {
    "greed": "greed/ppo-duel",
    "ten_thousand": "ten_thousand/ppo-duel",
    "progressive": "progressive/ppo-duel-kick",
    "trippn": "trippn/ppo-turn-kick",
    "farkle": "farkle/ppo-duel",
    "farkle5": "farkle5/ppo-duel",
    "zilch": "zilch/ppo-duel",
}
"""The bot whose greedy actions each preset's set records (Trippn has a turn bot only)."""


def make(preset: str, out: Path, bundles: Path | None) -> str:
    """Write one preset's set (and bundle); return a line saying what was written."""
    started = time.perf_counter()
    bot = load(BOTS[preset])
    if not isinstance(bot, OnnxBot):
        raise SystemExit(f"{BOTS[preset]} is not an exported ONNX bot")
    data = conformance_vectors(bot, POSITIONS, SEED)
    path = write_vectors(data, out / f"{preset}.json.gz")
    if bundles is not None:
        write_bundle(preset, bundles / f"{preset}.bundle.json")
    return (
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {len(data['positions']):,} positions "
        f"of {data['games']} games, bot {BOTS[preset]}, {time.perf_counter() - started:.0f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Write the shipped conformance vectors of every preset."
    )
    parser.add_argument(
        "--presets", default=",".join(BOTS), help="comma-separated presets (default: all)"
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, help="folder of the sets (default: web/conformance)"
    )
    parser.add_argument(
        "--bundles", type=Path, help="also write each preset's bundle into this folder"
    )
    args = parser.parse_args(argv)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    unknown = sorted(set(presets) - set(BOTS))
    if unknown:
        parser.error(f"no shipped set for {', '.join(unknown)} (presets: {', '.join(BOTS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.bundles is not None:
        args.bundles.mkdir(parents=True, exist_ok=True)
    for preset in presets:
        print(make(preset, args.out, args.bundles), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
