/**
 * The floors the service is measured against, each a bare server in a process of its own (as the
 * service is): `bare` (Fastify answering a GET), `sqlite` (Fastify + one INSERT per request in its
 * own transaction, with the service's pragmas: WAL, synchronous=FULL), `pg` (Fastify + one INSERT
 * per request through a pool as large as the service's). Prints the listening port on stdout.
 */
import fs from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

async function main(): Promise<void> {
  const kind = process.argv[2];
  const target = process.argv[3] ?? '';
  const app = Fastify({ logger: false });
  if (kind === 'bare') {
    app.get('/', async () => ({ status: 'ok' }));
  } else if (kind === 'sqlite') {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const db = new SqliteDatabase(target);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = FULL');
    db.exec(
      'create table if not exists floor (id integer primary key autoincrement, body text not null, at text not null)',
    );
    const insert = db.prepare('insert into floor (body, at) values (?, ?)');
    app.post('/', async (req) => {
      insert.run(JSON.stringify(req.body), new Date().toISOString());
      return { status: 'ok' };
    });
    app.addHook('onClose', async () => db.close());
  } else if (kind === 'pg') {
    const pool = new pg.Pool({ connectionString: target, max: 10 });
    await pool.query(
      'create table if not exists floor (id bigserial primary key, body text not null, at text not null)',
    );
    app.post('/', async (req) => {
      await pool.query('insert into floor (body, at) values ($1, $2)', [
        JSON.stringify(req.body),
        new Date().toISOString(),
      ]);
      return { status: 'ok' };
    });
    app.addHook('onClose', async () => pool.end());
  } else {
    throw new Error(`unknown floor ${String(kind)}`);
  }
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${address}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((err: unknown) => {
  process.stderr.write(`floor failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
