/**
 * The floors the service is measured against, each a bare server in a process of its own (as the
 * service is): `bare` (Fastify answering a GET), `sqlite` (Fastify + one INSERT per request in its
 * own transaction, with the service's pragmas: WAL, synchronous=FULL), `pg` (Fastify + one INSERT
 * per request through a pool as large as the service's). `confirmed-sqlite` and `confirmed-pg`
 * (arguments: database, simulator URL, server key) ask the gateway simulator for the posted
 * order's status (one GET through a keep-alive undici agent, as the service's client does) and
 * insert once it answers 200: the least a confirmed notification can cost. Prints the listening
 * address on stdout.
 *
 * The per-path floors, each the essential work of one of paylink's hot paths written plainly:
 * - `ingest-sqlite|pg` (database, simulator URL, server key, tag, orders): the webhook. The body
 *   validated with the webhook's own schema, the SHA-512 signature checked, one SELECT by the
 *   notification's unique key: a duplicate is answered there. A new one is confirmed with one
 *   status GET to the simulator, then written in one durable transaction (notification insert,
 *   transaction update, event insert). `GET /counts` says how many of each it answered.
 * - `link-sqlite|pg` (database, simulator URL, server key): a small JSON body validated, one POST
 *   to the simulator's payment-link endpoint, one durable insert of the link.
 * - `deliver-sqlite|pg` (database, receiver URL, events, lanes, warm-up events): no server. Signs
 *   (HMAC-SHA256, Standard Webhooks headers) and POSTs ~700-byte events to the receiver through a
 *   keep-alive undici agent with one connection per lane, `lanes` at a time, each followed by one
 *   durable UPDATE marking it delivered; prints `{ events, seconds, cpu_us }` for the events after
 *   the warm-up (CPU of this process, per event), and `grouped_seconds`, `grouped_cpu_us` for as
 *   many more whose UPDATEs share a commit when their answers arrive together.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';
import { NotificationBodySchema } from '../src/gateway/report.js';

type Insert = (body: unknown) => Promise<void>;

function sqliteOpen(target: string): SqliteDatabase.Database {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const db = new SqliteDatabase(target);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = FULL');
  return db;
}

function sqliteInsert(app: FastifyInstance, target: string): Insert {
  const db = sqliteOpen(target);
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
/** The status API call both confirming floors make: one GET to the simulator, 2 s for headers and body. */
function statusGet(agent: Agent, simUrl: string, auth: string, orderId: string) {
  return request(`${simUrl}/v2/${encodeURIComponent(orderId)}/status`, {
    method: 'GET',
    dispatcher: agent,
    headers: { accept: 'application/json', authorization: auth },
    headersTimeout: 2_000,
    bodyTimeout: 2_000,
  });
}

function confirmed(app: FastifyInstance, insert: Insert, simUrl: string, serverKey: string): void {
  const agent = new Agent({ connect: { timeout: 5_000 }, keepAliveTimeout: 10_000 });
  const auth = `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`;
  app.addHook('onClose', async () => agent.close());
  app.post('/', async (req, reply) => {
    const orderId = String((req.body as { order_id?: unknown }).order_id);
    const res = await statusGet(agent, simUrl, auth, orderId);
    const status = (await res.body.json()) as { status_code?: string };
    if (res.statusCode !== 200 || status.status_code !== '200') return reply.code(502).send({ status: 'unconfirmed' });
    await insert(req.body);
    return { status: 'ok' };
  });
}

/** The tables of the per-path floors: the columns the paths write, each lookup key unique and indexed. */
const TABLES = (serial: string) => [
  `create table if not exists transactions (id ${serial} primary key, gateway_order_id text not null unique, nominal bigint not null, status text not null, transaction_status text, gateway_transaction_id text, status_version integer not null default 0, updated_at text not null)`,
  `create table if not exists notifications (id ${serial} primary key, dedupe_key text not null unique, gateway_order_id text not null, transaction_ref bigint not null, result text not null, payload text not null, received_at text not null)`,
  `create table if not exists outbox_events (seq ${serial} primary key, event_id text not null unique, order_id text not null, status_version integer not null, payload text not null, state text not null, attempts integer not null default 0, created_at text not null, delivered_at text)`,
  `create table if not exists links (id ${serial} primary key, order_id text not null unique, nominal bigint not null, payment_url text not null, gateway_json text not null, created_at text not null)`,
];

