import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { alertRequestHeaders } from '../../../src/alerts/sign-alert.js';
import { postAlert } from '../../../src/alerts/webhook-sender.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { freePort } from '../../helpers/free-port.js';
import { createProcessPool, REPO_ROOT, type SpawnedProcess } from '../../helpers/processes.js';
import { createIntentHarness, WEBHOOK_SECRET, type IntentHarness } from './harness.js';

// docs/payment-intents.md, "Verifying a delivery": the receiver it shows is what works after
// `npm install` of the packed package. The package is packed, installed into an empty project (from
// the npm cache), and the docs' block runs there, as a receiver of real deliveries.

const DOCS = join(REPO_ROOT, 'docs/payment-intents.md');
const ENTRY = join(REPO_ROOT, 'dist/src/webhooks.js');
/** What the published entry is built from: dist is rebuilt when one is newer than it. */
const ENTRY_SOURCES = [
  'src/webhooks.ts',
  'src/alerts/verify-signature.ts',
  'src/alerts/sign-alert.ts',
  'src/sync/alert-signature-schemes.ts',
  'package.json',
];

/** The first ```js block of the "Verifying a delivery" section, as written. */
function docsReceiver(): string {
  const text = readFileSync(DOCS, 'utf8');
  const section = text.slice(text.indexOf('## Verifying a delivery'));
  const block = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined)
    throw new Error('no js block under "Verifying a delivery" in docs/payment-intents.md');
  return block;
}

const processes = createProcessPool();
let h: IntentHarness;
let intents: StreamDeps<PartnerApi>;
let project: string;
let receiver: SpawnedProcess;
let receiverUrl: string;

/** npm as a user runs it: the parent's npm_* variables (vitest under npm) are not passed on. */
async function npm(args: string[], cwd: string): Promise<void> {
  const run = processes.spawn('npm', args, { cwd, env: {}, label: `npm ${args[0]}` });
  const exit = await run.waitForExit(170_000);
  if (exit.code !== 0) throw new Error(`npm ${args.join(' ')} exited ${exit.code}: ${run.stderr()}`);
}

beforeAll(async () => {
  const built = existsSync(ENTRY) ? statSync(ENTRY).mtimeMs : 0;
  if (ENTRY_SOURCES.some((path) => statSync(join(REPO_ROOT, path)).mtimeMs > built)) {
    await npm(['run', 'build'], REPO_ROOT);
  }
  project = mkdtempSync(join(tmpdir(), 'rewards-etl-receiver-'));
  // dist is current (above): packing skips `prepare`, which would build it again.
  await npm(['pack', '--ignore-scripts', '--pack-destination', project], REPO_ROOT);
  const tarball = readFileSync(join(REPO_ROOT, 'package.json'), 'utf8').match(/"version": "([^"]+)"/)?.[1];
  writeFileSync(join(project, 'package.json'), '{ "name": "receiver", "private": true, "type": "module" }\n');
  await npm(
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      `./rewards-etl-${tarball}.tgz`,
    ],
    project,
  );
  writeFileSync(join(project, 'receiver.mjs'), docsReceiver());
  const port = await freePort();
  receiverUrl = `http://127.0.0.1:${port}/`;
  receiver = processes.spawn(process.execPath, ['receiver.mjs'], {
    cwd: project,
    env: { PORT: String(port), ALERT_WEBHOOK_SECRET: WEBHOOK_SECRET },
    label: 'docs receiver',
  });
  await waitUntilListening(receiverUrl, receiver);

  h = await createIntentHarness('tarball');
  intents = await h.deps({ env: { ALERT_WEBHOOK_URL: '' } });
  await runPaymentIntentsPass(intents); // import history: no alerts
}, 400_000);

afterAll(async () => {
  await processes.cleanup();
  await h?.close();
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

async function waitUntilListening(url: string, process: SpawnedProcess): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (process.child.exitCode !== null) throw new Error(`the receiver exited: ${process.stderr()}`);
    const answered = await fetch(url, { method: 'POST', body: '{}' }).then(
      () => true,
      () => false,
    );
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the receiver never listened on ${url}: ${process.stderr()}`);
}

async function paidIntent(): Promise<string> {
  const { id } = h.sim.control.intents.create({});
  await runPaymentIntentsPass(intents);
  h.sim.control.intents.pay(id);
  await runPaymentIntentsPass(intents);
  const alert = await h.database.db
    .selectFrom('rewards.alerts')
    .select('id')
    .where('payment_intent_id', '=', id)
    .executeTakeFirstOrThrow();
  return alert.id;
}

const alertRow = (id: string) =>
  h.database.db.selectFrom('rewards.alerts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('the verifier as the docs import it, from the packed and installed package', () => {
  it('the docs receiver (import from rewards-etl/webhooks) accepts a real delivery', async () => {
    const alertId = await paidIntent();
    await runAlertsPass(await h.deps({ env: { ALERT_WEBHOOK_URL: receiverUrl } }));
    const row = await alertRow(alertId);
    expect(row.last_error).toBeNull();
    expect(row.delivered_at).not.toBeNull();
    // Its line is written before it answers; the pipe may bring it a moment after the answer.
    await expect
      .poll(() => receiver.stdout(), { timeout: 10_000 })
      .toContain(`received payment_intent.paid ${alertId}`);
  });

  it('the docs receiver answers 400 to a tampered body and to a delivery signed with another secret', async () => {
    const rawBody = '{"id":"evt-1","type":"payment_intent.paid"}';
    const headers = alertRequestHeaders({
      alertId: 'evt-1',
      rawBody,
      now: new Date(),
      secret: WEBHOOK_SECRET,
      userAgent: 'test',
    });
    const post = (body: string, signed: Record<string, string>) =>
      postAlert({ url: receiverUrl, rawBody: body, headers: signed, timeoutMs: 5_000, maxReplyBytes: 1_024 });
    expect(await post(rawBody, headers)).toEqual({ ok: true, status: 200 });
    expect(await post(rawBody.replace('paid', 'refunded'), headers)).toEqual({
      ok: false,
      status: 400,
      error: 'HTTP 400: signature-mismatch',
    });

    const alertId = await paidIntent();
    await runAlertsPass(
      await h.deps({ env: { ALERT_WEBHOOK_URL: receiverUrl, ALERT_WEBHOOK_SECRET: 'another-secret' } }),
    );
    const row = await alertRow(alertId);
    expect(row.delivered_at).toBeNull();
    expect(row.last_error).toBe('HTTP 400: signature-mismatch');
  });

  it('the installed package carries the types: a TypeScript receiver importing rewards-etl/webhooks compiles', async () => {
    writeFileSync(
      join(project, 'check.ts'),
      [
        "import { verifyRewardsSignature, type SignatureVerdict } from 'rewards-etl/webhooks';",
        "const verdict: SignatureVerdict = verifyRewardsSignature({ rawBody: '{}', header: undefined, secret: 's' });",
        "if (!verdict.ok) console.log(verdict.reason satisfies 'missing-header' | 'malformed-header' | 'timestamp-out-of-tolerance' | 'signature-mismatch');",
        '',
      ].join('\n'),
    );
    const tsc = processes.spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--typeRoots',
        join(REPO_ROOT, 'node_modules/@types'),
        '--types',
        'node',
        'check.ts',
      ],
      { cwd: project, env: {}, label: 'tsc' },
    );
    const exit = await tsc.waitForExit(120_000);
    expect(`${tsc.stdout()}${tsc.stderr()}`).toBe('');
    expect(exit.code).toBe(0);
  });
});
