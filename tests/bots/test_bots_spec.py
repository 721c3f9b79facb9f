"""One bot-spec grammar: every consumer (greed play, greed eval, greed tournament, Duel-v0, the
vector engine) reads a spec to the same bot."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from greed_env.bots import spec as spec_module
from greed_env.bots.base import Bot, RandomBot, ThresholdBot
from greed_env.bots.errors import BotLoadError, RulesMismatchError, UnknownBotError
from greed_env.bots.loader import as_bot, load, spec_rules
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.bots.solver_backend import SolverBot
from greed_env.bots.spec import BUILT_IN_KINDS, parse_spec
from greed_env.bots.tournament import run_tournament
from greed_env.commands.play_cmd import parse_players
from greed_env.envs.duel import DuelEnv
from greed_env.evaluation import resolve_bot
from greed_env.rules import preset
from greed_env.vector.engine import opponent_params

ROOT = Path(__file__).resolve().parents[2]
SMALL = preset("farkle5", target=500, entry_threshold=500)
"""Rules whose solver tables build in a second or two."""


@pytest.mark.parametrize(
    ("spec", "kind", "fields"),
    [
        ("random", "random", {}),
        (" RANDOM ", "random", {"text": "random"}),
        ("threshold", "threshold", {"bank_at": 300, "keep": "max-score"}),
        ("threshold:400", "threshold", {"bank_at": 400, "text": "threshold:400"}),
        ("threshold-400", "threshold", {"bank_at": 400, "text": "threshold-400"}),
        ("threshold-400-keep-most", "threshold", {"bank_at": 400, "keep": "keep-most"}),
        ("bot:greed/threshold-0-keep-fewest", "threshold", {"preset": "greed", "bank_at": 0, "keep": "keep-fewest"}),
        ("optimal", "optimal", {"objective": "duel", "text": "optimal-duel"}),
        ("optimal:turn", "optimal", {"objective": "turn", "text": "optimal-turn"}),
        ("ten_thousand/optimal-race", "optimal", {"preset": "ten_thousand", "objective": "race"}),
        ("farkle/ppo-turn", "exported", {"preset": "farkle", "name": "ppo-turn"}),
        ("ppo-duel", "exported", {"preset": "", "name": "ppo-duel"}),
        ("agents/farkle/ppo-turn.onnx", "file", {"path": "agents/farkle/ppo-turn.onnx"}),
        ("run/model.zip", "file", {}),
        ("./snap.npz", "file", {}),
        ("py:greed_env.bots.base:RandomBot", "python", {"path": "greed_env.bots.base", "name": "RandomBot"}),
        ("bot:py:./my_bots.py:Cautious", "python", {"path": "./my_bots.py", "name": "Cautious"}),
        ("py:C:/bots/mine.py:Cautious", "python", {"path": "C:/bots/mine.py", "name": "Cautious"}),
    ],
)
def test_the_grammar(spec: str, kind: str, fields: dict[str, Any]) -> None:
    parsed = parse_spec(spec)
    assert parsed.kind == kind
    for key, value in fields.items():
        assert getattr(parsed, key) == value, key


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("", "empty bot spec"),
        ("bot:", "empty bot spec"),
        ("threshold:lots", "whole number"),
        ("threshold-400-keep-all", "keep style"),
        ("optimal-", "name an objective"),
        ("py:my_bots", "py:MODULE:ATTRIBUTE"),
        ("py:my_bots:", "py:MODULE:ATTRIBUTE"),
        ("py::Cautious", "py:MODULE:ATTRIBUTE"),
        ("py:my_bots:not-a-name", "py:MODULE:ATTRIBUTE"),
    ],
)
def test_bad_specs_name_the_problem(spec: str, match: str) -> None:
    with pytest.raises(UnknownBotError, match=match):
        parse_spec(spec)


def _meaning(bot: Bot) -> tuple[Any, ...]:
    """What a bot plays, ignoring the name it carries."""
    if isinstance(bot, SolverBot):
        return ("optimal", bot.objective, bot.rules.fingerprint)
    if type(bot).__name__ == "OptimalBot":  # evaluation plays the solver's own bot
        return ("optimal", bot.objective, bot.rules.fingerprint)  # type: ignore[attr-defined]
    if isinstance(bot, ThresholdBot):
        return ("threshold", bot.bank_at, bot.keep, bot.min_dice)
    if isinstance(bot, OnnxBot):
        return ("onnx", bot.card["id"])
    return (type(bot).__name__,)


SPECS = [
    "random",
    "threshold",
    "threshold:400",
    "threshold-400",
    "threshold-400-keep-most",
    "farkle5/threshold-300",
    "bot:farkle5/random",
    "optimal",
    "optimal-duel",
]


@pytest.mark.parametrize("spec", SPECS)
def test_every_consumer_reads_a_spec_to_the_same_bot(spec: str) -> None:
    meaning = _meaning(load(spec, SMALL))
    assert _meaning(parse_players(f"human,{spec}", SMALL)[1].bot) == meaning  # type: ignore[arg-type]
    assert _meaning(resolve_bot(spec, SMALL, "duel")) == meaning
    assert _meaning(DuelEnv(SMALL, opponent=spec).opponent) == meaning
    assert _meaning(as_bot(spec, SMALL)) == meaning
    if meaning[0] != "RandomBot":
        assert opponent_params(spec, SMALL)[0] == opponent_params(load(spec, SMALL), SMALL)[0]


def test_optimal_alone_is_the_duel_bot_everywhere() -> None:
    assert _meaning(load("optimal", SMALL)) == _meaning(load("optimal-duel", SMALL))
    assert resolve_bot("optimal", SMALL, "turn").objective == "duel"  # type: ignore[attr-defined]
    assert resolve_bot("optimal-turn", SMALL, "turn").objective == "turn"  # type: ignore[attr-defined]


def test_tournament_and_eval_accept_what_play_accepts() -> None:
    # threshold and farkle5/threshold-300 are one bot (refused as a pair): a preset's heuristic at 500
    result = run_tournament(SMALL, ["threshold", "threshold:400", "farkle5/threshold-500", "optimal", "random"], 2)
    assert [p.games for p in result.pairs] == [2] * 10
    for spec in ("threshold:400", "optimal-turn", "bot:farkle5/threshold-300"):
        assert resolve_bot(spec, SMALL, "turn") is not None


def test_exported_bots_by_id_and_by_file_are_the_same_bot() -> None:
    farkle = preset("farkle")
    card = ROOT / "agents" / "farkle" / "ppo-turn.json"
    by_id = load("farkle/ppo-turn", farkle)
    for spec in (str(card), str(card.with_suffix(".onnx")), "bot:farkle/ppo-turn", "ppo-turn"):
        assert _meaning(load(spec, farkle)) == _meaning(by_id)
        assert _meaning(resolve_bot(spec, farkle, "turn")) == _meaning(by_id)
    assert spec_rules("farkle/ppo-turn") == farkle
    with pytest.raises(RulesMismatchError, match="farkle"):
        load("farkle/ppo-turn", preset("greed"))


def test_solver_bots_refuse_other_rules() -> None:
    bot = load("optimal", SMALL)
    with pytest.raises(RulesMismatchError, match="target"):
        bot.act(SMALL.replace(target=1000), None, np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(RulesMismatchError, match="builds the solver bot for these rules"):
        load("farkle5/optimal-duel", SMALL)


def test_the_built_in_kinds_are_every_kind_the_grammar_makes() -> None:
    """BUILT_IN_KINDS is the one list of spec kinds (the unknown-bot message reads it): every
    ``BotSpec(kind, ...)`` parse_spec builds is in it, exported cards aside."""
    made = {
        node.args[0].value
        for node in ast.walk(ast.parse(inspect.getsource(spec_module)))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "BotSpec" and isinstance(node.args[0], ast.Constant)
    }
    assert made == set(BUILT_IN_KINDS) | {"exported"}
    with pytest.raises(UnknownBotError) as err:
        load("nosuchbot", SMALL)
    assert str(err.value).endswith(f"built-in kinds: {', '.join(BUILT_IN_KINDS.values())}")


def test_files_and_unknown_names_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(UnknownBotError, match=r"bot file .*missing\.zip' does not exist"):
        load(str(tmp_path / "missing.zip"), SMALL)
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(UnknownBotError, match="not a bot card"):
        load(str(tmp_path / "notes.txt"), SMALL)
    with pytest.raises(UnknownBotError, match=r"known for farkle5: .*farkle5/random.*built-in kinds"):
        load("nosuchbot", SMALL)
    with pytest.raises(UnknownBotError, match="no rules preset 'yahtzee'"):
        load("yahtzee/random", SMALL)
    with pytest.raises(BotLoadError, match="give an id <rules>/ppo-turn"):
        load("ppo-turn")
    assert isinstance(load("random"), RandomBot)


USER_BOTS = """
from dataclasses import dataclass
from greed_env.bots.base import ThresholdBot

