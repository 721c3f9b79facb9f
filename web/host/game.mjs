// The turn flow of docs/portable.md ("The turn flow"): a port of greed_env/rules/game.py
// (new_game, apply_roll, legal_moves, apply and the helpers under them: _begin_turn,
// _apply_keep, _bank, _go_out, _end_turn, _next_turn, _resolve_end, _resolve_rounds,
// _rolloff_turn_done, _finish, can_bank, can_reroll_all) and of play_out
// (greed_env/rules/play.py). The keeps of a roll come from the
// bundle's keep table, or from keeps.mjs under a bundle in reader mode (Trippn).
//
// A position is a plain object with the fields of the spec's "Positions" table and `event`,
// a line saying what just happened; it is never changed in place (every step returns a new
// one). A move is {kind, action, label} and, for a keep, taps, dice, points and carry (the
// carry-over after it, {sets, fills, pairs}).

import { BundleError, carryKey, keepKey } from './bundle.mjs';
import { bestKeepScore, hasScoringKeep, keepOptions } from './keeps.mjs';

/** Chance: the next contender rolls one die to decide who starts. */
export const ORDER_ROLL = 0;
/** Decision: take over the previous player's turn (piggyback) or start fresh. */
export const START = 1;
/** Chance: the dice in hand are thrown. */
export const ROLL = 2;
/** Decision: which dice to keep (or reroll all, or bust on purpose). */
export const KEEP = 3;
/** Decision: bank, roll on, or roll for nothing. */
export const CONTINUE = 4;
/** Decision: a tied finisher agrees to split the pot or refuses. */
export const SPLIT = 5;
/** Decision: the first finisher rolls first or last in the roll-off. */
export const ORDER_CHOICE = 6;
/** The game is over. */
export const OVER = 7;

/** The phase names by number (the bundle's `phases`). */
export const PHASE_NAMES = Object.freeze(['ORDER_ROLL', 'START', 'ROLL', 'KEEP', 'CONTINUE', 'SPLIT', 'ORDER_CHOICE', 'OVER']);

const NOTHING_WORKING = Object.freeze({ sets: Object.freeze([0, 0, 0, 0, 0, 0]), fills: Object.freeze([]), pairs: Object.freeze([]) });

/** A move or a roll the rules refuse; the position is left as it was. */
export class IllegalMove extends Error {
  constructor(message) {
    super(message);
    this.name = 'IllegalMove';
  }
}

// ----------------------------------------------------------------------------------------
// small helpers

function withItem(list, i, value) {
  const out = list.slice();
  out[i] = value;
  return out;
}

function othersAfter(p, n) {
  return Array.from({ length: n - 1 }, (_, k) => (p + k + 1) % n);
}

function inRolloff(s) {
  return s.rolloff.length > 0 && s.phase !== OVER;
}

function joined(event, more) {
  return event ? `${event}; ${more}` : more;
}

// ----------------------------------------------------------------------------------------
// keeps of a roll

function tableRow(bundle, roll, carry, fresh) {
  const carryIndex = bundle.index.carries.get(carryKey(carry));
  const full = fresh && roll.length === bundle.rules.num_dice ? 1 : 0;
  const key = `${carryIndex}|${full}|${roll.join('')}`;
  const row = carryIndex === undefined ? undefined : bundle.keeps.rows[key];
  if (row === undefined) throw new BundleError(`the bundle's keep table has no row ${key}: it does not cover this position`);
  return row;
}

const tableMoves = new WeakMap();

function tableOptions(bundle, roll, carry, fresh) {
  const row = tableRow(bundle, roll, carry, fresh);
  let moves = tableMoves.get(row);
  if (moves === undefined) {
    moves = Object.freeze(row.options.map(([action, points, taps, , after]) => keepMove(bundle, action, points, taps, bundle.keeps.carries[after])));
    tableMoves.set(row, moves);
  }
  return moves;
}

