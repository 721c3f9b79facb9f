"""The page's ONNX evaluator against onnxruntime-web, in Chromium: download size, model load
time, time per move (batch 1) and agreement of the greedy legal action.

``web/host/onnx.mjs`` (what ``greed web``'s page uses) and onnxruntime-web's wasm build (one
thread: a page served without cross-origin isolation has no threads) run the shipped bots
named by the conformance vectors of ``web/conformance/<preset>.json.gz`` on their first
``--positions`` observations, in the same page; the greedy action among the legal ones is
compared with the vectors'. onnxruntime-web is installed with npm into a temporary folder
(never into the checkout); Chromium is Debian's, driven by Playwright (the ``dev`` extra).

    python scripts/bench_web_onnx.py --presets ten_thousand,progressive --positions 400

Prints one JSON object: per preset each evaluator's load time and the mean, median and 95th
percentile of its per-call times in ms, the bytes each evaluator's files take, and the load
average. docs/portable.md ("Play in the browser") quotes a run.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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
ORT_FILES = ("ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")

BENCH_MJS = r"""
const argmax = (logits, legal) => legal.reduce((b, a) => (b < 0 || logits[a] > logits[b] ? a : b), -1);
function stats(v) {
  const s = [...v].sort((a, b) => a - b);
  const r = (x) => Math.round(x * 1000) / 1000;
  return { mean_ms: r(s.reduce((a, b) => a + b, 0) / s.length), median_ms: r(s[s.length >> 1]),
    p95_ms: r(s[Math.floor(0.95 * s.length)]), first_ms: r(v[0]) };
}
export async function bench(ort, loadOnnx) {
  const data = await (await fetch('positions.json')).json();
  const out = {};
  for (const [preset, d] of Object.entries(data)) {
    const bytes = new Uint8Array(await (await fetch(`${preset}.onnx`)).arrayBuffer());
    const row = { bot: d.bot, positions: d.obs.length };
    let t0 = performance.now();
    const model = loadOnnx(bytes);
    row.onnx_mjs_load_ms = performance.now() - t0;
    let times = [];
    let agree = 0;
    for (let i = 0; i < d.obs.length; i++) {
      const obs = Float32Array.from(d.obs[i]);
      const t = performance.now();
      const logits = model.run(obs, 1);
      times.push(performance.now() - t);
      agree += argmax(logits, d.legal[i]) === d.action[i];
    }
    row.onnx_mjs = { ...stats(times), agree };
    t0 = performance.now();
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    row.ort_session_ms = performance.now() - t0;
    times = [];
    agree = 0;
    for (let i = 0; i < d.obs.length; i++) {
      const tensor = new ort.Tensor('float32', Float32Array.from(d.obs[i]), [1, d.obs[i].length]);
      const t = performance.now();
      const result = await session.run({ [session.inputNames[0]]: tensor });
      times.push(performance.now() - t);
      agree += argmax(result[session.outputNames[0]].data, d.legal[i]) === d.action[i];
    }
    row.ort = { ...stats(times), agree };
    out[preset] = row;
  }
  return out;
}
"""

INDEX_HTML = """<!doctype html><meta charset="utf-8"><title>evaluators</title><link rel="icon" href="data:,">
<script type="module">
let t0 = performance.now();
const ort = await import('./ort/ort.wasm.bundle.min.mjs');
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = new URL('./ort/', location.href).href;
const ortImport = performance.now() - t0;
t0 = performance.now();
const { loadOnnx } = await import('./host/onnx.mjs');
const hostImport = performance.now() - t0;
const { bench } = await import('./bench.mjs');
window.result = { browser: navigator.userAgent, ort_import_ms: ortImport, onnx_mjs_import_ms: hostImport, ...(await bench(ort, loadOnnx)) };
</script>
"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 (the base class's attribute, replaced)
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _sizes(path: Path) -> dict[str, int]:
    data = path.read_bytes()
    return {"bytes": len(data), "gzip_bytes": len(gzip.compress(data, 9))}


def prepare(folder: Path, presets: list[str], positions: int, ort_version: str) -> dict[str, Any]:
    """Write the page, the host, the models, the positions and onnxruntime-web into ``folder``."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("bench_web_onnx: npm is not installed (Node.js 20 or later)")
    proc = subprocess.run(
        [npm, "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund", f"onnxruntime-web@{ort_version}"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"bench_web_onnx: npm install onnxruntime-web@{ort_version} failed: {proc.stderr.strip().splitlines()[-1:]}")
    dist = folder / "node_modules" / "onnxruntime-web" / "dist"
    (folder / "ort").mkdir()
    for name in ORT_FILES:
        shutil.copyfile(dist / name, folder / "ort" / name)
    shutil.copytree(ROOT / "web" / "host", folder / "host")
    (folder / "bench.mjs").write_text(BENCH_MJS, encoding="utf-8")
    (folder / "index.html").write_text(INDEX_HTML, encoding="utf-8")
    data = {}
    for preset in presets:
        vectors = json.loads(gzip.decompress((ROOT / "web" / "conformance" / f"{preset}.json.gz").read_bytes()))
        bot = vectors["bot"]["id"]
        shutil.copyfile(ROOT / "agents" / f"{bot}.onnx", folder / f"{preset}.onnx")
        rows = vectors["positions"][:positions]
        data[preset] = {
            "bot": bot,
            "obs": [p["observation"] for p in rows],
            "legal": [p["legal"] for p in rows],
            "action": [p["action"] for p in rows],
        }
    (folder / "positions.json").write_text(json.dumps(data), encoding="utf-8")
    return {
        "onnx_mjs": _sizes(folder / "host" / "onnx.mjs"),
        "onnxruntime_web": {name: _sizes(folder / "ort" / name) for name in ORT_FILES},
    }


def run_chromium(folder: Path, chromium: str) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Handler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
                page.wait_for_function("window.result !== undefined", timeout=600_000)
                return page.evaluate("window.result")
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", default="ten_thousand,progressive", help="comma-separated presets (their conformance vectors' bots)")
    parser.add_argument("--positions", type=int, default=400, help="observations per preset")
    parser.add_argument("--ort-version", default="1.30.0", help="the onnxruntime-web version npm installs")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser (Debian's chromium)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-web-onnx-") as tmp:
        folder = Path(tmp)
        sizes = prepare(folder, [p for p in args.presets.split(",") if p], args.positions, args.ort_version)
        result = run_chromium(folder, args.chromium)
    result["files"] = sizes
    result["onnxruntime_web"] = args.ort_version
    result["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    result["cpus"] = os.cpu_count()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
