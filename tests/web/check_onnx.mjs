// Runs every model of a manifest written by test_onnx_js.py through web/host/onnx.mjs and
// compares its logits and greedy actions with onnxruntime's, and the logits of a run asked for
// the legal columns only with the full run's; prints one JSON report.
//
// usage: node check_onnx.mjs MANIFEST.json
//        node check_onnx.mjs --load FILE...   (what loading each file says: its error or null)

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { loadOnnx, maskedArgmax } from '../../web/host/onnx.mjs';

const NEAR_TIE = 1e-5;
const WARM_UP = 50;


function floats(folder, name) {
  const bytes = readFileSync(join(folder, name));
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

function bestTwoGap(row, mask) {
  let first = -Infinity;
  let second = -Infinity;
  for (let k = 0; k < row.length; k++) {
    if (!mask[k]) continue;
    if (row[k] > first) [first, second] = [row[k], first];
    else if (row[k] > second) second = row[k];
  }
  return first - second;
}

function timeSingle(model, obs, dim) {
  const count = obs.length / dim;
  for (let i = 0; i < WARM_UP; i++) model.run(obs.subarray(0, dim), 1);
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i++) model.run(obs.subarray(i * dim, (i + 1) * dim), 1);
  const used = process.cpuUsage(cpu);
  return { msPerPosition: (performance.now() - started) / count, cpuMsPerPosition: (used.user + used.system) / 1000 / count };
}

/** Logits computed only at the legal columns that differ from the full run's (none may). */
function columnsDiffer(model, obs, batch, full, allMasks, maskWidth, n) {
  const wanted = Array.from({ length: batch }, (_, i) => {
    const mask = allMasks.subarray(i * maskWidth, i * maskWidth + n);
    return [...mask.keys()].filter((k) => mask[k]);
  });
  const part = model.run(obs, batch, wanted);
  let differ = 0;
  wanted.forEach((ids, i) => ids.forEach((k) => { if (!Object.is(part[i * n + k], full[i * n + k])) differ += 1; }));
  return differ;
}

function check(manifest, folder, entry) {
  const positions = manifest.positions[entry.rules];
  const obs = floats(folder, positions.obs);
  const allMasks = new Uint8Array(readFileSync(join(folder, positions.masks)));
  const expected = floats(folder, entry.logits);
  const loadStarted = performance.now();
  const model = loadOnnx(readFileSync(entry.path));
  const loadMs = performance.now() - loadStarted;
  const { batch } = positions;
  const got = model.run(obs, batch);
  const n = expected.length / batch;
  const report = {
    model: entry.name, opTypes: model.opTypes, inputDim: model.inputDim, outputDim: model.outputDim,
    positions: batch, n, loadMs, maxAbs: 0, maxScaled: 0, argmaxDiffer: 0, nearTies: 0, nearTieDiffer: 0,
  };
  if (got.length !== expected.length) return { ...report, error: `${got.length} logits, expected ${expected.length}` };
  for (let i = 0; i < batch; i++) {
    const row = got.subarray(i * n, (i + 1) * n);
    const ref = expected.subarray(i * n, (i + 1) * n);
    const mask = allMasks.subarray(i * positions.maskWidth, i * positions.maskWidth + n);
    for (let k = 0; k < n; k++) {
      const diff = Math.abs(row[k] - ref[k]);
      report.maxAbs = Math.max(report.maxAbs, diff);
      report.maxScaled = Math.max(report.maxScaled, diff / (1 + Math.abs(ref[k])));
    }
    const near = bestTwoGap(ref, mask) < NEAR_TIE;
    if (near) report.nearTies += 1;
    if (maskedArgmax(row, mask) !== maskedArgmax(ref, mask)) {
      if (near) report.nearTieDiffer += 1;
      else report.argmaxDiffer += 1;
    }
  }
  report.columnsDiffer = columnsDiffer(model, obs, batch, got, allMasks, positions.maskWidth, n);
  if (entry.timed) Object.assign(report, timeSingle(model, obs, model.inputDim));
  return report;
}

function checkAll(manifestPath) {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  return manifest.models.map((entry) => {
    try {
      return check(manifest, dirname(manifestPath), entry);
    } catch (error) {
      return { model: entry.name, error: String(error.stack ?? error) };
    }
  });
}

function loadErrors(files) {
  return files.map((file) => {
    try {
      loadOnnx(readFileSync(file));
      return { file, error: null };
    } catch (error) {
      return { file, error: error.message };
    }
  });
}

const [first, ...rest] = process.argv.slice(2);
process.stdout.write(JSON.stringify(first === '--load' ? loadErrors(rest) : checkAll(first)));
