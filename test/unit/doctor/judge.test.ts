import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuthenticationError, InsufficientScopeError, RequestBlockedError } from '../../../src/api/errors.js';
import {
  CHECK_IDS,
  doctorReport,
  renderDoctorText,
  type CheckResult,
  type CheckStatus,
} from '../../../src/doctor/doctor-report.js';
import { clockSkewMs, judgeClock } from '../../../src/doctor/judge-clock.js';
import {
  judgeEvictionPolicy,
  judgeRedis,
  judgeRedisFailover,
  parseRedisInfo,
} from '../../../src/doctor/judge-redis.js';
import {
  describeUrl,
  judgeApi,
  judgeTopology,
  judgeMigrations,
  judgePostgres,
  judgeScope,
  judgeWebhook,
} from '../../../src/doctor/judge.js';

const info = (fields: Record<string, string>) =>
  `# Server\r\n${Object.entries(fields)
    .map(([key, value]) => `${key}:${value}`)
    .join('\r\n')}\r\n# Memory\r\n`;

/** What the probe found: one INFO per primary, at 10.0.0.1:7000, :7001, … */
const primaries = (...infos: string[]) => ({
  ok: true as const,
  value: { primaries: infos.map((text, i) => ({ address: `10.0.0.1:${7000 + i}`, info: text })) },
});

describe('doctor verdict and exit code', () => {
  const line = fc.record({
    check: fc.constantFrom(...CHECK_IDS),
    status: fc.constantFrom<CheckStatus>('ok', 'warn', 'fail', 'skip'),
    detail: fc.string(),
  });

  it('exit 2 iff the configuration failed, else 1 iff any check failed, else 0 (warnings never fail)', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 14 }), (checks: CheckResult[]) => {
        const report = doctorReport(checks);
        const failed = checks.filter((check) => check.status === 'fail');
        const expected = failed.some((check) => check.check === 'configuration')
          ? 2
          : failed.length > 0
            ? 1
            : 0;
        expect(report.exitCode).toBe(expected);
        expect(report.ok).toBe(expected === 0);
      }),
    );
  });

  it('prints one line per check, the fix after an arrow, then the verdict', () => {
    const text = renderDoctorText(
      doctorReport([
        { check: 'postgres', status: 'ok', detail: 'reachable' },
        {
          check: 'redis eviction',
          status: 'warn',
          detail: 'maxmemory-policy allkeys-lru',
          fix: 'set noeviction',
        },
      ]),
    );
    expect(text.split('\n')).toEqual([
      'ok    postgres                          reachable',
      'WARN  redis eviction                    maxmemory-policy allkeys-lru → set noeviction',
      '',
      'verdict: OK with warnings: redis eviction',
      '',
    ]);
  });
});

