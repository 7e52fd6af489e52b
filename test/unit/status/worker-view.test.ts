import { describe, expect, it } from 'vitest';
import { workerRow, workersNote } from '../../../src/status/workers-view.js';
import type { WorkerQueueRecord, WorkerRecord } from '../../../src/worker/worker-records.js';

const now = new Date('2026-11-25T12:00:00Z');

const queue = (name: string, fields: Partial<WorkerQueueRecord> = {}): WorkerQueueRecord => ({
  queue: name,
  concurrency: 2,
  active: 0,
  jobsStarted: 10,
  lastJobStartedAt: '2026-11-25T11:59:55.000Z',
  lastFetchAt: '2026-11-25T11:59:58.000Z',
  readyJobs: 0,
  idleWithWorkSeconds: 0,
  silentSeconds: 0,
  stuck: false,
  ...fields,
});

const record = (queues: WorkerQueueRecord[], stuck = false): WorkerRecord => ({
  id: 'h:42:abc',
  host: 'h',
  pid: 42,
  startedAt: '2026-11-25T11:00:00.000Z',
  seenAt: '2026-11-25T11:59:59.000Z',
  idleTimeoutSeconds: 60,
  stuck,
  queues,
});

describe('a worker as the status shows it', () => {
  it('taking jobs: one line with its jobs and its last one', () => {
    const row = workerRow(record([queue('streams'), queue('checkins-window', { jobsStarted: 5 })]), now);
    expect(row).toMatchObject({
      worker: 'h:42',
      started: '1 h ago',
      jobsStarted: 15,
      lastJob: '5 s ago',
      state: 'taking jobs',
      stuck: false,
    });
  });

  it('names a queue worker that leaves ready jobs waiting or has not fetched for a while, before it is stuck', () => {
    const row = workerRow(
      record([
        queue('streams', { idleWithWorkSeconds: 20, readyJobs: 3 }),
        queue('checkins-plan', { silentSeconds: 25 }),
      ]),
      now,
    );
    expect(row.state).toBe('streams idle 20 s with 3 ready; checkins-plan no fetch for 25 s (limit 60 s)');
  });

  it('stuck: says which queue worker and that the process restarts', () => {
    const row = workerRow(
      record([queue('streams', { silentSeconds: 65, stuck: true }), queue('checkins-plan')], true),
      now,
    );
    expect(row).toMatchObject({ stuck: true, state: 'STUCK: streams no fetch for 65 s; restarting' });
  });

  it('the note counts live workers and those that stopped reporting', () => {
    expect(workersNote({ available: true, live: [record([])], gone: 2 })).toBe(
      '1 reporting; 2 stopped reporting (killed, or lost Redis)',
    );
    expect(workersNote({ available: false, reason: 'Redis unreachable: x', live: [], gone: 0 })).toBe(
      'skipped: Redis unreachable: x',
    );
  });
});
