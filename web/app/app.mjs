// The page of `greed web`: a person plays a shipped bot in the browser. It reads the site's
// bots/index.json (presets, bots, measured strength), the preset's bundle and the bot's ONNX
// file, and runs the JavaScript host (../host/): the rules, the portable dice and the bot.
// Nothing runs on a server. docs/portable.md ("Play in the browser") describes the page.
//
// For tests: the body's data-state (loading, ready, human, bot, over, error), data-phase and
// data-player; window.greedTimings (page ready and each bot move, in ms); window.greedPage
// (read-only views of the position and its legal moves). ?fast=1 plays the bot's moves with no
// pause; ?preset=, ?opponent= and ?seed= choose the game.

import {
  BUNDLE_VERSION,
  PHASE_NAMES,
  PortableRng,
  Recorder,
  checkCard,
  isChance,
  isOver,
  legalMoves,
  loadBundle,
  onnxBot,
  randomBot,
  recordJson,
  sampleRoll,
} from '../host/index.mjs';

const SITE_FORMAT = 'greed_env.web_bots';
const ROOT = new URL('../', import.meta.url);
const KEEP = PHASE_NAMES.indexOf('KEEP');
const CONTINUE = PHASE_NAMES.indexOf('CONTINUE');
const HUMAN = 0;
const BOT = 1;
const RANDOM = 'random';
const MAX_SEED = (1n << 64n) - 1n;
const params = new URLSearchParams(window.location.search);
const BOT_PAUSE_MS = params.get('fast') === '1' ? 0 : 420;

const timings = { ready_ms: null, index_ms: null, bundle_ms: {}, bot_load_ms: {}, moves: [] };
window.greedTimings = timings;

const $ = (id) => document.getElementById(id);
const ui = {
  error: $('error'),
  setup: $('setup'),
  preset: $('preset'),
  rulesNote: $('rules-note'),
  opponent: $('opponent'),
  strength: $('strength'),
  first: $('first'),
  seed: $('seed'),
  start: $('start'),
  table: $('table'),
  scores: $('scores'),
  status: $('status'),
  turnTotal: $('turn-total'),
  diceInHand: $('dice-in-hand'),
  working: $('working'),
  dice: $('dice'),
  tapNote: $('tap-note'),
  keeps: $('keeps'),
  moves: $('moves'),
  over: $('over'),
  winner: $('winner'),
  finalScores: $('final-scores'),
  exportButton: $('export'),
  again: $('again'),
  log: $('log'),
};

const site = { index: null, presets: new Map(), bundles: new Map(), bots: new Map() };
let choice = { bundle: null, opponent: null, bot: null }; // what the setup form has loaded
let loading = 0; // the latest load: an older one that finishes late is ignored
let game = null;

// ----------------------------------------------------------------------------------------
// small helpers

const fmt = (n) => n.toLocaleString('en-US');
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const sorted = (faces) => [...faces].sort((x, y) => x - y);
const sameDice = (a, b) => a.length === b.length && sorted(a).join() === sorted(b).join();

function oneLine(error) {
  return String(error?.message ?? error).split(/\s+/).join(' ').trim();
}

function showError(text) {
  ui.error.textContent = text;
  ui.error.hidden = false;
  if (!game || game.over) document.body.dataset.state = 'error'; // a game in progress plays on
}

function clearError() {
  ui.error.textContent = '';
  ui.error.hidden = true;
}

function element(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...children);
  return el;
}

async function fetchOk(path, as) {
  const url = new URL(path, ROOT);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${path}: HTTP ${response.status}`);
  return as === 'bytes' ? new Uint8Array(await response.arrayBuffer()) : response.json();
}

// ----------------------------------------------------------------------------------------
// the site's data: presets, bundles, bots

async function loadIndex() {
  const t0 = performance.now();
  const index = await fetchOk('bots/index.json');
  if (index?.format !== SITE_FORMAT) throw new Error(`bots/index.json is not a ${SITE_FORMAT} file`);
  if (index.bundle_version !== BUNDLE_VERSION) {
    throw new Error(`the site's bots are for bundle version ${JSON.stringify(index.bundle_version)}; this page plays version ${BUNDLE_VERSION}`);
  }
  timings.index_ms = performance.now() - t0;
  site.index = index;
  for (const entry of index.presets) site.presets.set(entry.name, entry);
}

