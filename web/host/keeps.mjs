// The tap-order keep reader of carry-over rules (Progressive 10,000 and its Trippn mode), whose
// keeps are too many to table: every legal keep of a roll with its canonical tap order, score
// and carry-over. A port of greed_env/rules/scoring.py (keep_options, has_scoring_keep,
// best_keep_score and the tap-order path under them: _tap, _lock_large, _tap_finish,
// _best_partition with order_free=False, _tap_readings, _readable_order, _sub_readings,
// _roll_level) and of Rules.set_value (greed_env/rules/config.py), for rules with
// carry_over: true and working_set_claims: true. Options come in Python's order.
//
// Rules are the JSON of Rules.to_dict(); a carry is {sets: [6 counts], fills: [sorted faces],
// pairs: [faces]}; counts are arrays of six numbers, faces 1..6.

const FACES = Object.freeze([1, 2, 3, 4, 5, 6]);
const ZERO = Object.freeze([0, 0, 0, 0, 0, 0]);
const EMPTY_CARRY = Object.freeze({ sets: ZERO, fills: Object.freeze([]), pairs: Object.freeze([]) });
const READING_RANK = { '': 0, pairs: 1, small: 2, large: 3 };
const GROUPED_PREFIXES = ['3 ', 'straight', 'three pairs', 'pair of'];

// ----------------------------------------------------------------------------------------
// small helpers

/** A bounded cache: the oldest entry goes when it is full (functools.lru_cache's sizes). */
class Memo {
  constructor(limit) {
    this.limit = limit;
    this.map = new Map();
  }

  get(key) {
    return this.map.get(key);
  }

  set(key, value) {
    this.map.set(key, value);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value);
    return value;
  }
}

function countsOf(dice) {
  const c = [0, 0, 0, 0, 0, 0];
  for (const d of dice) {
    if (!Number.isInteger(d) || d < 1 || d > 6) throw new Error(`a die shows 1..6, got ${d}`);
    c[d - 1] += 1;
  }
  return c;
}

function diceOf(counts) {
  const out = [];
  counts.forEach((n, i) => {
    for (let k = 0; k < n; k++) out.push(i + 1);
  });
  return out;
}

function oneHot(faces, n = 1) {
  const c = [0, 0, 0, 0, 0, 0];
  for (const f of faces) c[f - 1] += n;
  return c;
}

function bump(counts, i, by) {
  const out = counts.slice();
  out[i] += by;
  return out;
}

function sum(values) {
  return values.reduce((s, v) => s + v, 0);
}

function sameList(a, b) {
  return a.length === b.length && a.every((v, k) => v === b[k]);
}

function ascending(values) {
  return values.slice().sort((a, b) => a - b);
}

function combinations(items, k) {
  if (k === 0) return [[]];
  const out = [];
  items.forEach((item, i) => {
    for (const rest of combinations(items.slice(i + 1), k - 1)) out.push([item, ...rest]);
  });
  return out;
}

/** Every non-empty sub-multiset of `counts`, in itertools.product order. */
function subMultisets(counts) {
  let subs = [[]];
  for (const c of counts) subs = subs.flatMap((head) => Array.from({ length: c + 1 }, (_, n) => [...head, n]));
  return subs.filter((s) => s.some(Boolean));
}

function carryOf(carry) {
  if (!carry) return EMPTY_CARRY;
  return { sets: carry.sets ?? ZERO, fills: carry.fills ?? [], pairs: carry.pairs ?? [] };
}

function carryKey(carry) {
  return `${carry.sets}|${carry.fills}|${carry.pairs}`;
}

function strongest(a, b) {
  return READING_RANK[a] >= READING_RANK[b] ? a : b;
}

function part(name, dice, points) {
  return { name, dice, points };
}

function deepFreeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

// ----------------------------------------------------------------------------------------
// the rules' tables

/**
 * Points of `count` (>= 3) dice of `face` read as one set, under the rules' set_growth
 * (Rules.set_value).
 *
 * @param {object} rules the JSON of Rules.to_dict()
 * @param {number} face 1..6
 * @param {number} count dice in the set
 * @returns {number}
 */
