import { fork, type ChildProcess } from 'node:child_process';

// A tiny request/response protocol over Node's IPC channel, so a bench can run the simulator or
// the pipeline in a child process (its CPU and memory then are not charged to the other side)
// and still drive it step by step.

/** One JSON argument in, one JSON-serializable value out (or a promise of it). */
export type Handlers = Record<string, (arg: never) => unknown>;

interface Call {
  id: number;
  op: string;
  arg: unknown;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

interface Ready {
  ready: unknown;
}

export interface RpcChild<H extends Handlers> {
  readonly pid: number;
  call<K extends keyof H & string>(op: K, arg: Parameters<H[K]>[0]): Promise<Awaited<ReturnType<H[K]>>>;
  /** Resolves with the exit code once the child has exited. */
  readonly exited: Promise<number | null>;
  kill(): void;
}

/**
 * Forks `script` (under tsx unless it is compiled JavaScript) and waits for its `ready` message. Pending calls fail if the child
 * dies, so a crash surfaces as an error of the bench instead of a hang.
 */
export async function forkRpcChild<H extends Handlers, R>(
  script: string,
  options: { env: NodeJS.ProcessEnv; execArgv?: string[]; argv?: string[] },
): Promise<{ child: RpcChild<H>; ready: R }> {
  const proc: ChildProcess = fork(script, options.argv ?? [], {
    env: options.env,
    // A compiled script (dist/…js) runs on plain node, as the built worker does: no tsx loader.
    execArgv: [...(script.endsWith('.js') ? [] : ['--import', 'tsx']), ...(options.execArgv ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code) => {
      for (const call of pending.values())
        call.reject(new Error(`${script} exited (code ${code}) during a call`));
      pending.clear();
      resolve(code);
    });
  });
  // Without a listener, a failed send to a child that just died would crash the bench.
  proc.on('error', () => undefined);
  const ready = await new Promise<R>((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`${script} exited (code ${code}) before it was ready`));
    proc.once('exit', onExit);
    proc.once('error', reject);
    proc.on('message', (message: Reply | Ready) => {
      if ('ready' in message) {
        proc.off('exit', onExit);
        resolve(message.ready as R);
        return;
      }
      const call = pending.get(message.id);
      if (call === undefined) return;
      pending.delete(message.id);
      if (message.ok) call.resolve(message.value);
      else call.reject(new Error(`${script}: ${message.error}`));
    });
  });
  const child: RpcChild<H> = {
    pid: proc.pid ?? -1,
    call(op, arg) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        // A dead child's channel takes no message and would leave the call pending forever.
        if (!proc.connected) {
          reject(new Error(`${script} is not running (call ${op})`));
          return;
        }
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        proc.send({ id, op, arg } satisfies Call, (error) => {
          if (error === null || !pending.has(id)) return;
          pending.delete(id);
          reject(error);
        });
      });
    },
    exited,
    kill: () => proc.kill('SIGTERM'),
  };
  return { child, ready };
}

/** Child side: answers calls with `handlers` and tells the parent it is ready. */
export function serveRpc(handlers: Handlers, ready: unknown): void {
  if (process.send === undefined) throw new Error('this script runs as a child of a bench (no IPC channel)');
  process.on('message', (message: Call) => {
    const handler = handlers[message.op];
    void (async () => {
      try {
        if (handler === undefined) throw new Error(`unknown operation ${message.op}`);
        const value = await handler(message.arg as never);
        process.send?.({ id: message.id, ok: true, value: value ?? null } satisfies Reply);
      } catch (error) {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        process.send?.({ id: message.id, ok: false, error: text } satisfies Reply);
      }
    })();
  });
  // The bench died: do not linger holding a port or database connections.
  process.once('disconnect', () => process.exit(1));
  process.send({ ready } satisfies Ready);
}

/** CPU seconds of this process so far in the kernel (system time: page faults, socket I/O). */
export function systemCpuSeconds(): number {
  return process.cpuUsage().system / 1e6;
}

/** CPU seconds (user + system) of this process so far. */
export function cpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