/** What the webhook floor writes for a confirmed notification, in one transaction. */
interface Applied {
  orderId: string;
  key: string;
  status: string;
  gatewayTransactionId: string;
  payload: string;
  eventId: string;
  event: string;
  at: string;
}

interface PathStore {
  seen(key: string): Promise<boolean>;
  /** False when no transaction has that order. */
  apply(a: Applied): Promise<boolean>;
  link(orderId: string, nominal: number, url: string, json: string): Promise<void>;
  /** Inserts pending events; returns their sequence numbers and bodies. */
  seedEvents(n: number): Promise<{ seq: number; id: string; body: string }[]>;
  delivered(seq: number): Promise<void>;
  /** All in one commit (SQLite: an UPDATE each; PostgreSQL: one UPDATE of them all). */
  deliveredAll(seqs: number[]): Promise<void>;
  close(): Promise<void>;
}

const ORDERS_SEED = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `FLOOR-${tag}-${i}`);

/** A ~700-byte ERP event, the shape of paylink's `payment.status_changed`. */
function eventBody(id: string, orderId: string, at: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id,
    type: 'payment.status_changed',
    created_at: at,
    data: {
      order_id: orderId,
      mercant_id: orderId.split('-')[0],
      status: 'paid',
      previous_status: 'pending',
      transaction_status: 'settlement',
      status_version: 1,
      nominal: 10_000,
      gross_amount: '10000.00',
      currency: 'IDR',
      payment_type: 'bank_transfer',
      transaction_id: randomUUID(),
      transaction_time: '2026-11-22 10:00:00',
      settlement_time: '2026-11-22 10:01:00',
      fraud_status: 'accept',
      va_numbers: [{ bank: 'bca', va_number: '12345678901' }],
      payment_url: null,
      source: 'webhook',
      ...extra,
    },
  });
}

async function sqlitePaths(target: string, tag: string, orders: number): Promise<PathStore> {
  const db = sqliteOpen(target);
  for (const t of TABLES('integer')) db.exec(t);
  const now = new Date().toISOString();
  const seedTx = db.prepare(
    "insert into transactions (gateway_order_id, nominal, status, updated_at) values (?, 10000, 'pending', ?)",
  );
  db.transaction(() => {
    for (const o of ORDERS_SEED(tag, orders)) seedTx.run(o, now);
  })();
  const seen = db.prepare('select id from notifications where dedupe_key = ?').pluck();
  const insertN = db.prepare(
    "insert into notifications (dedupe_key, gateway_order_id, transaction_ref, result, payload, received_at) values (?, ?, ?, 'applied', ?, ?)",
  );
  const update = db.prepare(
    "update transactions set status = 'paid', transaction_status = ?, gateway_transaction_id = ?, status_version = status_version + 1, updated_at = ? where gateway_order_id = ? returning id, status_version",
  );
  const insertE = db.prepare(
    "insert into outbox_events (event_id, order_id, status_version, payload, state, created_at) values (?, ?, ?, ?, 'pending', ?)",
  );
  const apply = db.transaction((a: Applied): boolean => {
    const t = update.get(a.status, a.gatewayTransactionId, a.at, a.orderId) as
      { id: number; status_version: number } | undefined;
    if (!t) throw new Error('unknown order');
    insertN.run(a.key, a.orderId, t.id, a.payload, a.at);
    insertE.run(a.eventId, a.orderId, t.status_version, a.event, a.at);
    return true;
  });
  const link = db.prepare(
    'insert into links (order_id, nominal, payment_url, gateway_json, created_at) values (?, ?, ?, ?, ?)',
  );
  const seedE = db
    .prepare(
      "insert into outbox_events (event_id, order_id, status_version, payload, state, created_at) values (?, ?, 1, ?, 'pending', ?) returning seq",
    )
    .pluck();
  const done = db.prepare(
    "update outbox_events set state = 'delivered', attempts = attempts + 1, delivered_at = ? where seq = ?",
  );
  return {
    seen: async (key) => seen.get(key) !== undefined,
    apply: async (a) => {
      try {
        return apply.immediate(a);
      } catch (err) {
        if (err instanceof Error && err.message === 'unknown order') return false;
        throw err;
      }
    },
    link: async (orderId, nominal, url, json) => {
      link.run(orderId, nominal, url, json, new Date().toISOString());
    },
    seedEvents: async (n) =>
      db.transaction(() =>
        Array.from({ length: n }, (_, i) => {
          const id = randomUUID();
          const body = eventBody(id, `EV-${i}`, now);
          return { seq: Number(seedE.get(id, `EV-${i}`, body, now)), id, body };
        }),
      )(),
    delivered: async (seq) => {
      done.run(new Date().toISOString(), seq);
    },
    deliveredAll: async (seqs) => {
      const at = new Date().toISOString();
      db.transaction(() => {
        for (const seq of seqs) done.run(at, seq);
      }).immediate();
    },
    close: async () => {
      db.close();
    },
  };
}

