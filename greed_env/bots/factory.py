"""Build a bot from a short text spec, as typed on the command line.

Built-in kinds:

* ``random``: :class:`RandomBot`, a uniformly random legal move;
* ``threshold`` or ``threshold:N``: :class:`ThresholdBot` banking at ``N`` points (default 300);
* ``optimal`` or ``optimal:OBJECTIVE``: the solver's
  :class:`~greed_env.solver.bot.OptimalBot` for ``duel`` (default), ``turn``, ``entry`` or
  ``race`` (its table loaded or solved for ``rules``).

Any other spec goes to ``greed_env.bots.registry.load(spec, rules=rules)`` (``rules`` passed
when the registry's ``load`` takes it) when that module exists, so
registered bots (exact solvers, trained policies) are reachable by name without this module
knowing them. An unknown spec raises :class:`BotSpecError` naming the spec and what is known.

>>> from greed_env.rules import preset
>>> make_bot("threshold:500", preset("ten_thousand")).bank_at
500
>>> make_bot("random", preset("greed")).name
'random'
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

from greed_env.bots.base import Bot, RandomBot, ThresholdBot
from greed_env.rules.config import Rules

__all__ = ["BUILTIN_KINDS", "BotSpecError", "make_bot"]

REGISTRY_MODULE = "greed_env.bots.registry"


class BotSpecError(ValueError):
    """A bot spec that names no known bot or carries a bad argument."""


def _random(arg: str | None, rules: Rules) -> Bot:
    if arg:
        raise BotSpecError(f"bot 'random' takes no argument, got 'random:{arg}'")
    return RandomBot()


def _threshold(arg: str | None, rules: Rules) -> Bot:
    if arg is None or arg == "":
        return ThresholdBot()
    try:
        bank_at = int(arg)
    except ValueError:
        raise BotSpecError(
            f"bot 'threshold:{arg}': the bank-at value must be a whole number of points"
        ) from None
    if bank_at < 0:
        raise BotSpecError(f"bot 'threshold:{arg}': the bank-at value must be >= 0")
    return ThresholdBot(bank_at=bank_at, name=f"threshold:{bank_at}")


def _optimal(arg: str | None, rules: Rules) -> Bot:
    from greed_env.solver import OBJECTIVES
    from greed_env.solver.bot import OptimalBot

    objective = (arg or "duel").strip().lower()
    if objective not in OBJECTIVES:
        raise BotSpecError(
            f"bot 'optimal:{arg}': the objective must be one of {', '.join(OBJECTIVES)}"
        )
    return OptimalBot(rules, objective)


BUILTIN_KINDS: dict[str, Callable[[str | None, Rules], Bot]] = {
    "random": _random,
    "threshold": _threshold,
    "optimal": _optimal,
}


def make_bot(spec: str, rules: Rules) -> Bot:
    """The bot that ``spec`` names, for a game under ``rules``.

    ``spec`` is ``KIND`` or ``KIND:ARG`` for a built-in kind (see the module docstring), or any
    name the bot registry (``greed_env.bots.registry``, loaded lazily) knows.

    Raises:
        BotSpecError: empty or unknown spec, or a bad argument; the message lists what is known.
    """
    text = spec.strip()
    if not text:
        raise BotSpecError("empty bot spec; known kinds: " + _known())
    kind, sep, arg = text.partition(":")
    builder = BUILTIN_KINDS.get(kind.lower())
    if builder is not None:
        return builder(arg if sep else None, rules)
    try:
        registry = importlib.import_module(REGISTRY_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != REGISTRY_MODULE:
            raise
        raise BotSpecError(f"unknown bot {text!r}; known kinds: {_known()}") from None
    takes_rules = "rules" in inspect.signature(registry.load).parameters
    try:
        return registry.load(text, rules=rules) if takes_rules else registry.load(text)
    except (LookupError, ValueError) as exc:
        detail = str(exc.args[0] if exc.args else exc)
        if text not in detail:
            detail = f"bot {text!r}: {detail}"
        if isinstance(exc, LookupError) and not detail.startswith("bot file") and "no rules preset" not in detail:
            detail += f"; built-in kinds: {_known()}"  # a name that is no bot: list the kinds
        raise BotSpecError(detail) from None


def _known() -> str:
    return "random, threshold[:N], optimal[:OBJECTIVE]"
