// Game records (docs/portable.md, "Game records"): a port of greed_env/rules/record.py
// (Recorder, state_summary, distinct_names, record_game). The record is the
// `greed_env.game_record` JSON that Python's `greed replay` plays again and checks.

import { applyMove, applyRoll, isOver, legalMove, moveText, newGame, PHASE_NAMES, playOut, sampleRoll } from './game.mjs';

/** The `format` of a game record. */
export const RECORD_FORMAT = 'greed_env.game_record';
/** The record version written (record.py RECORD_VERSION). */
export const RECORD_VERSION = 1;

/**
 * The summary of a position that a record stores as `final` (record.py state_summary).
 *
 * @param {object} state
 * @returns {object}
 */
export function stateSummary(state) {
  return {
    phase: PHASE_NAMES[state.phase], player: state.player, scores: [...state.scores], turn_total: state.turn_total,
    rounds: state.rounds, finishers: [...state.finishers], winners: [...state.winners], shares: [...state.shares],
  };
}

/**
 * `names` with every repeat numbered, so each seat has a name of its own
 * (record.py distinct_names): ['random', 'random'] -> ['random', 'random#2'].
 *
 * @param {string[]} names
 * @returns {string[]}
 */
export function distinctNames(names) {
  const out = [];
  for (const name of names) {
    let shown = name;
    let k = 1;
    while (out.includes(shown) || (k > 1 && names.includes(shown))) {
      k += 1;
      shown = `${name}#${k}`;
    }
    out.push(shown);
  }
  return out;
}

/** Plays rolls and moves through the turn flow and logs each as a record event. */
export class Recorder {
  /**
   * @param {object} bundle a loaded bundle
   * @param {number} numPlayers
   * @param {{firstPlayer?: number|null, seed?: number|bigint|null, players?: string[]}} [options]
   *   the first player given to newGame (null: the rules' way), and the informative seed and
   *   player names
   */
  constructor(bundle, numPlayers, { firstPlayer = null, seed = null, players = [] } = {}) {
    this.bundle = bundle;
    this.numPlayers = numPlayers;
    this.firstPlayer = firstPlayer;
    this.seed = seed;
    this.players = distinctNames(players);
    this.events = [];
    this.states = [newGame(bundle, numPlayers, firstPlayer)];
  }

  /** The current position. */
  get state() {
    return this.states[this.states.length - 1];
  }

  /**
   * Apply the dice of the chance position and log them.
   *
   * @param {number[]} faces
   * @returns {object} the next position
   */
  roll(faces) {
    const before = this.state;
    const after = applyRoll(this.bundle, before, faces);
    this.events.push({ player: before.player, roll: faces.slice().sort((a, b) => a - b) });
    this.states.push(after);
    return after;
  }

  /**
   * Draw the dice from `rng`, apply and log them.
   *
   * @param {{integers: (n: number) => number}} rng
   * @returns {object} the next position
   */
  sample(rng) {
    return this.roll(sampleRoll(this.bundle, this.state, rng));
  }

  /**
   * Play a move (one of legalMoves, or its text) and log its text.
   *
   * @param {object|string} move
   * @returns {object} the next position
   */
  move(move) {
    const before = this.state;
    const played = legalMove(this.bundle, before, move);
    const after = applyMove(this.bundle, before, played);
    this.events.push({ player: before.player, move: moveText(played) });
    this.states.push(after);
    return after;
  }

  /**
   * Log a roll (its faces) or a move applied elsewhere, e.g. by playOut's onStep; `before`
   * must be the current position (record.py Recorder.observe).
   *
   * @param {object} before
   * @param {number[]|object} event
   * @param {object} after
   */
  observe(before, event, after) {
    if (before !== this.state) throw new Error('observed a step from a position other than the recorder\'s');
    if (Array.isArray(event)) this.events.push({ player: before.player, roll: event.slice().sort((a, b) => a - b) });
    else this.events.push({ player: before.player, move: moveText(event) });
    this.states.push(after);
  }

  /**
   * The record so far, its `final` the current position (record.py GameRecord.to_dict).
   *
   * @returns {object}
   */
  record() {
    return {
      format: RECORD_FORMAT, version: RECORD_VERSION, rules: this.bundle.rules, num_players: this.numPlayers,
      first_player: this.firstPlayer, seed: this.seed, players: [...this.players],
      events: this.events.map((e) => ({ ...e })), final: stateSummary(this.state),
    };
  }
}

/**
 * A record as JSON text; a BigInt seed is written as the integer it is.
 *
 * @param {object} record
 * @returns {string}
 */
export function recordJson(record) {
  const seed = typeof record.seed === 'bigint' ? record.seed.toString() : null;
  const text = JSON.stringify(seed === null ? record : { ...record, seed: '\u0000seed' }, null, 1);
  return seed === null ? text : text.replace('"\\u0000seed"', seed);
}

/**
 * Play one game to the end, a bot per seat, and return its Recorder (record.py record_game):
 * every die and every bot's random choice comes from `rng`.
 *
 * @param {object} bundle a loaded bundle
 * @param {{act: Function, name?: string}[]} bots one per seat
 * @param {object} rng a PortableRng
 * @param {{seed?: number|bigint|null, firstPlayer?: number|null, players?: string[], maxSteps?: number}} [options]
 *   players: the names to record (default: the bots' names)
 * @returns {Recorder}
 * @throws {Error} the game did not end within maxSteps events
 */
export function recordGame(bundle, bots, rng, { seed = null, firstPlayer = null, players, maxSteps = 1_000_000 } = {}) {
  const names = players ?? bots.map((b) => b.name ?? 'bot');
  const rec = new Recorder(bundle, bots.length, { firstPlayer, seed, players: names });
  const end = playOut(bundle, rec.state, bots, rng, { onStep: (before, event, after) => rec.observe(before, event, after), maxSteps });
  if (!isOver(end)) throw new Error(`the game did not end within ${maxSteps} events`);
  return rec;
}
