#!/usr/bin/env node
// The host's command line under Node (docs/portable.md, "Conformance vectors" and "The
// JavaScript reference host"):
//
//   node web/host/cli.mjs conformance FILE --bundle B.json --bot X.onnx [--json]
//       checks this host against conformance vectors (greed export conformance): prints the
//       positions and the mismatches of observations (as float32), legal actions and greedy
//       actions, and the near ties; exit 0 with no mismatch, 1 with some.
//   node web/host/cli.mjs play --bundle B.json --bots X.onnx,random[,...] --seed N
//                               [--games G] [--record OUT.json | --record-dir DIR]
//       plays seeded games as greed_env.rules.record.record_game does: game g's dice and
//       random choices come from PortableRng(seed * 1000003 + g mod 2^64), seat k plays the
//       k-th bot; prints each game's result and writes one game record per game.
//
// A bot's card is the .json beside its .onnx. Anything refused (a file, a version, a card, an
// argument) is one line on stderr and exit status 2.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';

import { loadBundle } from './bundle.mjs';
import { legalActions, stateFromJson } from './game.mjs';
import { encodeObservation, OBS_DIM } from './observation.mjs';
import { maskedArgmax } from './onnx.mjs';
import { onnxBot, randomBot } from './bots.mjs';
import { recordGame, recordJson } from './record.mjs';
import { PortableRng } from './rng.mjs';

const CONFORMANCE_FORMAT = 'greed_env.conformance';
const CONFORMANCE_VERSION = 1;
const TIE_MARGIN = 1e-4;
const BATCH = 256;
const SHOWN = 5;
const SEED_STEP = 1000003n;
const MASK64 = (1n << 64n) - 1n;

/** A refusal: one line on stderr, exit status 2. */
class Refused extends Error {}

// ----------------------------------------------------------------------------------------
// files

function readBytes(path, what) {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Refused(`cannot read ${what} ${path}: ${error.code ?? error.message}`);
  }
}

function readJson(path, what) {
  let bytes = readBytes(path, what);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (error) {
      throw new Refused(`${what} ${path} is not a readable gzip file (${error.message})`);
    }
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new Refused(`${what} ${path} is not JSON (${error.message})`);
  }
}

function bundleAt(path) {
  try {
    return loadBundle(readJson(path, 'bundle'));
  } catch (error) {
    throw error instanceof Refused ? error : new Refused(`${path}: ${error.message}`);
  }
}

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The ONNX bot of `path` with the card beside it, checked against the bundle. */
function onnxBotAt(bundle, path) {
  const bytes = readBytes(path, 'bot');
  const card = readJson(path.replace(/\.onnx$/, '') + '.json', 'bot card');
  const expected = card.onnx?.sha256;
  if (expected && expected !== sha256(bytes)) throw new Refused(`${path}: its sha256 is not the one its card ${card.id} names`);
  try {
    return { bot: onnxBot(bundle, card, bytes), bytes };
  } catch (error) {
    throw new Refused(`${path}: ${error.message}`);
  }
}

// ----------------------------------------------------------------------------------------
// conformance

function checkVectors(data, path, bundle) {
  if (data === null || typeof data !== 'object' || data.format !== CONFORMANCE_FORMAT) {
    throw new Refused(`${path}: not a greed_env conformance file`);
  }
  if (data.version !== CONFORMANCE_VERSION) {
    throw new Refused(`${path}: conformance version ${JSON.stringify(data.version)} is not ${CONFORMANCE_VERSION}, the version this host reads`);
  }
  if (data.bundle_version !== bundle.bundle_version) {
    throw new Refused(`${path}: made with bundle version ${JSON.stringify(data.bundle_version)}, the bundle is version ${bundle.bundle_version}`);
  }
  if (data.rules_fingerprint !== bundle.rules_fingerprint) {
    throw new Refused(`${path}: vectors of rules ${data.rules_fingerprint} (${data.rules_name}), the bundle is for ${bundle.rules_fingerprint} (${bundle.rules_name})`);
  }
  if (!Array.isArray(data.positions)) throw new Refused(`${path}: no list of positions`);
}

