/**
 * Where `rewards-etl simulator` listens unless told otherwise (docker-compose.yml publishes the same
 * port), so the `.env` it prints stays valid across restarts. In-process starts take a free port.
 * On its own: the CLI reads it without loading the simulator.
 */
export const DEFAULT_SIMULATOR_PORT = 8787;