describe('doctor checks of Postgres and Redis', () => {
  it('reads the Postgres version from server_version_num and warns below the tested versions', () => {
    expect(judgePostgres({ ok: true, value: { versionNum: 160004 } }, 'w')).toMatchObject({
      status: 'ok',
      detail: 'reachable, PostgreSQL 16.4, database "w"',
    });
    expect(judgePostgres({ ok: true, value: { versionNum: 120019 } }, 'w').status).toBe('warn');
    expect(
      judgePostgres({ ok: false, error: Object.assign(new Error('x'), { code: '3D000' }) }, 'w'),
    ).toMatchObject({
      status: 'fail',
      fix: 'run `rewards-etl migrate`',
    });
  });

  it('names pending migrations', () => {
    expect(judgeMigrations({ ok: true, value: { applied: 2, pending: ['0003_x'] } })).toMatchObject({
      status: 'fail',
      detail: '1 pending of 3 (0003_x)',
    });
    expect(judgeMigrations(null).status).toBe('skip');
  });

  it('parses INFO, and judges the Redis version against what BullMQ needs', () => {
    expect(
      parseRedisInfo(info({ redis_version: '7.2.4', maxmemory_policy: 'noeviction' })).get('redis_version'),
    ).toBe('7.2.4');
    const redis = (version: string) =>
      judgeRedis(primaries(info({ redis_version: version })), 'standalone', 'standalone 127.0.0.1:6379');
    expect(redis('7.2.4').status).toBe('ok');
    expect(redis('6.2.0').status).toBe('ok');
    expect(redis('6.0.16').status).toBe('warn');
    expect(redis('4.0.9').status).toBe('fail');
  });

  it('names the mode and every primary; the oldest version of a Cluster is the one judged', () => {
    const cluster = judgeRedis(
      primaries(
        info({ redis_version: '7.2.4' }),
        info({ redis_version: '7.2.4' }),
        info({ redis_version: '6.0.16' }),
      ),
      'cluster',
      'cluster via 10.0.0.1:6379',
    );
    expect(cluster.status).toBe('warn');
    expect(cluster.detail).toContain(
      'cluster via 10.0.0.1:6379: reachable, 3 primaries (10.0.0.1:7000, 10.0.0.1:7001, 10.0.0.1:7002)',
    );
    expect(cluster.detail).toContain('Redis 7.2.4, 6.0.16');
    const sentinel = judgeRedis(
      primaries(info({ redis_version: '7.2.4' })),
      'sentinel',
      'sentinel "main" via s1:26379',
    );
    expect(sentinel).toMatchObject({
      status: 'ok',
      detail: 'sentinel "main" via s1:26379: reachable, primary 10.0.0.1:7000, Redis 7.2.4',
    });
    const down = judgeRedis(
      { ok: false, error: new Error('All sentinels are unreachable') },
      'sentinel',
      'sentinel "main" via s1:26379',
    );
    expect(down.status).toBe('fail');
    expect(down.fix).toContain('REDIS_SENTINELS');
  });

  it('noeviction is fine; any other maxmemory-policy is a warning that names the risk', () => {
    const policy = (name: string) => judgeEvictionPolicy(primaries(info({ maxmemory_policy: name })));
    expect(policy('noeviction').status).toBe('ok');
    for (const name of ['allkeys-lru', 'volatile-lru', 'allkeys-random', 'volatile-ttl']) {
      expect(policy(name)).toMatchObject({ status: 'warn', detail: expect.stringContaining(name) });
      expect(policy(name).detail).toContain('jobs, locks and schedules');
    }
    expect(judgeEvictionPolicy({ ok: false, error: new Error('down') }).status).toBe('skip');
  });

  it('checks maxmemory-policy on every primary of a Cluster and names the one that evicts', () => {
    const good = info({ maxmemory_policy: 'noeviction' });
    expect(judgeEvictionPolicy(primaries(good, good, good))).toMatchObject({
      status: 'ok',
      detail: 'maxmemory-policy noeviction on all 3 primaries',
    });
    const one = judgeEvictionPolicy(primaries(good, info({ maxmemory_policy: 'allkeys-lru' }), good));
    expect(one.status).toBe('warn');
    expect(one.detail).toContain('allkeys-lru on 10.0.0.1:7001:');
    expect(one.detail).not.toContain('7000');
  });

  it('warns when a primary has no replica or no AOF, naming which', () => {
    const safe = info({ connected_slaves: '1', aof_enabled: '1' });
    expect(judgeRedisFailover(primaries(safe, safe)).status).toBe('ok');
    const alone = judgeRedisFailover(primaries(info({ connected_slaves: '0', aof_enabled: '1' })));
    expect(alone).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('no replica for the primary'),
    });
    const noAof = judgeRedisFailover(primaries(safe, info({ connected_slaves: '1', aof_enabled: '0' })));
    expect(noAof.detail).toBe(
      'no AOF (appendonly no) on 10.0.0.1:7001: a restart loses what was written since the last snapshot',
    );
    expect(judgeRedisFailover({ ok: false, error: new Error('down') }).status).toBe('skip');
  });
});

describe('doctor checks of the partner API', () => {
  const details = { request: { method: 'GET', url: 'http://x/v1/check_ins', params: {} }, status: 403 };

  it('says which setting to fix for a refused key or a blocked User-Agent', () => {
    const refused = judgeApi(
      { ok: false, error: new AuthenticationError('api-key', 'invalid_api_key', null, details) },
      'http://x/v1',
      'ua',
    );
    expect(refused).toMatchObject({ status: 'fail', fix: 'check SVC_API_KEY' });
    const blocked = judgeApi({ ok: false, error: new RequestBlockedError(details) }, 'http://x/v1', 'ua');
    expect(blocked.fix).toContain('SVC_USER_AGENT');
  });

  it('a missing scope names the stream that cannot run', () => {
    const missing = judgeScope('read:balance', {
      ok: false,
      error: new InsufficientScopeError('api-key', "lacks 'read:balance'", details),
    });
    expect(missing).toMatchObject({ status: 'fail', detail: 'missing: the balance stream cannot run' });
    expect(judgeScope('read:balance', { ok: true, value: { status: 200, json: {} } }).status).toBe('ok');
  });
});

