"""``load(spec, rules)``: the one way to get a bot from its name, everywhere.

The grammar is :mod:`greed_env.bots.spec`; what each spec plays:

==================================  =========================================================
spec                                bot
==================================  =========================================================
``random``                          :class:`~greed_env.bots.base.RandomBot`
``threshold``                       :class:`~greed_env.bots.base.ThresholdBot` banking at 300
``threshold:N``, ``threshold-N``    banking at ``N`` points, keeping the highest score
``threshold-N-keep-most``           ... keeping the most dice (``-keep-fewest``: the fewest)
``optimal``                         ``optimal-duel``
``optimal-OBJ``, ``optimal:OBJ``    the solver's bot for ``OBJ`` (turn, entry, race, duel)
                                    under ``rules`` (:class:`~greed_env.bots.solver_backend.SolverBot`)
``leader-duel``                     the optimal duel policy against the leading opponent, for
                                    three or more players (:class:`~greed_env.bots.leader.
                                    LeaderDuelBot`; optimal-duel itself with two)
``PRESET/ladder-NN``                the difficulty ladder's rung of about NN% against optimal-duel
                                    (:class:`~greed_env.solver.ladder.LadderBot`, from the
                                    preset's ``ladder.json`` in a bot folder)
``PRESET/NAME``                     ``NAME`` for that preset: a heuristic as above, the solver
                                    bot for the preset's rules, or the exported bot whose card
                                    is ``PRESET/NAME.json`` in a bot folder
``NAME`` (another name)             the exported bot ``<rules name>/NAME``
``FILE.json``, ``FILE.onnx``        the exported bot of that card (ONNX beside it), onnxruntime
``FILE.zip``                        an SB3 MaskablePPO model's actor converted to numpy
                                    (:class:`~greed_env.bots.numpy_backend.PolicyBot`; torch
                                    only while reading the zip)
``FILE.npz``                        a numpy policy snapshot (:class:`PolicyBot`)
``py:MODULE:ATTR``                  Python code: ``ATTR`` of the module ``MODULE`` (a dotted
``py:path/to/file.py:ATTR``         name on ``sys.path``, or a ``.py`` file): a bot instance,
                                    or a class or factory called with ``rules=`` when it takes
                                    a ``rules`` parameter and with no arguments otherwise
==================================  =========================================================

Any spec may carry a ``bot:`` prefix. ``rules`` are the rules the bot will play: an optimal
or trained bot made for other rules is refused at once (:class:`RulesMismatchError`).

Two kinds of spec run code as they load: a ``.zip`` (``MaskablePPO.load`` unpickles, and a
pickle can run anything) and ``py:`` (an import). ``load(..., trust_code=False)`` refuses them
with :class:`UntrustedCodeError` before the file is opened; the commands that run bots named
in files or lists (``greed eval``, ``greed tournament``, ``greed benchmark``) pass
``trust_code=False`` unless given ``--trust-code``. In Python the default is ``True``: a program
that names a bot already runs code of its author's choosing, and training, evaluation and the
examples load their own ``.zip`` models.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from greed_env.bots.base import Bot, RandomBot, ThresholdBot, check_seats
from greed_env.bots.cards import (
    CARD_FORMAT,
    card_rules,
    check_training_card,
    read_card,
    read_training_card,
    rules_mismatch_message,
)
from greed_env.bots.errors import (
    BotLoadError,
    CorruptBotError,
    RulesMismatchError,
    UnknownBotError,
    UntrustedCodeError,
)
from greed_env.bots.leader import LeaderDuelBot
from greed_env.bots.numpy_backend import PolicyBot, load_policy
from greed_env.bots.onnx_backend import OnnxBot
from greed_env.bots.registry import find_card, ladder_bot, list_bots
from greed_env.bots.solver_backend import optimal_bot, solver_bot
from greed_env.bots.spec import BUILT_IN_KINDS, BotSpec, parse_spec
from greed_env.files import name_problem
from greed_env.rules import Rules, preset, preset_names

__all__ = [
    "as_bot",
    "check_seats",
    "check_trusted",
    "file_modules",
    "import_file_modules",
    "load",
    "spec_card",
    "spec_rules",
]

TRUST_FLAG = "--trust-code"
"""The command-line flag that lets a command load bots that run code (:func:`check_trusted`)."""


def check_trusted(spec: str | BotSpec, trust_code: bool) -> None:
    """Refuse a spec whose bot runs code as it loads (:attr:`BotSpec.runs_code`: an SB3 ``.zip``,
    a ``py:`` spec) unless ``trust_code``; reads no file.

    Raises:
        UntrustedCodeError: one line naming the spec, why it runs code and ``--trust-code``.
        UnknownBotError: a spec that does not parse.
    """
    parsed = spec if isinstance(spec, BotSpec) else parse_spec(spec)
    if trust_code or not parsed.runs_code:
        return
    what = (
        "is Python code, imported as it loads"
        if parsed.kind == "python"
        else "is an SB3 model, read with pickle, which can run any code in the file"
    )
    raise UntrustedCodeError(
        f"bot {parsed.text!r} {what}; give {TRUST_FLAG} (trust_code=True in Python) to run it if you trust it"
    )


def load(
    spec: str | BotSpec, rules: Rules | None = None, *, trust_code: bool = True, **options: Any
) -> Bot:
    """The bot ``spec`` names (see the module docstring), ready to play ``rules``.

    Args:
        spec: a bot spec, or one already read by :func:`~greed_env.bots.spec.parse_spec`.
        rules: the rules the bot will play. Needed for a bare optimal or exported name and a
            model file without a training card; when given, a bot made for other rules is
            refused.
        trust_code: False refuses a ``.zip`` or ``py:`` spec, whose loading runs code
            (:func:`check_trusted`); see the module docstring for the default.
        options: passed to :class:`OnnxBot` for exported bots (``temperature``, ``threads``).

    Raises:
        TypeError: ``spec`` is neither a string nor a :class:`BotSpec` (None, a number).
        UnknownBotError: no such bot or a bad argument (lists what is known).
        RulesMismatchError: the bot was made for other rules than ``rules``.
        MissingDependencyError: an exported bot without onnxruntime installed.
        UntrustedCodeError: a spec that runs code, with ``trust_code=False``.
        BotLoadError: a file that is corrupt or made for another observation spec or action
            catalog (:mod:`greed_env.bots.errors`).
    """
    if not isinstance(spec, str | BotSpec):
        raise TypeError(
            f"a bot spec is a string such as 'random', 'threshold-300' or 'ten_thousand/ppo-turn' "
            f"(or a BotSpec), got {spec!r}"
        )
    parsed = spec if isinstance(spec, BotSpec) else parse_spec(spec)
    check_trusted(parsed, trust_code)
    _check_file_name(parsed)
    if parsed.preset and parsed.preset not in preset_names():
        raise UnknownBotError(
            f"unknown bot {parsed.text!r}: no rules preset {parsed.preset!r}; presets: {', '.join(preset_names())}"
        )
    if parsed.kind == "random":
        return RandomBot(name=parsed.text)
    if parsed.kind == "threshold":
        return ThresholdBot(bank_at=parsed.bank_at, keep=parsed.keep, name=parsed.text)
    if parsed.kind == "file":
        return _load_file(Path(parsed.path).expanduser(), rules, **options)
    if parsed.kind == "python":
        return _load_python(parsed, rules)
    target = _bot_rules(parsed, rules)
    if parsed.kind == "optimal":
        return solver_bot(target, parsed.objective, parsed.text)
    if parsed.kind == "leader":
        return LeaderDuelBot(target, optimal_bot(target, "duel"))
    bot_id = f"{target.name}/{parsed.name}"
    if parsed.name.startswith("ladder-"):
        return ladder_bot(target, parsed.name, bot_id)
    card = find_card(bot_id)
    if card is None:
        known = [b.id for b in list_bots(target.name)] if target.name in preset_names() else []
        raise UnknownBotError(
            f"unknown bot {parsed.text!r}; known for {target.name}: {', '.join(known) or 'none'}; "
            f"built-in kinds: {', '.join(BUILT_IN_KINDS.values())}"
        )
    found_id = read_card(card)["id"]
    if found_id != bot_id:
        raise CorruptBotError(f"bot {bot_id}: its card {card} has the id {found_id!r}, not the id of its place")
    return OnnxBot.from_card(card, rules=rules, **options)


def as_bot(bot: Bot | str | BotSpec | None, rules: Rules, default: str = "threshold") -> Bot:
    """``bot`` itself when it is a :class:`Bot`, else :func:`load` of the spec (``default`` for
    None): how the environments take their ``opponent=`` argument.

    Raises:
        BotLoadError: a spec that does not load (see :func:`load`).
        ValueError: neither a bot nor a spec.
    """
    if bot is None:
        return load(default, rules)
    if isinstance(bot, str | BotSpec):
        return load(bot, rules)
    if not isinstance(bot, Bot):
        raise ValueError(f"a bot must be a Bot (with act(rules, state, rng) and a name) or a spec string, got {bot!r}")
    return bot


def _check_file_name(parsed: BotSpec) -> None:
    """Refuse a file spec (a bot file, a ``py:`` file) whose name the file system cannot hold.

    Raises:
        UnknownBotError: naming the spec (shortened) and the part too long.
    """
    if parsed.kind == "file" or (parsed.kind == "python" and parsed.path.endswith(".py")):
        why = name_problem(Path(parsed.path).expanduser())
        if why:
            text = parsed.text if len(parsed.text) <= 60 else f"{parsed.text[:30]}...{parsed.text[-30:]}"
            raise UnknownBotError(f"bot {text!r}: {why}")


def _bot_rules(parsed: BotSpec, rules: Rules | None) -> Rules:
    """The rules an optimal or exported bot is made for: its preset's, else ``rules``."""
    if not parsed.preset:
        if rules is None:
            raise UnknownBotError(
                f"unknown bot {parsed.text!r}: give an id <rules>/{parsed.name} "
                f"(e.g. ten_thousand/{parsed.name}) or the rules to play"
            )
        return rules
    target = preset(parsed.preset)
    if rules is not None and rules.fingerprint != target.fingerprint:
        advice = (
            f"the bare name {parsed.name!r} builds the solver bot for these rules"
            if parsed.kind == "optimal"
            else "a trained bot plays only the rules it was trained for"
        )
        raise RulesMismatchError(f"{rules_mismatch_message(f'bot {parsed.text}', target, rules)}; {advice}")
    return target


