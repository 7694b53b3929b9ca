/**
 * `paylink migrate`: applies this version's migrations and exits, for a deploy step that runs
 * before the new instances start (every instance also migrates at start; running them once first
 * keeps a slow migration out of the instances' start-up and health checks). Migrations only go
 * forward: a database migrated by a newer version keeps serving an older one beside it.
 */
import type { Config } from '../config/env.js';
import { lockSqliteFile, openStore, type MigrateOutcome, type SqliteLock } from '../storage/kysely/store.js';
import type { MigrationStatus } from '../storage/contract.js';

export async function migrateDatabase(config: Config): Promise<MigrationStatus & { run: MigrateOutcome }> {
  // SQLite serves one process: while the service runs, it migrates the file itself.
  const lock: SqliteLock | undefined =
    config.database.kind === 'sqlite' ? lockSqliteFile(config.database.path) : undefined;
  try {
    let run: MigrateOutcome = { applied: [], latest: undefined };
    const store = await openStore(config.database, { onMigrated: (o) => (run = o) });
    try {
      return { ...(await store.migrationStatus()), run };
    } finally {
      await store.close();
    }
  } finally {
    lock?.release();
  }
}
