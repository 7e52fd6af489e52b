import { sql, type Kysely } from 'kysely';

// Frozen in time: later changes go in new migrations, never here.
// Plain SQL keeps the DDL readable next to the tables described in the README.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create schema if not exists rewards;

    create table rewards.restaurants (
      id uuid primary key,
      name text not null,
      cuisine text[] not null default '{}',
      cohort text,
      price integer,
      tags jsonb not null default '[]',
      asset jsonb,
      website_url text,
      instagram_url text,
      created_at timestamptz,
      updated_at timestamptz,
      raw jsonb not null,
      content_hash text not null,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      deleted_at timestamptz
    );

    create table rewards.neighborhoods (
      id uuid primary key,
      name text not null,
      region text,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now()
    );

    create table rewards.locations (
      id uuid primary key,
      restaurant_id uuid,
      neighborhood_id uuid,
      name text,
      slug text,
      street text,
      street2 text,
      city text,
      state text,
      zipcode text,
      country text,
      latitude double precision,
      longitude double precision,
      phone_number text,
      time_zone text,
      payments_enabled boolean,
      is_club boolean,
      reservation_url text,
      reservations_enabled boolean,
      google_place_id text,
      created_at timestamptz,
      updated_at timestamptz,
      raw jsonb not null,
      content_hash text not null,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      last_refreshed_at timestamptz,
      deleted_at timestamptz
    );
    create index locations_restaurant_idx on rewards.locations (restaurant_id);
    -- the locations stream refreshes the stalest first
    create index locations_refresh_idx on rewards.locations (last_refreshed_at nulls first);

    create table rewards.location_open_hours (
      location_id uuid primary key,
      hours jsonb not null,
      fetched_at timestamptz not null
    );

    create table rewards.check_ins (
      id uuid primary key,
      location_id uuid not null,
      restaurant_id uuid not null,
      svc_pay_enabled boolean not null,
      created_at timestamptz not null,
      ended_at timestamptz,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now()
    );
    create index check_ins_created_at_idx on rewards.check_ins (created_at);
    create index check_ins_restaurant_created_idx on rewards.check_ins (restaurant_id, created_at);
    create index check_ins_location_created_idx on rewards.check_ins (location_id, created_at);
    -- the look-back re-reads windows that still hold ongoing visits
    create index check_ins_ongoing_idx on rewards.check_ins (created_at) where ended_at is null;

    create table rewards.challenges (
      id uuid primary key,
      restaurant_id uuid not null,
      type text not null,
      title text,
      description text,
      image text,
      threshold jsonb not null default '{}',
      spend_threshold_value numeric(78,0),
      spend_threshold_currency text,
      minimum_spend_value numeric(78,0),
      minimum_spend_currency text,
      dine_threshold integer,
      referral_threshold integer,
      token_reward_value numeric(78,0),
      token_reward_currency text,
      start_time timestamptz,
      end_time timestamptz,
      terms text[] not null default '{}',
      accepted_currencies text[] not null default '{}',
      created_at timestamptz,
      updated_at timestamptz,
      raw jsonb not null,
      content_hash text not null,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    create index challenges_restaurant_idx on rewards.challenges (restaurant_id);
    create index challenges_end_time_idx on rewards.challenges (end_time);

    create table rewards.restaurants_history (
      id uuid not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      content_hash text not null,
      raw jsonb not null,
      primary key (id, valid_from)
    );
    create unique index restaurants_history_current_idx on rewards.restaurants_history (id) where valid_to is null;

    create table rewards.locations_history (
      id uuid not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      content_hash text not null,
      raw jsonb not null,
      primary key (id, valid_from)
    );
    create unique index locations_history_current_idx on rewards.locations_history (id) where valid_to is null;

    create table rewards.challenges_history (
      id uuid not null,
      valid_from timestamptz not null,
      valid_to timestamptz,
      content_hash text not null,
      raw jsonb not null,
      primary key (id, valid_from)
    );
    create unique index challenges_history_current_idx on rewards.challenges_history (id) where valid_to is null;

    create table rewards.balance_snapshots (
      account_balance_id uuid not null,
      observed_at timestamptz not null,
      owner_id uuid not null,
      owner_type text,
      balance_value numeric(78,0) not null,
      balance_currency text not null,
      balance_usd_cents bigint,
      primary key (account_balance_id, observed_at)
    );

    create table rewards.payment_intents (
      id uuid primary key,
      payer_account_balance_id uuid,
      payee_account_balance_id uuid,
      amount_value numeric(78,0),
      amount_currency text,
      description text,
      status text not null,
      expires_at timestamptz,
      canceled_at timestamptz,
      paid_at timestamptz,
      refunded_at timestamptz,
      metadata jsonb,
      created_at timestamptz,
      updated_at timestamptz,
      first_seen_at timestamptz not null default now(),
      last_polled_at timestamptz,
      next_poll_at timestamptz,
      poll_count integer not null default 0
    );
    -- open intents by next poll time: the poller's only query on its hot path
    create index payment_intents_next_poll_idx on rewards.payment_intents (next_poll_at)
      where status = 'pending';

    create table rewards.payment_intent_transitions (
      id bigint generated always as identity primary key,
      payment_intent_id uuid not null,
      from_status text,
      to_status text not null,
      observed_at timestamptz not null
    );
    -- intent states never cycle, so each target state is reached at most once per intent;
    -- the index makes a second poller's duplicate transition impossible, not merely unlikely
    create unique index payment_intent_transitions_once_idx
      on rewards.payment_intent_transitions (payment_intent_id, to_status);

    create table rewards.alerts (
      id uuid primary key,
      type text not null,
      payment_intent_id uuid not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      delivered_at timestamptz,
      attempts integer not null default 0,
      last_error text,
      next_attempt_at timestamptz not null default now(),
      failed_at timestamptz,
      unique (type, payment_intent_id)
    );
    create index alerts_undelivered_idx on rewards.alerts (next_attempt_at)
      where delivered_at is null and failed_at is null;

    create table rewards.sync_windows (
      stream text not null,
      window_start timestamptz not null,
      window_end timestamptz not null,
      status text not null default 'pending'
        check (status in ('pending', 'running', 'complete', 'failed')),
      api_total_count integer,
      rows_seen integer not null default 0,
      rows_rejected integer not null default 0,
      pages integer not null default 0,
      next_page integer not null default 0,
      first_total_count integer,
      repages integer not null default 0,
      attempts integer not null default 0,
      completed_at timestamptz,
      verified_at timestamptz,
      last_error text,
      updated_at timestamptz not null default now(),
      primary key (stream, window_start, window_end),
      check (window_start < window_end)
    );
    create index sync_windows_status_idx on rewards.sync_windows (stream, status, window_start);

    create table rewards.sync_state (
      stream text primary key,
      watermark timestamptz,
      state jsonb not null default '{}',
      updated_at timestamptz not null default now()
    );

    create table rewards.sync_runs (
      id bigint generated always as identity primary key,
      stream text not null,
      started_at timestamptz not null,
      finished_at timestamptz,
      status text not null default 'running'
        check (status in ('running', 'succeeded', 'failed', 'partial')),
      requests integer not null default 0,
      rows integer not null default 0,
      error text,
      details jsonb not null default '{}'
    );
    create index sync_runs_stream_started_idx on rewards.sync_runs (stream, started_at desc);

    create table rewards.rejected_records (
      id bigint generated always as identity primary key,
      stream text not null,
      record_id text,
      reason text not null,
      payload jsonb,
      payload_hash text not null,
      seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      times_seen integer not null default 1,
      -- re-paging a window meets the same bad record again: count it, do not duplicate it
      unique (stream, payload_hash)
    );

    create table rewards.oauth_tokens (
      id text primary key,
      refresh_token_encrypted text,
      access_token_encrypted text,
      access_token_expires_at timestamptz,
      generation integer not null default 0,
      last_refreshed_at timestamptz,
      last_error text,
      last_error_at timestamptz,
      updated_at timestamptz not null default now()
    );

    create view rewards.check_ins_daily as
      select
        (created_at at time zone 'UTC')::date as day,
        restaurant_id,
        location_id,
        count(*)::integer as check_ins,
        (count(*) filter (where svc_pay_enabled))::integer as svc_pay_check_ins,
        percentile_cont(0.5) within group (order by extract(epoch from (ended_at - created_at)) / 60.0)
          filter (where ended_at is not null) as median_visit_minutes
      from rewards.check_ins
      group by 1, 2, 3;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop schema rewards cascade`.execute(db);
}
