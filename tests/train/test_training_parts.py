"""The pieces of the training scripts: arguments and their docs, ``greed train`` and how it finds
the scripts, imports, features, policies, warm starts, self-play."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import re
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from training_settings import load_script

from greed_env.bots.featurize import FeatureConfig, featurize
from greed_env.cli import main as greed_main
from greed_env.rules import RulesError, preset
from greed_env.rules.config import rules_from_args
from greed_env.spaces.observation import OBS_DIM
from greed_env.train import recipes as script_finder
from greed_env.train.recipes import script_docstring, script_names
from greed_env.train.settings import parse_args

SCRIPTS = ("ppo_duel", "ppo_selfplay", "ppo_turn", "progressive_race", "rllib_selfplay")
DuelArgs = load_script("ppo_duel").Args


def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of the dataclass ``cls`` or of a class it is made of (the
    help of the field's flag)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body  # type: ignore[attr-defined]
        for node, after in itertools.pairwise(body):
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                docs[node.target.id] = " ".join(str(after.value.value).split())  # type: ignore[union-attr]
    return docs


def test_the_training_folder_holds_the_scripts_each_argument_documented(capsys: pytest.CaptureFixture[str]) -> None:
    """Every flag's help is the docstring under its field (a field of a shared settings class
    that a script gives another default keeps the class's docstring)."""
    assert set(SCRIPTS) <= set(script_names())
    for name in script_names():
        module = load_script(name)
        docs = _field_docs(module.Args)
        fields = {f.name for f in dataclasses.fields(module.Args)}
        assert fields <= set(docs) and all(docs[f] for f in fields), (name, fields - set(docs))
        assert module.__name__ == f"greed_env.training.{name}" and callable(module.main)
        doc = module.__doc__ or ""
        assert f"greed train {name}" in doc and f"python training/{name}.py" in doc, name
    turn = load_script("ppo_turn")
    args = parse_args(turn.Args, ["--no-anneal-lr", "--target-kl", "none", "--seed", "7", "--entry-starts", "0"])
    assert (args.anneal_lr, args.target_kl, args.seed, args.entry_starts) == (False, None, 7, 0.0)
    with pytest.raises(SystemExit):
        parse_args(DuelArgs, ["--help"])
    text = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "--opponent STR opponent bot: 'optimal' (the solver's duel bot)" in text
    with pytest.raises(SystemExit):
        parse_args(turn.Args, ["--vector", "warp"])


def test_every_command_in_a_scripts_docstring_parses() -> None:
    """The commands a script's docstring shows (``greed train NAME ...``, continuation lines
    joined) name only options its ``Args`` has, so the documented recipes cannot go stale."""
    seen = 0
    for name in script_names():
        text = re.sub(r"\\\n\s*", " ", script_docstring(name))
        for match in re.finditer(r"^\s*greed train (\w+)([^\n#]*)", text, re.MULTILINE):
            script, argv = match.group(1), match.group(2).split()
            parse_args(load_script(script).Args, argv)
            seen += 1
    assert seen >= 15


def test_the_readme_lists_every_script(repo_root: Path) -> None:
    readme = (repo_root / "training" / "README.md").read_text()
    for name in script_names():
        assert f"`{name}.py`" in readme, name


SCRIPT_TESTS = {
    "ppo_duel": "test_training_scripts.py::test_ppo_duel_against_the_optimal_bot_in_numba_with_starts_shaping_and_the_regret_estimate",
    "ppo_selfplay": "test_training_scripts.py::test_ppo_selfplay_fills_the_snapshot_pool",
    "ppo_teacher_duel": "test_teacher_scripts.py::test_duel_script_trains_with_the_teacher_and_its_starts",
    "ppo_teacher_turn": "test_teacher_scripts.py::test_turn_script_trains_with_the_teacher_resumes_and_exports",
    "ppo_turn": "test_training_scripts.py::test_ppo_turn_writes_model_card_logs_checkpoints_and_exports_a_bot",
    "progressive_race": "test_training_scripts.py::test_progressive_race_chain_lands_its_stages_on_the_exact_target",
    "rllib_selfplay": "test_rllib.py::test_one_selfplay_iteration_checkpoints_and_exports_a_bot",
}
"""The test that runs each script of ``training/`` to the end and reads the card of its run."""


