// Entry of the simulator's child process (see simulator-process.ts): the simulator's CPU and
// memory stay out of the measured pipeline process.

import { startSimulator } from '../../src/simulator/index.js';
import { cpuSeconds, serveRpc } from './rpc.js';
import type { SimulatorHandlers, SimulatorOptionsJson, SimulatorReady } from './simulator-process.js';

const options = JSON.parse(process.argv[2] ?? '{}') as SimulatorOptionsJson;
const sim = await startSimulator({
  seed: options.seed,
  checkIns: options.checkIns,
  anchor: new Date(options.anchorMs),
  days: options.days,
});

const handlers: SimulatorHandlers = {
  requests: () => sim.control.requests.list(),
  clearRequests: () => sim.control.requests.clear(),
  freezeClockAt: (atMs) => {
    sim.control.clock.set(new Date(atMs));
    sim.control.clock.freeze();
  },
  setClock: (atMs) => sim.control.clock.set(new Date(atMs)),
  liveTick: () => sim.control.live.tick(),
  usage: () => ({
    cpuSeconds: cpuSeconds(),
    rssBytes: process.memoryUsage().rss,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  }),
  close: async () => {
    await sim.close();
    setImmediate(() => process.exit(0));
  },
};

const ready: SimulatorReady = { baseUrl: sim.baseUrl, apiKey: sim.credentials.apiKey };
serveRpc(handlers, ready);