const readerMoves = new WeakMap();

function readerOptions(bundle, roll, carry, fresh) {
  const options = keepOptions(bundle.rules, roll, carry, fresh);
  let moves = readerMoves.get(options);
  if (moves === undefined) {
    moves = Object.freeze(options.map((o) => {
      const alternate = o.fills && bundle.index.alternates.has(`${o.dice.join('')}|${o.reading}`);
      const action = bundle.index.keeps.get(keepKey(o.dice, o.reading, alternate));
      if (action === undefined) throw new BundleError(`keep ${o.dice} (${o.reading || 'plain'}) has no action id in the bundle's catalog`);
      return keepMove(bundle, action, o.score, o.taps.join(''), o.carry);
    }));
    readerMoves.set(options, moves);
  }
  return moves;
}

function keepMove(bundle, action, points, taps, carry) {
  const faces = Array.from(taps, Number);
  const dice = faces.slice().sort((a, b) => a - b);
  return Object.freeze({ kind: 'keep', action, label: bundle.catalog.actions[action].label, taps: faces, dice, points, carry });
}

/** Every keep of the roll, unfiltered by the bar, as moves in the engine's order. */
function rollKeeps(bundle, roll, carry, fresh) {
  return bundle.keeps.mode === 'table' ? tableOptions(bundle, roll, carry, fresh) : readerOptions(bundle, roll, carry, fresh);
}

function rollScores(bundle, roll, carry, fresh) {
  if (bundle.keeps.mode === 'table') return tableRow(bundle, roll, carry, fresh).scoring;
  return hasScoringKeep(bundle.rules, roll, carry);
}

function bestKeep(bundle, roll, carry, fresh) {
  if (bundle.keeps.mode === 'table') return tableOptions(bundle, roll, carry, fresh).reduce((best, m) => Math.max(best, m.points), 0);
  return bestKeepScore(bundle.rules, roll, carry, fresh);
}

/**
 * The legal keeps of a KEEP position (those beating the bar after a reroll-all), as moves;
 * empty in any other phase (game.py current_keep_options).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a position
 * @returns {object[]}
 */
export function keepMoves(bundle, state) {
  if (state.phase !== KEEP) return [];
  const all = rollKeeps(bundle, state.roll, state.carry, state.fresh);
  return state.bar >= 0 ? all.filter((m) => m.points > state.bar) : all;
}

// ----------------------------------------------------------------------------------------
// queries

/**
 * A new game (game.py new_game): the who-starts roll, or the first turn of `firstPlayer`
 * (or of seat 0 under first_player 'seat0' or with one player).
 *
 * @param {object} bundle a loaded bundle
 * @param {number} players the number of players, rules.min_players .. rules.max_players
 * @param {number|null} [firstPlayer] the seat that starts, or null for the rules' way
 * @returns {object} the position
 * @throws {IllegalMove} a number of players or a first player the rules do not allow
 */
export function newGame(bundle, players, firstPlayer = null) {
  const R = bundle.rules;
  const n = players;
  if (!Number.isInteger(n) || n < R.min_players || n > R.max_players) {
    throw new IllegalMove(`${bundle.rules_name} is played by ${R.min_players}..${R.max_players} players, got ${n}`);
  }
  const base = {
    phase: ORDER_ROLL, player: 0, scores: Array(n).fill(0), entered: Array(n).fill(R.entry_threshold === 0),
    streaks: Array(n).fill(0), turns: Array(n).fill(0), turn_total: 0, dice: 0, roll: [], carry: NOTHING_WORKING,
    fresh: true, bar: -1, entry_met: false, for_nothing: false, rounds: 0, piggy: null, taken_over: 0,
    contenders: [], order_rolls: [], final_left: [], endgame: false, finishers: [], votes: 0, rolloff: [],
    rolloff_scores: [], rolloff_round: 0, winners: [], shares: [], event: '',
  };
  if (firstPlayer !== null && firstPlayer !== undefined) {
    if (!Number.isInteger(firstPlayer) || firstPlayer < 0 || firstPlayer >= n) throw new IllegalMove(`first_player must be a seat 0..${n - 1}`);
    return beginTurn(bundle, base, firstPlayer);
  }
  if (R.first_player === 'seat0' || n === 1) return beginTurn(bundle, base, 0);
  return { ...base, contenders: Array.from({ length: n }, (_, i) => i), event: 'who starts: roll one die each' };
}