describe('doctor checks of the webhook and the clock', () => {
  it('never shows the query or userinfo of the webhook URL', () => {
    expect(describeUrl('https://user:pw@hooks.example.com/in?token=s3cret')).toBe(
      'https://hooks.example.com/in',
    );
    const line = judgeWebhook({
      url: 'https://hooks.example.com/in?token=s3cret',
      hasSecret: true,
      alertsRaised: true,
      probe: { ok: true, value: { method: 'HEAD', status: 405 } },
    });
    expect(line.status).toBe('ok');
    expect(line.detail).not.toContain('s3cret');
  });

  it('a webhook URL without its secret fails: nothing could be signed', () => {
    expect(
      judgeWebhook({ url: 'https://h/x', hasSecret: false, alertsRaised: true, probe: null }).status,
    ).toBe('fail');
    expect(judgeWebhook({ url: undefined, hasSecret: false, alertsRaised: true, probe: null }).status).toBe(
      'warn',
    );
    expect(judgeWebhook({ url: undefined, hasSecret: false, alertsRaised: false, probe: null }).status).toBe(
      'skip',
    );
  });

  it('the skew estimate is within a second of the true offset, whatever the round trip', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -600_000, max: 600_000 }),
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: 0, max: 2_000 }),
        (offsetMs, toServerMs, backMs) => {
          const sentAtMs = 1_800_000_000_000;
          const serverMs = sentAtMs + toServerMs + offsetMs;
          const dateHeader = new Date(Math.floor(serverMs / 1000) * 1000).toUTCString();
          const skew = clockSkewMs({ dateHeader, sentAtMs, receivedAtMs: sentAtMs + toServerMs + backMs });
          // Off by at most half a second of header resolution plus half the round-trip asymmetry.
          expect(Math.abs((skew ?? NaN) - offsetMs)).toBeLessThanOrEqual(
            500 + Math.abs(toServerMs - backMs) / 2 + 1,
          );
        },
      ),
    );
  });

  it('judges the skew: noise is ok, seconds warn, beyond the safety lag fails', () => {
    const at = (offsetMs: number, safetyLagMs = 120_000) => {
      const sentAtMs = 1_800_000_000_000;
      return judgeClock({
        dateHeader: new Date(sentAtMs + offsetMs).toUTCString(),
        sentAtMs,
        receivedAtMs: sentAtMs,
        safetyLagMs,
      });
    };
    expect(at(0).status).toBe('ok');
    expect(at(30_000)).toMatchObject({ status: 'warn', detail: 'this host is 30.5 s behind the API' });
    expect(at(-30_000).detail).toBe('this host is 29.5 s ahead of the API');
    expect(at(200_000).status).toBe('fail');
    expect(at(60_000, 30_000).status).toBe('fail');
    expect(judgeClock({ dateHeader: null, sentAtMs: 0, receivedAtMs: 0, safetyLagMs: 1 }).status).toBe(
      'skip',
    );
  });

  it("judges the API against Postgres's clock (the pipeline's); this host's offsets are information, a warning only past an hour", () => {
    const sentAtMs = 1_800_000_000_000;
    const at = (apiAheadOfHostMs: number, postgresAheadOfHostMs: number, redisAheadOfHostMs = 0) =>
      judgeClock({
        dateHeader: new Date(sentAtMs + apiAheadOfHostMs).toUTCString(),
        sentAtMs,
        receivedAtMs: sentAtMs,
        safetyLagMs: 120_000,
        postgres: { offsetMs: postgresAheadOfHostMs, errorMs: 1 },
        redis: { offsetMs: redisAheadOfHostMs, errorMs: 1 },
      });
    // This host five minutes behind both the API and Postgres: fine, the pipeline runs on Postgres's time.
    const behind = at(300_000, 300_000);
    expect(behind.status).toBe('ok');
    expect(behind.detail).toContain("this host is 300.0 s behind Postgres (the pipeline's clock) (±1 ms)");
    expect(behind.detail).toContain('Postgres is in sync with the API');
    // Postgres itself three minutes off the API: windows and signatures suffer.
    const postgresOff = at(0, 180_000);
    expect(postgresOff.status).toBe('fail');
    expect(postgresOff.detail).toContain('Postgres is 179.5 s ahead of the API');
    expect(postgresOff.fix).toContain('the Postgres host');
    expect(at(30_000, 0).status).toBe('warn');
    // Two hours off Redis: harmless, but surely a mistake.
    const absurd = at(0, 0, 7_200_000);
    expect(absurd.status).toBe('warn');
    expect(absurd.detail).toContain('behind Redis');
    expect(
      judgeClock({
        dateHeader: null,
        sentAtMs: 0,
        receivedAtMs: 0,
        safetyLagMs: 1,
        postgres: { offsetMs: 12, errorMs: 1 },
      }),
    ).toMatchObject({
      status: 'ok',
      detail: "this host is 12 ms behind Postgres (the pipeline's clock) (±1 ms)",
    });
  });

  it('reports the path to Postgres: direct and transaction-mode poolers are fine, a statement-mode pooler fails', () => {
    expect(judgeTopology({ ok: true, value: { mode: 'direct', evidence: 'e' } })).toMatchObject({
      status: 'ok',
      detail: 'direct (or a session-mode pooler): e',
    });
    expect(judgeTopology({ ok: true, value: { mode: 'transaction-pooler', evidence: 'e' } }).detail).toMatch(
      /^through a transaction-mode pooler \(e\): supported/,
    );
    expect(judgeTopology({ ok: true, value: { mode: 'statement-pooler', evidence: 'e' } }).status).toBe(
      'fail',
    );
    expect(judgeTopology({ ok: false, error: new Error('timeout') }).status).toBe('warn');
    expect(judgeTopology(null).status).toBe('skip');
  });
});
