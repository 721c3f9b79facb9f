"""The documentation site builds with warnings as errors, so a broken link, a stale reference or
a docstring that does not parse fails the tests; and a broken link does fail the build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _build(src: Path, out: Path, conf: Path, repo_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-c", str(conf)]
    cmd += ["-d", str(out / ".doctrees"), str(src), str(out / "html")]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def test_the_site_builds_with_warnings_as_errors(repo_root: Path, tmp_path: Path) -> None:
    docs = repo_root / "docs"
    done = _build(docs, tmp_path, docs, repo_root)
    assert done.returncode == 0, done.stderr[-4000:]
    html = tmp_path / "html"
    pages = {p.stem for p in html.glob("*.html")}
    assert {"index", "quickstart", "envs", "rules", "solver", "bots", "shipped-bots", "benchmark",
            "evaluation", "training", "scale", "results", "api", "changelog"} <= pages
    assert (html / "experiments" / "ten-thousand-duel.html").is_file()
    # a link from docs/ to agents/README.md lands on the page that includes it
    assert 'href="shipped-bots.html"' in (html / "results.html").read_text(encoding="utf-8")
    # and the included page's own links to docs/ land on the site's pages
    assert 'href="results.html"' in (html / "shipped-bots.html").read_text(encoding="utf-8")
    api = (html / "api.html").read_text(encoding="utf-8")
    for name in ("greed_env.rules.preset", "greed_env.solver.load_table", "greed_env.bots.load",
                 "greed_env.evaluation.evaluate", "greed_env.envs.solitaire.SolitaireEnv",
                 "greed_env.envs.duel.DuelEnv"):
        assert f'id="{name}"' in api, name


def test_a_broken_link_fails_the_build(repo_root: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text(
        "# Test\n\n[fine](page.md) [gone](nothere.md) [outside](../../no/such/file.md)\n\n"
        "```{toctree}\npage\n```\n",
        encoding="utf-8",
    )
    (src / "page.md").write_text("# Page\n\n[back](index.md#no-such-heading)\n", encoding="utf-8")
    done = _build(src, tmp_path / "out", repo_root / "docs", repo_root)
    assert done.returncode != 0
    assert "nothere" in done.stderr and "no/such/file" in done.stderr
    assert "no-such-heading" in done.stderr