/**
 * Whether the position waits for dice (ORDER_ROLL or ROLL).
 *
 * @param {object} state
 * @returns {boolean}
 */
export function isChance(state) {
  return state.phase === ORDER_ROLL || state.phase === ROLL;
}

/**
 * Whether the game is over.
 *
 * @param {object} state
 * @returns {boolean}
 */
export function isOver(state) {
  return state.phase === OVER;
}

function needsEntry(R, s, p) {
  if (s.entered[p] || R.entry_threshold <= 0) return false;
  return R.entry_until_made || s.turns[p] <= 1;
}

function entryPoints(R, s) {
  return R.piggyback_counts_for_entry ? s.turn_total : s.turn_total - s.taken_over;
}

/**
 * Whether banking is legal in this CONTINUE position (game.py can_bank).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} s a position
 * @returns {boolean}
 */
export function canBank(bundle, s) {
  const R = bundle.rules;
  if (s.phase !== CONTINUE || inRolloff(s) || s.turn_total <= 0 || s.bar >= 0) return false;
  const p = s.player;
  if (s.turn_total < R.min_bank) return false;
  if (needsEntry(R, s, p)) {
    if (R.entry_scope === 'turn' && entryPoints(R, s) < R.entry_threshold) return false;
    if (R.entry_scope === 'roll' && !s.entry_met) return false;
  }
  return !(R.exact_target && s.scores[p] + s.turn_total >= R.target);
}

/**
 * Whether rerolling all the dice is legal in this KEEP position (game.py can_reroll_all).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} s a position
 * @returns {boolean}
 */
export function canRerollAll(bundle, s) {
  const R = bundle.rules;
  if (!R.reroll_all || s.phase !== KEEP || inRolloff(s)) return false;
  if (R.reroll_all_any_time) return true;
  return s.turn_total === 0 && s.bar < 0 && s.roll.length === R.num_dice && s.piggy === null;
}

function simpleMove(bundle, kind) {
  const action = bundle.index.kinds.get(kind);
  if (action === undefined) throw new BundleError(`move ${kind} has no action id in the bundle's catalog`);
  return { kind, action, label: bundle.catalog.actions[action].label };
}

/**
 * Every legal move of a decision position, in the spec's order (game.py legal_moves): the
 * keeps first, in the engine's order. Empty at chance positions and at the end.
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a position
 * @returns {object[]} moves {kind, action, label, ...}
 */
export function legalMoves(bundle, state) {
  const R = bundle.rules;
  switch (state.phase) {
    case KEEP: {
      const moves = keepMoves(bundle, state).slice();
      if (canRerollAll(bundle, state)) moves.push(simpleMove(bundle, 'reroll_all'));
      if (R.voluntary_bust && !inRolloff(state)) moves.push(simpleMove(bundle, 'bust'));
      return moves;
    }
    case CONTINUE: {
      if (inRolloff(state)) return [simpleMove(bundle, 'roll')];
      if (R.exact_target && state.scores[state.player] + state.turn_total === R.target) return [simpleMove(bundle, 'roll_for_nothing')];
      const moves = [];
      if (canBank(bundle, state)) moves.push(simpleMove(bundle, 'bank'));
      if (state.dice > 0) moves.push(simpleMove(bundle, 'roll'));
      return moves;
    }
    case START:
      return [simpleMove(bundle, 'piggyback'), simpleMove(bundle, 'fresh')];
    case SPLIT:
      return [simpleMove(bundle, 'split'), simpleMove(bundle, 'refuse')];
    case ORDER_CHOICE:
      return [simpleMove(bundle, 'roll_first'), simpleMove(bundle, 'roll_last')];
    default:
      return [];
  }
}

