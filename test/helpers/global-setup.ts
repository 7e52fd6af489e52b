import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/warehouse/database.js';
import { ensureDatabase, migrateToLatest } from '../../src/warehouse/migrate.js';
import { ADMIN_URL, databaseUrl } from './postgres.js';

const TEMPLATE_DATABASE = `rewards_etl_tpl_${process.pid}`;

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

// One migrated template per test run; each test file clones it (CREATE DATABASE … TEMPLATE),
// which takes a fraction of a second instead of re-running migrations.
export async function setup(project: TestProject): Promise<void> {
  project.provide('templateDatabase', TEMPLATE_DATABASE);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(TEMPLATE_DATABASE);
  await ensureDatabase(url);
  const db = createDatabase({ url, maxConnections: 2 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

export async function teardown(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
  } finally {
    await admin.end();
  }
}
