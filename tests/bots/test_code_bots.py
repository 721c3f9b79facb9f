"""Bot files that run code: ``.zip`` and ``py:`` need ``--trust-code`` on the command line; an
ONNX bot's graph is checked before onnxruntime runs it."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from greed_env.benchmark import BenchmarkResult, get_task, run_task
from greed_env.bots import CorruptBotError, load, parse_spec, run_tournament
from greed_env.bots.errors import UntrustedCodeError
from greed_env.bots.onnx_graph import ALLOWED_OPS, check_graph, read_graph
from greed_env.cli import main
from greed_env.evaluation import evaluate
from greed_env.rules import preset

AGENTS = Path(__file__).resolve().parents[2] / "agents"
SMALL_BOT = AGENTS / "ten_thousand" / "rllib-selfplay.json"
RULES = preset("ten_thousand")

BOT_SOURCE = """
from greed_env.rules import legal_moves

class First:
    name = "first"

    def act(self, rules, state, rng):
        return legal_moves(rules, state)[0]
"""


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return int(code or 0), err.getvalue()


@pytest.fixture
def code_bot(tmp_path: Path) -> str:
    (tmp_path / "first_bot.py").write_text(BOT_SOURCE, encoding="utf-8")
    return f"py:{tmp_path / 'first_bot.py'}:First"


# ------------------------------------------------------------------------------------------
# specs that run code


@pytest.mark.parametrize(
    ("spec", "runs"),
    [
        ("py:my_bots:Cautious", True),
        ("py:./my_bot.py:Cautious", True),
        ("runs/a/model.zip", True),
        ("runs/a/MODEL.ZIP", True),
        ("runs/a/policy.npz", False),
        ("ten_thousand/ppo-turn", False),
        ("bot.onnx", False),
        ("bot.json", False),
        ("threshold-300", False),
        ("optimal", False),
    ],
)
def test_which_specs_run_code(spec: str, runs: bool) -> None:
    assert parse_spec(spec).runs_code is runs


def test_load_refuses_code_only_when_asked(code_bot: str, tmp_path: Path) -> None:
    with pytest.raises(UntrustedCodeError, match="--trust-code"):
        load(code_bot, RULES, trust_code=False)
    missing = tmp_path / "model.zip"  # refused before the file is opened
    with pytest.raises(UntrustedCodeError, match="pickle"):
        load(str(missing), RULES, trust_code=False)
    assert load(code_bot, RULES).name == "first"  # the library's default trusts its caller
    assert load("threshold-300", RULES, trust_code=False).name == "threshold-300"


def test_library_calls_take_the_same_keyword(code_bot: str) -> None:
    with pytest.raises(UntrustedCodeError):
        evaluate(code_bot, RULES, "turn", episodes=2, trust_code=False)
    with pytest.raises(UntrustedCodeError):
        evaluate("threshold", RULES, "duel", episodes=2, opponent=code_bot, trust_code=False)
    with pytest.raises(UntrustedCodeError):
        run_tournament(RULES, ["random", code_bot], 2, trust_code=False)
    with pytest.raises(UntrustedCodeError):
        run_task(get_task("ten_thousand/turn"), code_bot, trust_code=False)
    assert evaluate(code_bot, RULES, "turn", episodes=2, regret_episodes=0).episodes == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "{bot}", "--episodes", "2", "--no-progress"],
        ["eval", "threshold", "--objective", "duel", "--opponent", "{bot}", "--episodes", "2", "--no-progress"],
        ["tournament", "--rules", "ten_thousand", "--bots", "random,{bot}", "--games", "2", "--no-progress"],
        ["benchmark", "ten_thousand/turn", "--bot", "{bot}", "--no-progress"],
        ["benchmark", "--leaderboard", "{tmp}/board.md", "--bots", "random,{bot}", "--results", "{tmp}/res"],
    ],
    ids=["eval", "eval-opponent", "tournament", "benchmark", "leaderboard"],
)
@pytest.mark.parametrize("kind", ["py", "zip"])
def test_commands_refuse_code_without_the_flag(argv: list[str], kind: str, code_bot: str, tmp_path: Path) -> None:
    bot = code_bot if kind == "py" else str(tmp_path / "model.zip")
    code, err = run_cli([a.format(bot=bot, tmp=tmp_path) for a in argv])
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "--trust-code" in err and "Traceback" not in err
    assert not (tmp_path / "res").exists() and not (tmp_path / "board.md").exists()


def test_benchmark_check_refuses_a_result_that_names_code(code_bot: str, tmp_path: Path) -> None:
    """A result file from elsewhere names its bot: rerunning it runs that bot's code."""
    result = BenchmarkResult(code_bot, []).write(tmp_path / "result.json")
    code, err = run_cli(["benchmark", "--check", str(result), "--no-progress"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--trust-code" in err
    code, err = run_cli(["benchmark", "--check", str(result), "--no-progress", "--trust-code"])
    assert code == 0, err


def test_the_flag_lets_the_code_run(code_bot: str) -> None:
    code, err = run_cli(["eval", code_bot, "--episodes", "4", "--regret-episodes", "0", "--workers", "1",
                         "--no-progress", "--trust-code"])
    assert code == 0, err
    code, err = run_cli(["tournament", "--rules", "ten_thousand", "--bots", f"random,{code_bot}", "--games", "2",
                         "--no-progress", "--trust-code"])
    assert code == 0, err


# ------------------------------------------------------------------------------------------
# ONNX graphs


@pytest.mark.parametrize("path", sorted(AGENTS.glob("*/*.onnx")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_reader_sees_what_onnx_sees(path: Path) -> None:
    """The wire-format reader against the onnx package, on every shipped bot, which it accepts."""
    import onnx
    data = path.read_bytes()
    model = onnx.load_from_string(data)
    graph = read_graph(data)
    assert graph.ops == {(n.domain, n.op_type) for n in model.graph.node}
    assert graph.ops and {op for _, op in graph.ops} <= ALLOWED_OPS
    init = {t.name for t in model.graph.initializer}
    assert [i.name for i in graph.inputs] == [i.name for i in model.graph.input if i.name not in init]
    assert [o.name for o in graph.outputs] == [o.name for o in model.graph.output]
    out_dims = [d.dim_value or d.dim_param for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert list(graph.outputs[0].dims) == out_dims
    assert not graph.odd
    card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    check_graph(data, obs_dim=card["obs_dim"], num_actions=card["num_actions"], input_name="obs",
                output_name="logits", where="bot")


def _doctored(tmp_path: Path, edit: object) -> Path:
    """A copy of a small shipped bot whose graph ``edit(model)`` changed; its card's checksum
    follows, so only the graph check stands between it and onnxruntime."""
    import onnx
    model = onnx.load(SMALL_BOT.with_suffix(".onnx"))
    edit(model)  # type: ignore[operator]
    data = model.SerializeToString()
    card = json.loads(SMALL_BOT.read_text(encoding="utf-8"))
    card["onnx"]["sha256"] = hashlib.sha256(data).hexdigest()
    card["onnx"]["bytes"] = len(data)
    folder = tmp_path / "doctored"
    folder.mkdir()
    (folder / SMALL_BOT.with_suffix(".onnx").name).write_bytes(data)
    path = folder / SMALL_BOT.name
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


def _extra_operator(model: object) -> None:
    from onnx import helper

    graph = model.graph  # type: ignore[attr-defined]
    out = graph.output[0].name
    last = next(n for n in graph.node if out in n.output)
    last.output[0] = "raw"
    graph.node.append(helper.make_node("Sin", ["raw"], [out]))


def _wrong_shape(model: object) -> None:
    model.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 7  # type: ignore[attr-defined]


def _two_inputs(model: object) -> None:
    from onnx import TensorProto, helper

    model.graph.input.append(helper.make_tensor_value_info("extra", TensorProto.FLOAT, ["batch", 3]))  # type: ignore[attr-defined]


def _external_data(model: object) -> None:
    from onnx import TensorProto

    tensor = model.graph.initializer[0]  # type: ignore[attr-defined]
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "/etc/passwd"


def _other_domain(model: object) -> None:
    graph = model.graph  # type: ignore[attr-defined]
    graph.node[0].domain = "com.example"


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (_extra_operator, "uses Sin"),
        (_wrong_shape, "shape (batch, 7)"),
        (_two_inputs, "2 inputs"),
        (_external_data, "external data"),
        (_other_domain, "com.example"),
    ],
    ids=["extra-operator", "wrong-shape", "two-inputs", "external-data", "other-domain"],
)
def test_a_doctored_graph_is_refused_with_one_line(edit: object, words: str, tmp_path: Path) -> None:
    card = _doctored(tmp_path, edit)
    with pytest.raises(CorruptBotError, match=re.escape(words)):
        load(str(card))
    code, err = run_cli(["eval", str(card), "--episodes", "2", "--no-progress"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import greed_env.bots.onnx_backend as backend
    import greed_env.bots.onnx_graph as graph

    card = tmp_path / SMALL_BOT.name
    shutil.copy(SMALL_BOT, card)
    shutil.copy(SMALL_BOT.with_suffix(".onnx"), card.with_suffix(".onnx"))
    size = card.with_suffix(".onnx").stat().st_size
    monkeypatch.setattr(backend, "MAX_ONNX_BYTES", size - 1)
    with pytest.raises(CorruptBotError, match="more than the"):
        load(str(card))
    monkeypatch.setattr(graph, "MAX_ONNX_BYTES", size - 1)
    with pytest.raises(CorruptBotError, match="more than the"):
        check_graph(card.with_suffix(".onnx").read_bytes(), obs_dim=106, num_actions=136,
                    input_name="obs", output_name="logits", where="bot")


def test_bytes_that_are_no_model_are_refused(tmp_path: Path) -> None:
    for junk in (b"", b"\xff" * 40, b"\x0a\x80"):
        with pytest.raises(CorruptBotError, match="does not parse"):
            check_graph(junk, obs_dim=106, num_actions=136, input_name="obs", output_name="logits", where="bot")
