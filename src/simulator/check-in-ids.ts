import { hashString, mix32 } from './prng.js';

/**
 * Check-in UUIDs are derived from the row's stable sequence number, so `/check_ins/{id}` decodes the id
 * back to the row instead of keeping a Map of a million strings. The last 12 hex digits are an invertible
 * 48-bit scramble of the sequence number; the rest is a hash of it, checked on decode so random UUIDs
 * do not alias real rows.
 */
export interface CheckInIdCodec {
  encode(seq: number): string;
  /** The sequence number, or null when the id was not minted by this codec. */
  decode(id: string): number | null;
}

const MASK48 = (1n << 48n) - 1n;
const MULTIPLIER = 0x5deece66dn; // odd, hence invertible modulo 2^48

function inverseModulo48(odd: bigint): bigint {
  let inverse = odd;
  // Newton iteration doubles the number of correct low bits each step: 3 -> 6 -> ... -> 96 >= 48.
  for (let i = 0; i < 5; i++) inverse = (inverse * (2n - odd * inverse)) & MASK48;
  return inverse;
}

const INVERSE = inverseModulo48(MULTIPLIER);
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-([0-9a-f]{12})$/;

export function createCheckInIdCodec(seed: number): CheckInIdCodec {
  const key =
    (BigInt(hashString('check-in-key', seed)) << 16n) ^ BigInt(hashString('check-in-low', seed) & 0xffff);
  const salt = hashString('check-in-salt', seed);
  const encode = (seq: number): string => {
    let x = (BigInt(seq) ^ key) & MASK48;
    x = (x * MULTIPLIER) & MASK48;
    x ^= x >> 24n;
    const a = mix32(seq ^ salt);
    const b = mix32(a ^ 0x9e3779b9);
    const h = a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
    const variant = '89ab'[b & 3] ?? '8';
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(12, 15)}-${variant}${h.slice(13, 16)}-${x.toString(16).padStart(12, '0')}`;
  };
  return {
    encode,
    decode: (id) => {
      const match = UUID_PATTERN.exec(id.toLowerCase());
      if (!match?.[1]) return null;
      let x = BigInt(`0x${match[1]}`);
      x ^= x >> 24n;
      x = (x * INVERSE) & MASK48;
      const seq = x ^ key;
      if (seq > 0xffffffffn) return null;
      const candidate = Number(seq);
      return encode(candidate) === id.toLowerCase() ? candidate : null;
    },
  };
}
