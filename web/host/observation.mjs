// The 106-entry observation of docs/portable.md ("The observation"): a port of
// greed_env/spaces/observation.py (encode_observation and _template), entry for entry and in
// the same order. Every entry is computed in float64, then rounded to float32 once.

import { canBank, KEEP, OVER, SPLIT } from './game.mjs';

/** Entries of an observation. */
export const OBS_DIM = 106;
const MAX_SEATS = 8;

const I_NUM_DICE = 0;
const I_SHOWING = 5;
const I_MY_TURN = 11;
const I_IN_HAND = 12;
const I_FRESH = 13;
const I_TURN_TOTAL = 14;
const I_CAN_BANK = 15;
const I_ENTRY_MET = 16;
const I_ENTRY_MISSING = 17;
const I_TO_TARGET = 18;
const I_PRESENT = 20;
const I_SCORE = 28;
const I_ENTERED = 36;
const I_STREAK = 44;
const I_OUT = 52;
const I_OWED = 60;
const I_SET = 68;
const I_FILL = 74;
const I_PAIRS = 80;
const I_PHASE = 86;
const I_FINAL = 94;
const I_ROLLOFF_BEST = 97;
const I_SPLIT = 99;
const I_BAR = 100;
const I_PIGGY = 102;
const I_PROGRESS = 105;

function clip(x, low, high) {
  return x < low ? low : x > high ? high : x;
}

/** The entries fixed by the rules and the number of seats (observation.py _template). */
function fillTemplate(v, R, n, target) {
  v[I_NUM_DICE] = R.num_dice / 8;
  v[I_NUM_DICE + 1] = n / 8;
  v[I_NUM_DICE + 2] = R.exact_target ? 1 : 0;
  v[I_NUM_DICE + 3] = clip(R.entry_threshold / target, 0, 1);
  v[I_NUM_DICE + 4] = clip(R.min_bank / target, 0, 1);
  for (let k = 0; k < Math.min(n, MAX_SEATS); k++) v[I_PRESENT + k] = 1;
}

function fillTurn(v, bundle, state, me, acting, target, nd) {
  const R = bundle.rules;
  if (state.phase === KEEP) for (const f of state.roll) v[I_SHOWING + f - 1] += 1 / nd;
  v[I_MY_TURN] = acting ? 1 : 0;
  v[I_IN_HAND] = state.dice / nd;
  v[I_FRESH] = state.fresh ? 1 : 0;
  v[I_TURN_TOTAL] = clip(state.turn_total / target, 0, 2);
  v[I_CAN_BANK] = acting && canBank(bundle, state) ? 1 : 0;
  v[I_ENTRY_MET] = state.entry_met ? 1 : 0;
  if (acting && !state.entered[me] && R.entry_threshold > 0) {
    v[I_ENTRY_MISSING] = clip((R.entry_threshold - state.turn_total) / target, 0, 1);
  }
  const myScore = state.scores[me];
  v[I_TO_TARGET] = clip((target - myScore) / target, -1, 2);
  const unbanked = acting ? state.turn_total : 0;
  v[I_TO_TARGET + 1] = clip((target - myScore - unbanked) / target, -1, 2);
}

function fillSeats(v, bundle, state, me, target) {
  const n = state.scores.length;
  const streakScale = bundle.observation.streak_scale;
  for (let k = 0; k < Math.min(n, MAX_SEATS); k++) {
    const p = (me + k) % n;
    v[I_SCORE + k] = clip(state.scores[p] / target, -1, 2);
    if (state.entered[p]) v[I_ENTERED + k] = 1;
    if (state.streaks[p]) v[I_STREAK + k] = clip(state.streaks[p] / streakScale, 0, 1);
    if (state.finishers.includes(p)) v[I_OUT + k] = 1;
    if (state.final_left.includes(p)) v[I_OWED + k] = 1;
  }
}

function fillCarry(v, carry, nd) {
  for (let k = 0; k < 6; k++) if (carry.sets[k]) v[I_SET + k] = clip(carry.sets[k] / nd, 0, 1);
  for (const f of carry.fills) v[I_FILL + f - 1] = 1;
  for (const f of carry.pairs) v[I_PAIRS + f - 1] = 1;
}

function fillEnd(v, bundle, state, me, target, nd) {
  const R = bundle.rules;
  const n = state.scores.length;
  v[I_PHASE + state.phase] = 1;
  v[I_FINAL] = state.endgame ? 1 : 0;
  v[I_FINAL + 1] = state.final_left.includes(me) ? 1 : 0;
  const inRolloff = state.rolloff.length > 0 && state.phase !== OVER;
  v[I_FINAL + 2] = inRolloff ? 1 : 0;
  if (state.rolloff_scores.length) v[I_ROLLOFF_BEST] = clip(Math.max(...state.rolloff_scores) / target, 0, 2);
  if (inRolloff) v[I_ROLLOFF_BEST + 1] = clip(state.rolloff_round / R.rolloff_horizon, 0, 1);
  if (state.phase === SPLIT) v[I_SPLIT] = state.votes / n;
  if (state.bar >= 0) {
    v[I_BAR] = 1;
    v[I_BAR + 1] = clip(state.bar / target, 0, 2);
  }
  if (state.piggy !== null) {
    v[I_PIGGY] = 1;
    v[I_PIGGY + 1] = clip(state.piggy[0] / target, 0, 2);
    v[I_PIGGY + 2] = clip(state.piggy[1] / nd, 0, 1);
  }
  v[I_PROGRESS] = clip(state.rounds / (bundle.observation.rounds_scale * n), 0, 1);
}

/**
 * The observation of `state` seen from `seat` (observation.py encode_observation).
 *
 * @param {object} bundle a loaded bundle
 * @param {object} state any position
 * @param {number} [seat] the observing seat (default: the player to act)
 * @returns {Float32Array} OBS_DIM entries
 * @throws {RangeError} a seat that is not one of the game
 */
export function encodeObservation(bundle, state, seat = state.player) {
  const n = state.scores.length;
  if (!Number.isInteger(seat) || seat < 0 || seat >= n) throw new RangeError(`seat ${seat} is not a seat of a ${n}-player game`);
  const target = bundle.observation.score_scale;
  const nd = bundle.rules.num_dice;
  const acting = state.player === seat && state.phase !== OVER;
  const v = new Float64Array(OBS_DIM);
  fillTemplate(v, bundle.rules, n, target);
  fillTurn(v, bundle, state, seat, acting, target, nd);
  fillSeats(v, bundle, state, seat, target);
  fillCarry(v, state.carry, nd);
  fillEnd(v, bundle, state, seat, target, nd);
  return Float32Array.from(v);
}
