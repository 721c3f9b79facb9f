// Reading a bot bundle (docs/portable.md, "The bundle" and "Versions"): the checks of
// greed_env/portable/bundle.py (check_bundle) and the indexes a host needs to find an action
// id and a keep-table row quickly.

/** The `format` of a bot bundle. */
export const BUNDLE_FORMAT = 'greed_env.bot_bundle';
/** The bundle version this host reads (docs/portable.md describes it). */
export const BUNDLE_VERSION = 1;

/** A bundle or a bot card this host refuses; the message is one line. */
export class BundleError extends Error {
  constructor(message) {
    super(message);
    this.name = 'BundleError';
  }
}

/**
 * The key of a carry-over in `index.carries`: its sets, fills and pairs as text.
 *
 * @param {{sets: number[], fills: number[], pairs: number[]}} carry
 * @returns {string}
 */
export function carryKey(carry) {
  return `${carry.sets.join('')}|${carry.fills.join('')}|${carry.pairs.join('')}`;
}

/**
 * The catalog key of a keep: its sorted dice, reading and fill flag.
 *
 * @param {number[]} dice sorted faces
 * @param {string} reading '', 'pairs', 'small' or 'large'
 * @param {boolean} fills whether it is the alternate (fill) reading
 * @returns {string}
 */
export function keepKey(dice, reading, fills) {
  return `${dice.join('')}|${reading}|${fills ? 1 : 0}`;
}

function checkFormat(json) {
  if (json === null || typeof json !== 'object' || Array.isArray(json) || json.format !== BUNDLE_FORMAT) {
    throw new BundleError(`not a greed_env bot bundle (format '${BUNDLE_FORMAT}' expected)`);
  }
  if (json.bundle_version !== BUNDLE_VERSION) {
    throw new BundleError(`bundle version ${JSON.stringify(json.bundle_version)} is not ${BUNDLE_VERSION}, the version this host reads`);
  }
  for (const key of ['rules', 'catalog', 'observation', 'keeps', 'phases']) {
    if (!json[key] || typeof json[key] !== 'object') throw new BundleError(`bundle has no '${key}' object`);
  }
  if (json.keeps.mode !== 'table' && json.keeps.mode !== 'reader') {
    throw new BundleError(`bundle keeps mode ${JSON.stringify(json.keeps.mode)} is neither 'table' nor 'reader'`);
  }
}

function indexCatalog(catalog) {
  const kinds = new Map();
  const keeps = new Map();
  for (const action of catalog.actions) {
    if (action.kind === 'keep') keeps.set(keepKey(action.dice, action.reading, action.fills), action.id);
    else kinds.set(action.kind, action.id);
  }
  const alternates = new Set(catalog.alternates.map((a) => `${a.dice.join('')}|${a.reading}`));
  return { kinds, keeps, alternates };
}

function indexCarries(keeps) {
  const carries = new Map();
  if (keeps.mode === 'table') keeps.carries.forEach((c, i) => carries.set(carryKey(c), i));
  return carries;
}

/**
 * Read a bot bundle: check its format and version and index its catalog and keep table.
 *
 * The result has every key of the bundle's JSON (`rules`, `catalog`, `observation`, `keeps`,
 * ...) and `index`: `kinds` (move kind -> action id), `keeps` (keepKey(dice, reading, fills)
 * -> action id), `alternates` (the keeps with a fill alternate, as 'DICE|reading'),
 * `carries` (carryKey -> index in keeps.carries, table mode), and `phase` (name -> number).
 *
 * @param {object|string} json the bundle (parsed, or its text)
 * @returns {object} the bundle with its indexes
 * @throws {BundleError} not a bundle, another bundle version, or a key missing
 */
export function loadBundle(json) {
  let data = json;
  if (typeof json === 'string') {
    try {
      data = JSON.parse(json);
    } catch (error) {
      throw new BundleError(`the bundle is not JSON (${error.message})`);
    }
  }
  checkFormat(data);
  const { kinds, keeps, alternates } = indexCatalog(data.catalog);
  const phase = Object.fromEntries(data.phases.map((name, i) => [name, i]));
  const index = { kinds, keeps, alternates, carries: indexCarries(data.keeps), phase };
  return Object.freeze({ ...data, index });
}

/**
 * Refuse a bot that cannot play with `bundle` (docs/portable.md, "Versions"): another bundle
 * version, other rules, a catalog version or size the bundle does not list, or another
 * observation version (version 1 still reads under rules without fixed rounds).
 *
 * @param {object} bundle a loaded bundle (loadBundle)
 * @param {object} card the bot's card (its .json)
 * @throws {BundleError} naming the first difference, one line
 */
export function checkCard(bundle, card) {
  const id = card?.id;
  const want = card?.bundle_version ?? BUNDLE_VERSION;
  if (want !== bundle.bundle_version) {
    throw new BundleError(`bot ${id} plays with bundle version ${JSON.stringify(want)}, the bundle is version ${bundle.bundle_version}`);
  }
  if (card.rules_fingerprint !== bundle.rules_fingerprint) {
    throw new BundleError(
      `bot ${id} was made for rules ${card.rules_fingerprint}, the bundle is for ${bundle.rules_fingerprint} (${bundle.rules_name})`,
    );
  }
  const sizes = bundle.catalog.sizes;
  const version = String(card.action_catalog_version);
  if (!(version in sizes) || sizes[version] !== card.num_actions) {
    throw new BundleError(
      `bot ${id} has action catalog version ${version} with ${card.num_actions} actions; the bundle knows versions ${Object.keys(sizes).join(', ')}`,
    );
  }
  const obs = card.obs_spec_version;
  if (!(obs === bundle.obs_spec_version || (obs === 1 && (bundle.rules.rounds ?? 0) === 0))) {
    throw new BundleError(`bot ${id} reads observation spec version ${JSON.stringify(obs)}, the bundle encodes version ${bundle.obs_spec_version}`);
  }
}
