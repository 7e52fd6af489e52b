import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../../test/helpers/throwaway-postgres.js';

// The bench's own PostgreSQL: the throw-away cluster the test harness starts, so that "Postgres's
// CPU" is this cluster's and nobody else's (other users of the machine's server no longer count),
// with pg_stat_statements loaded to read each phase's statements and buffers. Durability settings
// are a production server's (fsync, full-page writes, synchronous commit on), not the test
// defaults: the check-in commit turns synchronous_commit off for itself, COPY does not. Autovacuum
// is off, so that no phase pays for an earlier one's tables.

const CLOCK_TICKS_PER_SECOND = 100;

/** What Postgres did during a phase: its CPU and pg_stat_statements' totals (top-level statements). */
export interface PostgresPhase {
  cpuSeconds: number;
  calls: number;
  execMs: number;
  sharedBlocksHit: number;
  sharedBlocksRead: number;
  sharedBlocksDirtied: number;
  sharedBlocksWritten: number;
  walBytes: number;
  /** Functions JIT-compiled (jit_functions) and the time spent compiling them (generation + inlining + optimization + emission). */
  jitFunctions: number;
  jitMs: number;
  /** The statements that took the most time, first 160 characters each. */
  top: {
    query: string;
    calls: number;
    execMs: number;
    rows: number;
    sharedBlocksHit: number;
    sharedBlocksDirtied: number;
  }[];
}

export interface BenchPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** Runs `work` as one phase: pg_stat_statements reset before, CPU and totals read after. */
  phase<T>(work: () => Promise<T>): Promise<{ value: T; postgres: PostgresPhase }>;
  stop(): Promise<void>;
}

function ticksOf(pid: number, withChildren: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14–17 (indices 11–14 after the command).
    const own = Number(fields[11]) + Number(fields[12]);
    return withChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return 0;
  }
}

/**
 * The cluster's CPU seconds so far: the postmaster's own, its exited children's (the postmaster
 * reaps every backend, so cutime/cstime hold the backends that ended) and its live children's.
 */
function clusterCpuSeconds(postmaster: number): number {
  let ticks = ticksOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) ticks += ticksOf(Number(entry), false);
    } catch {
      // exited meanwhile: its time is in the postmaster's cutime now
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const server: ThrowawayPostgres = await startThrowawayPostgres({
    settings: {
      fsync: 'on',
      full_page_writes: 'on',
      synchronous_commit: 'on',
      shared_preload_libraries: "'pg_stat_statements'",
      'pg_stat_statements.track': "'top'",
      max_wal_size: "'2GB'",
      // An earlier phase's tables would be vacuumed and analyzed during a later phase and charged
      // to it: each phase's CPU is its own work only.
      autovacuum: 'off',
    },
  });
  const url = server.url('postgres');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('create extension if not exists pg_stat_statements');
  const postmaster = () => {
    const pid = server.pid();
    if (pid === undefined) throw new Error('the bench PostgreSQL is not running');
    return pid;
  };
  return {
    url,
    async phase(work) {
      await admin.query('select pg_stat_statements_reset()');
      const cpuBefore = clusterCpuSeconds(postmaster());
      const value = await work();
      // Backends of a closed pool exit a moment later; their time reaches the postmaster then.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cpuSeconds = clusterCpuSeconds(postmaster()) - cpuBefore;
      const own = `query not like '%pg_stat_statements%'`;
      const { rows } = await admin.query<Record<string, string>>(`
        select coalesce(sum(calls), 0) as calls, coalesce(sum(total_exec_time), 0) as exec_ms,
          coalesce(sum(shared_blks_hit), 0) as hit, coalesce(sum(shared_blks_read), 0) as read,
          coalesce(sum(shared_blks_dirtied), 0) as dirtied, coalesce(sum(shared_blks_written), 0) as written,
          coalesce(sum(wal_bytes), 0) as wal, coalesce(sum(jit_functions), 0) as jit_functions,
          coalesce(sum(jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time), 0) as jit_ms
        from pg_stat_statements where ${own}`);
      const { rows: top } = await admin.query<Record<string, string>>(`
        select left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query, calls, total_exec_time as exec_ms, rows,
          shared_blks_hit as hit, shared_blks_dirtied as dirtied
        from pg_stat_statements where ${own} order by total_exec_time desc limit 5`);
      const totals = rows[0] ?? {};
      const n = (text: string | undefined) => Number(text ?? 0);
      return {
        value,
        postgres: {
          cpuSeconds,
          calls: n(totals.calls),
          execMs: n(totals.exec_ms),
          sharedBlocksHit: n(totals.hit),
          sharedBlocksRead: n(totals.read),
          sharedBlocksDirtied: n(totals.dirtied),
          sharedBlocksWritten: n(totals.written),
          walBytes: n(totals.wal),
          jitFunctions: n(totals.jit_functions),
          jitMs: n(totals.jit_ms),
          top: top.map((row) => ({
            query: row.query ?? '',
            calls: n(row.calls),
            execMs: n(row.exec_ms),
            rows: n(row.rows),
            sharedBlocksHit: n(row.hit),
            sharedBlocksDirtied: n(row.dirtied),
          })),
        },
      };
    },
    async stop() {
      await admin.end().catch(() => undefined);
      await server.stop();
    },
  };
}
