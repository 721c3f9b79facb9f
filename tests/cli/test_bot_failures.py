"""A bot of your own that raises in ``act``, returns None or returns an illegal move ends
``greed play``, ``eval``, ``benchmark`` and ``tournament`` with one line naming the bot, the
position and what it did (status 2); ``--debug`` shows the traceback first."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from greed_env.bots.base import checked_act
from greed_env.bots.errors import BotPlayError
from greed_env.bots.play import play_game
from greed_env.cli import main
from greed_env.rules import Move, apply_roll, new_game, preset

SOURCE = '''
from greed_env.rules import Move, legal_moves


class Raises:
    name = "raiser"

    def act(self, rules, state, rng):
        if state.turn_total > 0:
            raise ZeroDivisionError("my own bug")
        return legal_moves(rules, state)[0]


class ReturnsNone:
    name = "silent"

    def act(self, rules, state, rng):
        return None


class Illegal:
    name = "cheater"

    def act(self, rules, state, rng):
        return Move("keep", (2, 3))
'''

KINDS = {
    "Raises": ("'raiser'", "raised ZeroDivisionError", "my own bug"),
    "ReturnsNone": ("'silent'", "returned None", "not a Move"),
    "Illegal": ("'cheater'", "returned keep:2,3", "not a legal move"),
}


@pytest.fixture(scope="module")
def bot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bots") / "broken_bots.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return int(code or 0), err.getvalue()


def _argv(command: str, bot: str) -> list[str]:
    return {
        "play": ["play", "--rules", "farkle", "--players", f"random,{bot}", "--seed", "3", "--plain"],
        "eval": ["eval", bot, "--rules", "farkle", "--episodes", "4", "--workers", "1", "--no-progress"],
        "benchmark": ["benchmark", "farkle/ffa3-threshold", "--bot", bot, "--no-progress"],
        "tournament": ["tournament", "--rules", "farkle", "--bots", f"random,{bot}", "--games", "2", "--no-progress"],
    }[command]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", ["play", "eval", "benchmark", "tournament"])
def test_a_broken_bot_ends_the_command_with_one_line(command: str, kind: str, bot_file: Path) -> None:
    bot = f"py:{bot_file}:{kind}"
    extra = [] if command == "play" else ["--trust-code"]
    code, err = run_cli([*_argv(command, bot), *extra])
    assert code == 2, err
    lines = err.strip().splitlines()
    plan = 1 if command == "benchmark" else 0  # the benchmark's plan line comes before the games
    assert len(lines) == 1 + plan and "Traceback" not in err, err
    line = lines[-1]
    assert line.startswith(f"greed {command}: bot ")
    for words in KINDS[kind]:
        assert words in line
    assert "seat " in line and "scores " in line  # the position


@pytest.mark.parametrize("command", ["play", "eval", "tournament"])
def test_debug_shows_the_bots_traceback(command: str, bot_file: Path) -> None:
    bot = f"py:{bot_file}:Raises"
    extra = ["--debug"] + ([] if command == "play" else ["--trust-code"])
    code, err = run_cli([*_argv(command, bot), *extra])
    assert code == 2
    assert "Traceback" in err and 'raise ZeroDivisionError("my own bug")' in err
    assert err.strip().splitlines()[-1].startswith(f"greed {command}: bot 'raiser' raised ZeroDivisionError")


class _TapOrder:
    """Keeps the first listed keep with its taps reversed: legal where the rules read sets
    of dice, whatever the order."""

    name = "taps"

    def act(self, rules: object, state: object, rng: np.random.Generator) -> Move:
        from greed_env.rules import legal_moves

        move = legal_moves(rules, state)[-1]  # type: ignore[arg-type]
        return Move(move.kind, tuple(reversed(move.taps)))


def test_a_legal_move_in_another_tap_order_passes() -> None:
    rules = preset("ten_thousand")
    state = apply_roll(rules, new_game(rules, 2, first_player=0), (1, 1, 5, 2, 3, 4))
    move = checked_act(_TapOrder(), rules, state, np.random.default_rng(0))  # type: ignore[arg-type]
    assert sorted(move.taps) == [1, 1, 5]
    shares = play_game(rules, [_TapOrder(), _TapOrder()], np.random.default_rng(1), [np.random.default_rng(2)] * 2)  # type: ignore[list-item]
    assert sum(shares) == pytest.approx(1.0)


def test_the_library_raises_the_same_error() -> None:
    class Broken:
        name = "broken"

        def act(self, rules: object, state: object, rng: object) -> Move:
            raise KeyError("oops")

    rules = preset("farkle")
    with pytest.raises(BotPlayError, match=r"bot 'broken' raised KeyError at seat 0 to keep from the roll") as info:
        play_game(rules, [Broken(), Broken()], np.random.default_rng(0), [np.random.default_rng(1)] * 2)  # type: ignore[list-item]
    assert isinstance(info.value.__cause__, KeyError)
