import pg from 'pg';
import type { Probe } from './check-lines.js';
import { withTimeout } from '../with-timeout.js';

/** What the connection path to Postgres is, as two client connections can tell. */
export interface TopologyFindings {
  /**
   * `direct`: each client connection kept one server session of its own (straight to Postgres,
   * or a session-mode pooler: the same to us). `transaction-pooler`: transactions of one client
   * connection ran on different server sessions, or two client connections shared one.
   * `statement-pooler`: transactions are refused.
   */
  mode: 'direct' | 'transaction-pooler' | 'statement-pooler';
  evidence: string;
}

const ROUNDS = 3;

/**
 * The probe: client B asks its backend pid; client C opens a transaction (pinning whatever server
 * session it got) and asks its pid; B asks again. Straight to Postgres, B sees one pid and C
 * another, always. Through a transaction-mode pooler B's first session is free between its
 * statements, so C usually gets it (two clients, one backend), and with C pinned there B's next
 * statement must run elsewhere (one client, two backends). Three rounds, so that other traffic
 * on the pooler cannot hide it.
 */
export function probeConnectionTopology(url: string, timeoutMs: number): Promise<Probe<TopologyFindings>> {
  const b = new pg.Client({ connectionString: url, application_name: 'rewards-etl doctor' });
  const c = new pg.Client({ connectionString: url, application_name: 'rewards-etl doctor' });
  b.on('error', () => undefined);
  c.on('error', () => undefined);
  const pidOf = async (client: pg.Client) =>
    Number((await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid);
  const run = async (): Promise<TopologyFindings> => {
    await Promise.all([b.connect(), c.connect()]);
    for (let round = 1; round <= ROUNDS; round++) {
      const first = await pidOf(b);
      try {
        await c.query('begin');
      } catch (error) {
        if (/statement pooling/i.test((error as Error).message)) {
          return { mode: 'statement-pooler', evidence: (error as Error).message };
        }
        throw error;
      }
      const pinned = await pidOf(c);
      const second = await pidOf(b);
      await c.query('commit');
      if (pinned === first) {
        return {
          mode: 'transaction-pooler',
          evidence: `two client connections were served by one server backend (pid ${first})`,
        };
      }
      if (second !== first) {
        return {
          mode: 'transaction-pooler',
          evidence: `one client connection was served by backends ${first} and ${second}`,
        };
      }
    }
    return { mode: 'direct', evidence: `each client connection kept its own backend over ${ROUNDS} rounds` };
  };
  return withTimeout(run(), timeoutMs, 'connection topology')
    .then((value): Probe<TopologyFindings> => ({ ok: true, value }))
    .catch((error: unknown): Probe<TopologyFindings> => ({ ok: false, error }))
    .finally(() => Promise.all([b.end().catch(() => undefined), c.end().catch(() => undefined)]));
}