export function setValue(rules, face, count) {
  const base = rules.triple_values[face - 1];
  if (count < 3 || base <= 0) return 0;
  const ones = rules.ones_set_values ?? [];
  if (face === 1 && ones.length && count > 3 && count - 4 < ones.length) return ones[count - 4];
  if (count === 3) return base;
  if (rules.set_growth === 'none') return 0;
  if (rules.set_growth === 'additive') return base * (count - 2);
  if (rules.set_growth === 'doubling') return base * 2 ** (count - 3);
  const fixed = rules.fixed_set_values ?? [];
  return count - 4 < fixed.length ? fixed[count - 4] : 0;
}

function pairsValue(rules, faces) {
  const [base, seq] = faces.length === 3
    ? [rules.three_pairs, rules.three_pairs_sequential]
    : [rules.four_pairs, rules.four_pairs_sequential];
  if (base <= 0) return 0;
  const sorted = ascending(faces);
  const sequential = sorted.every((f, k) => k === 0 || f - sorted[k - 1] === 1);
  return seq && sequential ? seq : base;
}

/** The face that turns `straight` into a longer listed straight (0 if none). */
function fillFace(rules, straight) {
  for (const [faces] of rules.straights) {
    const extra = faces.filter((f) => !straight.includes(f));
    if (faces.length === straight.length + 1 && straight.every((f) => faces.includes(f)) && extra.length === 1) {
      return extra[0];
    }
  }
  return 0;
}

/** Listed straights, longest first: {use, points, label, fill}. */
function straightTable(rules) {
  const sorted = rules.straights.slice().sort((a, b) => b[0].length - a[0].length);
  return sorted.map(([faces, points]) => ({
    use: oneHot(faces), points, label: `straight ${ascending(faces).join('-')}`, fill: fillFace(rules, faces),
  }));
}

function straightPoints(table, counts) {
  const row = table.find((r) => sameList(r.use, counts));
  return row ? row.points : 0;
}

/** The combinations the end of a keep reads: singles, pairs, straights, three and four pairs. */
function combos(rules) {
  const out = [];
  const combo = (name, use, points, extra = {}) => out.push({ name, use, points, fill: 0, pairs: [], upgrade: false, ...extra });
  for (const f of FACES) {
    if (rules.single_values[f - 1]) combo(`single ${f}`, oneHot([f]), rules.single_values[f - 1]);
    if (rules.pair_values[f - 1]) combo(`pair of ${f}s`, oneHot([f], 2), rules.pair_values[f - 1]);
  }
  for (const [faces, points] of rules.straights) {
    combo(`straight ${ascending(faces).join('-')}`, oneHot(faces), points, { fill: fillFace(rules, faces) });
  }
  for (const k of [3, 4]) {
    if (k * 2 > rules.num_dice) continue;
    for (const faces of combinations(FACES, k)) {
      const value = pairsValue(rules, faces);
      const name = `${k === 3 ? 'three' : 'four'} pairs ${faces.join('-')}`;
      if (value) combo(name, oneHot(faces, 2), value, { pairs: k === 3 ? faces : [] });
    }
  }
  return out;
}

const prepared = new WeakMap();
const preparedByJson = new Map();

/** The rules with their tables and caches, built once per rules (object or JSON text). */
function contextOf(rules) {
  let ctx = prepared.get(rules);
  if (ctx) return ctx;
  const json = JSON.stringify(rules);
  ctx = preparedByJson.get(json) ?? newContext(rules);
  preparedByJson.set(json, ctx);
  prepared.set(rules, ctx);
  return ctx;
}

function newContext(rules) {
  if (rules.carry_over !== true) {
    throw new Error(`keeps.mjs reads tap-order rules only (carry_over: true); '${rules.name}' reads keeps order-free`);
  }
  if (rules.working_set_claims === false) {
    throw new Error(`keeps.mjs reads working_set_claims: true only; '${rules.name}' lets a straight or three pairs claim a working set's die`);
  }
  return {
    rules,
    straights: straightTable(rules),
    combos: combos(rules),
    partitions: new Memo(1 << 16),
    tapReadings: new Memo(1 << 17),
    subReadings: new Memo(1 << 17),
    options: new Memo(1 << 17),
    scoring: new Memo(1 << 16),
  };
}