function bundleOf(name) {
  if (!site.bundles.has(name)) {
    const t0 = performance.now();
    const entry = site.presets.get(name);
    const promise = fetchOk(entry.bundle).then((json) => {
      const bundle = loadBundle(json);
      if (bundle.rules_fingerprint !== entry.rules_fingerprint) {
        throw new Error(`bundles/${name}.json is for rules ${bundle.rules_fingerprint}, the site lists ${entry.rules_fingerprint}`);
      }
      timings.bundle_ms[name] = performance.now() - t0;
      return bundle;
    });
    promise.catch(() => site.bundles.delete(name));
    site.bundles.set(name, promise);
  }
  return site.bundles.get(name);
}

function botOf(bundle, entry) {
  if (!site.bots.has(entry.id)) {
    const t0 = performance.now();
    const promise = (async () => {
      const card = await fetchOk(entry.card);
      checkCard(bundle, card);
      const bytes = await fetchOk(entry.onnx, 'bytes');
      const bot = onnxBot(bundle, card, bytes);
      timings.bot_load_ms[entry.id] = performance.now() - t0;
      return bot;
    })();
    promise.catch(() => site.bots.delete(entry.id));
    site.bots.set(entry.id, promise);
  }
  return site.bots.get(entry.id);
}

function labelBadge(label) {
  return element('span', { class: 'badge', 'data-label': label, text: label });
}

function rulesNote(bundle) {
  const R = bundle.rules;
  const bits = [`${R.num_dice} dice`, R.exact_target ? `exactly ${fmt(R.target)} to go out` : `first to ${fmt(R.target)}`];
  if (R.entry_threshold) bits.push(`${fmt(R.entry_threshold)} in one ${R.entry_scope} to come in`);
  if (R.min_bank) bits.push(`bank ${fmt(R.min_bank)}+`);
  if (R.carry_over) bits.push('tap order matters, sets stay working');
  if (R.final_round) bits.push('final round');
  return bits.join(' · ');
}

function fillPresets() {
  ui.preset.replaceChildren(
    ...site.index.presets.map((p) => element('option', { value: p.name, text: `${p.name} (${p.bots.length} bot${p.bots.length === 1 ? '' : 's'})` })),
  );
  const wanted = params.get('preset');
  const names = site.index.presets.map((p) => p.name);
  ui.preset.value = names.includes(wanted) ? wanted : names.includes('ten_thousand') ? 'ten_thousand' : names[0];
}

function fillOpponents() {
  const entry = site.presets.get(ui.preset.value);
  const options = entry.bots.map((b) => {
    const rate = b.vs_optimal_duel === null ? 'not measured against optimal-duel' : `${(100 * b.vs_optimal_duel).toFixed(1)}% vs optimal-duel`;
    return element('option', { value: b.name, 'data-label': b.label, title: rate, text: `${b.name} (${b.label})` });
  });
  options.push(element('option', { value: RANDOM, 'data-label': 'easy', text: 'random (easy)' }));
  ui.opponent.replaceChildren(...options);
  const wanted = params.get('opponent');
  const names = [...entry.bots.map((b) => b.name), RANDOM];
  ui.opponent.value = names.includes(wanted) ? wanted : names[0];
}

function describeOpponent() {
  const entry = site.presets.get(ui.preset.value);
  const bot = entry.bots.find((b) => b.name === ui.opponent.value);
  if (!bot) {
    ui.strength.replaceChildren(labelBadge('easy'), ' picks any legal move at random.');
    ui.strength.title = '';
    return;
  }
  const rate = bot.vs_optimal_duel === null ? 'not measured against optimal-duel' : `scores ${(100 * bot.vs_optimal_duel).toFixed(1)}% against optimal-duel (perfect play scores 50%)`;
  ui.strength.replaceChildren(labelBadge(bot.label), ` ${rate}. `, element('span', { class: 'measured', text: bot.strength }));
  ui.strength.title = bot.description;
}