/**
 * The action ids of the legal moves, ascending (what a bot's mask allows).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a position
 * @returns {number[]}
 */
export function legalActions(bundle, state) {
  return legalMoves(bundle, state).map((m) => m.action).sort((a, b) => a - b);
}

/**
 * A move as the text a game record stores (str(Move) in Python): 'bank', 'keep:1,5,5'.
 *
 * @param {object} move a move
 * @returns {string}
 */
export function moveText(move) {
  return move.kind === 'keep' ? `keep:${move.taps.join(',')}` : move.kind;
}

// ----------------------------------------------------------------------------------------
// chance

/**
 * Draw the dice of a chance position: one integer below 6^k read as k base-6 digits, sorted
 * (game.py sample_roll).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a chance position
 * @param {{integers: (n: number) => number}} rng a PortableRng (or any uniform source)
 * @returns {number[]} the faces, sorted
 * @throws {IllegalMove} the position is not a chance node
 */
export function sampleRoll(bundle, state, rng) {
  if (!isChance(state)) throw new IllegalMove('not a chance node: no dice are waiting to be rolled');
  const k = state.phase === ORDER_ROLL ? 1 : state.dice;
  let code = rng.integers(6 ** k);
  const faces = [];
  for (let i = 0; i < k; i++) {
    faces.push((code % 6) + 1);
    code = Math.floor(code / 6);
  }
  return faces.sort((a, b) => a - b);
}

function checkFaces(faces, count) {
  if (!Array.isArray(faces) || faces.length !== count || !faces.every((f) => Number.isInteger(f) && f >= 1 && f <= 6)) {
    throw new IllegalMove(`expected ${count} dice showing 1..6, got ${JSON.stringify(faces)}`);
  }
  return faces.slice().sort((a, b) => a - b);
}

function rollWins(R, roll) {
  if (!R.six_kind_wins) return false;
  for (let i = 0; i + 5 < roll.length; i++) if (roll[i] === roll[i + 5]) return true;
  return false;
}

function orderRoll(bundle, state, face) {
  const rolls = [...state.order_rolls, face];
  const contenders = state.contenders;
  if (rolls.length < contenders.length) return { ...state, order_rolls: rolls, player: contenders[rolls.length], event: `rolls ${face}` };
  const top = Math.max(...rolls);
  const tied = contenders.filter((_, i) => rolls[i] === top);
  if (tied.length === 1) {
    return beginTurn(bundle, { ...state, contenders: [], order_rolls: [] }, tied[0], `rolls ${face}; player ${tied[0]} starts`);
  }
  return { ...state, contenders: tied, order_rolls: [], player: tied[0], event: `tie at ${top}: roll again` };
}

/**
 * Apply the dice of a chance position (game.py apply_roll).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a chance position
 * @param {number[]} faces the faces, in any order
 * @returns {object} the next position
 * @throws {IllegalMove} not a chance node, or not the number of dice it waits for
 */