function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Observation and legal-action checks of every position; fills `obs` for the bot. */
function checkPositions(bundle, positions, obs, report) {
  const legal = [];
  positions.forEach((p, i) => {
    const state = stateFromJson(p.state);
    const got = encodeObservation(bundle, state);
    obs.set(got, i * OBS_DIM);
    const differ = got.findIndex((x, k) => x !== Math.fround(p.observation[k]));
    if (differ >= 0 || p.observation.length !== OBS_DIM) {
      report.observationMismatches += 1;
      note(report, `position ${i} (game ${p.game}): observation[${differ}] is ${got[differ]}, expected ${p.observation[differ]}`);
    }
    const ids = legalActions(bundle, state);
    legal.push(ids);
    if (!sameList(ids, p.legal)) {
      report.legalMismatches += 1;
      note(report, `position ${i} (game ${p.game}): legal ${JSON.stringify(ids)}, expected ${JSON.stringify(p.legal)}`);
    }
  });
  return legal;
}

function checkActions(bot, bundle, positions, obs, legal, report) {
  const n = bundle.catalog.n;
  for (let start = 0; start < positions.length; start += BATCH) {
    const batch = Math.min(BATCH, positions.length - start);
    const logits = bot.logits(obs.subarray(start * OBS_DIM, (start + batch) * OBS_DIM), batch, legal.slice(start, start + batch));
    for (let b = 0; b < batch; b++) {
      const i = start + b;
      const mask = new Uint8Array(n);
      for (const a of legal[i]) mask[a] = 1;
      const action = maskedArgmax(logits.subarray(b * n, (b + 1) * n), mask);
      const p = positions[i];
      const near = p.margin !== null && p.margin < TIE_MARGIN;
      if (near) report.nearTies += 1;
      if (action === p.action) continue;
      if (near) report.nearTieDiffer += 1;
      else report.actionMismatches += 1;
      note(report, `position ${i} (game ${p.game}): action ${action}, expected ${p.action} (margin ${p.margin})`);
    }
  }
}

function note(report, line) {
  if (report.examples.length < SHOWN) report.examples.push(line);
}

function conformance(args) {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true, options: { bundle: { type: 'string' }, bot: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 1 || !values.bundle || !values.bot) {
    throw new Refused('usage: node web/host/cli.mjs conformance FILE --bundle B.json --bot X.onnx [--json]');
  }
  const [path] = positionals;
  const bundle = bundleAt(values.bundle);
  const data = readJson(path, 'conformance file');
  checkVectors(data, path, bundle);
  const { bot, bytes } = onnxBotAt(bundle, values.bot);
  if (data.bot?.sha256 && data.bot.sha256 !== sha256(bytes)) {
    throw new Refused(`${path}: made by bot ${data.bot.id} (sha256 ${data.bot.sha256.slice(0, 12)}...), not by ${values.bot}`);
  }
  const report = {
    file: path, rules: bundle.rules_name, bot: bot.name, positions: data.positions.length,
    observationMismatches: 0, legalMismatches: 0, actionMismatches: 0, nearTies: 0, nearTieDiffer: 0, examples: [],
  };
  const started = process.hrtime.bigint();
  const obs = new Float32Array(data.positions.length * OBS_DIM);
  const legal = checkPositions(bundle, data.positions, obs, report);
  checkActions(bot, bundle, data.positions, obs, legal, report);
  report.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  printConformance(report, values.json);
  return report.observationMismatches + report.legalMismatches + report.actionMismatches ? 1 : 0;
}

