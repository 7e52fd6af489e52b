// Measurements for bench/full-world.ts: the alert receiver, the simulator's request log, the feed's
// lag, the spend ledger and the adaptive reads. Each reads what the pipeline wrote or what the
// simulator logged; none of them goes through the pipeline's rate limit.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { verifyRewardsSignature } from '../../src/alerts/verify-signature.js';
import type { RedisClient } from '../../src/redis/connection.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { DB } from '../../src/warehouse/schema.js';

export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? null;
}

export interface AlertReceiver {
  url: string;
  secret: string;
  /** First `payment_intent.paid` delivery per intent id: epoch ms received. */
  paidReceivedAt: Map<string, number>;
  badSignatures(): number;
  close(): void;
}

/** A webhook receiver that verifies every signature and notes when each paid alert arrived. */
export async function startAlertReceiver(): Promise<AlertReceiver> {
  const secret = `whsec_${randomBytes(16).toString('hex')}`;
  const paidReceivedAt = new Map<string, number>();
  let bad = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const now = Date.now();
      const rawBody = Buffer.concat(chunks).toString('utf8');
      if (!verifyRewardsSignature({ rawBody, header: req.headers['rewards-signature'], secret }).ok) bad++;
      const body = JSON.parse(rawBody) as { type?: string; data?: { payment_intent?: { id?: string } } };
      const id = body.data?.payment_intent?.id;
      if (body.type === 'payment_intent.paid' && id !== undefined && !paidReceivedAt.has(id))
        paidReceivedAt.set(id, now);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`,
    secret,
    paidReceivedAt,
    badSignatures: () => bad,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

export interface LoggedRequest {
  atMs: number;
  method: string;
  status: number;
  path: string;
}

/**
 * The simulator keeps its last 10,000 requests; this drains its log every few seconds (list and
 * clear in one synchronous step, so nothing falls between) so a long run loses none.
 */
export function collectRequests(sim: RunningSimulator, everyMs = 10_000) {
  const all: LoggedRequest[] = [];
  const drain = () => {
    const entries = sim.control.requests.list();
    sim.control.requests.clear();
    for (const entry of entries)
      all.push({ atMs: Date.parse(entry.at), method: entry.method, status: entry.status, path: entry.path });
  };
  const timer = setInterval(drain, everyMs);
  return {
    stop(): LoggedRequest[] {
      clearInterval(timer);
      drain();
      return all;
    },
  };
}

/** Token-endpoint POSTs in the simulator's log (member and service refreshes alike), and their answers. */
export function tokenEndpointPosts(requests: readonly LoggedRequest[]): { posts: number; ok: number } {
  const posts = requests.filter((r) => r.method === 'POST' && r.path.endsWith('/oauth/token'));
  return { posts: posts.length, ok: posts.filter((r) => r.status === 200).length };
}

/**
 * Token rows refreshed in [from, to) by their `last_refreshed_at` (the latest refresh only: a row
 * refreshed twice counts once), members' rows (`member:<id>`) apart from the service's.
 */
export async function tokenRowsRefreshed(db: Kysely<DB>, from: Date, to: Date) {
  const rows = await db
    .selectFrom('rewards.oauth_tokens')
    .select(['id'])
    .where('last_refreshed_at', '>=', from)
    .where('last_refreshed_at', '<', to)
    .execute();
  const members = rows.filter((row) => row.id.startsWith('member:')).length;
  return { members, other: rows.length - members };
}

/** The most requests in any 1 s span (sliding), every credential together. */
export function busiestSecond(requests: readonly LoggedRequest[]): number {
  const times = requests.map((r) => r.atMs).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= 1_000) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/** Check-ins the simulator's feed holds with `created_at` in [from, to): ids and creation times. */
export async function feedCheckInsCreated(
  sim: RunningSimulator,
  from: Date,
  to: Date,
): Promise<Map<string, number>> {
  const key = sim.control.credentials.mintApiKey(['read:checkins']);
  const created = new Map<string, number>();
  for (let page = 0; ; page++) {
    const url = `/v1/check_ins?created_after=${from.toISOString()}&created_before=${to.toISOString()}&page=${page}&page_size=500`;
    const answer = await sim.handle({ url, headers: { 'x-api-key': key, 'user-agent': 'bench' } });
    if (answer.status !== 200) throw new Error(`feed list answered ${answer.status}: ${answer.body}`);
    const body = JSON.parse(answer.body) as {
      check_ins: Array<{ id: string; created_at: string }>;
      pagination: { next_page: number | null };
    };
    for (const row of body.check_ins) created.set(row.id, Date.parse(row.created_at));
    if (body.pagination.next_page === null || body.check_ins.length === 0) return created;
  }
}

/**
 * Feed lag per check-in: its `created_at` to its row's `first_seen_at` in rewards.check_ins (the
 * Postgres time of the transaction that first wrote it). A check-in not in the warehouse by `endMs`
 * counts with its wait so far (a lower bound) and is counted in `unseen`.
 */
export async function feedLags(
  db: Kysely<DB>,
  created: Map<string, number>,
  endMs: number,
): Promise<{ lagsSeconds: number[]; unseen: number }> {
  const ids = [...created.keys()];
  const seen = new Map<string, number>();
  for (let i = 0; i < ids.length; i += 1_000) {
    const rows = await db
      .selectFrom('rewards.check_ins')
      .select(['id', 'first_seen_at'])
      .where('id', 'in', ids.slice(i, i + 1_000))
      .execute();
    for (const row of rows) seen.set(row.id, row.first_seen_at.getTime());
  }
  const lagsSeconds: number[] = [];
  let unseen = 0;
  for (const [id, createdAt] of created) {
    const at = seen.get(id);
    if (at === undefined) unseen++;
    lagsSeconds.push(((at ?? endMs) - createdAt) / 1000);
  }
  return { lagsSeconds, unseen };
}

/** Requests per stream the spend ledger counted in the minutes [fromMs, toMs] (every process). */
export async function ledgerSpend(
  redis: RedisClient,
  prefix: string,
  fromMs: number,
  toMs: number,
): Promise<Record<string, number>> {
  const spend: Record<string, number> = {};
  for (let minute = Math.floor(fromMs / 60_000); minute <= Math.floor(toMs / 60_000); minute++) {
    const fields = await redis.hgetall(`${prefix}:budget:spent:${minute}`);
    for (const [stream, count] of Object.entries(fields))
      spend[stream] = (spend[stream] ?? 0) + Number(count);
  }
  return spend;
}

export type ReadTotals = Map<string, { reads: number; unchanged: number; records: number }>;

/** rewards.record_reads summed per kind: reads and reads that found nothing new, so far. */
export async function readTotals(db: Kysely<DB>): Promise<ReadTotals> {
  const rows = await db
    .selectFrom('rewards.record_reads')
    .select([
      'kind',
      (eb) => eb.fn.sum<string>('reads').as('reads'),
      (eb) => eb.fn.sum<string>('unchanged_reads').as('unchanged'),
      (eb) => eb.fn.countAll<string>().as('records'),
    ])
    .groupBy('kind')
    .execute();
  return new Map(
    rows.map((row) => [
      row.kind,
      { reads: Number(row.reads), unchanged: Number(row.unchanged), records: Number(row.records) },
    ]),
  );
}

/** The run's reads and unchanged reads per kind (the increase from `before` to `after`), and their share. */
export function unchangedShares(before: ReadTotals, after: ReadTotals) {
  const perKind: Record<string, { reads: number; unchanged: number; unchangedShare: number | null }> = {};
  let reads = 0;
  let unchanged = 0;
  for (const [kind, end] of after) {
    const start = before.get(kind) ?? { reads: 0, unchanged: 0, records: 0 };
    const r = end.reads - start.reads;
    const u = end.unchanged - start.unchanged;
    perKind[kind] = { reads: r, unchanged: u, unchangedShare: r === 0 ? null : u / r };
    reads += r;
    unchanged += u;
  }
  return { perKind, share: reads === 0 ? null : unchanged / reads, reads };
}

/** Requests per stream from sync_runs: the passes started in [from, to). */
export async function syncRunRequests(db: Kysely<DB>, from: Date, to: Date): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('rewards.sync_runs')
    .select(['stream', (eb) => eb.fn.sum<string>('requests').as('requests')])
    .where('started_at', '>=', from)
    .where('started_at', '<', to)
    .groupBy('stream')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.stream, Number(row.requests)]));
}

/** Passes started in [from, to) per stream and status (sync_runs), e.g. `{ members: { ok: 3 } }`. */
export async function passesByStream(
  db: Kysely<DB>,
  from: Date,
  to: Date,
): Promise<Record<string, Record<string, number>>> {
  const rows = await db
    .selectFrom('rewards.sync_runs')
    .select(['stream', 'status', (eb) => eb.fn.countAll<string>().as('n')])
    .where('started_at', '>=', from)
    .where('started_at', '<', to)
    .groupBy(['stream', 'status'])
    .execute();
  const passes: Record<string, Record<string, number>> = {};
  for (const row of rows) passes[row.stream] = { ...passes[row.stream], [row.status]: Number(row.n) };
  return passes;
}

/** Start and end of each pass of `streams` started in [from, to), with its requests. */
export async function passTimes(db: Kysely<DB>, from: Date, to: Date, streams: string[]) {
  const rows = await db
    .selectFrom('rewards.sync_runs')
    .select(['stream', 'started_at', 'finished_at', 'requests'])
    .where('started_at', '>=', from)
    .where('started_at', '<', to)
    .where('stream', 'in', streams)
    .orderBy('started_at')
    .execute();
  return rows.map((row) => ({
    stream: row.stream,
    startedAt: row.started_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
    requests: row.requests,
  }));
}