async function pgPaths(target: string, tag: string, orders: number, max = 10): Promise<PathStore> {
  const pool = new pg.Pool({ connectionString: target, max });
  for (const t of TABLES('bigserial')) await pool.query(t);
  const now = new Date().toISOString();
  if (orders > 0)
    await pool.query(
      "insert into transactions (gateway_order_id, nominal, status, updated_at) select unnest($1::text[]), 10000, 'pending', $2",
      [ORDERS_SEED(tag, orders), now],
    );
  await pool.query('analyze');
  return {
    seen: async (key) =>
      (await pool.query({ name: 'seen', text: 'select id from notifications where dedupe_key = $1', values: [key] }))
        .rowCount === 1,
    // One round trip: the three writes as one statement, committed on its own (synchronous_commit on).
    apply: async (a) =>
      (
        await pool.query({
          name: 'apply',
          text: `with t as (update transactions set status = 'paid', transaction_status = $3, gateway_transaction_id = $4, status_version = status_version + 1, updated_at = $7 where gateway_order_id = $1 returning id, status_version),
            n as (insert into notifications (dedupe_key, gateway_order_id, transaction_ref, result, payload, received_at) select $2, $1, t.id, 'applied', $5, $7 from t)
            insert into outbox_events (event_id, order_id, status_version, payload, state, created_at) select $6, $1, t.status_version, $8, 'pending', $7 from t`,
          values: [a.orderId, a.key, a.status, a.gatewayTransactionId, a.payload, a.eventId, a.at, a.event],
        })
      ).rowCount === 1,
    link: async (orderId, nominal, url, json) => {
      await pool.query({
        name: 'link',
        text: 'insert into links (order_id, nominal, payment_url, gateway_json, created_at) values ($1, $2, $3, $4, $5)',
        values: [orderId, nominal, url, json, new Date().toISOString()],
      });
    },
    seedEvents: async (n) => {
      const rows = Array.from({ length: n }, (_, i) => {
        const id = randomUUID();
        return { id, order: `EV-${i}`, body: eventBody(id, `EV-${i}`, now) };
      });
      const r = await pool.query<{ seq: string; event_id: string }>(
        "insert into outbox_events (event_id, order_id, status_version, payload, state, created_at) select unnest($1::text[]), unnest($2::text[]), 1, unnest($3::text[]), 'pending', $4 returning seq, event_id",
        [rows.map((x) => x.id), rows.map((x) => x.order), rows.map((x) => x.body), now],
      );
      const seqs = new Map(r.rows.map((x) => [x.event_id, Number(x.seq)]));
      return rows.map((x) => ({ seq: seqs.get(x.id) ?? 0, id: x.id, body: x.body }));
    },
    delivered: async (seq) => {
      await pool.query({
        name: 'delivered',
        text: "update outbox_events set state = 'delivered', attempts = attempts + 1, delivered_at = $1 where seq = $2",
        values: [new Date().toISOString(), seq],
      });
    },
    // One statement for them all: one round trip, one commit.
    deliveredAll: async (seqs) => {
      await pool.query({
        name: 'delivered-all',
        text: "update outbox_events set state = 'delivered', attempts = attempts + 1, delivered_at = $1 where seq = any($2::bigint[])",
        values: [new Date().toISOString(), seqs],
      });
    },
    close: () => pool.end(),
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The webhook's essential work: validate, verify, look up; confirm and write a new one. */
function ingest(app: FastifyInstance, store: PathStore, simUrl: string, serverKey: string): void {
  const agent = new Agent({ connect: { timeout: 5_000 }, keepAliveTimeout: 10_000 });
  const auth = `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`;
  const counts = { applied: 0, duplicate: 0 };
  app.addHook('onClose', async () => agent.close());
  app.get('/counts', async () => counts);
  app.post('/', { bodyLimit: 64 * 1024, schema: { body: NotificationBodySchema } }, async (req, reply) => {
    const b = req.body as Record<string, unknown>;
    const [orderId, statusCode, gross, sig] = [
      str(b.order_id),
      str(b.status_code),
      str(b.gross_amount),
      str(b.signature_key),
    ];
    if (!orderId || !statusCode || !gross || !sig) return reply.code(400).send({ status: 'invalid' });
    const expected = createHash('sha512')
      .update(orderId + statusCode + gross + serverKey, 'utf8')
      .digest();
    const got = Buffer.from(sig.toLowerCase(), 'hex');
    if (got.length !== expected.length || !timingSafeEqual(got, expected))
      return reply.code(401).send({ status: 'unauthorized' });
    const status = str(b.transaction_status);
    const key = `${orderId}|${str(b.transaction_id)}|${status}|${statusCode}`;
    if (await store.seen(key)) {
      counts.duplicate++;
      return { status: 'ok', result: 'duplicate' };
    }
    const res = await statusGet(agent, simUrl, auth, orderId);
    const s = (await res.body.json()) as Record<string, unknown>;
    if (
      res.statusCode !== 200 ||
      s.status_code !== '200' ||
      s.order_id !== orderId ||
      Number(s.gross_amount) !== Number(gross)
    )
      return reply.code(502).send({ status: 'unconfirmed' });
    const at = new Date().toISOString();
    const eventId = randomUUID();
    const applied = await store.apply({
      orderId,
      key,
      status: str(s.transaction_status),
      gatewayTransactionId: str(s.transaction_id),
      payload: JSON.stringify(b),
      eventId,
      event: eventBody(eventId, orderId, at, { transaction_status: s.transaction_status }),
      at,
    });
    if (!applied) return reply.code(404).send({ status: 'unknown order' });
    counts.applied++;
    return { status: 'ok', result: 'applied' };
  });
}

const LinkBodySchema = {
  type: 'object',
  required: ['order_id', 'nominal'],
  additionalProperties: false,
  properties: {
    order_id: { type: 'string', minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9._~-]+$' },
    nominal: { type: 'integer', minimum: 1, maximum: 999_999_999_999 },
  },
} as const;

/** Link creation's essential work: validate, one payment-link POST to the gateway, one durable insert. */
function link(app: FastifyInstance, store: PathStore, simUrl: string, serverKey: string): void {
  const agent = new Agent({ connect: { timeout: 5_000 }, keepAliveTimeout: 10_000 });
  const auth = `Basic ${Buffer.from(`${serverKey}:`).toString('base64')}`;
  app.addHook('onClose', async () => agent.close());
  app.post('/', { schema: { body: LinkBodySchema } }, async (req, reply) => {
    const { order_id: orderId, nominal } = req.body as { order_id: string; nominal: number };
    const res = await request(`${simUrl}/v1/payment-links`, {
      method: 'POST',
      dispatcher: agent,
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({
        transaction_details: { order_id: orderId, gross_amount: nominal, payment_link_id: orderId.toLowerCase() },
        usage_limit: 1,
        expiry: { duration: 60, unit: 'minutes' },
        item_details: [{ name: 'Order', price: nominal, quantity: 1 }],
      }),
      headersTimeout: 5_000,
      bodyTimeout: 5_000,
    });
    const text = await res.body.text();
    const out = JSON.parse(text) as { payment_url?: unknown };
    if (res.statusCode >= 300 || typeof out.payment_url !== 'string')
      return reply.code(502).send({ status: 'gateway' });
    await store.link(orderId, nominal, out.payment_url, text);
    return reply.code(201).send({ order_id: orderId, payment_url: out.payment_url });
  });
}

/** Standard Webhooks' signature: base64 HMAC-SHA256 of `id.timestamp.body`. */
function signed(secret: Buffer, id: string, body: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'user-agent': 'paylink-floor/1',
    'webhook-id': id,
    'webhook-timestamp': ts,
    'webhook-signature': `v1,${mac}`,
  };
}

/** Delivers seeded events `lanes` at a time; prints the CPU per event after the warm-up. */
/**
 * The marks of the events whose answers came in the same turn of the event loop, written together
 * in one commit (one fsync on SQLite, one round trip on PostgreSQL), as the service's group commit
 * writes a round's results.
 */
function groupedMarks(store: PathStore): (seq: number) => Promise<void> {
  let pending: { seq: number; done: () => void; fail: (err: unknown) => void }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    store.deliveredAll(batch.map((x) => x.seq)).then(
      () => batch.forEach((x) => x.done()),
      (err: unknown) => batch.forEach((x) => x.fail(err)),
    );
  };
  return (seq) =>
    new Promise((done, fail) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ seq, done, fail });
    });
}