// ----------------------------------------------------------------------------------------
// the end of a keep: the pending dice read as a multiset (_best_partition, order_free=False)

const NOTHING_LEFT = deepFreeze({ score: 0, parts: [], fills: [], pairs: [], upgraded: false });

function readingKeyAbove(a, b) {
  if (a.score !== b.score) return a.score > b.score;
  if (a.fills.length !== b.fills.length) return a.fills.length > b.fills.length;
  return a.pairs.length > b.pairs.length;
}

function partitionCandidates(ctx, counts, first, fills, pairs) {
  const { rules } = ctx;
  const face = first + 1;
  const out = ctx.combos.filter((c) => c.use[first]);
  const extra = { fill: 0, pairs: [], upgrade: false };
  if (fills.includes(face) && rules.straight_fill_bonus) {
    out.push({ name: `fills straight with ${face}`, use: oneHot([face]), points: rules.straight_fill_bonus, ...extra });
  }
  if (pairs.length && !pairs.includes(face) && counts[first] >= 2 && rules.four_pairs) {
    const gain = pairsValue(rules, [...pairs, face]) - pairsValue(rules, pairs);
    if (gain > 0) out.push({ name: `pair of ${face}s makes four pairs`, use: oneHot([face], 2), points: gain, ...extra, upgrade: true });
  }
  return out;
}

/** Best reading of a multiset (every die in a combination, most points), or null. */
function bestPartition(ctx, counts, fills, pairs) {
  const key = `${counts}|${fills}|${pairs}`;
  const known = ctx.partitions.get(key);
  if (known !== undefined) return known;
  return ctx.partitions.set(key, findPartition(ctx, counts, fills, pairs));
}

function findPartition(ctx, counts, fills, pairs) {
  const first = counts.findIndex(Boolean);
  if (first < 0) return NOTHING_LEFT;
  const face = first + 1;
  let best = null;
  for (const combo of partitionCandidates(ctx, counts, first, fills, pairs)) {
    if (combo.use.some((u, k) => u > counts[k])) continue;
    const rest = counts.map((c, k) => c - combo.use[k]);
    const subFills = combo.name.startsWith('fills') ? fills.filter((x) => x !== face) : fills;
    const sub = bestPartition(ctx, rest, subFills, combo.upgrade ? [] : pairs);
    if (sub === null || (combo.upgrade && sub.upgraded)) continue;
    const candidate = {
      score: combo.points + sub.score,
      parts: [part(combo.name, diceOf(combo.use), combo.points), ...sub.parts],
      fills: combo.fill ? ascending([...sub.fills, combo.fill]) : sub.fills,
      pairs: combo.pairs.length ? combo.pairs : sub.pairs,
      upgraded: combo.upgrade || sub.upgraded,
    };
    if (best === null || readingKeyAbove(candidate, best)) best = candidate;
  }
  return best;
}

// ----------------------------------------------------------------------------------------
// reading taps one at a time (_Tapping, _tap, _lock_large, _tap_finish)

function tapStart(carry) {
  return { sets: carry.sets, pending: ZERO, held: ZERO, score: 0, parts: [], openFills: [], pairs: carry.pairs, reading: '' };
}

/** The reading state of `t` after taps leaving `rest`, its parts left out, as a short string. */
function walkKey(rest, t) {
  return String.fromCharCode(
    ...rest, ...t.sets, ...t.pending, ...t.held, t.score & 0xffff, t.score >>> 16, READING_RANK[t.reading],
    t.openFills.length, ...t.openFills, ...t.pairs,
  );
}

function locked(t, points, newPart, changes) {
  return { ...t, ...changes, score: t.score + points, parts: [...t.parts, newPart] };
}

/** A straight locked earlier in this keep grows by its fill face `d` (1-5 then 6 is 1-6). */
function growStraight(ctx, t, d) {
  const i = d - 1;
  for (const row of ctx.straights) {
    if (row.fill !== d || row.use[i] !== 0) continue;
    const grown = bump(row.use, i, 1);
    const gain = straightPoints(ctx.straights, grown) - row.points;
    if (gain <= 0) continue;
    const label = `straight ${FACES.filter((f) => grown[f - 1]).join('-')}`;
    return locked(t, gain, part(`${d} completes ${label}`, [d], gain), {
      openFills: t.openFills.filter((f) => f !== d),
      reading: strongest(t.reading, sum(grown) === 6 ? 'large' : 'small'),
    });
  }
  return null;
}

