"""The page of ``greed web`` in a real browser: Debian's Chromium driven by Playwright plays
whole games through clicks, exports the record, and Python replays it.

The site is built with :func:`greed_env.portable.site.build_site` and served from a thread. A
simple clicking player keeps the highest-scoring keep offered (tapping its dice in its tap
order) and banks when allowed past a few hundred points. The page's load time (navigation to
ready) and the bot's time per move (``performance.now`` around ``act``) are measured, never
asserted, and written to a small JSON file (``GREED_WEB_TIMINGS``, default
``<tmp>/greed-web-timings.json``); the screenshot of docs/portable.md is taken on the way.

Chromium comes from Debian, not from pip: when ``/usr/bin/chromium`` is missing, the session
installs it with apt-get if it runs as root, and otherwise fails with the line that says how.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from greed_env.bots.loader import load
from greed_env.portable.site import build_site
from greed_env.rules import preset as preset_rules
from greed_env.rules.record import replay

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_MISSING = (
    "Chromium is not installed: run `apt-get update && apt-get install -y --no-install-recommends "
    "chromium` as root (Debian's browser; Playwright's own `playwright install` is not used)"
)
PLAYWRIGHT_MISSING = "Playwright is not installed: pip install -e '.[dev]' (or pip install playwright)"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "figures" / "web-play.png"
GAMES = {"ten_thousand": "ppo-duel", "progressive": "ppo-duel-kick"}
SEEDS = {"ten_thousand": 11, "progressive": 5}
BANK_AT = 350
MAX_DECISIONS = 3_000
SHOT_BY = 12
"""The screenshot shows the first keep of several readings, or the first keep of three dice or
more after this many decisions."""


def _install_chromium() -> None:
    if CHROMIUM.exists():
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], check=False, capture_output=True, env=env, timeout=600)
        subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
            check=False,
            capture_output=True,
            env=env,
            timeout=1200,
        )
    if not CHROMIUM.exists():
        pytest.fail(CHROMIUM_MISSING, pytrace=False)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    site = build_site(tmp_path_factory.mktemp("site"), list(GAMES))
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(PLAYWRIGHT_MISSING, pytrace=False)
    _install_chromium()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900}, color_scheme="light", accept_downloads=True)
    errors: list[str] = []
    pg = context.new_page()
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.page_errors = errors
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture(scope="module")
def timings() -> Iterator[dict[str, Any]]:
    figures: dict[str, Any] = {}
    yield figures
    if not figures:
        return
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    out = Path(os.environ.get("GREED_WEB_TIMINGS") or Path(tempfile.gettempdir()) / "greed-web-timings.json")
    doc = {"machine": {"cpus": os.cpu_count(), "loadavg": load, "chromium": str(CHROMIUM)}, "games": figures}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def _wait_ready(page: Any) -> None:
    page.wait_for_function("['ready', 'error'].includes(document.body.dataset.state)", timeout=60_000)
    if page.evaluate("document.body.dataset.state") == "error":
        pytest.fail(f"the page did not load: {page.inner_text('#error')}", pytrace=False)


def _click_keep(page: Any, keep: dict[str, Any]) -> None:
    """Tap the keep's dice in its tap order, then press the button of that reading."""
    for face in keep["taps"]:
        page.click(f"#dice .die[data-face='{face}'][aria-pressed='false']")
    taps = ",".join(map(str, keep["taps"]))
    page.click(f"#keeps button.keep[data-taps='{taps}']")


def _first_enabled_move(page: Any) -> None:
    page.click("#moves button[data-kind]:not([disabled])")


def _play(page: Any, shot: Path | None) -> int:
    """Click through the game until it is over; the number of the person's decisions."""
    decisions = 0
    shot_taken = shot is None
    while decisions < MAX_DECISIONS:
        page.wait_for_function("['human', 'over'].includes(document.body.dataset.state)", timeout=60_000)
        if page.evaluate("document.body.dataset.state") == "over":
            return decisions
        decisions += 1
        phase = page.evaluate("document.body.dataset.phase")
        if phase == "KEEP":
            keeps = [m for m in page.evaluate("window.greedPage.legalMoves()") if m["kind"] == "keep"]
            if not keeps:
                _first_enabled_move(page)
                continue
            best = max(keeps, key=lambda m: m["points"])  # the first of the best
            readings = sum(sorted(m["dice"]) == sorted(best["dice"]) for m in keeps)
            if not shot_taken and len(best["taps"]) >= 3 and (readings > 1 or decisions >= SHOT_BY):
                for face in best["taps"]:
                    page.click(f"#dice .die[data-face='{face}'][aria-pressed='false']")
                page.wait_for_selector("#keeps button.keep")
                shot.parent.mkdir(parents=True, exist_ok=True)
                page.mouse.move(0, 0)  # no hover, no transition half done: the same picture every run
                page.screenshot(path=str(shot), full_page=True, animations="disabled")
                shot_taken = True
                page.click(f"#keeps button.keep[data-taps='{','.join(map(str, best['taps']))}']")
                continue
            _click_keep(page, best)
        elif phase == "CONTINUE":
            total = int(page.get_attribute("#turn-total", "data-value"))
            dice = int(page.inner_text("#dice-in-hand"))
            bank = page.query_selector("#move-bank:not([disabled])")
            if bank is not None and (total >= BANK_AT or dice <= 2):
                bank.click()
            elif page.query_selector("#move-roll") is not None:
                page.click("#move-roll")
            else:
                _first_enabled_move(page)
        else:
            _first_enabled_move(page)
    pytest.fail(f"the game did not end within {MAX_DECISIONS} decisions", pytrace=False)


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "mean_ms": round(statistics.fmean(ordered), 3),
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "max_ms": round(ordered[-1], 3),
        "first_ms": round(values[0], 3),
    }