/** Load the chosen preset's bundle and opponent; the start button waits for both. */
async function loadChoice() {
  const token = ++loading;
  ui.start.disabled = true;
  clearError();
  describeOpponent();
  const name = ui.preset.value;
  const entry = site.presets.get(name);
  const botEntry = entry.bots.find((b) => b.name === ui.opponent.value) ?? null;
  try {
    const bundle = await bundleOf(name);
    if (token !== loading) return;
    ui.rulesNote.textContent = rulesNote(bundle);
    const bot = botEntry ? await botOf(bundle, botEntry) : randomBot(bundle);
    if (token !== loading) return;
    choice = { bundle, opponent: botEntry ? botEntry.id : `${name}/${RANDOM}`, bot, preset: name };
    ui.start.disabled = false;
    if (!game || game.over) document.body.dataset.state = 'ready';
  } catch (error) {
    if (token !== loading) return;
    const what = botEntry ? `bot ${botEntry.id}` : `rules ${name}`;
    showError(`Cannot play ${what}: ${oneLine(error)}`);
  }
}

// ----------------------------------------------------------------------------------------
// the game

function randomSeed() {
  const words = crypto.getRandomValues(new Uint32Array(2));
  return ((BigInt(words[0] & 0x1fffff) << 32n) | BigInt(words[1])).toString(); // below 2^53: easy to copy
}

function readSeed() {
  const text = ui.seed.value.trim();
  if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) > MAX_SEED) {
    throw new Error(`the seed is a whole number from 0 to ${MAX_SEED}, got ${JSON.stringify(text)}`);
  }
  return BigInt(text);
}

function startGame(event) {
  event?.preventDefault();
  if (ui.start.disabled) return;
  clearError();
  let seed;
  try {
    seed = readSeed();
  } catch (error) {
    showError(oneLine(error));
    return;
  }
  const { bundle, bot, opponent, preset } = choice;
  const first = ui.first.value === 'rules' ? null : Number(ui.first.value);
  const seedValue = seed <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seed) : seed;
  const names = ['human', opponent];
  let recorder;
  try {
    recorder = new Recorder(bundle, 2, { firstPlayer: first, seed: seedValue, players: names });
  } catch (error) {
    showError(`Cannot start: ${oneLine(error)}`);
    return;
  }
  game = { bundle, bot, preset, opponent, botName: `${opponent.split('/').pop()} (bot)`, names, seed, rng: new PortableRng(seed), recorder, selected: [], over: false };
  ui.log.replaceChildren();
  ui.over.hidden = true;
  ui.table.hidden = false;
  ui.tapNote.hidden = !bundle.rules.carry_over;
  logLine(game, null, `New game of ${preset}: you against ${opponent}, seed ${seed}`, 'turn');
  advance(game);
}

function seatName(g, seat) {
  return seat === HUMAN ? 'You' : g.botName;
}

/** An event of the host ('player 1 to play') with the players' names. */
function named(g, text) {
  return text.replace(/\bplayer (\d+)\b/g, (_, seat) => (Number(seat) === HUMAN ? 'you' : g.botName));
}

function logLine(g, seat, text, kind = 'event') {
  const shown = named(g, text);
  const li = element('li', { 'data-seat': seat ?? '', 'data-kind': kind }, seat === null ? shown : `${seatName(g, seat)}: ${shown}`);
  ui.log.append(li);
  li.scrollIntoView?.({ block: 'nearest' });
}

