import { readdir, readFile } from 'node:fs/promises';

// Postgres's CPU time, to tell what bounds a phase. Summed over every `postgres` process on the
// machine (backends, WAL writer, checkpointer), so other users of the server add noise: read it
// as an upper bound. Linux only; null elsewhere.

const CLOCK_TICKS_PER_SECOND = 100;

export async function postgresCpuSeconds(): Promise<number | null> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return null;
  }
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      // Fields after the command: state is field 3; utime and stime are fields 14 and 15.
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between readdir and readFile.
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}