function printConformance(report, asJson) {
  if (asJson) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const lines = [
    `${report.file}: bot ${report.bot}, rules ${report.rules}, ${report.seconds.toFixed(1)} s`,
    `positions: ${report.positions}`,
    `observation mismatches (as float32): ${report.observationMismatches}`,
    `legal-set mismatches: ${report.legalMismatches}`,
    `action mismatches: ${report.actionMismatches}`,
    `near ties (margin < ${TIE_MARGIN}): ${report.nearTies}, ${report.nearTieDiffer} of them with another action`,
    ...report.examples.map((e) => `  ${e}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

// ----------------------------------------------------------------------------------------
// play

function parseSeed(text) {
  if (text === undefined || !/^\d+$/.test(text)) throw new Refused(`--seed must be an integer 0..2**64-1, got ${text ?? 'nothing'}`);
  const seed = BigInt(text);
  if (seed > MASK64) throw new Refused(`--seed must be an integer 0..2**64-1, got ${text}`);
  return seed;
}

function parseGames(text) {
  const games = Number(text ?? '1');
  if (!Number.isInteger(games) || games < 1) throw new Refused(`--games must be a positive integer, got ${text}`);
  return games;
}

function botsOf(bundle, spec) {
  const names = (spec ?? '').split(',').filter(Boolean);
  if (!names.length) throw new Refused('--bots names one bot per seat: X.onnx or random, comma-separated');
  const R = bundle.rules;
  if (names.length < R.min_players || names.length > R.max_players) {
    throw new Refused(`${bundle.rules_name} is played by ${R.min_players}..${R.max_players} players, --bots names ${names.length}`);
  }
  return names.map((name) => (name === 'random' ? randomBot(bundle) : onnxBotAt(bundle, name).bot));
}

function describe(rec, g, seed) {
  const end = rec.state;
  const who = end.winners.length === 1 ? `seat ${end.winners[0]} (${rec.players[end.winners[0]]}) wins` : `seats ${end.winners.join(', ')} share`;
  return `game ${g} (seed ${seed}): ${who}; scores ${end.scores.join(', ')}; ${end.rounds} turns, ${rec.events.length} events`;
}

function play(args) {
  const { values } = parseArgs({
    args,
    options: {
      bundle: { type: 'string' }, bots: { type: 'string' }, seed: { type: 'string' }, games: { type: 'string' },
      record: { type: 'string' }, 'record-dir': { type: 'string' },
    },
  });
  if (!values.bundle) throw new Refused('usage: node web/host/cli.mjs play --bundle B.json --bots X.onnx,random --seed N [--games G] [--record OUT.json | --record-dir DIR]');
  const seed = parseSeed(values.seed);
  const games = parseGames(values.games);
  if (values.record && values['record-dir']) throw new Refused('give --record or --record-dir, not both');
  if (values.record && games > 1) throw new Refused('--record writes one game: use --record-dir DIR for several');
  const bundle = bundleAt(values.bundle);
  const bots = botsOf(bundle, values.bots);
  if (values['record-dir']) mkdirSync(values['record-dir'], { recursive: true });
  for (let g = 0; g < games; g++) {
    const big = (seed * SEED_STEP + BigInt(g)) & MASK64;
    const gameSeed = big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    const rec = recordGame(bundle, bots, new PortableRng(big), { seed: gameSeed });
    process.stdout.write(`${describe(rec, g, big)}\n`);
    const out = values.record ?? (values['record-dir'] ? join(values['record-dir'], `game-${g}.json`) : null);
    if (out) writeFileSync(out, `${recordJson(rec.record())}\n`);
  }
  return 0;
}

// ----------------------------------------------------------------------------------------

const COMMANDS = { conformance, play };

function main(argv) {
  const [command, ...rest] = argv;
  const run = COMMANDS[command];
  if (!run) throw new Refused(`usage: node web/host/cli.mjs {conformance|play} ... (got ${command ?? 'nothing'})`);
  return run(rest);
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof Refused) && !(error instanceof TypeError && error.code?.startsWith('ERR_PARSE_ARGS'))) throw error;
  process.stderr.write(`${error.message.split('\n')[0]}\n`);
  process.exitCode = 2;
}