/** Apply a roll or a move through the recorder and log what happened. */
function play(g, seat, step, move = null) {
  const before = g.recorder.state;
  step();
  const after = g.recorder.state;
  let text = after.event;
  if (move?.kind === 'keep' && !text.startsWith('keeps')) text = `keeps ${move.taps.join(',')} for ${fmt(move.points)}; ${text}`;
  if (text) logLine(g, seat, text);
  if (!isOver(after) && !isChance(after) && after.player !== before.player) {
    logLine(g, null, after.player === HUMAN ? 'Your turn' : `${g.botName}'s turn`, 'turn');
  }
}

/** Roll and let the bot play until the person must choose or the game is over. */
async function advance(g) {
  while (g === game && !isOver(g.recorder.state)) {
    const state = g.recorder.state;
    if (isChance(state)) {
      const seat = state.player;
      const faces = sampleRoll(g.bundle, state, g.rng);
      play(g, seat, () => g.recorder.roll(faces));
      render(g);
      if (seat === BOT && BOT_PAUSE_MS) await pause(BOT_PAUSE_MS);
      continue;
    }
    if (state.player === HUMAN) {
      render(g);
      return;
    }
    document.body.dataset.state = 'bot';
    render(g);
    await pause(BOT_PAUSE_MS);
    if (g !== game) return;
    const t0 = performance.now();
    const move = g.bot.act(state, g.rng);
    timings.moves.push(performance.now() - t0);
    play(g, BOT, () => g.recorder.move(move), move);
  }
  if (g === game) gameOver(g);
}

/** Whether the person is to choose in the game `g` (the current one). */
function personToAct(g) {
  const state = g.recorder.state;
  return g === game && !g.over && !isOver(state) && !isChance(state) && state.player === HUMAN;
}

function humanMove(g, move) {
  if (!personToAct(g)) return;
  const legal = legalMoves(g.bundle, g.recorder.state);
  if (!legal.some((m) => m.action === move.action && String(m.taps ?? '') === String(move.taps ?? ''))) return; // never an illegal move
  g.selected = [];
  play(g, HUMAN, () => g.recorder.move(move), move);
  advance(g);
}

// ----------------------------------------------------------------------------------------
// drawing

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

function dieFace(face) {
  return Array.from({ length: 9 }, (_, i) => (PIPS[face].includes(i) ? element('span', { class: 'pip' }) : element('span')));
}

function ordinal(n) {
  return `${n}${n === 1 ? 'st' : n === 2 ? 'nd' : n === 3 ? 'rd' : 'th'}`;
}

function workingText(bundle, carry) {
  if (!bundle.rules.carry_over || !carry) return '';
  const bits = [];
  carry.sets.forEach((n, i) => n && bits.push(`${n} ${i + 1}s`));
  if (carry.fills.length) bits.push(`straight open to ${carry.fills.join(' or ')}`);
  if (carry.pairs.length) bits.push('three pairs');
  return bits.length ? `working: ${bits.join(', ')}` : '';
}

function renderScores(g, state) {
  const R = g.bundle.rules;
  ui.scores.replaceChildren(
    ...[HUMAN, BOT].map((seat) => {
      const name = seat === HUMAN ? 'You' : g.botName;
      const needs = R.entry_threshold > 0 && !state.entered[seat] ? `not in yet (${fmt(R.entry_threshold)} to come in)` : '';
      const active = !isOver(state) && state.player === seat;
      return element(
        'div',
        { class: 'seat', id: `seat-${seat}`, 'data-seat': seat, 'data-active': String(active) },
        element('div', { class: 'name', text: name }),
        element('div', { class: 'score', id: `score-${seat}`, 'data-score': state.scores[seat], text: fmt(state.scores[seat]) }),
        element('div', { class: 'sub', text: needs || `target ${R.exact_target ? 'exactly ' : ''}${fmt(R.target)}` }),
      );
    }),
  );
}

