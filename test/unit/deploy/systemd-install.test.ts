import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { userInfo, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The install steps in deploy/systemd/rewards-etl-worker.service's header, as an operator pastes
// them: the file steps run for real in a temporary root (/etc and /opt moved under it), the others
// (useradd, systemctl, systemd-run) are checked against what the unit itself expects.

const ROOT = new URL('../../../', import.meta.url).pathname;
const UNIT_PATH = 'deploy/systemd/rewards-etl-worker.service';
const unit = readFileSync(join(ROOT, UNIT_PATH), 'utf8');

/** The header's commands: `#   <command>` lines, `\` continuations joined, trailing comments dropped. */
function installSteps(): string[] {
  const header = unit.slice(0, unit.indexOf('\n['));
  const steps: string[] = [];
  let pending = '';
  for (const line of header.split('\n')) {
    const match = /^# {3}(.*)$/.exec(line);
    if (match === null) continue;
    const text = `${pending}${match[1]!.trim()}`;
    if (text.endsWith('\\')) pending = `${text.slice(0, -1).trim()} `;
    else {
      steps.push(text.replace(/\s{2,}#.*$/, '').trim());
      pending = '';
    }
  }
  return steps;
}

/** `Key=value` of the unit's [Service] section. */
function serviceSetting(key: string): string {
  const value = new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1];
  if (value === undefined) throw new Error(`${UNIT_PATH} has no ${key}=`);
  return value.trim();
}

const steps = installSteps();
const stepsOf = (command: string) => steps.filter((step) => step.startsWith(`sudo ${command} `));

describe('the systemd unit install steps, run in a temporary root', () => {
  let root: string;
  let workdir: string;
  const reroot = (path: string) => join(root, path);

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'rewards-etl-root-'));
    workdir = mkdtempSync(join(tmpdir(), 'rewards-etl-operator-'));
    // What the system and the earlier steps provide: systemd's unit directory, and a built checkout
    // of this repository in /opt/rewards-etl (this one: `npm ci` built its dist/).
    mkdirSync(reroot('/etc/systemd/system'), { recursive: true });
    mkdirSync(reroot('/opt'), { recursive: true });
    symlinkSync(ROOT, reroot(serviceSetting('WorkingDirectory')));
    writeFileSync(join(workdir, '.env'), 'SVC_API_KEY=secret-value\n');
  });

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  });

  it('every install step succeeds from the operator directory holding .env (no missing directory)', () => {
    const installs = stepsOf('install');
    expect(installs.length).toBeGreaterThan(0);
    const { username } = userInfo();
    const group = spawnSync('id', ['-gn'], { encoding: 'utf8' }).stdout.trim();
    for (const step of installs) {
      // Paths under /etc and /opt move into the root; the owner is ours (no rewards-etl group here).
      const command = step
        .replace(/^sudo /, '')
        .replace(/(?<=\s)\/(etc|opt)\//g, `${root}/$1/`)
        .replace('-o root -g rewards-etl', `-o ${username} -g ${group}`);
      const ran = spawnSync('bash', ['-c', command], { cwd: workdir, encoding: 'utf8' });
      expect(ran.stderr, step).toBe('');
      expect(ran.status, step).toBe(0);
    }
    const envFile = serviceSetting('EnvironmentFile');
    expect(readFileSync(reroot(envFile), 'utf8')).toBe('SVC_API_KEY=secret-value\n');
    expect(statSync(reroot(envFile)).mode & 0o777).toBe(0o640);
    expect(statSync(reroot('/etc/rewards-etl')).mode & 0o777).toBe(0o750);
    expect(readFileSync(reroot('/etc/systemd/system/rewards-etl-worker.service'), 'utf8')).toBe(unit);
  });

  it('the unit finds what the steps put in place: its user, environment file, directory and entry point', () => {
    const user = stepsOf('useradd')[0]?.split(' ').at(-1);
    expect(user).toBe(serviceSetting('User'));
    expect(serviceSetting('Group')).toBe(user); // useradd makes the user's own group
    expect(stepsOf('useradd')[0]).toContain(`--home ${serviceSetting('WorkingDirectory')} `);
    const doctor = stepsOf('systemd-run')[0] ?? '';
    expect(doctor).toContain(`-p EnvironmentFile=${serviceSetting('EnvironmentFile')} `);
    expect(doctor).toContain(`-p WorkingDirectory=${serviceSetting('WorkingDirectory')} `);
    expect(doctor).toContain(`--uid=${user} `);
    const entry = /dist\/src\/cli\/main\.js/.exec(serviceSetting('ExecStart'))?.[0] ?? 'none';
    expect(statSync(join(reroot(serviceSetting('WorkingDirectory')), entry)).isFile()).toBe(true);
    expect(stepsOf('systemctl').map((step) => step.replace(/^sudo systemctl /, ''))).toEqual([
      'daemon-reload',
      'enable --now rewards-etl-worker',
    ]);
  });
});