export function applyRoll(bundle, state, faces) {
  const R = bundle.rules;
  if (state.phase === ORDER_ROLL) return orderRoll(bundle, state, checkFaces(faces, 1)[0]);
  if (state.phase !== ROLL) throw new IllegalMove('not a chance node: no dice are waiting to be rolled');
  const roll = checkFaces(faces, state.dice);
  const shown = roll.join(',');
  if (rollWins(R, roll)) {
    const s = { ...state, phase: KEEP, roll, for_nothing: false, event: `rolls ${shown}` };
    return finish(s, [state.player], `player ${state.player} rolled six of a kind: instant win`);
  }
  if (state.for_nothing) {
    const s = { ...state, roll, for_nothing: false };
    if (rollScores(bundle, roll, state.carry, state.fresh)) return endTurn(bundle, s, `rolls ${shown} for nothing, but it scores: turn lost`, true);
    return goOut(bundle, s, `rolls ${shown} for nothing: goes out`);
  }
  const s = { ...state, phase: KEEP, roll, event: `rolls ${shown}` };
  if (keepMoves(bundle, s).length) return s;
  if (state.bar >= 0 && rollKeeps(bundle, roll, state.carry, state.fresh).length) {
    return endTurn(bundle, s, `rolls ${shown}: does not beat ${state.bar}, turn scores 0`, true);
  }
  return endTurn(bundle, s, `rolls ${shown}: bust`, true);
}

// ----------------------------------------------------------------------------------------
// moves

/**
 * The legal move that `move` stands for: a move of legalMoves, a move object of the same
 * kind (a keep with the same tap order), or its text ('bank', 'keep:1,5').
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a decision position
 * @param {object|string} move
 * @returns {object} the move of legalMoves(bundle, state)
 * @throws {IllegalMove} no legal move is that one
 */
export function legalMove(bundle, state, move) {
  const wanted = typeof move === 'string' ? parseMoveText(move) : move;
  const legal = legalMoves(bundle, state);
  const found = wanted?.kind === 'keep'
    ? legal.find((m) => m.kind === 'keep' && m.taps.join(',') === wanted.taps.join(','))
    : legal.find((m) => m.kind === wanted?.kind);
  if (found === undefined) {
    const shown = wanted?.kind ? moveText(wanted) : JSON.stringify(move);
    throw new IllegalMove(`move ${shown} is not legal now; legal: ${legal.map(moveText).join(', ') || 'none'}`);
  }
  return found;
}

function parseMoveText(text) {
  const t = text.trim().toLowerCase();
  if (!t.startsWith('keep')) return { kind: t };
  const taps = t.slice(4).replace(/^[: ]+/, '').split(/[ ,]+/).filter(Boolean).map(Number);
  return { kind: 'keep', taps };
}

/**
 * Play a move (game.py apply). Keeps are matched by their tap order (the canonical one, as
 * legalMoves gives it), other moves by kind.
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state a decision position
 * @param {object|string} move a move of legalMoves, or its text ('bank', 'keep:1,5')
 * @returns {object} the next position
 * @throws {IllegalMove} a move that is not legal here, or a chance or final position
 */
export function applyMove(bundle, state, move) {
  if (isChance(state)) throw new IllegalMove('the dice must be rolled first (chance node)');
  if (isOver(state)) throw new IllegalMove('the game is over');
  const m = legalMove(bundle, state, move);
  switch (m.kind) {
    case 'keep': return applyKeep(bundle, state, m);
    case 'reroll_all': return rerollAll(bundle, state);
    case 'bust': return endTurn(bundle, state, 'busts on purpose', true);
    case 'bank': return bank(bundle, state);
    case 'roll': return { ...state, phase: ROLL, roll: [], event: 'rolls on' };
    case 'roll_for_nothing': return { ...state, phase: ROLL, roll: [], for_nothing: true, event: 'rolls for nothing' };
    case 'piggyback': return piggyback(bundle, state);
    case 'fresh': return { ...state, phase: ROLL, piggy: null, event: 'starts fresh' };
    case 'split': return split(state);
    case 'refuse': return { ...state, phase: ORDER_CHOICE, player: state.finishers[0], event: 'refuses to split: roll-off' };
    default: return rolloffOrder(bundle, state, m.kind);
  }
}