@pytest.mark.parametrize("preset", list(GAMES))
def test_play_a_whole_game_through_clicks(
    preset: str, site_url: str, page: Any, timings: dict[str, Any], tmp_path: Path
) -> None:
    bot = GAMES[preset]
    page.goto(f"{site_url}?fast=1&preset={preset}&opponent={bot}&seed={SEEDS[preset]}")
    _wait_ready(page)
    loaded = page.evaluate("window.greedTimings")
    assert page.input_value("#preset") == preset and page.input_value("#opponent") == bot
    assert page.inner_text("#strength").strip(), "the opponent's measured strength is shown"

    page.click("#start")
    decisions = _play(page, SCREENSHOT if preset == "progressive" else None)

    scores = [int(page.get_attribute(f"#score-{seat}", "data-score")) for seat in (0, 1)]
    assert page.is_visible("#over") and page.inner_text("#winner").strip()
    with page.expect_download() as download_info:
        page.click("#export")
    path = tmp_path / "record.json"
    download_info.value.save_as(path)
    record = json.loads(path.read_text(encoding="utf-8"))

    assert record["format"] == "greed_env.game_record"
    assert record["rules"]["name"] == preset and record["seed"] == SEEDS[preset]
    assert record["players"] == ["human", f"{preset}/{bot}"]
    assert record["final"]["phase"] == "OVER"
    assert record["final"]["scores"] == scores, "the page shows the record's final scores"
    winners = page.get_attribute("#winner", "data-winners")
    assert [int(w) for w in winners.split(",")] == record["final"]["winners"]
    states = replay(record)  # Python's rules play every event again and check `final`
    assert len(states) == len(record["events"]) + 1
    assert list(states[-1].scores) == scores
    python_bot, rules = load(f"{preset}/{bot}"), preset_rules(preset)
    rng = np.random.default_rng(0)  # unused by a greedy bot
    bot_moves = [(i, e["move"]) for i, e in enumerate(record["events"]) if e["player"] == 1 and "move" in e]
    assert bot_moves and all(str(python_bot.act(rules, states[i], rng)) == m for i, m in bot_moves), (
        "the page's bot plays the moves of the same bot in Python"
    )

    moves = page.evaluate("window.greedTimings.moves")
    assert moves, "the bot moved"
    assert not page.page_errors, page.page_errors
    timings[preset] = {
        "bot": f"{preset}/{bot}",
        "seed": SEEDS[preset],
        "person_decisions": decisions,
        "events": len(record["events"]),
        "final_scores": scores,
        "winners": record["final"]["winners"],
        "ready_ms": round(loaded["ready_ms"], 1),
        "index_ms": round(loaded["index_ms"], 1),
        "bundle_ms": {k: round(v, 1) for k, v in loaded["bundle_ms"].items()},
        "bot_load_ms": {k: round(v, 1) for k, v in loaded["bot_load_ms"].items()},
        "bot_move": _summary(moves),
    }


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("bundles/ten_thousand.json", "bundle version 2 is not 1"),
        ("bots/ten_thousand/ppo-duel.json", "plays with bundle version 2"),
    ],
)
def test_a_file_of_another_version_shows_one_line(site_url: str, page: Any, path: str, expected: str) -> None:
    def newer(route: Any) -> None:
        data = json.loads(route.fetch().text())
        data["bundle_version"] = 2
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    page.route(f"**/{path}", newer)
    page.goto(f"{site_url}?preset=ten_thousand&opponent=ppo-duel")
    page.wait_for_function("document.body.dataset.state === 'error'", timeout=60_000)
    line = page.inner_text("#error")
    assert expected in line and "\n" not in line.strip(), line
    assert page.is_disabled("#start")


def test_without_chromium_the_test_fails_with_the_line_that_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(f"{__name__}.CHROMIUM", tmp_path / "chromium")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # not root: nothing is installed
    with pytest.raises(pytest.fail.Exception, match=r"apt-get update && apt-get install -y --no-install-recommends chromium"):
        _install_chromium()
