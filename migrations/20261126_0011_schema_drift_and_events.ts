import { sql, type Kysely } from 'kysely';

// Issue 31 (docs/schema-drift.md, docs/payment-intents.md "Events"):
// - `schema_drift`: one row per (resource, field path, change) the record parsers met, with when it
//   was first and last seen, how many records showed it and one example value.
// - `extra jsonb` on the record tables that keep no `raw`: the fields of a record its parser does not
//   know (null when there are none), so a field the API adds is never dropped.
// - `alerts.subject`: what an event is about (the intent id for payment_intent.*, the drift's
//   resource/path/change for schema.drift, the member for member.needs_reauth); exactly one event per
//   (type, subject). Existing rows get their intent id as subject; the old unique
//   (type, payment_intent_id) stays, so the paid path keeps its guarantee unchanged.
// A row naming only its intent gets the intent id as subject (a trigger), so writers that predate
// the column keep working. Written with `if not exists` / guarded updates: applying it twice
// changes nothing.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table if not exists rewards.schema_drift (
      resource text not null,
      field_path text not null,
      change text not null check (change in ('added', 'missing', 'type_changed')),
      first_seen timestamptz not null default now(),
      last_seen timestamptz not null default now(),
      count bigint not null default 0,
      example jsonb,
      primary key (resource, field_path, change)
    );

    alter table rewards.check_ins add column if not exists extra jsonb;
    alter table rewards.payment_intents add column if not exists extra jsonb;
    alter table rewards.balance_snapshots add column if not exists extra jsonb;
    alter table rewards.member_wallets add column if not exists extra jsonb;
    alter table rewards.member_tags add column if not exists extra jsonb;
    alter table rewards.member_check_ins add column if not exists extra jsonb;

    alter table rewards.alerts add column if not exists subject text;
    update rewards.alerts set subject = payment_intent_id::text where subject is null;
    alter table rewards.alerts alter column subject set not null;
    -- A writer that names only the intent (the paid path as it was, a version still running
    -- during a rolling deploy) gets the intent id as subject.
    create or replace function rewards.alerts_default_subject() returns trigger
      language plpgsql as $$
      begin
        if new.subject is null then new.subject := new.payment_intent_id::text; end if;
        return new;
      end $$;
    drop trigger if exists alerts_default_subject on rewards.alerts;
    create trigger alerts_default_subject before insert on rewards.alerts
      for each row execute function rewards.alerts_default_subject();
    alter table rewards.alerts alter column payment_intent_id drop not null;
    create unique index if not exists alerts_type_subject_idx on rewards.alerts (type, subject);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index if exists rewards.alerts_type_subject_idx;
    drop trigger if exists alerts_default_subject on rewards.alerts;
    drop function if exists rewards.alerts_default_subject();
    delete from rewards.alerts where payment_intent_id is null;
    alter table rewards.alerts alter column payment_intent_id set not null;
    alter table rewards.alerts drop column if exists subject;
    alter table rewards.member_check_ins drop column if exists extra;
    alter table rewards.member_tags drop column if exists extra;
    alter table rewards.member_wallets drop column if exists extra;
    alter table rewards.balance_snapshots drop column if exists extra;
    alter table rewards.payment_intents drop column if exists extra;
    alter table rewards.check_ins drop column if exists extra;
    drop table if exists rewards.schema_drift;
  `.execute(db);
}