/**
 * Delivers seeded events `lanes` at a time and prints the CPU per event after the warm-up: `n`
 * events each marked in a commit of its own (`cpu_us`), then `n` more whose marks share commits
 * (`grouped_cpu_us`).
 */
async function deliverFloor(store: PathStore, receiver: string, n: number, lanes: number, warm: number): Promise<void> {
  const events = await store.seedEvents(2 * n + warm);
  const agent = new Agent({ connections: lanes, connect: { timeout: 5_000 }, keepAliveTimeout: 4_000 });
  const secret = randomBytes(24);
  const run = async (batch: typeof events, mark: (seq: number) => Promise<void>) => {
    let next = 0;
    const lane = async () => {
      for (let e = batch[next++]; e; e = batch[next++]) {
        const res = await request(receiver, {
          method: 'POST',
          dispatcher: agent,
          headers: signed(secret, e.id, e.body),
          body: e.body,
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        await res.body.dump();
        if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
        await mark(e.seq);
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  };
  const measure = async (batch: typeof events, mark: (seq: number) => Promise<void>) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await run(batch, mark);
    const c = process.cpuUsage(c0);
    return { seconds: (performance.now() - t0) / 1000, cpu_us: (c.user + c.system) / batch.length };
  };
  const own = (seq: number) => store.delivered(seq);
  const grouped = groupedMarks(store);
  await run(events.slice(0, warm / 2), own);
  await run(events.slice(warm / 2, warm), grouped);
  const single = await measure(events.slice(warm, warm + n), own);
  const shared = await measure(events.slice(warm + n), grouped);
  process.stdout.write(
    `${JSON.stringify({ events: n, ...single, grouped_seconds: shared.seconds, grouped_cpu_us: shared.cpu_us })}\n`,
  );
  await agent.close();
  await store.close();
}

async function main(): Promise<void> {
  const kind = process.argv[2] ?? '';
  const target = process.argv[3] ?? '';
  const [a4, a5, a6, a7] = process.argv.slice(4);
  const pathStore = (k: string, tag = '', orders = 0) =>
    k.endsWith('-pg') ? pgPaths(target, tag, orders) : sqlitePaths(target, tag, orders);
  if (kind.startsWith('deliver-'))
    return deliverFloor(await pathStore(kind), a4 ?? '', Number(a5), Number(a6), Number(a7 ?? '0'));
  const app = Fastify({ logger: false });
  if (kind === 'ingest-sqlite' || kind === 'ingest-pg') {
    const store = await pathStore(kind, a6 ?? '', Number(a7 ?? '0'));
    app.addHook('onClose', () => store.close());
    ingest(app, store, a4 ?? '', a5 ?? '');
  } else if (kind === 'link-sqlite' || kind === 'link-pg') {
    const store = await pathStore(kind);
    app.addHook('onClose', () => store.close());
    link(app, store, a4 ?? '', a5 ?? '');
  } else if (kind === 'confirmed-sqlite' || kind === 'confirmed-pg') {
    const insert = kind === 'confirmed-sqlite' ? sqliteInsert(app, target) : await pgInsert(app, target);
    confirmed(app, insert, a4 ?? '', a5 ?? '');
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