/** Lock a large straight if the pending and held dice now show every face. */
function lockLarge(ctx, t) {
  const large = ctx.straights[0];
  if (!large || sum(large.use) !== 6) return null;
  if (!FACES.every((f) => t.pending[f - 1] + t.held[f - 1])) return null;
  const pending = t.pending.slice();
  const held = t.held.slice();
  for (let k = 0; k < 6; k++) {
    if (pending[k]) pending[k] -= 1;
    else held[k] -= 1;
  }
  return locked(t, large.points, part(large.label, FACES.slice(), large.points), {
    pending, held, reading: strongest(t.reading, 'large'),
  });
}

function lockSmallStraight(ctx, t) {
  for (const row of ctx.straights) {
    if (sum(row.use) >= 6 || !t.pending.every((p, k) => p >= row.use[k])) continue;
    return locked(t, row.points, part(row.label, diceOf(row.use), row.points), {
      pending: t.pending.map((p, k) => p - row.use[k]),
      openFills: row.fill ? [...t.openFills, row.fill] : t.openFills,
      reading: strongest(t.reading, 'small'),
    });
  }
  return t;
}

function lockThreePairs(ctx, t) {
  const { rules } = ctx;
  const faces = FACES.filter((f) => t.pending[f - 1] >= 2);
  if (faces.length !== 3 || rules.num_dice < 6) return t;
  const value = pairsValue(rules, faces);
  if (!value) return t;
  const used = oneHot(faces, 2);
  return locked(t, value, part(`three pairs ${faces.join('-')}`, diceOf(used), value), {
    pending: t.pending.map((p, k) => p - used[k]),
    pairs: faces,
    reading: strongest(t.reading, 'pairs'),
  });
}

/** Read one more tapped die `d`: combinations lock the moment they complete. */
function tap(ctx, t, d) {
  const i = d - 1;
  if (t.openFills.includes(d)) {
    const grown = growStraight(ctx, t, d);
    if (grown) return grown;
  }
  if (t.sets[i]) {
    const holding = { ...t, held: bump(t.held, i, 1) };
    return lockLarge(ctx, holding) ?? holding;
  }
  const pending = bump(t.pending, i, 1);
  const next = { ...t, pending };
  const n = pending[i];
  if (n === 3 && ctx.rules.triple_values[i]) {
    const value = setValue(ctx.rules, d, 3);
    return locked(next, value, part(`3 ${d}s`, [d, d, d], value), {
      sets: bump(t.sets, i, 3),
      pending: bump(pending, i, -3),
    });
  }
  if (n === 1) return lockLarge(ctx, next) ?? lockSmallStraight(ctx, next);
  if (n === 2) return lockThreePairs(ctx, next);
  return next;
}

/** The end of a keep: held dice grow their sets, the pending dice are read as a multiset;
 * {result, reading} or null if a kept die scores nothing. */
function tapFinish(ctx, t, carry) {
  const { rules } = ctx;
  let score = t.score;
  const parts = t.parts.slice();
  const sets = t.sets.slice();
  for (let i = 0; i < 6; i++) {
    for (let h = 0; h < t.held[i]; h++) {
      const gain = setValue(rules, i + 1, sets[i] + 1) - setValue(rules, i + 1, sets[i]);
      if (gain <= 0) return null;
      sets[i] += 1;
      score += gain;
      parts.push(part(`${i + 1} added to set`, [i + 1], gain));
    }
  }
  const reading = bestPartition(ctx, t.pending, carry.fills, t.pairs);
  if (reading === null) return null;
  const filled = reading.parts.filter((p) => p.name.startsWith('fills straight')).map((p) => p.dice[0]);
  const fills = new Set(carry.fills.filter((f) => !filled.includes(f)));
  t.openFills.forEach((f) => fills.add(f));
  const newCarry = { sets, fills: ascending([...fills]), pairs: reading.upgraded ? [] : t.pairs };
  const result = { score: score + reading.score, carry: newCarry, parts: [...parts, ...reading.parts], wins: false };
  return { result, reading: t.reading };
}

