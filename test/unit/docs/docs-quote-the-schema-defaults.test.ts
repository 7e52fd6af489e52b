import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { envSchema } from '../../../src/config/env-schema.js';
import { packageVersion } from '../../../src/package-info.js';
import { thresholdsFor } from '../../../src/status/verdict.js';
import {
  asEnvironmentValue,
  proseDefaults,
  settingsTableDefaults,
  type DefaultQuote,
  type Located,
} from './doc-facts.js';
import { documentationPages, readRepositoryFile, repositoryTree } from './repository-files.js';

// A default is written in three places: the env schema (src/config/env-schema.ts), the settings
// tables, and the prose that mentions it. The schema is the truth; each quote is read with the
// variable's own parser, so `60s` and `1m` are one value, and compared with the schema's default.

type Variable = keyof typeof envSchema.shape;

function isVariable(name: string): name is Variable {
  return Object.hasOwn(envSchema.shape, name);
}

const A_BASE_URL = 'https://partner.example/v1';

/**
 * Variables the schema leaves unset and src/config.ts fills in (a URL built from another, the
 * package's version, a mode's own default): what a default quoted in the docs stands for, and what
 * the configuration gives.
 */
const FILLED_IN_BY_CONFIG: Partial<
  Record<Variable, { quoted: (text: string) => string; actual: () => string }>
> = {
  REDIS_URL: { quoted: (text) => text, actual: () => loadConfig({}).redisUrl.reveal() },
  // Only for Sentinel and Cluster: standalone takes TLS from the URL's scheme.
  REDIS_TLS: {
    quoted: (text) => text,
    actual: () => String(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).redis.tls),
  },
  SVC_USER_AGENT: {
    quoted: (text) => text.replace('<version>', packageVersion()),
    actual: () => loadConfig({}).api.userAgent,
  },
  SVC_OAUTH_TOKEN_URL: {
    quoted: (text) => text.replace('${SVC_API_BASE_URL}', A_BASE_URL),
    actual: () =>
      loadConfig({
        SVC_API_BASE_URL: A_BASE_URL,
        SVC_OAUTH_CLIENT_ID: 'client',
        SVC_OAUTH_CLIENT_SECRET: 'client-secret',
        TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      }).oauth?.tokenUrl ?? 'no OAuth configuration',
  },
};

function schemaDefault(variable: Variable): unknown {
  return envSchema.shape[variable].parse(undefined);
}

/** What is wrong with one quoted default, or undefined when it is the schema's. */
function disagreement(quote: DefaultQuote): string | undefined {
  const { variable, quoted } = quote;
  if (!isVariable(variable)) return `${variable} is no variable of the env schema`;
  if (quoted.kind === 'words') return undefined;
  const filled = FILLED_IN_BY_CONFIG[variable];
  if (quoted.kind === 'none') {
    const actual = filled?.actual() ?? schemaDefault(variable);
    return actual === undefined
      ? undefined
      : `${variable} is quoted as having no default, but it is ${JSON.stringify(actual)}`;
  }
  if (filled !== undefined) {
    const actual = filled.actual();
    const said = filled.quoted(quoted.text);
    return said === actual
      ? undefined
      : `${variable} is quoted as ${quoted.text}, but the configuration gives ${actual}`;
  }
  const parsed = envSchema.shape[variable].safeParse(quoted.text);
  if (!parsed.success)
    return `${variable} is quoted as ${quoted.text}, which it refuses: ${parsed.error.issues[0]?.message}`;
  const actual = schemaDefault(variable);
  if (actual === undefined)
    return `${variable} is quoted as ${quoted.text}, but the schema gives it no default`;
  return isDeepStrictEqual(parsed.data, actual)
    ? undefined
    : `${variable} is quoted as ${quoted.text} (${JSON.stringify(parsed.data)}), but the schema's default is ${JSON.stringify(actual)}`;
}

function problems(file: string, quotes: Located<DefaultQuote>[]): string[] {
  return quotes.flatMap(({ line, fact }) => {
    const problem = disagreement(fact);
    return problem === undefined ? [] : [`${file}:${line}: ${problem}`];
  });
}

/** The Prometheus rule files: their comments quote defaults too. */
function ruleFiles(): string[] {
  return [...repositoryTree().files].filter((file) => /^deploy\/prometheus\/.+\.ya?ml$/.test(file)).sort();
}

describe('every default the docs quote is the env schema’s', () => {
  it('in the settings tables (variable | default | meaning) of every page', () => {
    const found = documentationPages().flatMap((page) =>
      problems(page, settingsTableDefaults(readRepositoryFile(page))),
    );
    expect(found).toEqual([]);
  });

  it('in prose: `VAR` (value), `VAR` (default value), `VAR` defaults to value, `VAR` `value` (was …)', () => {
    const pages = [...documentationPages(), ...ruleFiles()];
    const found = pages.flatMap((page) =>
      problems(
        page,
        proseDefaults(readRepositoryFile(page)).filter(({ fact }) => isVariable(fact.variable)),
      ),
    );
    expect(found).toEqual([]);
  });

  it('every variable of the env schema has a row in the settings tables of docs/configuration.md', () => {
    const documented = new Set(
      settingsTableDefaults(readRepositoryFile('docs/configuration.md')).map(({ fact }) => fact.variable),
    );
    expect(Object.keys(envSchema.shape).filter((name) => !documented.has(name))).toEqual([]);
  });

  it("the Prometheus lag alert's threshold is the status page's at the default settings", () => {
    const rules = readRepositoryFile('deploy/prometheus/rewards-etl-alerts.yml');
    const block = /- alert: RewardsEtlCheckinFeedLagging\n[\s\S]*?expr: (.+)/.exec(rules)?.[1] ?? '';
    // The expression: lag > 3 × the stream's interval (exported) + a constant (safety lag + grace).
    const constant =
      /> 3 \* max\(rewards_etl_stream_interval_seconds\{stream="checkins"\}\) \+ (\d+)\s*$/.exec(block)?.[1];
    const config = loadConfig({});
    const expected = thresholdsFor(config).maxLagSeconds - (3 * config.schedules.checkinsMs) / 1000;
    expect({ expr: block, constant: Number(constant) }).toEqual({ expr: block, constant: expected });
  });
});

