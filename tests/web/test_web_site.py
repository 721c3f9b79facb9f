"""``greed web`` and the static site it builds (greed_env/portable/site.py): the files, the bot
list with strength labels, bots of another bundle version left out, refusals with one line,
and the server until Ctrl-C."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from greed_env.cli import main
from greed_env.portable.bundle import BUNDLE_VERSION
from greed_env.portable.site import HARD_AT, MEDIUM_AT, build_site, site_bots, strength_label
from greed_env.rules import preset_names

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("site"), ["ten_thousand", "trippn"])


def test_the_site_holds_the_page_the_host_the_bundles_and_every_shipped_onnx_bot(site: Path) -> None:
    for part in ("index.mjs", "game.mjs", "onnx.mjs", "record.mjs"):
        assert (site / "host" / part).is_file()
    for part in ("index.html", "app.mjs", "style.css"):
        assert (site / "app" / part).is_file()
    root = (site / "index.html").read_text(encoding="utf-8")
    assert '<base href="app/">' in root and 'src="app.mjs"' in root
    index = json.loads((site / "bots" / "index.json").read_text(encoding="utf-8"))
    assert index["format"] == "greed_env.web_bots" and index["bundle_version"] == BUNDLE_VERSION
    assert [p["name"] for p in index["presets"]] == ["ten_thousand", "trippn"]
    for entry in index["presets"]:
        bundle = json.loads((site / entry["bundle"]).read_text(encoding="utf-8"))
        assert bundle["rules_fingerprint"] == entry["rules_fingerprint"]
        assert entry["tap_order"] == bundle["rules"]["carry_over"]
        shipped = sorted(p.stem for p in (REPO / "agents" / entry["name"]).glob("*.onnx"))
        assert sorted(b["name"] for b in entry["bots"]) == shipped
        for bot in entry["bots"]:
            card = json.loads((site / bot["card"]).read_text(encoding="utf-8"))
            onnx = (site / bot["onnx"]).read_bytes()
            assert card["id"] == bot["id"] and card.get("bundle_version", 1) == 1
            assert hashlib.sha256(onnx).hexdigest() == card["onnx"]["sha256"] and len(onnx) == bot["bytes"]
            assert bot["label"] == strength_label(bot["vs_optimal_duel"])
            assert bot["strength"]
    trippn = index["presets"][1]["bots"]
    assert {b["label"] for b in trippn} == {"unrated"}, "Trippn's bots have no optimal-duel match"


def test_strength_labels_follow_the_score_against_optimal_duel() -> None:
    assert strength_label(HARD_AT) == "hard" and strength_label(HARD_AT - 1e-9) == "medium"
    assert strength_label(MEDIUM_AT) == "medium" and strength_label(MEDIUM_AT - 1e-9) == "easy"
    bots, _ = site_bots("ten_thousand")
    assert {b["name"]: b["label"] for b in bots} == {"ppo-duel": "hard", "ppo-turn": "hard", "rllib-selfplay": "medium"}


def test_a_bot_of_another_bundle_version_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "bots" / "ten_thousand"
    folder.mkdir(parents=True)
    card = json.loads((REPO / "agents" / "ten_thousand" / "ppo-turn.json").read_text(encoding="utf-8"))
    card.update(id="ten_thousand/newer", name="newer", bundle_version=2)
    card["onnx"]["file"] = "newer.onnx"
    (folder / "newer.json").write_text(json.dumps(card), encoding="utf-8")
    shutil.copyfile(REPO / "agents" / "ten_thousand" / "ppo-turn.onnx", folder / "newer.onnx")
    monkeypatch.setenv("GREED_BOTS_PATH", str(tmp_path / "bots"))
    bots, skipped = site_bots("ten_thousand")
    assert "ten_thousand/newer" not in [b["id"] for b in bots]
    assert [s["id"] for s in skipped] == ["ten_thousand/newer"]
    assert "bundle_version 2" in skipped[0]["reason"]


def test_greed_web_out_writes_the_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(["web", "--out", str(out), "--presets", "farkle5"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert (out / "index.html").is_file() and (out / "bundles" / "farkle5.json").is_file()
    shipped = sorted(p.name for p in (REPO / "agents" / "farkle5").glob("*.onnx"))
    assert shipped and sorted(p.name for p in (out / "bots" / "farkle5").iterdir()) == sorted(
        [*shipped, *(name.replace(".onnx", ".json") for name in shipped)]
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--presets", "nosuch"], "no rules preset 'nosuch'"),
        (["--presets", ","], "no presets to offer"),
        (["--out", "FILE"], "is a file, not a folder"),
    ],
)
def test_greed_web_refuses_bad_input_with_one_line(
    args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "FILE").write_text("x", encoding="utf-8")
    argv = [a.replace("FILE", str(tmp_path / "FILE")) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "site")]
    assert main(["web", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err, err


def test_greed_web_never_writes_over_a_non_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    out.mkdir()
    os.mkfifo(out / "index.html")
    assert main(["web", "--out", str(out), "--presets", "farkle5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a regular file" in err and "\n" not in err, err
    assert not (out / "index.html").is_file()


def test_greed_web_says_when_the_port_is_taken(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["web", "--port", str(port), "--no-browser", "--presets", "farkle5"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot serve on 127.0.0.1:{port}" in err and "\n" not in err, err


def test_greed_web_serves_the_page_until_ctrl_c(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    cmd = [sys.executable, "-m", "greed_env.cli", "web", "--port", "0", "--no-browser", "--presets", "farkle5"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("serving the page at http://127.0.0.1:"), line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        url = line.split()[4]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert "Play a bot" in page.read().decode("utf-8")
        with urllib.request.urlopen(url + "app/app.mjs", timeout=30) as script:
            assert script.headers["Content-Type"].startswith("text/javascript")
        with urllib.request.urlopen(url + "bots/index.json", timeout=30) as index:
            assert [p["name"] for p in json.load(index)["presets"]] == ["farkle5"]
        assert list(tmp_path.glob("greed-web-*")), "the site is built in a temporary folder"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not list(tmp_path.glob("greed-web-*")), "the temporary site is removed"


def test_every_preset_is_offered_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr("greed_env.portable.site.write_bundle", lambda rules, path: seen.append(rules.name))
    monkeypatch.setattr("greed_env.portable.site.site_bots", lambda name: ([], []))
    build_site(tmp_path / "site")
    assert seen == list(preset_names())
