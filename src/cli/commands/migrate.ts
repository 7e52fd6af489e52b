import { Command } from 'commander';
import type { CliContext } from '../context.js';

export function migrateCommand(context: CliContext): Command {
  return new Command('migrate')
    .description(
      'create the database if it is missing and apply pending migrations (safe to repeat and to run concurrently)',
    )
    .action(async () => {
      const { createDatabase } = await import('../../warehouse/database.js');
      const { ensureDatabase, migrateToLatest } = await import('../../warehouse/migrate.js');
      const { waitForServices } = await import('../wait-for-services.js');
      const config = context.config();
      await waitForServices(config, context.logger(), { postgres: 'DATABASE_URL' });
      const url = config.databaseUrl.reveal();
      const { created } = await ensureDatabase(url);
      const db = createDatabase({ url, maxConnections: 2 });
      try {
        const { applied } = await migrateToLatest(db);
        const database = new URL(url).pathname.slice(1);
        context.stdout.write(
          `${created ? `created database ${database}; ` : ''}` +
            (applied.length === 0 ? 'schema rewards is up to date\n' : `applied ${applied.join(', ')}\n`),
        );
      } finally {
        await db.destroy();
      }
    });
}
