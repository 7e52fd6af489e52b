import { sql, type Kysely } from 'kysely';

// Windows are paged by moving the exclusive created_before bound down (keyset), not by page
// number; the checkpoint is that bound plus a page number used only for ties.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table rewards.sync_windows
      add column cursor_before timestamptz,
      add column cursor_page integer not null default 0,
      add column attempt_started_at timestamptz,
      add column rows_removed integer not null default 0,
      add column last_checked_at timestamptz,
      add column next_attempt_at timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    alter table rewards.sync_windows
      drop column cursor_before, drop column cursor_page, drop column attempt_started_at,
      drop column rows_removed, drop column last_checked_at, drop column next_attempt_at;
  `.execute(db);
}