function applyKeep(bundle, s, move) {
  const R = bundle.rules;
  const p = s.player;
  const total = s.turn_total + move.points;
  let dice = s.dice - move.taps.length;
  let carry = move.carry;
  let fresh = false;
  if (dice === 0 && R.hot_dice) {
    dice = R.num_dice;
    fresh = true;
    if (!R.trippn) carry = NOTHING_WORKING;
  }
  const shown = move.taps.join(',');
  const s2 = {
    ...s, phase: CONTINUE, turn_total: total, dice, roll: [], carry, fresh, bar: -1,
    entry_met: s.entry_met || move.points >= R.entry_threshold, event: `keeps ${shown} for ${move.points}`,
  };
  if (inRolloff(s2)) {
    if (R.trippn && [2, 3, 4, 6].every((f) => carry.sets[f - 1])) {
      const locked = { ...s2, event: `keeps ${shown}: sets of 2s, 3s, 4s and 6s working, locked in` };
      return finish(locked, [p], `player ${p} is locked in and wins the roll-off`);
    }
    return s2;
  }
  if (R.exact_target && s.scores[p] + total > R.target) return endTurn(bundle, s2, `goes over ${R.target}: turn lost`, true);
  if (dice === 0 && !canBank(bundle, s2)) return endTurn(bundle, s2, 'no dice left and cannot bank: turn scores 0', false);
  return s2;
}

function rerollAll(bundle, s) {
  const R = bundle.rules;
  const bar = s.turn_total + bestKeep(bundle, s.roll, s.carry, s.fresh);
  return {
    ...s, phase: ROLL, turn_total: 0, dice: R.num_dice, roll: [], carry: NOTHING_WORKING, fresh: true,
    bar: R.reroll_all_must_beat ? bar : -1, entry_met: false, taken_over: 0,
    event: `rerolls all ${R.num_dice} dice, giving up ${bar}`,
  };
}

function piggyback(bundle, s) {
  const [total, dice] = s.piggy;
  return {
    ...s, phase: ROLL, turn_total: total, dice, fresh: dice === bundle.rules.num_dice, piggy: null, taken_over: total,
    event: `piggybacks on ${total} with ${dice} dice`,
  };
}

function split(s) {
  const votes = s.votes + 1;
  if (votes === s.finishers.length) return finish(s, s.finishers, 'the finishers split the pot');
  return { ...s, votes, player: s.finishers[votes], event: 'agrees to split' };
}

function rolloffOrder(bundle, s, kind) {
  const [first, ...others] = s.finishers;
  const order = kind === 'roll_first' ? [first, ...others] : [...others, first];
  const s2 = { ...s, rolloff: order, rolloff_scores: [], rolloff_round: 1 };
  return beginTurn(bundle, s2, order[0], `roll-off order (${order.join(', ')})`);
}

// ----------------------------------------------------------------------------------------
// turns

function beginTurn(bundle, s, p, event = '') {
  const R = bundle.rules;
  const turns = s.rolloff.length ? s.turns : withItem(s.turns, p, s.turns[p] + 1);
  const offer = R.piggyback && !s.rolloff.length ? s.piggy : null;
  return {
    ...s, phase: offer !== null ? START : ROLL, player: p, turns, turn_total: 0, dice: R.num_dice, roll: [],
    carry: NOTHING_WORKING, fresh: true, bar: -1, entry_met: false, for_nothing: false, piggy: offer, taken_over: 0,
    event: event || `player ${p} to play`,
  };
}

function bank(bundle, s) {
  const R = bundle.rules;
  const p = s.player;
  const scores = withItem(s.scores, p, s.scores[p] + s.turn_total);
  let s2 = { ...s, scores, entered: withItem(s.entered, p, true), streaks: withItem(s.streaks, p, 0), event: `banks ${s.turn_total}` };
  const piggy = R.piggyback && s.dice > 0 ? [s.turn_total, s.dice] : null;
  if (!R.exact_target && R.target && scores[p] >= R.target && !s.endgame) {
    if (!R.final_round || s.scores.length === 1) return finish(s2, [p], `player ${p} reaches ${R.target}`);
    const first = R.tie_rule === 'first_finisher' ? [p] : [];
    s2 = { ...s2, endgame: true, final_left: othersAfter(p, s.scores.length), finishers: first };
  }
  return nextTurn(bundle, s2, piggy);
}

