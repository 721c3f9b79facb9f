// Compares web/host/keeps.mjs with Python's readings written by test_keeps_js.py: every
// position's keep options (element by element), has_scoring_keep and best_keep_score, and
// set values; says what the refused rules are told; times a first reading of each Trippn
// position in a module instance of its own; prints one JSON report.
//
// usage: node check_keeps.mjs POSITIONS.json

import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

import { bestKeepScore, hasScoringKeep, keepOptions, setValue } from '../../web/host/keeps.mjs';

const SHOWN = 3;

function canonical(o) {
  return JSON.stringify([
    o.dice, o.taps, o.score, [o.carry.sets, o.carry.fills, o.carry.pairs], o.wins, o.reading, o.fills,
    o.parts.map((p) => [p.name, p.dice, p.points]),
  ]);
}

function differences(rules, p) {
  const got = keepOptions(rules, p.roll, p.carry, p.fresh);
  const out = [];
  if (got.length !== p.options.length) out.push(`${got.length} options, Python ${p.options.length}`);
  for (let k = 0; k < Math.min(got.length, p.options.length); k++) {
    if (canonical(got[k]) !== canonical(p.options[k])) {
      out.push(`option ${k}: ${canonical(got[k])} != ${canonical(p.options[k])}`);
      break;
    }
  }
  const scoring = hasScoringKeep(rules, p.roll, p.carry);
  if (scoring !== p.hasScoring) out.push(`hasScoringKeep ${scoring}, Python ${p.hasScoring}`);
  const best = bestKeepScore(rules, p.roll, p.carry, p.fresh);
  if (best !== p.best) out.push(`bestKeepScore ${best}, Python ${p.best}`);
  return out;
}

async function timeTrippn(data) {
  const fresh = await import('../../web/host/keeps.mjs?timing');
  const rules = data.rules.trippn;
  const times = [];
  for (const p of data.positions.filter((q) => q.rules === 'trippn')) {
    const started = performance.now();
    fresh.keepOptions(rules, p.roll, p.carry, p.fresh);
    times.push({ ms: performance.now() - started, dice: p.roll.length });
  }
  const stats = (list) => ({
    mean: list.reduce((s, t) => s + t.ms, 0) / list.length,
    max: Math.max(...list.map((t) => t.ms)),
  });
  const all = stats(times);
  const eight = stats(times.filter((t) => t.dice === rules.num_dice));
  return { meanMs: all.mean, maxMs: all.max, meanMs8: eight.mean, maxMs8: eight.max };
}

function setValuesDiffer(tables) {
  return tables.flatMap(({ rules, values }) => values
    .filter(([face, count, value]) => setValue(rules, face, count) !== value)
    .map(([face, count, value]) => `${rules.name}: ${count} ${face}s ${setValue(rules, face, count)}, Python ${value}`));
}

function refusals(rulesByCase) {
  return Object.fromEntries(Object.entries(rulesByCase).map(([name, rules]) => {
    try {
      keepOptions(rules, [1, 5]);
      return [name, null];
    } catch (error) {
      return [name, error.message];
    }
  }));
}

const data = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const timing = await timeTrippn(data);
const shown = [];
let differ = 0;
let options = 0;
for (const p of data.positions) {
  options += p.options.length;
  const found = differences(data.rules[p.rules], p);
  if (!found.length) continue;
  differ += 1;
  if (shown.length < SHOWN) shown.push({ rules: p.rules, roll: p.roll, carry: p.carry, fresh: p.fresh, found });
}
const eightDiceTrippn = data.positions.filter((p) => p.rules === 'trippn' && p.roll.length === 8).length;
const fillingAlternates = data.positions.filter((p) => {
  const byReading = new Map();
  for (const o of p.options) {
    const key = `${o.dice}|${o.reading}`;
    byReading.set(key, (byReading.get(key) ?? new Set()).add(o.fills));
  }
  return [...byReading.values()].some((seen) => seen.size === 2);
}).length;
process.stdout.write(JSON.stringify({
  positions: data.positions.length, options, differ, shown, timing, eightDiceTrippn, fillingAlternates,
  setValuesChecked: data.setValues.reduce((n, t) => n + t.values.length, 0),
  setValuesDiffer: setValuesDiffer(data.setValues),
  refused: refusals(data.refused),
}));