function readTaps(ctx, taps, carry) {
  let t = tapStart(carry);
  for (const d of taps) t = tap(ctx, t, d);
  return tapFinish(ctx, t, carry);
}

// ----------------------------------------------------------------------------------------
// every reading of a multiset over its tap orders (_tap_readings, _readable_order)

function tapReadings(ctx, sub, carry) {
  const key = `${sub}|${carryKey(carry)}`;
  const known = ctx.tapReadings.get(key);
  if (known !== undefined) return known;
  const found = new Map();
  const seen = new Set();
  const rest = sub.slice();
  const taps = [];
  const total = sum(sub);
  const walk = (t) => {
    const state = walkKey(rest, t);
    if (seen.has(state)) return;
    seen.add(state);
    if (taps.length === total) {
      const done = tapFinish(ctx, t, carry);
      const outcome = done && `${done.result.score}|${carryKey(done.result.carry)}`;
      if (done && !found.has(outcome)) found.set(outcome, { taps: taps.slice(), ...done });
      return;
    }
    for (let i = 0; i < 6; i++) {
      if (!rest[i]) continue;
      rest[i] -= 1;
      taps.push(i + 1);
      walk(tap(ctx, t, i + 1));
      taps.pop();
      rest[i] += 1;
    }
  };
  walk(tapStart(carry));
  const readings = [...found.values()].map((r) => readableOrder(ctx, carry, r));
  return ctx.tapReadings.set(key, readings);
}

/** Prefer the tap order that taps each locked combination together, in the order they lock,
 * then the other dice ascending, when it gives the same reading. */
function readableOrder(ctx, carry, found) {
  const grouped = [];
  const rest = countsOf(found.taps);
  for (const p of found.result.parts) {
    if (!GROUPED_PREFIXES.some((prefix) => p.name.startsWith(prefix)) && !p.name.includes(' completes ')) continue;
    for (const d of p.dice) {
      if (rest[d - 1]) {
        rest[d - 1] -= 1;
        grouped.push(d);
      }
    }
  }
  grouped.push(...diceOf(rest));
  if (sameList(grouped, found.taps)) return found;
  const again = readTaps(ctx, grouped, carry);
  const same = again && again.result.score === found.result.score && carryKey(again.result.carry) === carryKey(found.result.carry);
  return same ? { taps: grouped, ...again } : found;
}

// ----------------------------------------------------------------------------------------
// the roll-level bonuses and the keeps of a roll (_roll_level, _sub_readings, keep_options)

function rollLevel(ctx, result, taps, counts, carry, full) {
  const { rules } = ctx;
  if (result === null) {
    if (full && rules.nothing_bonus && !hasScoringKeep(rules, taps, carry)) {
      return { score: rules.nothing_bonus, carry, parts: [part('nothing scores', ascending(taps), rules.nothing_bonus)], wins: false };
    }
    return null;
  }
  let out = result;
  if (full && rules.all_dice_bonus) {
    const bonus = part(`all ${rules.num_dice} dice`, [], rules.all_dice_bonus);
    out = { ...out, score: out.score + rules.all_dice_bonus, parts: [...out.parts, bonus] };
  }
  if (rules.six_kind_wins && Math.max(...counts) >= 6) out = { ...out, wins: true };
  return out;
}

function subReadings(ctx, sub, carry, fresh) {
  const key = `${sub}|${carryKey(carry)}|${fresh}`;
  const known = ctx.subReadings.get(key);
  if (known !== undefined) return known;
  const full = (taps) => fresh && taps.length === ctx.rules.num_dice;
  const out = [];
  for (const { taps, result, reading } of tapReadings(ctx, sub, carry)) {
    const res = rollLevel(ctx, result, taps, sub, carry, full(taps));
    if (res !== null) out.push({ taps, result: res, reading });
  }
  if (!out.length && fresh) {
    const taps = diceOf(sub);
    const res = rollLevel(ctx, readTaps(ctx, taps, carry)?.result ?? null, taps, sub, carry, full(taps));
    if (res !== null) out.push({ taps, result: res, reading: '' });
  }
  return ctx.subReadings.set(key, out);
}