def _load_python(parsed: BotSpec, rules: Rules | None) -> Bot:
    """The bot a ``py:MODULE:ATTR`` spec names (see the module docstring)."""
    where = f"bot {parsed.text!r}"
    module = _import_module(parsed.path, where)
    if not hasattr(module, parsed.name):
        raise UnknownBotError(f"{where}: module {parsed.path!r} has no attribute {parsed.name!r}")
    made = getattr(module, parsed.name)
    if inspect.isclass(made) or (not isinstance(made, Bot) and callable(made)):
        try:
            takes_rules = "rules" in inspect.signature(made).parameters
        except (TypeError, ValueError):
            takes_rules = False
        if takes_rules and rules is None:
            raise UnknownBotError(f"{where}: {parsed.name} takes the rules to play; pass them (--rules)")
        try:
            made = made(rules=rules) if takes_rules else made()
        except Exception as exc:  # the user's constructor: report any failure as a load error
            raise BotLoadError(f"{where}: calling {parsed.name} failed: {type(exc).__name__}: {exc}") from exc
    if inspect.isclass(made) or not isinstance(made, Bot):
        raise BotLoadError(
            f"{where}: {parsed.name} is not a bot (an object with a name and act(rules, state, rng)), "
            f"nor a class or factory that makes one; got {type(made).__name__}"
        )
    return made


