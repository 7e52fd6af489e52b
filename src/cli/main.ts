#!/usr/bin/env node
import { createCliContext } from './context.js';
import { loadDotEnv } from './dotenv.js';
import { runCli } from './program.js';

const dotEnvNames = loadDotEnv();
// Long-running commands (worker, simulator) resolve only when they are done.
process.exitCode = await runCli(process.argv.slice(2), createCliContext(process.env, { dotEnvNames }));
