"""The static site of ``greed web``: a page on which a person plays any shipped bot in the
browser, with everything it reads beside it.

The page (``web/app/``, shipped as ``greed_env.web``) runs the JavaScript host of
``web/host/`` on the shipped ONNX files: nothing runs on the server, so the folder
:func:`build_site` writes can be hosted by any static web server. Its layout::

    index.html                 the page (web/app/index.html, its links pointed at app/)
    app/                       the page's script and style sheet
    host/                      the JavaScript host (docs/portable.md)
    bundles/<preset>.json      the bot bundle of each preset
    bots/index.json            the presets and their bots, with measured strength
    bots/<preset>/<name>.onnx  each shipped ONNX bot, and its card (<name>.json)

A bot's ``label`` (easy, medium, hard) comes from its card's measured score rate against the
exact solver's duel bot (``optimal-duel``: wins plus half the draws):
:func:`strength_label`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from greed_env.bots.cards import read_card
from greed_env.bots.errors import BotLoadError
from greed_env.bots.registry import list_bots
from greed_env.files import atomic_write_bytes, atomic_write_text
from greed_env.portable.bundle import BUNDLE_VERSION, BundleError, write_bundle
from greed_env.rules import preset, preset_names

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "HARD_AT",
    "MEDIUM_AT",
    "SITE_FORMAT",
    "WEB_SUFFIXES",
    "build_site",
    "site_bots",
    "strength_label",
    "vs_optimal_duel",
    "web_files",
]

SITE_FORMAT = "greed_env.web_bots"
HARD_AT = 0.40
"""A bot scoring at least this against optimal-duel is ``hard`` (optimal play scores 0.5)."""
MEDIUM_AT = 0.20
"""A bot scoring at least this (and below :data:`HARD_AT`) against optimal-duel is ``medium``."""
WEB_SUFFIXES = (".mjs", ".html", ".css")
"""The files of ``web/host/`` and ``web/app/`` copied into a site."""


def web_files() -> Traversable:
    """The ``web/`` folder: ``greed_env.web`` of an installed package (a wheel maps it there), or
    the checkout's ``web/`` beside the package for an editable install made before the mapping."""
    try:
        root = resources.files("greed_env.web")
    except ModuleNotFoundError:
        root = None
    if root is not None and root.joinpath("app").joinpath("index.html").is_file():
        return root
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "web" / "app" / "index.html").is_file():
        return checkout / "web"
    raise FileNotFoundError("the web page's files (greed_env.web: app/, host/) are not installed")


def vs_optimal_duel(card: dict[str, Any]) -> float | None:
    """The card's measured score rate against ``optimal-duel`` (its largest such match), or None."""
    best: tuple[int, float] | None = None
    for record in card.get("evaluation") or []:
        if not isinstance(record, dict) or record.get("opponent") != "optimal-duel":
            continue
        rate, games = record.get("score_rate"), record.get("games", 0)
        if isinstance(rate, int | float) and isinstance(games, int) and (best is None or games > best[0]):
            best = (games, float(rate))
    return None if best is None else best[1]


def strength_label(rate: float | None) -> str:
    """``hard``, ``medium`` or ``easy`` from a score rate against optimal-duel; ``unrated``
    without one (rules whose duel the solver does not hold, such as Trippn).

    >>> [strength_label(r) for r in (0.485, 0.25, 0.11, None)]
    ['hard', 'medium', 'easy', 'unrated']
    """
    if rate is None:
        return "unrated"
    return "hard" if rate >= HARD_AT else "medium" if rate >= MEDIUM_AT else "easy"