_FILE_MODULES: dict[str, str] = {}
"""The ``.py`` files imported by ``py:`` specs in this process: module name -> absolute path."""


def file_modules() -> dict[str, str]:
    """The ``.py`` files ``py:`` specs have imported in this process (module name -> path): what
    a worker process imports first (:func:`import_file_modules`), so that it can unpickle their
    bots, whose classes live in modules no import statement can find."""
    return dict(_FILE_MODULES)


def import_file_modules(modules: dict[str, str]) -> None:
    """Import the ``.py`` files of :func:`file_modules` (taken in another process) under the same
    module names, those not imported yet.

    Raises:
        BotLoadError: a file that no longer imports.
    """
    for key, path in modules.items():
        if key not in sys.modules:
            _exec_file_module(key, Path(path), f"bot file {path}", path)


def _import_module(name: str, where: str) -> Any:
    if name.endswith(".py"):
        path = Path(name).expanduser().resolve()
        if not path.is_file():
            raise UnknownBotError(f"{where}: no Python file {name!r}")
        key = f"greed_env_user_bot_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
        if key in sys.modules:
            return sys.modules[key]
        return _exec_file_module(key, path, where, name)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise UnknownBotError(f"{where}: no module {name!r} ({exc})") from exc
    except Exception as exc:  # the user's module: report any failure as a load error
        raise BotLoadError(f"{where}: importing {name} failed: {type(exc).__name__}: {exc}") from exc


