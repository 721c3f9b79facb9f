"""The one exception family of the bot runtime.

Every way a bot can fail to load or to play the rules asked of it raises a :class:`BotLoadError`
(a ``ValueError``) whose message names the spec or file and the mismatch:

* :class:`UnknownBotError` (also a ``LookupError``): a spec that names no bot, or a bad argument;
* :class:`CorruptBotError`: an unreadable file: bad JSON, missing fields, checksum or parse failure;
* :class:`RulesMismatchError`: a bot made for other rules (another rules fingerprint);
* :class:`ObsSpecMismatchError`, :class:`CatalogMismatchError`: a bot trained on another
  observation spec or action catalog than this greed_env builds;
* :class:`SeatCountError`: a bot made for fewer seats than the game has (the solver's duel
  bots play two-player games only);
* :class:`MissingDependencyError` (also an ``ImportError``): a bot whose runtime is not
  installed (onnxruntime for exported bots);
* :class:`UntrustedCodeError`: a bot that runs code as it loads (an SB3 ``.zip``, a ``py:``
  spec) asked for where code is not trusted (``trust_code=False``; the commands without
  ``--trust-code``).

A bot that loaded but fails in play (raises in ``act``, returns something that is not a legal
move) raises :class:`BotPlayError` (a ``ValueError``, not a load error).
"""

from __future__ import annotations

__all__ = [
    "BotLoadError",
    "BotPlayError",
    "CatalogMismatchError",
    "CorruptBotError",
    "MissingDependencyError",
    "ObsSpecMismatchError",
    "RulesMismatchError",
    "SeatCountError",
    "UnknownBotError",
    "UntrustedCodeError",
]


class BotLoadError(ValueError):
    """A bot that cannot be used as asked; the message names the spec or file and the mismatch."""


class UnknownBotError(BotLoadError, LookupError):
    """A spec that names no bot or carries a bad argument; the message lists what is known."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown bot"


class CorruptBotError(BotLoadError):
    """A bot file that is unreadable: bad JSON, missing fields, checksum or parse failure."""


class RulesMismatchError(BotLoadError):
    """A bot made for other rules (different rules fingerprint)."""


class ObsSpecMismatchError(BotLoadError):
    """A bot trained on another observation-spec version or size than this greed_env encodes."""


class CatalogMismatchError(BotLoadError):
    """A bot trained on another action-catalog version or size than this greed_env builds."""


class SeatCountError(BotLoadError):
    """A bot asked to play a game with more seats than it is made for."""


class MissingDependencyError(BotLoadError, ImportError):
    """A bot whose runtime package is not installed; the message names the package and the
    ``pip install`` line."""


class UntrustedCodeError(BotLoadError):
    """A bot that runs code as it loads (an SB3 ``.zip`` unpickles, a ``py:`` spec imports),
    asked for without trusting code; the message names ``--trust-code``."""


class BotPlayError(ValueError):
    """A bot that failed at a decision: it raised in ``act``, or returned something that is not
    a legal move. The message names the bot, the position and what it raised or returned; the
    bot's own exception, when there is one, is the ``__cause__``."""
