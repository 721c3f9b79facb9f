"""web/host/onnx.mjs evaluates every shipped ONNX policy as onnxruntime does.

Observations and legal masks come from seeded random games of each bot's rules; onnxruntime's
logits for them go to a temporary folder (float32 files and a JSON manifest), and one node
process checks every model: each logit within ``1e-4 * (1 + |ort|)`` and the same greedy
action. Where the two best legal logits lie within float32 noise (``NEAR_TIE``) either action
passes; such positions are counted apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from greed_env.bots.cards import card_rules, read_card
from greed_env.rules import (
    Rules,
    apply,
    apply_roll,
    is_chance,
    is_over,
    legal_moves,
    new_game,
    sample_roll,
)
from greed_env.spaces.catalog import ActionCatalog
from greed_env.spaces.observation import encode_observation

ROOT = Path(__file__).resolve().parents[2]
CARDS = sorted(p for p in ROOT.glob("agents/*/*.json") if p.with_suffix(".onnx").is_file())
POSITIONS = 300
PLAYERS = 3
TOLERANCE = 1e-4
BIGGEST = max(CARDS, key=lambda p: p.with_suffix(".onnx").stat().st_size)


def _positions(rules: Rules, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and legal masks of the decisions of seeded random games."""
    catalog = ActionCatalog(rules)
    rng = np.random.default_rng(seed)
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    while len(obs) < count:
        state = new_game(rules, PLAYERS, first_player=0)
        while not is_over(state) and len(obs) < count:
            if is_chance(state):
                state = apply_roll(rules, state, sample_roll(rules, state, rng))
                continue
            obs.append(encode_observation(rules, state))
            masks.append(catalog.legal(state)[0].copy())
            moves = legal_moves(rules, state)
            state = apply(rules, state, moves[int(rng.integers(len(moves)))])
    return np.stack(obs).astype(np.float32), np.stack(masks).astype(np.uint8)


def _ort_logits(path: Path, obs: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    (logits,) = session.run(None, {session.get_inputs()[0].name: obs})
    return np.asarray(logits, dtype=np.float32)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, run_node: Callable[..., Any]) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("onnx_js")
    positions: dict[str, dict[str, Any]] = {}
    models = []
    for seed, card_path in enumerate(CARDS):
        rules = card_rules(read_card(card_path))
        if rules.name not in positions:
            obs, masks = _positions(rules, POSITIONS, seed)
            (folder / f"{rules.name}.obs").write_bytes(obs.tobytes())
            (folder / f"{rules.name}.mask").write_bytes(masks.tobytes())
            positions[rules.name] = {
                "obs": f"{rules.name}.obs", "masks": f"{rules.name}.mask",
                "batch": len(obs), "maskWidth": masks.shape[1], "array": obs,
            }
        name = f"{card_path.parent.name}/{card_path.stem}"
        logits = _ort_logits(card_path.with_suffix(".onnx"), positions[rules.name]["array"])
        (folder / f"{name.replace('/', '_')}.logits").write_bytes(logits.tobytes())
        models.append({
            "name": name, "path": str(card_path.with_suffix(".onnx")), "rules": rules.name,
            "logits": f"{name.replace('/', '_')}.logits", "timed": card_path == BIGGEST,
        })
    for entry in positions.values():
        del entry["array"]
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps({"models": models, "positions": positions}))
    return {r["model"]: r for r in run_node("check_onnx.mjs", str(manifest))}


@pytest.mark.parametrize("card", CARDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_logits_and_greedy_actions_match_onnxruntime(card: Path, reports: dict[str, dict[str, Any]]) -> None:
    report = reports[f"{card.parent.name}/{card.stem}"]
    assert "error" not in report, report.get("error")
    assert report["positions"] >= POSITIONS
    assert report["maxScaled"] <= TOLERANCE, f"largest |js - ort| / (1 + |ort|) is {report['maxScaled']:.3g}"
    assert report["argmaxDiffer"] == 0, f"{report['argmaxDiffer']} greedy actions differ from onnxruntime's"
    assert report["columnsDiffer"] == 0, f"{report['columnsDiffer']} legal logits differ when asked for alone"


def test_biggest_model_runs_one_position_quickly(reports: dict[str, dict[str, Any]]) -> None:
    checked = [r for r in reports.values() if "error" not in r]
    print(
        f"{len(checked)} models, {sum(r['positions'] for r in checked)} positions: largest |js - ort| "
        f"{max(r['maxAbs'] for r in checked):.3g}, scaled {max(r['maxScaled'] for r in checked):.3g}; "
        f"near-ties {sum(r['nearTies'] for r in checked)} ({sum(r['nearTieDiffer'] for r in checked)} of them differ)"
    )
    report = reports[f"{BIGGEST.parent.name}/{BIGGEST.stem}"]
    print(
        f"{report['model']}: {report['msPerPosition']:.2f} ms per position "
        f"({report['cpuMsPerPosition']:.2f} ms of CPU), loaded in {report['loadMs']:.0f} ms"
    )
    assert report["msPerPosition"] < 50, f"{report['msPerPosition']:.1f} ms per position"


def _tiny_model(path: Path, nodes: list[Any], inputs: list[str], outputs: list[str], initializers: list[Any]) -> Path:
    """A float (batch, 4) graph of ``nodes`` saved to ``path``."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", 4]) for name in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", 4]) for name in outputs],
        initializers,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    return path


def test_what_it_cannot_run_is_refused_by_name(tmp_path: Path, run_node: Callable[..., Any]) -> None:
    from onnx import TensorProto, helper

    weights = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    outside = helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    outside.ClearField("float_data")
    outside.data_location = TensorProto.EXTERNAL
    outside.external_data.add(key="location", value="weights.bin")
    add = helper.make_node("Add", ["obs", "w"], ["y"])
    cases = {
        "unknown operator": (
            _tiny_model(tmp_path / "relu.onnx", [helper.make_node("Relu", ["obs"], ["y"])], ["obs"], ["y"], []),
            "operators not supported by this evaluator: Relu",
        ),
        "external data": (
            _tiny_model(tmp_path / "external.onnx", [add], ["obs"], ["y"], [outside]),
            "initializer 'w' keeps its data in an external file",
        ),
        "two inputs": (
            _tiny_model(tmp_path / "two_in.onnx", [helper.make_node("Add", ["a", "b"], ["y"])], ["a", "b"], ["y"], []),
            "must have one float input (batch, dim); it has 2: a, b",
        ),
        "two outputs": (
            _tiny_model(tmp_path / "two_out.onnx", [add, helper.make_node("Tanh", ["y"], ["z"])], ["obs"], ["y", "z"], [weights]),
            "must have one output; it has 2: y, z",
        ),
    }
    said = {r["file"]: r["error"] for r in run_node("check_onnx.mjs", "--load", *(str(p) for p, _ in cases.values()))}
    for case, (path, expected) in cases.items():
        assert said[str(path)] is not None, f"{case}: loaded"
        assert expected in said[str(path)], f"{case}: {said[str(path)]}"
