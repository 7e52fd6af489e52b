import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PassOutcome } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./fixtures/run-intent-pass.ts', import.meta.url));

let h: IntentHarness;
beforeAll(async () => {
  h = await createIntentHarness('intent_tokens');
});
afterAll(async () => {
  await h?.close();
});

async function passInAnotherProcess(): Promise<PassOutcome> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...h.env, REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as PassOutcome;
}

const tokenRow = () =>
  h.database.db
    .selectFrom('rewards.oauth_tokens')
    .select(['generation', 'last_error', 'refresh_token_encrypted'])
    .executeTakeFirstOrThrow();

describe('OAuth bearer for payment intents across processes', () => {
  it('rotates the refresh token once when two processes find the access token rejected at the same time', async () => {
    const first = await passInAnotherProcess();
    expect(first.status).toBe('succeeded');
    const before = await tokenRow();
    expect(before.last_error).toBeNull();

    // The simulator's clock moves past the access token's 60 minutes: both processes get 401 and must
    // refresh; the refresh token rotates on use, so a second refresh with the old one would lock us out.
    h.sim.control.clock.advance(61 * 60_000);
    const [a, b] = await Promise.all([passInAnotherProcess(), passInAnotherProcess()]);
    expect([a.status, b.status]).toEqual(['succeeded', 'succeeded']);
    const after = await tokenRow();
    expect(after.last_error).toBeNull();
    expect(after.generation).toBe(before.generation + 1);
    expect(after.refresh_token_encrypted).not.toBe(before.refresh_token_encrypted);

    // And the rotated token keeps working for a third process.
    expect((await passInAnotherProcess()).status).toBe('succeeded');
  });
});
