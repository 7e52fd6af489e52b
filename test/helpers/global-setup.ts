import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../../src/warehouse/migrate.js';
import { skippedToolsSummary } from './optional-tools.js';
import { ADMIN_URL, databaseUrl } from './postgres.js';
import { currentRunId, newRunId, runDirOf } from './test-run.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

let ownRunDir: string | undefined;
let templateDatabase = '';

// One migrated template per test run; each test file clones it (CREATE DATABASE … TEMPLATE),
// which takes a fraction of a second instead of re-running migrations. A bare `vitest run` (not
// through test/run-tests.ts) gets a run id of its own here, which the test workers inherit.
export async function setup(project: TestProject): Promise<void> {
  if (currentRunId() === undefined) {
    const runId = newRunId();
    process.env.REWARDS_TEST_RUN_ID = runId;
    ownRunDir = runDirOf(runId);
    if (ownRunDir !== undefined) {
      mkdirSync(ownRunDir, { recursive: true, mode: 0o755 });
      writeFileSync(join(ownRunDir, 'owner.pid'), `${process.pid}\n`);
    }
  }
  // Chaos lanes run side by side in one run (test/run-tests.ts): a template each.
  const lane = process.env.REWARDS_CHAOS_LANE;
  templateDatabase = `rewards_etl_tpl${lane === undefined ? '' : `_${lane}`}_r${currentRunId()}`;
  project.provide('templateDatabase', templateDatabase);
  await dropTemplate();
  const url = databaseUrl(templateDatabase);
  await ensureDatabase(url);
  const db = createDatabase({ url, maxConnections: 2 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

export async function teardown(): Promise<void> {
  await dropTemplate();
  if (ownRunDir !== undefined) {
    // Run through test/run-tests.ts, the summary comes once at the end of both runs instead.
    for (const line of skippedToolsSummary(ownRunDir)) console.warn(line);
    rmSync(ownRunDir, { recursive: true, force: true });
  }
}

async function dropTemplate(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${templateDatabase} with (force)`);
  } finally {
    await admin.end();
  }
}
