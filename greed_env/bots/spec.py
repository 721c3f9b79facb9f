"""The bot-spec grammar: what a text such as ``threshold-400`` or ``farkle/ppo-turn`` names.

One grammar, read by :func:`parse_spec` and played by :func:`greed_env.bots.load` everywhere a
bot is named (``greed play``, ``eval``, ``tournament``, ``bots``, ``export``, the environments'
opponents, evaluation and tournaments)::

    spec      := ["bot:"] (python | file | [preset "/"] name)
    python    := "py:" (dotted.module | path.py) ":" attribute     a Bot class, factory or instance
    name      := "random"
               | "threshold" [(":" | "-") N ["-" keep]]     keep: max-score | keep-most | keep-fewest
               | "optimal" [(":" | "-") objective]          objective: the solver's objectives
               | "leader-duel"                               optimal duel vs the leading opponent
               | exported-bot-name                           a card in a bot folder
    file      := path ending in .json (bot card), .onnx (beside its card), .zip (SB3 model),
                 .npz (policy snapshot)

Names and rules presets are read case-insensitively and surrounding spaces are ignored. ``optimal`` alone is
``optimal-duel``. A ``preset/`` prefix places a heuristic in listings (heuristics play any
rules) but binds an optimal or exported bot to that preset's rules. A ``py:`` spec names Python
code: ``py:my_package.bots:CautiousBot`` or ``py:./my_bot.py:CautiousBot`` (see
:func:`greed_env.bots.load` for how the attribute becomes a bot).

>>> parse_spec("bot:greed/threshold-750-keep-most")
BotSpec(kind='threshold', text='greed/threshold-750-keep-most', preset='greed', name='threshold-750-keep-most', bank_at=750, keep='keep-most', objective='', path='')
>>> parse_spec("py:my_bots.py:Cautious").path
'my_bots.py'
>>> parse_spec("optimal").objective
'duel'
>>> parse_spec("threshold:lots")
Traceback (most recent call last):
...
greed_env.bots.errors.UnknownBotError: bot 'threshold:lots': the bank-at value must be a whole number of points
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from greed_env.bots.errors import UnknownBotError

__all__ = ["BOT_FILE_SUFFIXES", "BUILT_IN_KINDS", "DEFAULT_OPTIMAL_OBJECTIVE", "KEEP_STYLES", "BotSpec", "parse_spec"]

BOT_FILE_SUFFIXES = (".json", ".onnx", ".zip", ".npz")
BUILT_IN_KINDS: dict[str, str] = {
    "random": "random",
    "threshold": "threshold[-N]",
    "optimal": "optimal[-OBJECTIVE]",
    "leader": "leader-duel",
    "file": f"files ({', '.join(BOT_FILE_SUFFIXES)})",
    "python": "py:MODULE:ATTRIBUTE",
}
"""Every :attr:`BotSpec.kind` but ``exported`` (a card in a bot folder), as a message that lists
the kinds writes it: the one list of them (the loader's unknown-bot message reads it; a test
checks that :func:`parse_spec` makes no other kind)."""
KEEP_STYLES = ("max-score", "keep-most", "keep-fewest")
DEFAULT_OPTIMAL_OBJECTIVE = "duel"
"""``optimal`` alone: the solver's bot for the game's own goal, winning a two-player game."""

_THRESHOLD = re.compile(r"^threshold(?:[:-](?P<arg>[^-]*)(?:-(?P<keep>.+))?)?$")
_OPTIMAL = re.compile(r"^optimal(?:[:-](?P<objective>.*))?$")


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec.

    Attributes:
        kind: ``random``, ``threshold``, ``optimal``, ``leader`` (``leader-duel``), ``exported``
            (a card in a bot folder), ``file`` or ``python`` (``py:MODULE:ATTRIBUTE``).
        text: the spec without surrounding spaces and without the ``bot:`` prefix; the name
            the bot plays under.
        preset: the rules preset of a ``preset/name`` id, or ``""``.
        name: the part after ``preset/`` (lower case for built-in kinds).
        bank_at, keep: a threshold bot's bank-at points and keep style.
        objective: an optimal bot's objective.
        path: a file spec's path; a ``python`` spec's module (dotted name or ``.py`` path),
            whose attribute is ``name``.
    """

    kind: str
    text: str
    preset: str = ""
    name: str = ""
    bank_at: int = 300
    keep: str = "max-score"
    objective: str = ""
    path: str = ""

    @property
    def runs_code(self) -> bool:
        """Whether loading the bot runs code that comes with it: a ``py:`` spec imports a
        module; an SB3 ``.zip`` is read with ``MaskablePPO.load``, which unpickles. Cards,
        ONNX graphs and ``.npz`` snapshots are data."""
        return self.kind == "python" or (self.kind == "file" and self.path.lower().endswith(".zip"))


def parse_spec(spec: str) -> BotSpec:
    """Read ``spec`` (see the module docstring); files are not opened, presets not checked.

    Raises:
        TypeError: ``spec`` is not a string.
        UnknownBotError: an empty spec or a bad argument (a bank-at value that is not a whole
            number, an unknown keep style, an empty objective).
    """
    if not isinstance(spec, str):
        raise TypeError(f"a bot spec is a string such as 'random' or 'ten_thousand/ppo-turn', got {spec!r}")
    text = spec.strip()
    if text[:4].lower() == "bot:":
        text = text[4:].strip()
    if not text:
        raise UnknownBotError("empty bot spec")
    lowered = text.lower()
    if lowered.startswith("py:"):
        module, sep, attribute = text[3:].strip().rpartition(":")
        module, attribute = module.strip(), attribute.strip()
        if not sep or not module or not attribute.isidentifier():
            raise UnknownBotError(
                f"bot {text!r}: a Python bot is py:MODULE:ATTRIBUTE, e.g. py:my_bots:CautiousBot "
                "or py:./my_bots.py:CautiousBot"
            )
        return BotSpec("python", text, name=attribute, path=module)
    if lowered.endswith(BOT_FILE_SUFFIXES) or text.startswith(("/", "./", "../", "~")):
        return BotSpec("file", text, path=text)
    preset, sep, name = text.partition("/")
    if not sep:
        preset, name = "", text
    preset, name = preset.strip().lower(), name.strip()
    key = name.lower()
    if key == "random":
        return BotSpec("random", _shown(preset, key), preset, key)
    m = _THRESHOLD.match(key)
    if m is not None:
        arg, keep = m.group("arg"), m.group("keep") or "max-score"
        bank_at = 300
        if arg is not None:
            if not arg.isdigit():
                raise UnknownBotError(f"bot {text!r}: the bank-at value must be a whole number of points")
            bank_at = int(arg)
        if keep not in KEEP_STYLES:
            raise UnknownBotError(f"bot {text!r}: the keep style must be one of {', '.join(KEEP_STYLES)}")
        return BotSpec("threshold", _shown(preset, key), preset, key, bank_at=bank_at, keep=keep)
    m = _OPTIMAL.match(key)
    if m is not None:
        objective = m.group("objective")
        if objective is None:
            objective = DEFAULT_OPTIMAL_OBJECTIVE
        elif not objective:
            raise UnknownBotError(f"bot {text!r}: name an objective, e.g. optimal-turn")
        return BotSpec("optimal", _shown(preset, f"optimal-{objective}"), preset, f"optimal-{objective}", objective=objective)
    if key == "leader-duel":
        return BotSpec("leader", _shown(preset, key), preset, key, objective="duel")
    return BotSpec("exported", text, preset, name)


def _shown(preset: str, name: str) -> str:
    return f"{preset}/{name}" if preset else name
