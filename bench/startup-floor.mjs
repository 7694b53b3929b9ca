/**
 * The start-up floor: the packages the service loads before it answers (Fastify and the plugins it
 * registers at start, TypeBox, pino with pino-roll, undici, prom-client, Kysely and the database
 * driver), one database opened as the service opens it, one route answering /health/ready, and no
 * paylink code. `bench/startup.ts … --entry floor` starts it like the service and reads the same
 * figures, so the service's start-up and idle memory are read against what Node and these
 * packages take by themselves.
 */
import path from 'node:path';
import fs from 'node:fs';

const [{ default: Fastify }, { default: pino }, { default: roll }, { Kysely, SqliteDialect, PostgresDialect }] =
  await Promise.all([import('fastify'), import('pino'), import('pino-roll'), import('kysely')]);
await Promise.all([
  import('undici'),
  import('prom-client'),
  import('typebox'),
  import('@fastify/cookie'),
  import('@fastify/formbody'),
  import('@fastify/csrf-protection'),
  import('@fastify/type-provider-typebox'),
]);

const logDir = process.env.LOG_DIR ?? path.join(process.env.DATA_DIR ?? '.', 'logs');
fs.mkdirSync(logDir, { recursive: true });
const file = await roll({ file: path.join(logDir, 'floor.log'), size: '20m', mkdir: true });
const logger = pino({ level: 'info' }, file);

let db;
if (process.env.DATABASE_URL) {
  const { default: pg } = await import('pg');
  db = new Kysely({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) }),
  });
} else {
  const { default: Database } = await import('better-sqlite3');
  const sqlite = new Database(path.join(process.env.DATA_DIR ?? '.', 'floor.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  db = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) });
}
await db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();

const app = Fastify({ loggerInstance: logger });
app.get('/health/ready', async () => ({ status: 'ready' }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => db.destroy()));
