/**
 * The streams of docs/contract.md by name, in the order `run all` takes them: the bottom of
 * src/streams/. A pass names its own stream from here (`'balance' satisfies StreamName`), and the
 * registry (registry.ts, the top of the folder) is keyed by exactly these names, so a pass never
 * imports the registry that loads it.
 */
export const STREAM_NAMES = [
  'restaurants',
  'checkins',
  'locations',
  'challenges',
  'balance',
  'payment_intents',
  'alerts',
  'members',
] as const;

export type StreamName = (typeof STREAM_NAMES)[number];

export function isStreamName(name: string): name is StreamName {
  return (STREAM_NAMES as readonly string[]).includes(name);
}
