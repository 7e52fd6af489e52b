import { sql, type Kysely } from 'kysely';

// The status page charts new check-ins per hour by first_seen_at; the intent poller finds due
// open intents by created_at. Both scanned the table without these.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index check_ins_first_seen_idx on rewards.check_ins (first_seen_at);
    create index payment_intents_created_idx on rewards.payment_intents (created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index rewards.check_ins_first_seen_idx;
    drop index rewards.payment_intents_created_idx;
  `.execute(db);
}
