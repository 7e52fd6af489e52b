/** Seeded, deterministic pseudo-random numbers: same seed and stream name => same sequence. */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, maxExclusive). */
  int(maxExclusive: number): number;
  /** Integer in [min, max] inclusive. */
  between(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
  uuid(): string;
  alphanumeric(length: number): string;
}

/** A 32-bit integer finalizer (murmur3 fmix); used to hash seeds and sequence numbers. */
export function mix32(input: number): number {
  let x = input >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

export function hashString(text: string, seed = 0): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix32(h);
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Independent streams per purpose keep ids stable when another stream's draw count changes. */
export function createPrng(seed: number, stream = ''): Prng {
  let state = hashString(stream, seed);
  const next = (): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (maxExclusive: number): number => Math.floor(next() * maxExclusive);
  // Ids are drawn by the hundred thousand at production size: built from character codes in one
  // allocation each, with the same draws and the same text as four zero-padded hex words would give.
  const hex = new Array<number>(32);
  const uuid = new Array<number>(36);
  return {
    next,
    int,
    between: (min, max) => min + int(max - min + 1),
    pick: <T>(items: readonly T[]): T => {
      const item = items[int(items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    chance: (probability) => next() < probability,
    uuid: () => {
      for (let w = 0; w < 4; w++) {
        const word = Math.floor(next() * 4294967296);
        for (let d = 0; d < 8; d++) hex[w * 8 + d] = HEX_CODES[(word >>> (28 - 4 * d)) & 15] ?? 48;
      }
      const variant = VARIANT_CODES[int(4)] ?? 56;
      // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx from hex[0..8], [8..12], [13..16], [17..20], [20..32]
      let at = 0;
      const copy = (from: number, to: number): void => {
        for (let i = from; i < to; i++) uuid[at++] = hex[i] ?? 48;
      };
      copy(0, 8);
      uuid[at++] = DASH;
      copy(8, 12);
      uuid[at++] = DASH;
      uuid[at++] = FOUR;
      copy(13, 16);
      uuid[at++] = DASH;
      uuid[at++] = variant;
      copy(17, 20);
      uuid[at++] = DASH;
      copy(20, 32);
      return String.fromCharCode(...uuid);
    },
    alphanumeric: (length) => {
      const codes = new Array<number>(length);
      for (let i = 0; i < length; i++) codes[i] = ALPHANUMERIC.charCodeAt(int(ALPHANUMERIC.length));
      return String.fromCharCode(...codes);
    },
  };
}

const HEX_CODES = [...'0123456789abcdef'].map((c) => c.charCodeAt(0));
const VARIANT_CODES = [...'89ab'].map((c) => c.charCodeAt(0));
const DASH = '-'.charCodeAt(0);
const FOUR = '4'.charCodeAt(0);