function renderDice(g, state, mine) {
  const showing = state.phase === KEEP ? state.roll : [];
  const tapOrder = g.bundle.rules.carry_over;
  ui.dice.replaceChildren(
    ...showing.map((face, i) => {
      const tap = g.selected.indexOf(i);
      const label = `die ${i + 1} showing ${face}${tap >= 0 ? (tapOrder ? `, tapped ${ordinal(tap + 1)}` : ', selected') : ''}`;
      const button = element(
        'button',
        {
          type: 'button',
          class: 'die',
          'data-index': i,
          'data-face': face,
          'aria-pressed': String(tap >= 0),
          'aria-label': label,
          disabled: !mine,
          onclick: () => toggleDie(g, i),
        },
        ...dieFace(face),
      );
      if (tap >= 0 && tapOrder) button.append(element('span', { class: 'tap', 'data-tap': tap + 1, 'aria-hidden': 'true', text: String(tap + 1) }));
      return button;
    }),
  );
}

function toggleDie(g, i) {
  if (!personToAct(g) || g.recorder.state.phase !== KEEP) return;
  const at = g.selected.indexOf(i);
  if (at >= 0) g.selected.splice(at, 1);
  else g.selected.push(i);
  render(g);
}

function renderKeeps(g, state, legal) {
  if (state.phase !== KEEP || state.player !== HUMAN || isOver(state)) {
    ui.keeps.replaceChildren();
    return;
  }
  const faces = g.selected.map((i) => state.roll[i]);
  if (faces.length === 0) {
    ui.keeps.replaceChildren(element('p', { class: 'hint', id: 'keep-hint', text: 'Pick the dice to keep.' }));
    return;
  }
  const tapped = faces.join(',');
  const matches = legal.filter((m) => m.kind === 'keep' && sameDice(m.dice, faces));
  matches.sort((a, b) => Number(b.taps.join(',') === tapped) - Number(a.taps.join(',') === tapped));
  if (matches.length === 0) {
    ui.keeps.replaceChildren(element('p', { class: 'hint', id: 'keep-hint', text: `${faces.join(', ')} is not a legal keep.` }));
    return;
  }
  const tapOrder = g.bundle.rules.carry_over;
  ui.keeps.replaceChildren(
    ...matches.map((m) => {
      const asTapped = tapOrder && m.taps.join(',') === tapped;
      return element(
        'button',
        {
          type: 'button',
          class: 'keep',
          'data-action': m.action,
          'data-taps': m.taps.join(','),
          'data-points': m.points,
          onclick: () => humanMove(g, m),
        },
        `${m.label} · `,
        element('span', { class: 'points', text: `${fmt(m.points)} points` }),
        tapOrder ? element('span', { class: 'taps', text: `tap order ${m.taps.join(', ')}${asTapped ? ' (as tapped)' : ''}` }) : '',
      );
    }),
  );
}

const MOVE_TEXT = {
  bank: (s) => `Bank ${fmt(s.turn_total)}`,
  roll: (s) => `Roll ${s.dice} ${s.dice === 1 ? 'die' : 'dice'}`,
  roll_for_nothing: () => 'Roll for nothing (go out)',
  reroll_all: () => 'Reroll all the dice',
  bust: () => 'Give up the turn',
  piggyback: (s) => (s.piggy ? `Piggyback: ${fmt(s.piggy[0])} with ${s.piggy[1]} dice` : 'Piggyback'),
  fresh: () => 'Start fresh',
  split: () => 'Split the win',
  refuse: () => 'Refuse: roll off',
  roll_first: () => 'Roll off first',
  roll_last: () => 'Roll off last',
};

function renderMoves(g, state, legal, mine) {
  if (!mine) {
    ui.moves.replaceChildren();
    return;
  }
  const others = legal.filter((m) => m.kind !== 'keep');
  const buttons = others.map((m) =>
    element('button', { type: 'button', class: m.kind === 'bank' ? 'primary' : '', id: `move-${m.kind}`, 'data-kind': m.kind, onclick: () => humanMove(g, m) }, MOVE_TEXT[m.kind]?.(state) ?? m.label),
  );
  if (state.phase === CONTINUE && !others.some((m) => m.kind === 'bank') && !others.some((m) => m.kind === 'roll_for_nothing')) {
    // CONTINUE: banking not allowed now; say so on a disabled button
    buttons.unshift(element('button', { type: 'button', id: 'move-bank', 'data-kind': 'bank', disabled: true, title: 'banking is not allowed now' }, `Bank ${fmt(state.turn_total)}`));
  }
  if (state.phase === KEEP) buttons.push(element('button', { type: 'button', id: 'clear', disabled: g.selected.length === 0, onclick: () => { g.selected = []; render(g); } }, 'Clear selection'));
  ui.moves.replaceChildren(...buttons);
}