def _loads_script(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is the call ``load_script("name")``."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "load_script"
        and [getattr(a, "value", None) for a in node.args] == [name]
    )  # fmt: skip


def _script_fixtures(tree: ast.Module) -> set[str]:
    """Fixtures of a file that return ``load_script(their own name)``."""
    return {
        f.name for f in tree.body if isinstance(f, ast.FunctionDef)
        and any(isinstance(n, ast.Return) and n.value is not None and _loads_script(n.value, f.name) for n in ast.walk(f))
    }  # fmt: skip


def _runs_and_reads(func: ast.FunctionDef, name: str, fixtures: set[str]) -> bool:
    """Whether a test calls ``main`` of the script ``name`` (a fixture returning it, or a
    variable bound to ``load_script(name)``) and names ``training/NAME.py``, the ``script``
    field of the card its run writes."""
    modules = {a.arg for a in func.args.args if a.arg == name and name in fixtures}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and _loads_script(node.value, name):
            modules |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    calls = any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "main"
        and isinstance(n.func.value, ast.Name) and n.func.value.id in modules
        for n in ast.walk(func)
    )  # fmt: skip
    reads = any(isinstance(n, ast.Constant) and n.value == f"training/{name}.py" for n in ast.walk(func))
    return calls and reads


def test_every_script_has_a_test_that_runs_it(repo_root: Path) -> None:
    """A script of ``training/`` that no test runs would go stale unnoticed: each has a test
    (:data:`SCRIPT_TESTS`) that calls its ``main`` and reads the card its run wrote."""
    assert set(SCRIPT_TESTS) == set(script_names())
    folder = repo_root / "tests" / "train"
    fixtures = _script_fixtures(ast.parse((folder / "conftest.py").read_text()))
    for name, where in SCRIPT_TESTS.items():
        file, test = where.split("::")
        tree = ast.parse((folder / file).read_text())
        funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
        assert test in funcs, where
        assert _runs_and_reads(funcs[test], name, fixtures | _script_fixtures(tree)), where


def test_rules_overrides() -> None:
    assert rules_from_args("farkle", ["entry_threshold=500"]).entry_threshold == 500
    with pytest.raises(RulesError):
        rules_from_args("farkle", ["no_such_field=1"])
    with pytest.raises(RulesError, match="FIELD=VALUE"):
        rules_from_args("farkle", ["target"])
    with pytest.raises(RulesError, match="one FIELD=VALUE per flag"):
        rules_from_args("farkle", "target=3000;entry_threshold=500")  # type: ignore[arg-type]