def site_bots(preset_name: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The registry's ONNX bots of one preset that the page can play, each as its entry of
    ``bots/index.json`` plus ``source`` (the card's path); and the bots left out, with why
    (a broken card, or a ``bundle_version`` other than the site's)."""
    bots: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for info in list_bots(preset_name):
        if info.kind != "onnx-policy":
            continue
        if info.problem:
            skipped.append({"id": info.id, "reason": info.problem})
            continue
        try:
            card = read_card(info.source)
        except BotLoadError as exc:
            skipped.append({"id": info.id, "reason": str(exc)})
            continue
        version = card.get("bundle_version", BUNDLE_VERSION)
        if version != BUNDLE_VERSION:
            skipped.append({"id": info.id, "reason": f"card names bundle_version {version!r}; the page plays {BUNDLE_VERSION}"})
            continue
        rate = vs_optimal_duel(card)
        bots.append(
            {
                "id": info.id,
                "name": info.name,
                "description": info.description,
                "strength": info.strength,
                "vs_optimal_duel": rate,
                "label": strength_label(rate),
                "onnx": f"bots/{preset_name}/{info.name}.onnx",
                "card": f"bots/{preset_name}/{info.name}.json",
                "source": info.source,
            }
        )
    return bots, skipped


def _files(folder: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """``(relative path, file)`` of the page files under ``folder``, sorted."""
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        if item.is_dir():
            yield from _files(item, f"{prefix}{item.name}/")
        elif item.name.endswith(WEB_SUFFIXES):
            yield f"{prefix}{item.name}", item


def _root_page(app_html: str) -> str:
    """The app's page served at the site's root: its relative links point into ``app/``."""
    if "<head>" not in app_html:
        raise BundleError("web/app/index.html has no <head>: cannot point its links at app/")
    return app_html.replace("<head>", '<head>\n  <base href="app/">', 1)


def build_site(out_dir: str | os.PathLike[str], presets: Sequence[str] | None = None) -> Path:
    """Write the static site of ``greed web`` into ``out_dir`` (created when missing; files of
    the same names are replaced, others left alone) and return its path.

    Args:
        out_dir: the site's folder.
        presets: the rules presets to offer (all presets by default).

    Raises:
        BundleError: an unknown preset, or a bundle that cannot be built.
        FileNotFoundError: the page's files are not installed.
        OSError: a file cannot be written (an existing target that is not a regular file
            included: :func:`greed_env.files.check_target`).
    """
    names = list(preset_names()) if presets is None else list(dict.fromkeys(presets))
    unknown = [n for n in names if n not in preset_names()]
    if unknown:
        raise BundleError(f"no rules preset {unknown[0]!r}; presets: {', '.join(preset_names())}")
    if not names:
        raise BundleError("no presets to offer")
    out = Path(out_dir)
    web = web_files()
    for part in ("host", "app"):
        for rel, item in _files(web.joinpath(part)):
            atomic_write_bytes(out / part / rel, item.read_bytes())
    atomic_write_text(out / "index.html", _root_page(web.joinpath("app").joinpath("index.html").read_text(encoding="utf-8")))
    entries = []
    all_skipped: list[dict[str, str]] = []
    for name in names:
        rules = preset(name)
        write_bundle(rules, out / "bundles" / f"{name}.json")
        bots, skipped = site_bots(name)
        for bot in bots:
            card = Path(bot.pop("source"))
            atomic_write_bytes(out / bot["card"], card.read_bytes())
            onnx = card.with_suffix(".onnx").read_bytes()
            atomic_write_bytes(out / bot["onnx"], onnx)
            bot["bytes"] = len(onnx)
        all_skipped += skipped
        entries.append(
            {
                "name": name,
                "bundle": f"bundles/{name}.json",
                "rules_fingerprint": rules.fingerprint,
                "tap_order": rules.carry_over,
                "bots": bots,
            }
        )
    index = {
        "format": SITE_FORMAT,
        "version": 1,
        "bundle_version": BUNDLE_VERSION,
        "labels": {"hard": HARD_AT, "medium": MEDIUM_AT},
        "presets": entries,
        "skipped": all_skipped,
    }
    atomic_write_text(out / "bots" / "index.json", json.dumps(index, indent=1) + "\n")
    return out