function statusText(g, state) {
  if (isOver(state)) return 'Game over';
  if (isChance(state)) return state.player === HUMAN ? 'Rolling your dice…' : `${g.botName} rolls…`;
  if (state.player !== HUMAN) return `${g.botName} is playing…`;
  if (state.phase === KEEP) return g.bundle.rules.carry_over ? 'Your turn: tap the dice to keep, in order' : 'Your turn: pick the dice to keep';
  if (state.phase === CONTINUE) return 'Your turn: bank or roll on';
  return 'Your turn: choose';
}

function render(g) {
  if (g !== game) return;
  const state = g.recorder.state;
  const mine = personToAct(g);
  const legal = mine ? legalMoves(g.bundle, state) : [];
  document.body.dataset.state = isOver(state) ? 'over' : mine ? 'human' : 'bot';
  document.body.dataset.phase = PHASE_NAMES[state.phase];
  document.body.dataset.player = String(state.player);
  renderScores(g, state);
  ui.status.textContent = statusText(g, state);
  ui.turnTotal.textContent = fmt(state.turn_total);
  ui.turnTotal.dataset.value = String(state.turn_total);
  ui.diceInHand.textContent = String(state.dice);
  ui.working.textContent = workingText(g.bundle, state.carry);
  renderDice(g, state, mine);
  renderKeeps(g, state, legal);
  renderMoves(g, state, legal, mine);
}

function gameOver(g) {
  g.over = true;
  render(g);
  const state = g.recorder.state;
  const winners = state.winners;
  ui.winner.textContent =
    winners.length > 1 ? 'A shared win' : winners[0] === HUMAN ? 'You win!' : `${g.botName} wins`;
  ui.winner.dataset.winners = winners.join(',');
  ui.finalScores.textContent = `You ${fmt(state.scores[HUMAN])} · ${g.botName} ${fmt(state.scores[BOT])}`;
  ui.over.hidden = false;
  logLine(g, null, `Game over: ${ui.winner.textContent}`, 'turn');
  document.body.dataset.state = 'over';
}

function exportRecord() {
  if (!game) return;
  const record = game.recorder.record();
  const blob = new Blob([`${recordJson(record)}\n`], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = element('a', { href: url, download: `greed-${game.preset}-seed-${game.seed}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

window.greedPage = Object.freeze({
  state: () => (game ? structuredClone(game.recorder.state) : null),
  legalMoves: () => (game && !game.over ? structuredClone(legalMoves(game.bundle, game.recorder.state)) : []),
  record: () => (game ? structuredClone(game.recorder.record()) : null),
});

// ----------------------------------------------------------------------------------------
// start

async function main() {
  ui.seed.value = params.get('seed') ?? randomSeed();
  ui.setup.addEventListener('submit', startGame);
  ui.again.addEventListener('click', () => {
    ui.seed.value = randomSeed();
    startGame();
  });
  ui.exportButton.addEventListener('click', exportRecord);
  ui.preset.addEventListener('change', () => {
    fillOpponents();
    loadChoice();
  });
  ui.opponent.addEventListener('change', loadChoice);
  try {
    await loadIndex();
  } catch (error) {
    showError(`Cannot load the bots: ${oneLine(error)}`);
    return;
  }
  fillPresets();
  fillOpponents();
  await loadChoice();
  if (!ui.start.disabled) timings.ready_ms = performance.now();
}

main();
