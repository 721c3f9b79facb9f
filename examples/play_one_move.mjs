// One move of a shipped bot in Node, with the JavaScript host and no Python at all.
//
//   greed export bundle --rules progressive --out progressive.json      (once, with Python)
//   node examples/play_one_move.mjs progressive.json agents/progressive/ppo-duel-kick.onnx
//
// The bot's card lies beside its .onnx file. Swap the imports' path for where web/host/ is.
import { readFileSync } from 'node:fs';
import {
  applyRoll, isChance, legalMoves, loadBundle, newGame, onnxBot, PortableRng, sampleRoll,
} from '../web/host/index.mjs';

const [bundleFile, onnxFile, seed = '7'] = process.argv.slice(2);
const bundle = loadBundle(JSON.parse(readFileSync(bundleFile, 'utf8')));      // refuses another version
const card = JSON.parse(readFileSync(onnxFile.replace(/\.onnx$/, '.json'), 'utf8'));
const bot = onnxBot(bundle, card, readFileSync(onnxFile));                   // refuses other rules

const rng = new PortableRng(BigInt(seed));       // the dice Python's PortableRng rolls too
let state = newGame(bundle, 2, 0);                // two players, seat 0 starts
while (isChance(state)) state = applyRoll(bundle, state, sampleRoll(bundle, state, rng));

console.log(`${bundle.rules_name}: seat ${state.player} rolled ${state.roll.join(',')}`);
console.log(`legal: ${legalMoves(bundle, state).map((m) => m.label).join(' | ')}`);
const move = bot.act(state, rng);                 // observation, legal logits, greedy argmax
console.log(`${card.id} plays ${move.label} (action ${move.action}, taps ${move.taps ?? '-'})`);