def test_the_scripts_take_set_and_not_the_old_rules_set(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(DuelArgs, ["--set", "target=3000", "--set", "entry_threshold=500"])
    assert args.rules_set == ["target=3000", "entry_threshold=500"]
    assert rules_from_args(args.rules, args.rules_set).target == 3000
    assert parse_args(DuelArgs, []).rules_set == []
    with pytest.raises(SystemExit) as exc:
        greed_main(["train", "ppo_turn", "--rules-set", "target=3000"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Unrecognized options: --rules-set" in err and "greed train ppo_turn --help" in err


def test_the_command_line_imports_neither_torch_nor_a_script_until_one_runs() -> None:
    code = (
        "import sys, greed_env.cli, greed_env.evaluation, greed_env.train.settings, greed_env.train.recipes, "
        "greed_env.train.selfplay_env, greed_env.bots.numpy_backend; greed_env.cli.build_parser(); "
        "print('torch' in sys.modules, any(m.startswith('greed_env.training') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_a_script_runs_as_a_file_of_the_checkout(
    repo_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python training/ppo_turn.py --help``, in this process (torch is imported already)."""
    monkeypatch.setattr(sys, "argv", ["ppo_turn.py", "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(repo_root / "training" / "ppo_turn.py"), run_name="__main__")
    assert stop.value.code == 0
    helped = capsys.readouterr().out
    assert "--entry-starts" in helped and "--resume" in helped and "--export" in helped


def test_greed_train_lists_the_scripts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        greed_main(["train", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    for name in (*script_names(), "soup"):
        assert re.search(rf"^\s+{name}\s", text, re.MULTILINE), name
    for old in ("solo", "duel", "selfplay", "rllib"):  # the names before the scripts: gone
        assert not re.search(rf"\b{old}\b,|\({old}\)", text), old


def test_greed_train_runs_any_script_of_the_folder_without_registration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new ``training/NAME.py`` with ``Args`` and ``main`` is a ``greed train`` script at once."""
    folder = tmp_path / "training"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""scripts"""\n')
    (folder / "_helper.py").write_text("class Args: ...\ndef main(a): ...\n")  # private: not a script
    (folder / "notes.py").write_text("X = 1\n")  # no Args and main: not a script
    (folder / "library.py").write_text("class Args: ...\ndef main(a): ...\n")  # never runs main: not a script
    (folder / "hello.py").write_text(
        '"""Say hello.\n\n    greed train hello --times 2\n"""\n'
        "from dataclasses import dataclass\n"
        "from pathlib import Path\n\n"
        "from greed_env.train.settings import parse_args\n\n\n"
        "@dataclass\nclass Args:\n    times: int = 1\n    \"\"\"how often\"\"\"\n\n\n"
        "def main(args: Args) -> Path:\n"
        "    if args.times < 1:\n        raise ValueError('--times must be >= 1')\n"
        "    print('hello ' * args.times)\n    return Path('.')\n\n\n"
        'if __name__ == "__main__":\n    main(parse_args(Args))\n'
    )
    monkeypatch.setattr(script_finder, "_checkout_dir", lambda: folder)
    assert script_names() == ["hello"]
    assert greed_main(["train", "hello", "--times", "2"]) == 0
    assert capsys.readouterr().out.strip() == "hello hello"
    assert greed_main(["train", "hello", "--times", "0"]) == 2
    assert capsys.readouterr().err == "greed train hello: --times must be >= 1\n"
    from greed_env.commands.train_cmd import script_examples

    assert script_examples()["train hello"] == "greed train hello --times 2"
    with pytest.raises(script_finder.ScriptError, match="unknown training script 'nope'"):
        script_finder.run_script("nope", [])


def test_greed_train_rllib_without_ray_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert greed_main(["train", "rllib_selfplay", "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("greed train rllib_selfplay: Ray RLlib is not installed") and "greed-env[ray]" in err
    assert "\n" not in err and not (tmp_path / "runs").exists()


def test_feature_readings_are_exact() -> None:
    from greed_env.envs.solitaire import SolitaireEnv

    rules = preset("ten_thousand")
    cfg = FeatureConfig.for_rules(rules)
    env = SolitaireEnv(rules)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = env.state
        f = featurize(obs[None], cfg)[0]
        assert f.shape == (cfg.out_dim(OBS_DIM),)
        base = OBS_DIM
        for face in range(1, 7):
            count = s.roll.count(face)
            row = f[base + 6 * (face - 1) : base + 6 * face]
            assert row.tolist() == [1.0] * count + [0.0] * (6 - count)
        hand = f[base + 36 : base + 42]
        assert int(hand.sum()) == (len(s.roll) if s.roll else s.dice)
        assert f[base + 42] == pytest.approx(s.turn_total / 1000)
        assert int(f[base + 43 : base + 43 + 60].sum()) == min(s.turn_total // 50, 60)
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset()


def test_margin_readings_are_exact_in_numpy_and_torch() -> None:
    import gymnasium as gym
    import torch

    from greed_env.train.network import GreedFeatures

    rules = preset("ten_thousand")
    cfg = FeatureConfig.for_rules(rules, margin=True)
    assert (cfg.margin_low, cfg.margin_high, cfg.margin_step) == (-3000, 1000, 50)
    assert cfg.extra_dim == FeatureConfig.for_rules(rules).extra_dim + cfg.margin_dim == 183 + 82
    env = gym.make("greed_env/Duel-v0", rules="ten_thousand", opponent="optimal")
    module = GreedFeatures(env.observation_space, cfg.to_dict())
    obs, info = env.reset(seed=4)
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(1500):
        f = featurize(obs[None], cfg)
        assert np.array_equal(f, module(torch.as_tensor(obs[None])).numpy())
        s = env.unwrapped.state
        margin = s.scores[s.player] + s.turn_total - s.scores[1 - s.player]
        lin, thermo = f[0, -cfg.margin_dim], f[0, -cfg.margin_dim + 1 :]
        assert lin == pytest.approx(max(-10_000, min(10_000, margin)) / 1000, abs=1e-5)
        assert thermo.tolist() == [float(level <= margin) for level in cfg.margin_levels()]
        seen.add(int(np.sign(margin)))
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert seen == {-1, 0, 1}


def test_final_round_margin_readings_are_zero_before_the_final_round() -> None:
    import gymnasium as gym
    import torch

    from greed_env.bots.featurize import I_FINAL_ROUND
    from greed_env.train.network import GreedFeatures

    rules = preset("ten_thousand", target=2000)
    everywhere = FeatureConfig.for_rules(rules, margin=True)
    final = FeatureConfig.for_rules(rules, margin=True, final_only=True)
    assert FeatureConfig.from_dict(final.to_dict()) == final and final.extra_dim == everywhere.extra_dim
    with pytest.raises(ValueError, match="need the margin readings"):
        FeatureConfig.from_dict({**FeatureConfig.for_rules(rules).to_dict(), "margin_final": True})
    env = gym.make("greed_env/Duel-v0", rules=rules, opponent="optimal")
    module = GreedFeatures(env.observation_space, final.to_dict())
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(2)
    counts = {0: 0, 1: 0}
    for _ in range(3000):
        f = featurize(obs[None], final)
        assert np.array_equal(f, module(torch.as_tensor(obs[None])).numpy())
        full = featurize(obs[None], everywhere)
        in_final = bool(obs[I_FINAL_ROUND] > 0.5)
        counts[int(in_final)] += 1
        assert np.array_equal(f[:, : -final.margin_dim], full[:, : -final.margin_dim])
        tail = f[0, -final.margin_dim :]
        assert np.array_equal(tail, full[0, -final.margin_dim :]) if in_final else not tail.any()
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert counts[0] > 100 and counts[1] > 20


def test_crossing_readings_copy_the_margin_only_when_banking_reaches_the_target_before_a_final_round() -> None:
    import gymnasium as gym
    import torch

    from greed_env.bots.featurize import I_FINAL_ROUND
    from greed_env.train.network import GreedFeatures

    rules = preset("ten_thousand", target=2000)
    final = FeatureConfig.for_rules(rules, margin=True, final_only=True)
    cross = FeatureConfig.for_rules(rules, margin=True, final_only=True, cross=True)
    assert FeatureConfig.from_dict(cross.to_dict()) == cross
    assert cross.extra_dim == final.extra_dim + cross.margin_dim
    with pytest.raises(ValueError, match="need the margin readings"):
        FeatureConfig.from_dict({**FeatureConfig.for_rules(rules).to_dict(), "margin_cross": True})
    everywhere = FeatureConfig.for_rules(rules, margin=True)
    env = gym.make("greed_env/Duel-v0", rules=rules, opponent="optimal")
    module = GreedFeatures(env.observation_space, cross.to_dict())
    obs, info = env.reset(seed=6)
    rng = np.random.default_rng(3)
    counts = {"cross": 0, "final": 0, "neither": 0}
    k = cross.margin_dim
    for _ in range(4000):
        f = featurize(obs[None], cross)
        assert np.array_equal(f, module(torch.as_tensor(obs[None])).numpy())
        assert np.array_equal(f[:, :-k], featurize(obs[None], final))
        s = env.unwrapped.state
        reaches = not s.endgame and s.scores[s.player] + s.turn_total >= rules.target
        assert bool(obs[I_FINAL_ROUND] > 0.5) == s.endgame
        tail = f[0, -k:]
        assert np.array_equal(tail, featurize(obs[None], everywhere)[0, -k:]) if reaches else not tail.any()
        counts["cross" if reaches else "final" if s.endgame else "neither"] += 1
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        if terminated or truncated:
            obs, info = env.reset()
    assert min(counts.values()) > 20, counts


def test_feature_config_reads_version_1_and_refuses_bad_ones() -> None:
    rules = preset("ten_thousand")
    old = {"num_dice": 6, "target": 10_000, "points_step": 50, "points_max": 3000, "score_step": 250, "version": 1}
    assert FeatureConfig.from_dict(old) == FeatureConfig.for_rules(rules)
    margin = FeatureConfig.for_rules(rules, margin=True).to_dict()
    assert FeatureConfig.from_dict(margin) == FeatureConfig.for_rules(rules, margin=True)
    with pytest.raises(ValueError, match="feature version 7"):
        FeatureConfig.from_dict({**margin, "version": 7})
    with pytest.raises(ValueError, match="version 1 has no margin"):
        FeatureConfig.from_dict({**margin, "version": 1})
    with pytest.raises(ValueError, match="bad margin readings"):
        FeatureConfig.from_dict({**margin, "margin_low": 2000})


def test_init_from_pads_the_margin_inputs_with_zeros(tmp_path: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.bots.errors import BotLoadError
    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.train.network import policy_class, policy_kwargs
    from greed_env.train.warmstart import init_weights

    rules = preset("ten_thousand")
    import gymnasium as gym

    env = gym.make("greed_env/Duel-v0", rules="ten_thousand", opponent="threshold")
    small = DuelArgs(net_width=16, features="greed")
    wide = DuelArgs(net_width=16, features="margin")
    old = MaskablePPO(policy_class(small), env, policy_kwargs=policy_kwargs(small, rules), device="cpu", seed=0)
    with torch.no_grad():
        for p in old.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    old.save(tmp_path / "old.zip")
    new = MaskablePPO(policy_class(wide), env, policy_kwargs=policy_kwargs(wide, rules), device="cpu", seed=1)
    init_weights(new, tmp_path / "old.zip", rules)
    # the crossing readings come last: padded from a model without any margin readings, and
    # from one with the final-round ones
    cross = DuelArgs(net_width=16, features="margin-cross")
    final = DuelArgs(net_width=16, features="margin-final")
    via = MaskablePPO(policy_class(final), env, policy_kwargs=policy_kwargs(final, rules), device="cpu", seed=2)
    init_weights(via, tmp_path / "old.zip", rules)
    via.save(tmp_path / "final.zip")
    crossed = []
    for source in ("old.zip", "final.zip"):
        m = MaskablePPO(policy_class(cross), env, policy_kwargs=policy_kwargs(cross, rules), device="cpu", seed=3)
        init_weights(m, tmp_path / source, rules)
        crossed.append(NumpyPolicy.from_sb3(m))
        first = m.policy.mlp_extractor.policy_net[0].weight
        before = MaskablePPO.load(tmp_path / source, device="cpu").policy.mlp_extractor.policy_net[0].weight
        assert torch.equal(first[:, : before.shape[1]], before) and not first[:, before.shape[1] :].any()
    a, b = NumpyPolicy.from_sb3(old), NumpyPolicy.from_sb3(new)
    assert b.features is not None and b.features.margin_step == 50
    assert all(c.features is not None and c.features.margin_cross for c in crossed)
    obs, info = env.reset(seed=2)
    for _ in range(200):
        for other_policy in (b, *crossed):
            assert np.allclose(a.logits(obs[None]), other_policy.logits(obs[None]), atol=1e-5)
        obs, _, terminated, truncated, info = env.step(int(a.act(obs[None], info["action_mask"][None])[0]))
        if terminated or truncated:
            obs, info = env.reset()
    other = DuelArgs(net_width=32, features="margin")
    bigger = MaskablePPO(policy_class(other), env, policy_kwargs=policy_kwargs(other, rules), device="cpu")
    with pytest.raises(BotLoadError, match="do not fit this network"):
        init_weights(bigger, tmp_path / "old.zip", rules)


def test_init_from_widens_the_critic_as_the_same_function_and_restarts_a_deeper_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.train.network import policy_class, policy_kwargs
    from greed_env.train.warmstart import init_weights

    rules = preset("ten_thousand")
    env = gym.make("greed_env/Duel-v0", rules="ten_thousand", opponent="threshold")

    def model(args: DuelArgs, seed: int) -> MaskablePPO:
        return MaskablePPO(policy_class(args), env, policy_kwargs=policy_kwargs(args, rules), device="cpu", seed=seed)

    old = model(DuelArgs(net_width=16, features="greed"), 0)
    with torch.no_grad():
        for p in old.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    old.save(tmp_path / "old.zip")
    wider = model(DuelArgs(net_width=16, vf_width=40, features="margin-final"), 1)
    deeper = model(DuelArgs(net_width=16, vf_width=40, vf_depth=3, features="margin-final"), 2)
    fresh = {k: v.clone() for k, v in deeper.policy.state_dict().items() if "value" in k}
    margin = FeatureConfig.for_rules(rules, margin=True).margin_dim
    width_in = old.policy.mlp_extractor.value_net[0].weight.shape[1] + margin
    assert wider.policy.mlp_extractor.value_net[0].weight.shape == (40, width_in)
    init_weights(wider, tmp_path / "old.zip", rules)
    assert "starts afresh" not in capsys.readouterr().out
    init_weights(deeper, tmp_path / "old.zip", rules)
    assert "another depth and starts afresh" in capsys.readouterr().out
    obs, info = env.reset(seed=4)
    for _ in range(200):
        t = torch.as_tensor(obs[None])
        with torch.no_grad():
            v_old = old.policy.predict_values(t)
            assert torch.allclose(wider.policy.predict_values(t), v_old, atol=1e-5)
            for m in (wider, deeper):
                assert torch.allclose(
                    m.policy.get_distribution(t).distribution.logits,
                    old.policy.get_distribution(t).distribution.logits,
                    atol=1e-5,
                )
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if terminated or truncated:
            obs, info = env.reset()
    for key, value in deeper.policy.state_dict().items():
        if "value" in key:
            assert torch.equal(value, fresh[key]), key
    # the widened critic's new units learn: their outgoing weights are zero, not frozen
    head = wider.policy.value_net.weight
    assert torch.count_nonzero(head[:, 16:]) == 0 and head.requires_grad


def test_init_temperature_softens_only_the_moves_other_than_keeps() -> None:
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.train.network import policy_class, policy_kwargs
    from greed_env.train.warmstart import soften

    rules = preset("ten_thousand")
    env = gym.make("greed_env/Duel-v0", rules="ten_thousand", opponent="threshold")
    for head in ("structured", "plain"):
        args = DuelArgs(net_width=16, policy_head=head)
        model = MaskablePPO(policy_class(args), env, policy_kwargs=policy_kwargs(args, rules), device="cpu", seed=0)
        with torch.no_grad():
            for p in model.policy.parameters():
                p.add_(torch.randn_like(p) * 0.5)
        before = NumpyPolicy.from_sb3(model)
        soften(model, 4.0, rules)
        after = NumpyPolicy.from_sb3(model)
        obs, info = env.reset(seed=3)
        continues = 0
        for _ in range(300):
            mask = info["action_mask"].astype(bool)
            la, lb = before.logits(obs[None])[0], after.logits(obs[None])[0]
            if mask[0] or mask[1]:  # bank / roll on: divided by 4
                continues += 1
                assert np.allclose(lb[:2], la[:2] / 4, atol=1e-5)
            else:
                assert np.allclose(lb[mask], la[mask], atol=1e-5)
            move = before.act(obs[None], mask[None])
            assert np.array_equal(move, after.act(obs[None], mask[None]))
            obs, _, terminated, truncated, info = env.step(int(move[0]))
            if terminated or truncated:
                obs, info = env.reset()
        assert continues > 20
    with pytest.raises(ValueError, match="must be >= 1"):
        soften(model, 0.5, rules)


@pytest.mark.parametrize("margin", [False, True])
def test_numpy_policy_matches_maskable_ppo_predict(margin: bool) -> None:
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.bots.featurize import action_features
    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.train.network import GreedActorCriticPolicy, GreedFeatures, StructuredActionHead

    rules = preset("ten_thousand")
    if margin:
        env = gym.make("greed_env/Duel-v0", rules="ten_thousand", opponent="threshold")
    else:
        env = gym.make("greed_env/Solitaire-v0", rules="ten_thousand")
    kwargs = {
        "features_extractor_class": GreedFeatures,
        "features_extractor_kwargs": {"config": FeatureConfig.for_rules(rules, margin=margin).to_dict()},
        "net_arch": {"pi": [32, 32], "vf": [32]},
        "activation_fn": torch.nn.ReLU,
        "action_features": action_features(rules).tolist(),
    }
    model = MaskablePPO(GreedActorCriticPolicy, env, policy_kwargs=kwargs, device="cpu", seed=0)
    assert isinstance(model.policy.action_net, StructuredActionHead)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    pol = NumpyPolicy.from_sb3(model)
    assert pol.activation == "relu" and pol.features == FeatureConfig.for_rules(rules, margin=margin)
    obs, info = env.reset(seed=1)
    for _ in range(300):
        feats = model.policy.features_extractor(torch.as_tensor(obs[None])).numpy()
        assert np.allclose(feats, featurize(obs[None], pol.features))
        mine = int(pol.act(obs[None], info["action_mask"][None])[0])
        theirs, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
        assert mine == int(theirs)
        obs, _, terminated, truncated, info = env.step(mine)
        if terminated or truncated:
            obs, info = env.reset()


def test_selfplay_env_passes_the_gymnasium_checker_and_uses_the_pool(tmp_path: Path) -> None:
    from gymnasium.utils.env_checker import check_env

    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.train.selfplay_env import SelfPlayEnv, snapshot_name

    env = SelfPlayEnv("ten_thousand", num_players=2, pool_dir=tmp_path)
    check_env(env, skip_render_check=True)
    n = ActionCatalog("ten_thousand").n
    layers = [(np.zeros((4, OBS_DIM), np.float32), np.zeros(4, np.float32))]
    NumpyPolicy(layers, (np.zeros((n, 4), np.float32), np.zeros(n, np.float32)), "tanh").save(
        tmp_path / snapshot_name(64)
    )
    (tmp_path / "snap_partial.npz.tmp").write_bytes(b"half")
    env.reset(seed=5)
    assert len(env.pool.policies) == 1
    assert all(p is env.pool.policies[0] for p in env.opponents.values())
    seats, rng = set(), np.random.default_rng(0)
    for episode in range(6):
        _, info = env.reset(seed=episode)
        seats.add(info["seat"])
        done = False
        while not done:
            _, reward, done, _, info = env.step(rng.choice(np.flatnonzero(env.action_masks())))
        assert reward in (-1.0, 0.0, 1.0)
    assert seats == {0, 1}


def test_snapshot_opponents_sample_the_softmax_of_their_logits_over_the_legal_moves() -> None:
    """A pool snapshot plays at temperature 1: 3,000 seeded draws at a keep decision match
    ``softmax(logits)`` over the legal moves within 0.03 in total variation (logits 0, 0.5, 1,
    ... by action id; a softmax at temperature 2 or 0.5 lies more than 0.1 away)."""
    from greed_env.bots.numpy_backend import NumpyPolicy
    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.train.selfplay_env import SelfPlayEnv

    env = SelfPlayEnv("ten_thousand", num_players=2)
    env.reset(seed=3)
    rng = np.random.default_rng(1)
    while int(env.action_masks().sum()) < 4:
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    legal = env.action_masks().astype(bool)
    n = ActionCatalog("ten_thousand").n
    logits = 0.5 * np.arange(n, dtype=np.float32)
    env.opponents[env.learner] = NumpyPolicy([], (np.zeros((n, OBS_DIM), np.float32), logits), "tanh")

    def softmax(z: np.ndarray) -> np.ndarray:
        out = np.zeros(n)
        out[legal] = np.exp(z[legal] - z[legal].max())
        return out / out.sum()

    want = softmax(logits.astype(np.float64))
    assert min(0.5 * np.abs(want - softmax(logits / t)).sum() for t in (2.0, 0.5)) > 0.1
    draws = np.bincount([env._opponent_action(env.learner) for _ in range(3000)], minlength=n)
    assert draws[~legal].sum() == 0 and 0.5 * np.abs(draws / draws.sum() - want).sum() < 0.03


def test_init_from_a_version_2_catalog_model_starts_each_alternate_keep_from_its_sibling() -> None:
    """A tap-order model made on the version-2 catalog (3,693 actions) warm-starts today's
    (3,696): the old rows stay, and each alternate fill keep starts as a copy of the keep it is
    the other reading of, in the free term and the action descriptions of a structured head."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    from greed_env.spaces.catalog import ActionCatalog
    from greed_env.train.network import policy_class, policy_kwargs
    from greed_env.train.warmstart import fit_weights

    rules = preset("trippn")
    catalog = ActionCatalog(rules)
    v2 = catalog.size_of_version(2)
    assert (v2, catalog.n) == (3693, 3696)
    env = gym.make("greed_env/Duel-v0", rules="trippn", opponent="threshold")
    args = DuelArgs(rules="trippn", net_width=16, features="greed", policy_head="structured")
    model = MaskablePPO(policy_class(args), env, policy_kwargs=policy_kwargs(args, rules), device="cpu", seed=0)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    new = {k: v.clone() for k, v in model.policy.state_dict().items()}
    old = {k: (v[:v2].clone() if k.startswith("action_net.") and v.shape[0] == catalog.n else v.clone()) for k, v in new.items()}
    sized = {k for k, v in new.items() if k.startswith("action_net.") and v.shape[0] == catalog.n}
    assert {"action_net.free.weight", "action_net.free.bias", "action_net.phi"} <= sized
    assert fit_weights(model, old, new) is None  # without the catalog the head does not fit
    fitted = fit_weights(model, old, new, catalog)
    assert fitted is not None
    state, fresh_critic = fitted
    assert not fresh_critic
    for key in sized:
        assert torch.equal(state[key][:v2], old[key])
        for a in range(v2, catalog.n):
            assert torch.equal(state[key][a], old[key][catalog.primary_of(a)])
    for key in set(new) - sized:
        assert torch.equal(state[key], old[key])