describe('how the docs tests read a default', () => {
  it('reads every form the docs use, wrapped lines and bare names included', () => {
    const page = [
      'within `WORKER_IDLE_TIMEOUT` (60s), and `LEASE_TTL`',
      '(default 30 s) while; `RETRY_AFTER_MAX` (default 15 min, at most 24 d), and `SNAPSHOT_MAX_DROP` (20%);',
      '`CHECKINS_SAFETY_LAG` defaults to `1m` (was `2m`); `CHECKINS_EVERY` `30s` (was `1m`);',
      'on `HTTP_HOST`:`HTTP_PORT` (default `127.0.0.1:9464`); CHECKINS_SAFETY_LAG (default 120 s) +',
      '`STATUS_TOKEN` (16 characters at least), `REDIS_PREFIX` (`{rewards-etl}` by default), `MEMBER_PII` (`store`, `hash`)',
    ].join('\n');
    expect(
      proseDefaults(page).map(({ line, fact }) => `${line} ${fact.variable}=${JSON.stringify(fact.quoted)}`),
    ).toEqual([
      '1 WORKER_IDLE_TIMEOUT={"kind":"value","text":"60s"}',
      '1 LEASE_TTL={"kind":"value","text":"30s"}',
      '2 SNAPSHOT_MAX_DROP={"kind":"value","text":"0.2"}',
      '2 RETRY_AFTER_MAX={"kind":"value","text":"15m"}',
      '3 CHECKINS_SAFETY_LAG={"kind":"value","text":"1m"}',
      '3 CHECKINS_EVERY={"kind":"value","text":"30s"}',
      '4 HTTP_HOST={"kind":"value","text":"127.0.0.1"}',
      '4 HTTP_PORT={"kind":"value","text":"9464"}',
      '4 CHECKINS_SAFETY_LAG={"kind":"value","text":"120s"}',
    ]);
  });

  it('reads a settings table: several variables per row, remarks and words apart', () => {
    const page = [
      '| variable | default | meaning |',
      '| --- | --- | --- |',
      '| `HTTP_HOST`, `HTTP_PORT` | `127.0.0.1`, `9464` | where |',
      '| `CHECKINS_SAFETY_LAG` | `1m` (was `2m`) | lag |',
      '| `RESTAURANTS_EVERY`, `CHALLENGES_EVERY` | `1h` | schedules |',
      '| `SVC_API_BASE_URL` | none (required but for `demo`) | base |',
      '| `CHECKINS_START_AT` | 30 days before first run | start |',
      '',
      '| command | default | meaning |',
      '| `x` | `1` | not settings |',
    ].join('\n');
    expect(
      settingsTableDefaults(page).map(
        ({ line, fact }) => `${line} ${fact.variable}=${JSON.stringify(fact.quoted)}`,
      ),
    ).toEqual([
      '3 HTTP_HOST={"kind":"value","text":"127.0.0.1"}',
      '3 HTTP_PORT={"kind":"value","text":"9464"}',
      '4 CHECKINS_SAFETY_LAG={"kind":"value","text":"1m"}',
      '5 RESTAURANTS_EVERY={"kind":"value","text":"1h"}',
      '5 CHALLENGES_EVERY={"kind":"value","text":"1h"}',
      '6 SVC_API_BASE_URL={"kind":"none"}',
      '7 CHECKINS_START_AT={"kind":"words","text":"30 days before first run"}',
    ]);
  });

  it('finds a wrong default, a refused one and one the schema lacks; 60s is 1m', () => {
    const quote = (variable: string, text: string): DefaultQuote => ({
      variable,
      quoted: { kind: 'value', text },
    });
    expect(disagreement(quote('CHECKINS_SAFETY_LAG', '60s'))).toBeUndefined();
    expect(disagreement(quote('CHECKINS_SAFETY_LAG', asEnvironmentValue('1 min')))).toBeUndefined();
    expect(disagreement(quote('CHECKINS_SAFETY_LAG', '120s'))).toBe(
      "CHECKINS_SAFETY_LAG is quoted as 120s (120000), but the schema's default is 60000",
    );
    expect(disagreement(quote('SVC_RATE_LIMIT_RPS', 'fast'))).toBe(
      'SVC_RATE_LIMIT_RPS is quoted as fast, which it refuses: "fast" is not a positive number',
    );
    expect(disagreement(quote('SVC_API_KEY', 'abc'))).toBe(
      'SVC_API_KEY is quoted as abc, but the schema gives it no default',
    );
    expect(disagreement({ variable: 'HTTP_PORT', quoted: { kind: 'none' } })).toBe(
      'HTTP_PORT is quoted as having no default, but it is 9464',
    );
    expect(disagreement(quote('SVC_USER_AGENT', 'rewards-etl/<version>'))).toBeUndefined();
    expect(disagreement(quote('NO_SUCH_SETTING', '1'))).toBe(
      'NO_SUCH_SETTING is no variable of the env schema',
    );
  });
});
