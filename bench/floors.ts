/**
 * The floors the service is measured against, each a bare server in a process of its own (as the
 * service is): `bare` (Fastify answering a GET), `sqlite` (Fastify + one INSERT per request in its
 * own transaction, with the service's pragmas: WAL, synchronous=FULL), `pg` (Fastify + one INSERT
 * per request through a pool as large as the service's). `confirmed-sqlite` and `confirmed-pg`
 * (arguments: database, simulator URL, server key) ask the gateway simulator for the posted
 * order's status (one GET through a keep-alive undici agent, as the service's client does) and
 * insert once it answers 200: the least a confirmed notification can cost. Prints the listening
 * address on stdout.
 */
import fs from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';

type Insert = (body: unknown) => Promise<void>;

function sqliteInsert(app: FastifyInstance, target: string): Insert {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const db = new SqliteDatabase(target);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = FULL');
  db.exec(
    'create table if not exists floor (id integer primary key autoincrement, body text not null, at text not null)',
  );
  const insert = db.prepare('insert into floor (body, at) values (?, ?)');
  app.addHook('onClose', async () => db.close());
  return async (body) => {
    insert.run(JSON.stringify(body), new Date().toISOString());
  };
}

async function pgInsert(app: FastifyInstance, target: string): Promise<Insert> {
  const pool = new pg.Pool({ connectionString: target, max: 10 });
  await pool.query('create table if not exists floor (id bigserial primary key, body text not null, at text not null)');
  app.addHook('onClose', async () => pool.end());
  return async (body) => {
    await pool.query('insert into floor (body, at) values ($1, $2)', [JSON.stringify(body), new Date().toISOString()]);
  };
}

/** One status GET to the simulator per request, then the insert: 502 when the gateway does not say 200. */
function confirmed(app: FastifyInstance, insert: Insert, simUrl: string, serverKey: string): void {
  const agent = new Agent({ connect: { timeout: 5_000 }, keepAliveTimeout: 10_000 });
  const auth = `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`;
  app.addHook('onClose', async () => agent.close());
  app.post('/', async (req, reply) => {
    const orderId = String((req.body as { order_id?: unknown }).order_id);
    const res = await request(`${simUrl}/v2/${encodeURIComponent(orderId)}/status`, {
      method: 'GET',
      dispatcher: agent,
      headers: { accept: 'application/json', authorization: auth },
      headersTimeout: 2_000,
      bodyTimeout: 2_000,
    });
    const status = (await res.body.json()) as { status_code?: string };
    if (res.statusCode !== 200 || status.status_code !== '200') return reply.code(502).send({ status: 'unconfirmed' });
    await insert(req.body);
    return { status: 'ok' };
  });
}

async function main(): Promise<void> {
  const kind = process.argv[2];
  const target = process.argv[3] ?? '';
  const app = Fastify({ logger: false });
  if (kind === 'confirmed-sqlite' || kind === 'confirmed-pg') {
    const insert = kind === 'confirmed-sqlite' ? sqliteInsert(app, target) : await pgInsert(app, target);
    confirmed(app, insert, process.argv[4] ?? '', process.argv[5] ?? '');
  } else if (kind === 'bare') {
    app.get('/', async () => ({ status: 'ok' }));
  } else if (kind === 'sqlite' || kind === 'pg') {
    const insert = kind === 'sqlite' ? sqliteInsert(app, target) : await pgInsert(app, target);
    app.post('/', async (req) => {
      await insert(req.body);
      return { status: 'ok' };
    });
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
