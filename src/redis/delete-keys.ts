import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connection.js';

/**
 * Deletes every key that starts with `prefix` (SCAN, never KEYS, so a busy server is not blocked).
 * A Cluster answers SCAN per node: each primary is scanned. The prefix carries the project's hash tag
 * there, so the keys of one batch share a slot and one DEL takes them all.
 */
export async function deleteKeysWithPrefix(client: RedisClient, prefix: string): Promise<number> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${globEscape(prefix)}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await node.del(...keys);
    } while (cursor !== '0');
  }
  return deleted;
}

/** SCAN patterns are globs: `*`, `?`, `[` and `\` in a prefix must match themselves. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
