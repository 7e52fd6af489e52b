import { sql, type Kysely } from 'kysely';

// Members who connected the app (issue 15). A connection's tokens live in rewards.oauth_tokens
// under the id `member:<member id>`; the connection row says what the pipeline may do with them.
// Every member table is keyed by member_id so `members forget` removes a member everywhere.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table rewards.member_connections (
      member_id uuid primary key,
      status text not null check (status in ('active', 'revoked', 'needs_reauth')),
      scopes text[] not null default '{}',
      connected_at timestamptz not null,
      last_synced_at timestamptz,
      last_success_at timestamptz,
      last_error text,
      last_error_at timestamptz,
      -- where an unfinished first read of the member's check-in history resumes (page number)
      check_ins_resume_page integer
    );
    create index member_connections_stalest_idx on rewards.member_connections (last_synced_at nulls first)
      where status = 'active';

    create table rewards.members (
      id uuid primary key,
      first_name text not null,
      last_name text not null,
      email text,
      phone_number text,
      birthdate text,
      zipcode text,
      avatar text,
      account_status text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      raw jsonb not null,
      first_seen_at timestamptz not null,
      last_seen_at timestamptz not null
    );

    create table rewards.member_statuses (
      member_id uuid primary key,
      -- false: the API answers 404 "no active record" for this member (a state, not an error)
      has_active_status boolean not null,
      status_id uuid,
      tier text,
      level integer,
      track text,
      token_multiplier integer,
      state text,
      benefits jsonb,
      progress jsonb,
      year_start timestamptz,
      year_end timestamptz,
      started_at timestamptz,
      created_at timestamptz,
      updated_at timestamptz,
      raw jsonb,
      content_hash text not null,
      last_seen_at timestamptz not null
    );
    create table rewards.member_statuses_history (
      id uuid not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      content_hash text not null,
      raw jsonb not null,
      primary key (id, valid_from)
    );
    create unique index member_statuses_history_current_idx on rewards.member_statuses_history (id)
      where valid_to is null;

    create table rewards.member_wallets (
      id uuid primary key,
      member_id uuid not null,
      wallet_type text not null,
      address text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      last_seen_at timestamptz not null
    );
    create index member_wallets_member_idx on rewards.member_wallets (member_id);

    create table rewards.member_tags (
      member_id uuid not null,
      type text not null,
      metadata jsonb not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      last_seen_at timestamptz not null,
      primary key (member_id, type)
    );

    create table rewards.member_check_ins (
      id uuid primary key,
      member_id uuid not null,
      location_id uuid not null,
      restaurant_id uuid not null,
      svc_pay_enabled boolean not null,
      created_at timestamptz not null,
      ended_at timestamptz,
      first_seen_at timestamptz not null,
      last_seen_at timestamptz not null
    );
    create index member_check_ins_member_idx on rewards.member_check_ins (member_id, created_at desc);

    create table rewards.memberships (
      id uuid primary key,
      member_id uuid not null,
      restaurant_id uuid not null,
      check_in_count integer not null,
      last_check_in_date timestamptz,
      tier_id uuid not null,
      tier_name text not null,
      raw jsonb not null,
      content_hash text not null,
      first_seen_at timestamptz not null,
      last_seen_at timestamptz not null
    );
    create index memberships_member_idx on rewards.memberships (member_id);
    create table rewards.memberships_history (
      id uuid not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      content_hash text not null,
      raw jsonb not null,
      primary key (id, valid_from)
    );
    create unique index memberships_history_current_idx on rewards.memberships_history (id)
      where valid_to is null;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table rewards.memberships_history;
    drop table rewards.memberships;
    drop table rewards.member_check_ins;
    drop table rewards.member_tags;
    drop table rewards.member_wallets;
    drop table rewards.member_statuses_history;
    drop table rewards.member_statuses;
    drop table rewards.members;
    drop table rewards.member_connections;
    delete from rewards.oauth_tokens where id like 'member:%';
  `.execute(db);
}