function optionOf(sub, { taps, result, reading }) {
  return deepFreeze({
    dice: diceOf(sub),
    taps: taps.slice(),
    score: result.score,
    carry: { sets: result.carry.sets.slice(), fills: result.carry.fills.slice(), pairs: result.carry.pairs.slice() },
    wins: result.wins,
    reading,
    fills: result.parts.some((p) => p.name.startsWith('fills straight')),
    parts: result.parts.map((p) => ({ name: p.name, dice: p.dice.slice(), points: p.points })),
  });
}

/**
 * @typedef {object} Carry
 * @property {number[]} sets dice count of the working set of each face 1..6 (0: no set)
 * @property {number[]} fills faces that would fill a small straight made on an earlier keep, sorted
 * @property {number[]} pairs faces of working three pairs that a new pair can turn into four pairs
 */

/**
 * @typedef {object} KeepOption
 * @property {number[]} dice the kept faces, sorted
 * @property {number[]} taps a tap order that reads this way (the canonical one)
 * @property {number} score points of the keep, roll-level bonuses included
 * @property {Carry} carry what stays working after the keep
 * @property {boolean} wins six of one face under six_kind_wins
 * @property {string} reading the strongest combination the taps lock: 'large', 'small', 'pairs' or ''
 * @property {boolean} fills whether a die fills a straight made on an earlier keep
 * @property {{name: string, dice: number[], points: number}[]} parts the scoring parts, as Python's
 */

/**
 * Every legal keep of `roll`, each distinct (dice, score, carry) outcome once, in the order of
 * greed_env.rules.scoring.keep_options. The result is cached and frozen.
 *
 * @param {object} rules the JSON of Rules.to_dict(), carry_over: true
 * @param {number[]} roll the faces showing
 * @param {Carry} [carry] what is working from earlier keeps this turn
 * @param {boolean} [fresh] whether the roll is a full fresh roll (the roll-level bonuses apply
 *   to a keep of all its dice)
 * @returns {KeepOption[]}
 * @throws {Error} for order-free rules, working_set_claims: false, or a face outside 1..6
 */
export function keepOptions(rules, roll, carry = EMPTY_CARRY, fresh = true) {
  const ctx = contextOf(rules);
  const counts = countsOf(roll);
  const working = carryOf(carry);
  const key = `${counts}|${carryKey(working)}|${Boolean(fresh)}`;
  const known = ctx.options.get(key);
  if (known !== undefined) return known;
  const full = Boolean(fresh) && roll.length === rules.num_dice;
  const options = [];
  for (const sub of subMultisets(counts)) {
    const readings = subReadings(ctx, sub, working, full && sum(sub) === roll.length);
    for (const reading of readings) options.push(optionOf(sub, reading));
  }
  return ctx.options.set(key, Object.freeze(options));
}

/**
 * Whether any die or combination of `roll` scores, the nothing bonus not counted
 * (greed_env.rules.scoring.has_scoring_keep).
 *
 * @param {object} rules the JSON of Rules.to_dict(), carry_over: true
 * @param {number[]} roll the faces showing
 * @param {Carry} [carry] what is working from earlier keeps this turn
 * @returns {boolean}
 */
export function hasScoringKeep(rules, roll, carry = EMPTY_CARRY) {
  const ctx = contextOf(rules);
  const counts = countsOf(roll);
  const working = carryOf(carry);
  const key = `${counts}|${carryKey(working)}`;
  const known = ctx.scoring.get(key);
  if (known !== undefined) return known;
  const scores = subMultisets(counts).some((sub) => subReadings(ctx, sub, working, false).length > 0);
  return ctx.scoring.set(key, scores);
}

/**
 * Most points any single keep of `roll` scores, 0 if none (greed_env.rules.scoring.best_keep_score).
 *
 * @param {object} rules the JSON of Rules.to_dict(), carry_over: true
 * @param {number[]} roll the faces showing
 * @param {Carry} [carry] what is working from earlier keeps this turn
 * @param {boolean} [fresh] whether the roll is a full fresh roll
 * @returns {number}
 */
export function bestKeepScore(rules, roll, carry = EMPTY_CARRY, fresh = true) {
  return keepOptions(rules, ascending(roll), carry, fresh).reduce((best, o) => Math.max(best, o.score), 0);
}
