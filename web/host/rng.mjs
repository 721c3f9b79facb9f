// The portable generator of docs/portable.md: xoshiro128** on four 32-bit words, seeded by
// SplitMix64, with bounded integers drawn by rejection. A port of
// greed_env/portable/rng.py (PortableRng), draw for draw: the same seed rolls the same dice
// and makes the same random choices in every host.
//
// BigInt is used for the 64-bit seeding only; draws use 32-bit integer math (Math.imul, >>> 0).

const MASK64 = (1n << 64n) - 1n;
const TWO32 = 4294967296;

function splitmix64(x) {
  const next = (x + 0x9e3779b97f4a7c15n) & MASK64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [next, z ^ (z >> 31n)];
}

function rotl(x, k) {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * A seed as a BigInt in 0 .. 2^64 - 1.
 *
 * @param {number|bigint} seed a safe integer or a BigInt
 * @returns {bigint}
 * @throws {RangeError} anything else
 */
export function seedOf(seed) {
  const ok = typeof seed === 'bigint' || (typeof seed === 'number' && Number.isSafeInteger(seed));
  const value = ok ? BigInt(seed) : -1n;
  if (value < 0n || value > MASK64) {
    throw new RangeError(`a portable seed is an integer 0..2**64-1 (a BigInt above 2**53), got ${String(seed)}`);
  }
  return value;
}

/** xoshiro128** seeded by SplitMix64 (greed_env.portable.PortableRng). */
export class PortableRng {
  /**
   * @param {number|bigint} seed an integer 0 .. 2^64 - 1 (a BigInt for seeds above 2^53)
   * @throws {RangeError} a seed outside that range or not an integer
   */
  constructor(seed) {
    this.seed = seedOf(seed);
    const [x, a] = splitmix64(this.seed);
    const [, b] = splitmix64(x);
    this.s = new Uint32Array([Number(a & 0xffffffffn), Number(a >> 32n), Number(b & 0xffffffffn), Number(b >> 32n)]);
  }

  /**
   * The next 32-bit output.
   *
   * @returns {number} an integer 0 .. 2^32 - 1
   */
  nextU32() {
    const s = this.s;
    const out = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return out;
  }

  /**
   * A uniform integer in [0, n) (numpy's one-argument `integers(n)`), by rejection.
   *
   * @param {number} n 1 .. 2^32
   * @returns {number}
   * @throws {RangeError} n outside 1 .. 2^32 or not an integer
   */
  integers(n) {
    if (!Number.isInteger(n) || n < 1 || n > TWO32) {
      throw new RangeError(`cannot draw from [0, ${n}): the range holds 1..2**32 integers`);
    }
    const limit = TWO32 - (TWO32 % n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }
}
