"""``scripts/duel_ensemble.py``: the mean of several policies' logits, and the regret estimate
of each policy over the same games."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "scripts"


def _benchmark(name: str) -> ModuleType:
    """A script of scripts/ loaded from its file (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_duel_ensemble_averages_logits_and_estimates_each_policy() -> None:
    import numpy as np

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.rules import preset
    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.spaces.observation import OBS_DIM

    ens_mod = _benchmark("duel_ensemble")
    rules = preset("ten_thousand")
    n = ActionCatalog(rules).n
    rng = np.random.default_rng(0)

    def policy(seed: int) -> NumpyPolicy:
        r = np.random.default_rng(seed)
        layers = [(r.normal(size=(8, OBS_DIM)).astype(np.float32), np.zeros(8, np.float32))]
        head = (r.normal(size=(n, 8)).astype(np.float32), np.zeros(n, np.float32))
        return NumpyPolicy(layers, head, "tanh", meta={"rules_fingerprint": rules.fingerprint})

    a, b = policy(1), policy(2)
    obs = rng.random((5, OBS_DIM)).astype(np.float32)
    ens = ens_mod.MeanLogits([a, b])
    assert np.allclose(ens.logits(obs), (a.logits(obs) + b.logits(obs)) / 2, atol=1e-6)
    assert np.allclose(ens_mod.MeanLogits([a]).logits(obs), a.logits(obs))
    small = NumpyPolicy([(np.zeros((8, OBS_DIM - 1), np.float32), np.zeros(8, np.float32))], a.head, "tanh")
    with pytest.raises(ValueError, match="different observations"):
        ens_mod.MeanLogits([a, small])
    mean, half = ens_mod.estimate(ens, rules, 3, 5, "ensemble")
    assert np.isfinite(mean) and mean <= 0.5 + 1e-9 and half >= 0.0  # regrets are never negative