function goOut(bundle, s, event) {
  const R = bundle.rules;
  const p = s.player;
  let s2 = { ...s, scores: withItem(s.scores, p, R.target), finishers: [...s.finishers, p], streaks: withItem(s.streaks, p, 0), event };
  if (!s.endgame) {
    if (!R.final_round || s.scores.length === 1) return finish(s2, [p], `player ${p} goes out`);
    s2 = { ...s2, endgame: true, final_left: othersAfter(p, s.scores.length) };
  }
  return nextTurn(bundle, s2, null);
}

function endTurn(bundle, s, event, bust) {
  const R = bundle.rules;
  const p = s.player;
  if (inRolloff(s)) return rolloffTurnDone(bundle, { ...s, event });
  let { scores, streaks } = s;
  let text = event;
  if (bust) {
    let streak = s.streaks[p] + 1;
    if (R.bust_penalty_after && streak >= R.bust_penalty_after) {
      scores = withItem(scores, p, scores[p] - R.bust_penalty);
      text += `; ${streak} busts in a row cost ${R.bust_penalty}`;
      streak = 0;
    }
    streaks = withItem(streaks, p, streak);
  }
  return nextTurn(bundle, { ...s, scores, streaks, event: text }, null);
}

function nextTurn(bundle, state, piggy) {
  const R = bundle.rules;
  const n = state.scores.length;
  const p = state.player;
  const entered = !R.entry_until_made && !state.entered[p] ? withItem(state.entered, p, true) : state.entered;
  let s = { ...state, rounds: state.rounds + 1, entered, turn_total: 0, roll: [], carry: NOTHING_WORKING, piggy };
  if (R.rounds && s.rounds >= R.rounds * n && !(s.endgame && R.final_round_past_rounds)) {
    return resolveRounds(bundle, { ...s, final_left: [] });
  }
  if (s.endgame) {
    const left = s.final_left.filter((x) => x !== p);
    s = { ...s, final_left: left };
    if (!left.length) return resolveEnd(bundle, s);
    return beginTurn(bundle, s, left[0], s.event);
  }
  if (s.rounds >= R.horizon_rounds * n) return finish(s, Array.from({ length: n }, (_, i) => i), 'horizon reached: the pot is shared');
  return beginTurn(bundle, s, (p + 1) % n, s.event);
}

function resolveEnd(bundle, s) {
  const R = bundle.rules;
  if (R.exact_target) {
    const fin = s.finishers;
    if (fin.length === 1) return finish(s, fin, `player ${fin[0]} went out`);
    if (R.tie_rule === 'split_vote') return { ...s, phase: SPLIT, player: fin[0], votes: 0, event: 'tie: split or roll off?' };
    if (R.tie_rule === 'first_finisher') return finish(s, fin.slice(0, 1), `tie: player ${fin[0]} went out first and wins`);
    return finish(s, fin, 'tie: the pot is shared');
  }
  const top = Math.max(...s.scores);
  const winners = s.scores.flatMap((x, i) => (x === top ? [i] : []));
  const first = s.finishers.length ? s.finishers[0] : -1;
  if (winners.length > 1 && R.tie_rule === 'first_finisher' && winners.includes(first)) {
    return finish(s, [first], `final round over: a tie does not beat player ${first}`);
  }
  return finish(s, winners, 'final round over');
}

