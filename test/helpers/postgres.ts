const HOST = process.env.TEST_PGHOST ?? '127.0.0.1';
const PORT = process.env.TEST_PGPORT ?? '5432';
const USER = process.env.TEST_PGUSER ?? 'postgres';

export const ADMIN_URL = `postgres://${USER}@${HOST}:${PORT}/postgres`;

export function databaseUrl(name: string): string {
  return `postgres://${USER}@${HOST}:${PORT}/${name}`;
}
