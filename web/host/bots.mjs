// Bots that play a position (docs/portable.md, "The bot"): an exported ONNX policy, greedy or
// sampling, as greed_env/bots/onnx_backend.py (OnnxBot.act, masked_argmax), and the uniformly
// random player of greed_env/bots/base.py (RandomBot.act). A bot is {name, act(state, rng)};
// act returns one of legalMoves(bundle, state).

import { checkCard } from './bundle.mjs';
import { legalMoves } from './game.mjs';
import { encodeObservation, OBS_DIM } from './observation.mjs';
import { loadOnnx, maskedArgmax } from './onnx.mjs';

/** The logit of the ids a bot of an older catalog lacks: the lowest float32. */
export const NEVER = -3.4028234663852886e38;

function padded(raw, batch, width, n) {
  if (width === n) return raw;
  const out = new Float32Array(batch * n).fill(NEVER);
  for (let i = 0; i < batch; i++) out.set(raw.subarray(i * width, (i + 1) * width), i * n);
  return out;
}

function maskOf(moves, n) {
  const mask = new Uint8Array(n);
  for (const m of moves) mask[m.action] = 1;
  return mask;
}

/** One draw from the softmax of the legal logits / temperature, in float64. */
function sample(row, moves, temperature, rng) {
  const z = moves.map((m) => row[m.action] / temperature);
  const top = Math.max(...z);
  const weights = z.map((x) => Math.exp(x - top));
  let u = (rng.nextU32() / 4294967296) * weights.reduce((s, w) => s + w, 0);
  for (let k = 0; k < moves.length; k++) {
    u -= weights[k];
    if (u < 0) return moves[k];
  }
  return moves[moves.length - 1];
}

/**
 * A bot playing an exported ONNX policy.
 *
 * Greedy by default: the legal action with the highest logit, the lowest id on exact ties.
 * With a temperature above 0 it samples from the softmax of the legal logits / temperature,
 * with one `nextU32()` of the rng passed to act (Python samples with numpy, so sampled games
 * are not Python's).
 *
 * @param {object} bundle a loaded bundle (loadBundle)
 * @param {object} card the bot's card
 * @param {Uint8Array|ArrayBuffer} bytes the .onnx file
 * @param {{temperature?: number}} [options]
 * @returns {{name: string, card: object, temperature: number, logits: Function, act: Function}}
 *   `logits(observations, batch, wanted?)`: the padded logits (batch x catalog size) of
 *   observations (batch x 106 float32), with `wanted` (a list of action ids per row, e.g. the
 *   legal ones) possibly only those (see onnx.mjs run); `act(state, rng)`: the bot's move
 * @throws {BundleError} a card of other rules or versions; Error: a graph onnx.mjs cannot run
 */
export function onnxBot(bundle, card, bytes, { temperature = 0 } = {}) {
  checkCard(bundle, card);
  if (!(temperature >= 0)) throw new RangeError(`temperature must be >= 0, got ${temperature}`);
  const model = loadOnnx(bytes);
  const n = bundle.catalog.n;
  const width = card.num_actions;
  if (model.inputDim !== OBS_DIM) throw new Error(`bot ${card.id} reads ${model.inputDim} numbers, not the ${OBS_DIM} of an observation`);
  if (model.outputDim !== null && model.outputDim !== width) throw new Error(`bot ${card.id} has ${model.outputDim} logits, its card says ${width}`);
  const logits = (observations, batch, wanted = null) => {
    const columns = wanted && wanted.map((ids) => ids.filter((a) => a < width));
    return padded(model.run(observations, batch, columns), batch, width, n);
  };
  const act = (state, rng) => {
    const moves = legalMoves(bundle, state);
    if (!moves.length) throw new Error('no legal moves: the position is a chance node or the game is over');
    const row = logits(encodeObservation(bundle, state), 1, [moves.map((m) => m.action)]);
    if (temperature > 0) return sample(row, moves, temperature, rng);
    const action = maskedArgmax(row, maskOf(moves, n));
    return moves.find((m) => m.action === action);
  };
  return Object.freeze({ name: card.id, card, temperature, logits, act });
}

/**
 * The uniformly random player: `rng.integers(number of legal moves)`-th legal move, as
 * Python's RandomBot draws it (so a seeded game is the same game in both).
 *
 * @param {object} bundle a loaded bundle (whose legal moves it draws from)
 * @returns {{name: string, act: Function}}
 */
export function randomBot(bundle) {
  if (!bundle?.index) throw new TypeError('randomBot(bundle): pass the loaded bundle whose legal moves it draws from');
  const act = (state, rng) => {
    const moves = legalMoves(bundle, state);
    if (!moves.length) throw new Error('no legal moves: the position is a chance node or the game is over');
    return moves[rng.integers(moves.length)];
  };
  return Object.freeze({ name: 'random', act });
}
