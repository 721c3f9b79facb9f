// Plays positions written by test_host_playout.py on to the end with random players, through
// web/host/game.mjs (playOut), and prints what happened: the events of each, as a game record
// logs them, and the summary of its last position.
//
// usage: node check_playout.mjs STARTS.json
//   STARTS.json: {"bundle": PATH, "starts": [{"state": {...}, "seed": S}, ...]}

import { readFileSync } from 'node:fs';

import { loadBundle } from '../../web/host/bundle.mjs';
import { moveText, playOut, stateFromJson } from '../../web/host/game.mjs';
import { randomBot } from '../../web/host/bots.mjs';
import { stateSummary } from '../../web/host/record.mjs';
import { PortableRng } from '../../web/host/rng.mjs';

function playFrom(bundle, start) {
  const state = stateFromJson(start.state);
  const bots = state.scores.map(() => randomBot(bundle));
  const events = [];
  const onStep = (before, event, after) => {
    events.push(Array.isArray(event) ? { player: before.player, roll: event } : { player: before.player, move: moveText(event) });
  };
  const end = playOut(bundle, state, bots, new PortableRng(start.seed), { onStep });
  return { events, final: stateSummary(end) };
}

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const bundle = loadBundle(readFileSync(spec.bundle, 'utf8'));
process.stdout.write(JSON.stringify(spec.starts.map((start) => playFrom(bundle, start))));
