"""The bot an evaluation plays: a bot object, or any spec :func:`greed_env.bots.load` reads.

One adjustment, so that the optimum is the yardstick the objective is measured by:
``optimal-OBJ`` (no preset) for the objective being measured plays the solver table of
:func:`~greed_env.evaluation.yardstick.yardstick_rules` (the same rules except where a
one-turn episode cannot meet a rule, as Zilch's bust penalty), under the rules measured.
"""

from __future__ import annotations

import os

from greed_env.bots.base import Bot
from greed_env.bots.loader import as_bot, load
from greed_env.bots.solver_backend import solver_bot
from greed_env.bots.spec import BotSpec, parse_spec
from greed_env.evaluation.yardstick import yardstick_rules
from greed_env.rules import Rules

__all__ = ["BotSource", "bot_label", "names_optimal_duel", "resolve_bot"]

BotSource = str | os.PathLike | BotSpec | Bot


def resolve_bot(source: BotSource, rules: Rules, objective: str, *, trust_code: bool = True) -> Bot:
    """The bot ``source`` names, to be measured on ``objective`` under ``rules``.

    ``trust_code=False`` refuses a spec whose bot runs code as it loads (a ``.zip``, ``py:``;
    :func:`greed_env.bots.loader.check_trusted`); a bot object is the caller's own.

    Raises:
        greed_env.bots.BotLoadError: an unknown spec, or a file that is missing, corrupt or
            made for other rules; :class:`~greed_env.bots.errors.UntrustedCodeError` as above.
        ValueError: an object that is no bot.
    """
    if isinstance(source, BotSpec | str | os.PathLike):
        spec = source if isinstance(source, BotSpec) else parse_spec(os.fspath(source))
        if spec.kind == "optimal" and not spec.preset and spec.objective == objective:
            return solver_bot(rules, objective, spec.text, table_rules=yardstick_rules(rules, objective))
        return load(spec, rules, trust_code=trust_code)
    return as_bot(source, rules)


def bot_label(source: BotSource, bot: Bot) -> str:
    """The name an evaluation reports for ``source``: the spec as given, else the bot's name."""
    if isinstance(source, BotSpec):
        return source.text
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return bot.name


def names_optimal_duel(source: BotSource) -> bool:
    """Whether ``source`` is a spec of the solver's optimal duel bot (``optimal``,
    ``optimal-duel``, ``optimal:duel``, ``PRESET/optimal-duel``): the opponent against which a
    duel's regret estimate holds. A bot object is not looked into.

    >>> [names_optimal_duel(s) for s in ("optimal", "farkle/optimal-duel", "optimal-turn", "random")]
    [True, True, False, False]
    """
    if not isinstance(source, BotSpec | str | os.PathLike):
        return False
    spec = source if isinstance(source, BotSpec) else parse_spec(os.fspath(source))
    return spec.kind == "optimal" and spec.objective == "duel"