class NeedsRules:
    def __init__(self, rules):
        self.name = "needs-rules"
        self.inner = ThresholdBot(bank_at=rules.target // 20)

    def act(self, rules, state, rng):
        return self.inner.act(rules, state, rng)

def cautious():
    return ThresholdBot(bank_at=250, name="cautious")

READY = ThresholdBot(bank_at=600, name="ready")
NOT_A_BOT = 42

def broken():
    raise RuntimeError("no luck")
"""


def test_python_code_by_import_path(tmp_path: Path) -> None:
    assert isinstance(load("py:greed_env.bots.base:RandomBot", SMALL), RandomBot)
    source = tmp_path / "user_bots.py"
    source.write_text(USER_BOTS)
    needs = load(f"py:{source}:NeedsRules", SMALL)
    assert needs.name == "needs-rules" and needs.inner.bank_at == SMALL.target // 20  # type: ignore[attr-defined]
    assert load(f"py:{source}:cautious", SMALL).bank_at == 250  # type: ignore[attr-defined]
    assert load(f"py:{source}:READY").bank_at == 600  # type: ignore[attr-defined]
    seat = parse_players(f"human,py:{source}:cautious", SMALL)[1]
    assert seat.bot is not None and seat.bot.name == "cautious"
    assert DuelEnv(SMALL, opponent=f"py:{source}:READY").opponent.name == "ready"
    result = run_tournament(SMALL, ["threshold", f"py:{source}:cautious"], 2)
    assert [p.games for p in result.pairs] == [2]
    with pytest.raises(UnknownBotError, match="takes the rules to play"):
        load(f"py:{source}:NeedsRules")
    with pytest.raises(UnknownBotError, match="has no attribute 'Missing'"):
        load(f"py:{source}:Missing", SMALL)
    with pytest.raises(BotLoadError, match=r"NOT_A_BOT is not a bot .*got int"):
        load(f"py:{source}:NOT_A_BOT", SMALL)
    with pytest.raises(BotLoadError, match="calling broken failed: RuntimeError: no luck"):
        load(f"py:{source}:broken", SMALL)
    with pytest.raises(UnknownBotError, match="no module 'no_such_module_here'"):
        load("py:no_such_module_here:Bot", SMALL)
    with pytest.raises(UnknownBotError, match="no Python file"):
        load(f"py:{tmp_path / 'absent.py'}:Bot", SMALL)
    (tmp_path / "bad_syntax.py").write_text("def (:\n")
    with pytest.raises(BotLoadError, match=r"importing .*bad_syntax\.py failed: SyntaxError"):
        load(f"py:{tmp_path / 'bad_syntax.py'}:Bot", SMALL)