function resolveRounds(bundle, s) {
  const R = bundle.rules;
  if (s.endgame) return resolveEnd(bundle, s);
  const top = Math.max(...s.scores);
  const tied = s.scores.flatMap((x, i) => (x === top ? [i] : []));
  const event = `${R.rounds} rounds played`;
  if (tied.length > 1 && R.tie_rule === 'split_vote') {
    return { ...s, phase: SPLIT, player: tied[0], finishers: tied, votes: 0, event: `${joined(s.event, event)}: tie, split or roll off?` };
  }
  return finish(s, tied, tied.length === 1 ? event : `${event}: tie, the pot is shared`);
}

function rolloffTurnDone(bundle, s) {
  const R = bundle.rules;
  const scores = [...s.rolloff_scores, s.turn_total];
  const order = s.rolloff;
  if (scores.length < order.length) return beginTurn(bundle, { ...s, rolloff_scores: scores }, order[scores.length], s.event);
  const top = Math.max(...scores);
  const tied = order.filter((_, i) => scores[i] === top);
  if (tied.length === 1) return finish({ ...s, rolloff_scores: scores }, tied, `player ${tied[0]} wins the roll-off`);
  if (s.rolloff_round >= R.rolloff_horizon) return finish({ ...s, rolloff_scores: scores }, tied, 'roll-off horizon: shared');
  const s2 = { ...s, rolloff: tied, rolloff_scores: [], rolloff_round: s.rolloff_round + 1 };
  return beginTurn(bundle, s2, tied[0], `${s.event}; roll-off tied: again`);
}

function finish(s, winners, event) {
  const n = s.scores.length;
  const share = 1 / winners.length;
  const shares = Array.from({ length: n }, (_, i) => (winners.includes(i) ? share : 0));
  return { ...s, phase: OVER, winners: winners.slice().sort((a, b) => a - b), shares, event: joined(s.event, event) };
}

// ----------------------------------------------------------------------------------------
// the game loop

/**
 * Play `state` on to the end, a bot per seat (greed_env/rules/play.py play_out): the dice
 * and the bots' random choices all come from `rng`.
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state any position
 * @param {{act: (state: object, rng: object) => object}[]} bots one per seat
 * @param {object} rng a PortableRng
 * @param {{onStep?: (before: object, event: number[]|object, after: object) => void, maxSteps?: number}} [options]
 *   onStep sees every roll (its faces) and every move as it is applied; maxSteps bounds them
 * @returns {object} the last position (over, unless maxSteps ran out)
 * @throws {IllegalMove} a bot chose a move that is not legal
 */
export function playOut(bundle, state, bots, rng, { onStep = null, maxSteps = Infinity } = {}) {
  let s = state;
  for (let step = 0; step < maxSteps && !isOver(s); step++) {
    let event;
    let after;
    if (isChance(s)) {
      event = sampleRoll(bundle, s, rng);
      after = applyRoll(bundle, s, event);
    } else {
      event = legalMove(bundle, s, bots[s.player].act(s, rng));
      after = applyMove(bundle, s, event);
    }
    if (onStep) onStep(s, event, after);
    s = after;
  }
  return s;
}

// ----------------------------------------------------------------------------------------
// positions as JSON

/**
 * A position of the conformance vectors' JSON (greed_env.portable.state_json) as a host
 * position: the same fields, `event` empty.
 *
 * @param {object} data the position's JSON
 * @returns {object}
 * @throws {IllegalMove} a field missing
 */
export function stateFromJson(data) {
  const missing = ['phase', 'player', 'scores', 'entered', 'streaks', 'turns', 'carry', 'piggy', 'rolloff'].filter((f) => !(f in data));
  if (missing.length) throw new IllegalMove(`a position's JSON lacks ${missing.join(', ')}`);
  return { ...data, event: '' };
}

/**
 * A position's JSON (greed_env.portable.state_json.state_to_json): every field but `event`.
 *
 * @param {object} state
 * @returns {object}
 */
export function stateToJson(state) {
  const { event: _event, ...fields } = state;
  return { ...fields, carry: { sets: [...state.carry.sets], fills: [...state.carry.fills], pairs: [...state.carry.pairs] } };
}
