// Record schemas and normalizers of the partner API: raw JSON in, typed domain records (or
// rejections with a reason) out. Nothing here does I/O or throws on input.

export * from './parse.js';
export * from './primitives.js';
export * from './content-hash.js';
export * from './pagination.js';
export * from './list-envelopes.js';
export * from './restaurant.js';
export * from './location.js';
export * from './check-in.js';
export * from './member.js';
export * from './payment-intent.js';
export * from './challenge.js';
export * from './balance.js';