def _exec_file_module(key: str, path: Path, where: str, shown: str) -> Any:
    """Import the Python file ``path`` (``shown`` in messages) as the module ``key``, recorded
    in :func:`file_modules`."""
    found = importlib.util.spec_from_file_location(key, path)
    if found is None or found.loader is None:
        raise UnknownBotError(f"{where}: {shown!r} cannot be imported as a module")
    module = importlib.util.module_from_spec(found)
    sys.modules[key] = module
    try:
        found.loader.exec_module(module)
    except Exception as exc:  # the user's module: report any failure as a load error
        del sys.modules[key]
        raise BotLoadError(f"{where}: importing {shown} failed: {type(exc).__name__}: {exc}") from exc
    _FILE_MODULES[key] = str(path)
    return module


def _load_file(path: Path, rules: Rules | None, **options: Any) -> Bot:
    if not path.exists():
        raise UnknownBotError(f"bot file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix in (".zip", ".npz"):
        where = f"model {path}"
        if rules is None:
            rules = check_training_card(read_training_card(path) or {}, None, where)
        if rules is None:
            raise BotLoadError(f"{where}: no training card names its rules; pass the rules explicitly (--rules)")
        return PolicyBot(load_policy(path, rules), rules, name=path.name)
    if suffix not in (".json", ".onnx"):
        raise UnknownBotError(f"bot file {str(path)!r}: not a bot card (.json), ONNX bot (.onnx) or model (.zip, .npz)")
    card = path if suffix == ".json" else path.with_suffix(".json")
    if not card.is_file():
        raise CorruptBotError(f"bot file {path}: no card {card.name} beside it")
    return OnnxBot.from_card(card, rules=rules, **options)


def spec_card(spec: str | BotSpec) -> dict[str, Any] | None:
    """The card of the bot ``spec`` names, when it has one: an exported bot's card (by id or
    file) or a model file's training card; None for heuristics, optimal bots and models without
    a card. Reads files; builds no bot.

    Raises:
        BotLoadError: a bot card that does not read.
    """
    parsed = spec if isinstance(spec, BotSpec) else parse_spec(spec)
    _check_file_name(parsed)
    if parsed.kind == "file":
        path = Path(parsed.path).expanduser()
        if path.suffix.lower() in (".zip", ".npz"):
            return read_training_card(path) if path.is_file() else None
        card_path = path if path.suffix.lower() == ".json" else path.with_suffix(".json")
        return read_card(card_path) if card_path.is_file() else None
    if parsed.kind == "exported" and parsed.preset in preset_names():
        found = find_card(f"{parsed.preset}/{parsed.name}")
        return read_card(found) if found is not None else None
    return None


def spec_rules(spec: str | BotSpec) -> Rules | None:
    """The rules the bot ``spec`` names was made for when the spec alone says: a preset id's
    preset, an exported bot's card, a model's training card; else None.

    Raises:
        BotLoadError: a card that does not read or check.
    """
    parsed = spec if isinstance(spec, BotSpec) else parse_spec(spec)
    card = spec_card(parsed)
    if card is not None and card.get("format") == CARD_FORMAT:
        return card_rules(card, f"bot {parsed.text}")
    if card is not None:
        return check_training_card(card, None, f"model {parsed.text}")
    if parsed.preset in preset_names():
        return preset(parsed.preset)
    return None
