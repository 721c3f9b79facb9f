"""The JavaScript host (``web/host/``) computes what Python computes, position for position.

Every preset has a shipped set of conformance vectors (``web/conformance/<preset>.json.gz``,
10,000 positions of seeded games, written by ``scripts/make_conformance.py``): the host's
command line reads each with the preset's bundle (written here by Python) and the set's bot,
and must find no mismatch of observation (as float32), legal actions or greedy action. The
sets cannot drift from the code: the first positions of each are made again and compared.
What the host refuses (a bundle, a card or a file of another version or other rules) it
refuses with one line and exit status 2.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from greed_env.bots.loader import load
from greed_env.portable.conformance import conformance_vectors, read_vectors
from greed_env.rules import preset_names

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "web" / "conformance"
PRESETS = preset_names()
POSITIONS = 10_000
REMADE = 300
"""Positions of each shipped set made again by the current code and compared."""

HostCli = Callable[..., subprocess.CompletedProcess[str]]
BundleFile = Callable[[Any], Path]


def _set(preset: str) -> Path:
    return SETS / f"{preset}.json.gz"


def _bot_of(vectors: Path) -> Path:
    bot_id = json.loads(gzip.decompress(vectors.read_bytes()))["bot"]["id"]
    return ROOT / "agents" / f"{bot_id}.onnx"


def _refusal(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command prints (after checking that it is one line, exit 2)."""
    assert proc.returncode == 2, (
        f"exit {proc.returncode}; stdout {proc.stdout[-500:]!r}; stderr {proc.stderr[-500:]!r}"
    )
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and not proc.stdout, (
        f"expected one line on stderr, got {proc.stderr!r} / {proc.stdout!r}"
    )
    return lines[0]


def test_every_preset_has_a_shipped_set() -> None:
    assert sorted(p.name.removesuffix(".json.gz") for p in SETS.glob("*.json.gz")) == PRESETS


@pytest.mark.parametrize("preset", PRESETS)
def test_the_host_matches_python_at_every_position(
    preset: str, host_cli: HostCli, bundle_file: BundleFile
) -> None:
    bundle = bundle_file(preset)
    started = time.process_time()
    proc = host_cli(
        "conformance",
        str(_set(preset)),
        "--bundle",
        str(bundle),
        "--bot",
        str(_bot_of(_set(preset))),
        "--json",
    )
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    print(
        f"{preset}: {report['positions']} positions, mismatches: observation {report['observationMismatches']}, "
        f"legal {report['legalMismatches']}, action {report['actionMismatches']}; near ties {report['nearTies']} "
        f"({report['nearTieDiffer']} with another action); node {report['seconds']:.1f} s "
        f"(bundle and parent {time.process_time() - started:.1f} s CPU)"
    )
    assert report["positions"] == POSITIONS
    found = {k: report[k] for k in ("observationMismatches", "legalMismatches", "actionMismatches")}
    assert found == dict.fromkeys(found, 0), "\n".join(report["examples"])
    assert proc.returncode == 0


@pytest.mark.parametrize("preset", PRESETS)
def test_the_shipped_set_is_what_the_code_writes(preset: str) -> None:
    shipped = read_vectors(_set(preset))
    bot = load(shipped["bot"]["id"])
    remade = json.loads(json.dumps(conformance_vectors(bot, REMADE, shipped["seed"])))
    for key in (
        "bundle_version",
        "rules_fingerprint",
        "rules",
        "catalog_version",
        "obs_spec_version",
        "bot",
        "seed",
    ):
        assert shipped[key] == remade[key], (
            f"{key} changed: run scripts/make_conformance.py --presets {preset}"
        )
    assert len(shipped["positions"]) == POSITIONS
    for i, (old, new) in enumerate(zip(shipped["positions"], remade["positions"], strict=False)):
        assert old == new, (
            f"position {i} differs from what the code writes: run scripts/make_conformance.py --presets {preset}"
        )


def _copy_bot(folder: Path, bot_id: str, **card_changes: Any) -> Path:
    """A copy of a shipped bot in ``folder`` with some fields of its card changed."""
    folder.mkdir()
    source = ROOT / "agents" / f"{bot_id}.onnx"
    onnx = folder / source.name
    onnx.write_bytes(source.read_bytes())
    card = json.loads(source.with_suffix(".json").read_text(encoding="utf-8"))
    onnx.with_suffix(".json").write_text(json.dumps({**card, **card_changes}), encoding="utf-8")
    return onnx


def test_refusals_are_one_line(tmp_path: Path, host_cli: HostCli, bundle_file: BundleFile) -> None:
    vectors = _set("greed")
    bundle = bundle_file("greed")
    bot = ROOT / "agents" / "greed" / "ppo-duel.onnx"
    other = tmp_path / "v2.bundle.json"
    other.write_text(
        json.dumps({**json.loads(bundle.read_text(encoding="utf-8")), "bundle_version": 2}),
        encoding="utf-8",
    )
    not_vectors = tmp_path / "v9.json"
    not_vectors.write_text(
        json.dumps({"format": "greed_env.conformance", "version": 9}), encoding="utf-8"
    )
    cases = {
        "bundle of another version": (
            ("conformance", str(vectors), "--bundle", str(other), "--bot", str(bot)),
            "bundle version 2 is not 1",
        ),
        "bot of other rules": (
            (
                "conformance",
                str(vectors),
                "--bundle",
                str(bundle),
                "--bot",
                str(ROOT / "agents" / "zilch" / "ppo-duel.onnx"),
            ),
            "bot zilch/ppo-duel was made for rules",
        ),
        "card of another catalog version": (
            (
                "conformance",
                str(vectors),
                "--bundle",
                str(bundle),
                "--bot",
                str(_copy_bot(tmp_path / "a", "greed/ppo-duel", action_catalog_version=7)),
            ),
            "has action catalog version 7",
        ),
        "card of another observation": (
            (
                "conformance",
                str(vectors),
                "--bundle",
                str(bundle),
                "--bot",
                str(_copy_bot(tmp_path / "b", "greed/ppo-duel", obs_spec_version=3)),
            ),
            "reads observation spec version 3",
        ),
        "card of another bundle version": (
            (
                "conformance",
                str(vectors),
                "--bundle",
                str(bundle),
                "--bot",
                str(_copy_bot(tmp_path / "c", "greed/ppo-duel", bundle_version=2)),
            ),
            "plays with bundle version 2",
        ),
        "vectors of another version": (
            ("conformance", str(not_vectors), "--bundle", str(bundle), "--bot", str(bot)),
            "conformance version 9 is not 1",
        ),
        "vectors of other rules": (
            ("conformance", str(_set("zilch")), "--bundle", str(bundle), "--bot", str(bot)),
            "vectors of rules",
        ),
        "play with a bot of other rules": (
            (
                "play",
                "--bundle",
                str(bundle),
                "--bots",
                f"{ROOT / 'agents' / 'zilch' / 'ppo-duel.onnx'},random",
                "--seed",
                "1",
            ),
            "was made for rules",
        ),
    }
    for case, (args, expected) in cases.items():
        line = _refusal(host_cli(*args))
        assert expected in line, f"{case}: {line}"
