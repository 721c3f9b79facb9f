"""Model soups (``greed train soup``): the mean of the members' weights, one playable model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
from sb3_contrib import MaskablePPO
from training_settings import SHORT_RULES, load_script
from training_settings import TINY as TRAINING_TINY

from greed_env.bots.errors import BotLoadError
from greed_env.bots.numpy_backend import load_policy
from greed_env.cli import main as greed_main
from greed_env.evaluation import evaluate
from greed_env.rules import Rules
from greed_env.rules.config import rules_from_args
from greed_env.train.soup import soup

# the training smoke tests' tiny runs, against a threshold bot, evaluated only at the end
TINY: dict[str, Any] = {
    **TRAINING_TINY,
    "opponent": "threshold:300",
    "rules_set": SHORT_RULES,
    "eval_every": 10_000,
    "eval_episodes": 4,
    "final_eval_episodes": 4,
    "final_regret_episodes": 0,
    "checkpoint_every": 10_000,
}  # 256 steps: two updates, the last one's annealed learning rate is 0
RULES: Rules = rules_from_args("ten_thousand", SHORT_RULES)


def _run(root: Path, name: str, **overrides: Any) -> Path:
    ppo_duel = load_script("ppo_duel")
    run = ppo_duel.main(ppo_duel.Args(**{**TINY, "runs_dir": str(root / name), **overrides}))
    return run / "model.zip"


@pytest.fixture(scope="module")
def family(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A parent run, two runs fine-tuned from it (seeds 2 and 3) and one trained from scratch."""
    root = tmp_path_factory.mktemp("soup")
    parent = _run(root, "parent")
    return {
        "parent": parent,
        "a": _run(root, "a", seed=2, init_from=str(parent)),
        "b": _run(root, "b", seed=3, init_from=str(parent)),
        "stranger": _run(root, "stranger", seed=4),
    }


def _state(path: Path) -> dict[str, torch.Tensor]:
    return MaskablePPO.load(path, device="cpu").policy.state_dict()


def test_a_soup_is_the_mean_of_its_members_and_plays_like_any_model(family: dict[str, Path], tmp_path: Path) -> None:
    out = soup([family["a"], family["b"]], tmp_path / "soup")
    mean, a, b = _state(out), _state(family["a"]), _state(family["b"])
    assert set(mean) == set(a)
    for key in mean:
        assert torch.allclose(mean[key], (a[key] + b[key]) / 2, atol=1e-6), key
    assert any(not torch.equal(a[k], b[k]) for k in a if "value" not in k)

    card = json.loads(out.with_suffix(".json").read_text())
    cards = [json.loads(family[m].with_suffix(".json").read_text()) for m in ("a", "b")]
    assert card["script"] == "greed_env.train.soup" and card["objective"] == "duel"
    assert card["rules_fingerprint"] == RULES.fingerprint
    assert card["args"]["init_from"] == str(family["parent"])
    assert card["cpu_time_s"] == pytest.approx(sum(c["cpu_time_s"] for c in cards), abs=0.11)
    assert [m["seed"] for m in card["members"]] == [2, 3]

    rules = RULES
    assert load_policy(out, rules).n_actions == load_policy(family["a"], rules).n_actions
    res = evaluate(str(out), rules, "duel", episodes=4, seed=0, regret_episodes=2)
    assert res.score.n == 4
    # a soup is a starting point like any model: a further stage fine-tunes from it
    again = _run(tmp_path, "again", seed=5, init_from=str(out))
    assert json.loads(again.with_suffix(".json").read_text())["args"]["init_from"] == str(out)


def test_members_from_other_parents_are_refused_unless_asked(family: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(BotLoadError, match=r"fine-tuned from .* --any-parent"):
        soup([family["a"], family["stranger"]], tmp_path / "x")
    assert not (tmp_path / "x").exists()
    out = soup([family["a"], family["stranger"]], tmp_path / "y", any_parent=True)
    assert json.loads(out.with_suffix(".json").read_text())["args"]["init_from"] is None


def test_bad_soups_are_refused_and_write_nothing(family: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least two models"):
        soup([family["a"]], tmp_path / "one")
    with pytest.raises(ValueError, match="named twice"):
        soup([family["a"], family["a"]], tmp_path / "twice")
    with pytest.raises(BotLoadError, match="does not exist"):
        soup([family["a"], tmp_path / "missing.zip"], tmp_path / "missing")

    bare = tmp_path / "bare" / "model.zip"
    bare.parent.mkdir()
    shutil.copy(family["b"], bare)
    with pytest.raises(BotLoadError, match="has no card"):
        soup([family["a"], bare], tmp_path / "nocard")

    corrupt = tmp_path / "corrupt" / "model.zip"
    corrupt.parent.mkdir()
    corrupt.write_bytes(b"not a zip at all")
    shutil.copy(family["b"].with_suffix(".json"), corrupt.with_suffix(".json"))
    with pytest.raises(BotLoadError, match="could not be loaded"):
        soup([family["a"], corrupt], tmp_path / "corrupt_out")

    wide = _run(tmp_path, "wide", seed=6, net_width=24, init_from=None)
    with pytest.raises(BotLoadError, match="another network shape"):
        soup([family["a"], wide], tmp_path / "shape", any_parent=True)

    other = _run(tmp_path, "other", seed=7, rules="farkle5", rules_set=["target=2000"])
    with pytest.raises(BotLoadError, match="other rules"):
        soup([family["a"], other], tmp_path / "rules", any_parent=True)

    for name in ("one", "twice", "missing", "nocard", "corrupt_out", "shape", "rules"):
        assert not (tmp_path / name / "model.zip").exists(), name

    done = soup([family["a"], family["b"]], tmp_path / "done")
    with pytest.raises(FileExistsError, match="already holds a model"):
        soup([family["a"], family["b"]], done.parent)


def test_the_command_line(family: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    assert greed_main(["train", "soup", str(family["a"]), str(family["b"]), "--out", str(out)]) == 0
    assert "the mean of 2 models" in capsys.readouterr().out and (out / "model.json").is_file()
    assert greed_main(["train", "soup", str(family["a"]), str(family["stranger"]), "--out", str(tmp_path / "no")]) == 2
    assert "--any-parent" in capsys.readouterr().err
