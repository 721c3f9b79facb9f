// The JavaScript reference host of docs/portable.md in one import: the portable generator,
// the bundle, the keep reader, the turn flow, the observation, the ONNX evaluator, the bots
// and game records (greed_env/portable, greed_env/rules, greed_env/spaces and
// greed_env/bots, ported).

export { PortableRng, seedOf } from './rng.mjs';
export { BUNDLE_FORMAT, BUNDLE_VERSION, BundleError, carryKey, checkCard, keepKey, loadBundle } from './bundle.mjs';
export { bestKeepScore, hasScoringKeep, keepOptions } from './keeps.mjs';
export {
  applyMove, applyRoll, canBank, canRerollAll, IllegalMove, isChance, isOver, keepMoves, legalActions, legalMove,
  legalMoves, moveText, newGame, PHASE_NAMES, playOut, sampleRoll, stateFromJson, stateToJson,
} from './game.mjs';
export { encodeObservation, OBS_DIM } from './observation.mjs';
export { loadOnnx, maskedArgmax, SUPPORTED_OPS } from './onnx.mjs';
export { NEVER, onnxBot, randomBot } from './bots.mjs';
export { distinctNames, RECORD_FORMAT, RECORD_VERSION, recordGame, Recorder, recordJson, stateSummary } from './record.mjs';
