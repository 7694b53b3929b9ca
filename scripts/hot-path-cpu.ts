/**
 * CPU per operation of the hot paths in one process, without HTTP on the way in: the real app
 * (`inject`), the gateway simulator and an ERP receiver on loopback in the same process, so every
 * figure includes their share too, the same for any two versions of paylink compared on one
 * machine. A steadier comparison than the bench when other work shares the machine: no load
 * generator, no socket on the way in, one process measured with `process.cpuUsage()`.
 *
 *   npx tsx scripts/hot-path-cpu.ts sqlite [n]
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx scripts/hot-path-cpu.ts postgres [n]
 *
 * With PostgreSQL, `DATABASE_POOL_MAX` sizes the store's pool as it does the service's.
 *
 * Prints µs CPU per new notification (confirmed with the simulator's status API), per duplicate,
 * per delivered ERP event (the outbox drained once the ERP is set) and per payment link created,
 * each phase 16 at a time, the webhooks also with their p50 and p99 answer time. On a PostgreSQL
 * server on the same machine it also prints the CPU its backends serving this process used per
 * operation (`/proc/<pid>/schedstat` of the connections named by `application_name`).
 *
 * Logging is off unless `--logging` is given: then the service's own logger (createLogger, info
 * level, the secret scrubber, the daily file in a temporary LOG_DIR, and stdout as the service
 * writes it) is used, and each phase also prints the log lines it wrote per operation. Send
 * stdout to /dev/null or a pipe so the terminal does not pay for the lines; the figures go to
 * stderr then:
 *
 *   npx tsx scripts/hot-path-cpu.ts sqlite 400 --logging > /dev/null
 *
 *   npx tsx scripts/hot-path-cpu.ts sqlite 400 --profile [--top 15] [--interval 100] [--save dir]
 *
 * `--profile` also profiles each phase on its own (node:inspector's Profiler started before the
 * phase and stopped after it, in this process, sampling every `--interval` µs, default 250) and prints, per
 * path, the main thread's self time by group (each package, each paylink directory, the simulator
 * and the ERP receiver on their own, node internals, GC) and by function, as µs per operation:
 * where the time of one operation goes. The profiler costs CPU itself (the phase's CPU per
 * operation rises by about the sampling's share) and samples wall time on the main thread: a
 * statement waiting for its fsync counts where it waits, the libuv threads not at all, and on a
 * busy machine the time the thread is not scheduled counts in whatever frame it was in. So each
 * group is printed as its share of the sampled time, as sampled µs per operation, and as that
 * share of the phase's measured CPU per operation (`cpu µs/op`, the figure to read). `--save`
 * writes each phase's `.cpuprofile` for `scripts/profile-summary.ts` or a viewer.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import pino, { type Logger } from 'pino';
import { startSimulator } from '../simulator/index.js';
import { loadConfig, type DatabaseConfig } from '../src/config/env.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { openStore } from '../src/storage/kysely/store.js';
import { startErpReceiver } from '../test/helpers/erp-receiver.js';
import { closeLogger, createLogger, flushLogger } from '../src/platform/logging/logger.js';
import { selfTimes, type Profile } from './profile-summary.js';

const KEY = 'erp-key-hot-path-cpu-0123456789';
const SECRET = 'raw-erp-secret-hot-path-cpu-0123456789';
const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const kind = args[0] === 'postgres' ? 'postgres' : 'sqlite';
const n = Number(args[1] ?? '400');
const logging = process.argv.includes('--logging');
/** With --logging stdout carries the log lines; the figures go to stderr. */
const report = (line: string) => (logging ? process.stderr.write(`${line}\n`) : console.log(line));

const flag = (name: string) => process.argv.includes(name);
const option = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const profiling = flag('--profile');
const top = Number(option('--top', '15'));
const interval = Number(option('--interval', '250'));
const saveDir = option('--save', '');

/** A phase's profile as µs per operation: busy time, then self time by group and by function. */
function printProfile(name: string, profile: Profile, count: number, cpuPerOp: number): void {
  const { busy, groups, functions } = selfTimes(profile);
  const per = (v: number) => (v / count).toFixed(0).padStart(7);
  const ofCpu = (v: number) => ((cpuPerOp * v) / Math.max(1, busy)).toFixed(0).padStart(7);
  const share = (v: number) => `${((100 * v) / Math.max(1, busy)).toFixed(1).padStart(5)} %`;
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  report(
    `\n## ${kind} ${name}: ${Math.round(cpuPerOp)} µs CPU, ${per(busy).trim()} µs sampled (main thread) per operation`,
  );
  report('\ncpu µs/op  sampled   share  self time by group');
  for (const [g, v] of sorted(groups)) report(`  ${ofCpu(v)}  ${per(v)}  ${share(v)}  ${g}`);
  report('\ncpu µs/op  sampled   share  self time by function');
  for (const [f, v] of sorted(functions)) report(`  ${ofCpu(v)}  ${per(v)}  ${share(v)}  ${f}`);
  report('');
}

/** Lines in every file of `dir` (the daily log files). */
function logLines(dir: string): number {
  let count = 0;
  for (const name of fs.readdirSync(dir)) {
    const text = fs.readFileSync(path.join(dir, name), 'utf8');
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count++;
  }
  return count;
}

async function inParallel<T>(items: T[], width: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await fn(item);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
}

/** The connections of this run, named so that their server backends can be found. */
const APPLICATION_NAME = `paylink-hot-path-cpu-${randomBytes(4).toString('hex')}`;
process.env.PGAPPNAME = APPLICATION_NAME;

/** CPU ns of the server backends of this run's connections; undefined when they cannot be read (another machine). */
async function serverNs(url: string): Promise<number | undefined> {
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      'select pid from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()',
      [APPLICATION_NAME],
    );
    let ns = 0;
    for (const r of rows) ns += Number(fs.readFileSync(`/proc/${r.pid}/schedstat`, 'utf8').split(' ')[0]);
    return ns;
  } catch {
    return undefined;
  } finally {
    await c.end();
  }
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function main(): Promise<void> {
  const erp = await startErpReceiver({ secret: SECRET });
  const serverKey = 'SB-Mid-server-hot-path-cpu';
  const sim = await startSimulator({ serverKey, logger: false });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-cpu-'));
  const pgUrl = process.env.TEST_DATABASE_URL;
  // DATABASE_POOL_MAX sizes the pool as it does the service's (unset: the default).
  const pool = loadConfig({ DATABASE_URL: pgUrl, DATABASE_POOL_MAX: process.env.DATABASE_POOL_MAX }).database;
  const database: DatabaseConfig =
    kind === 'postgres' && pgUrl && pool.kind === 'postgres'
      ? { kind: 'postgres', url: pgUrl, poolMax: pool.poolMax }
      : { kind: 'sqlite', path: path.join(dir, 'p.db') };
  const schema = kind === 'postgres' ? `cpu_${randomBytes(4).toString('hex')}` : undefined;
  const config = {
    ...loadConfig({ PORT: '0', MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: serverKey, API_KEYS: KEY }),
    database,
  };
  const logDir = path.join(dir, 'logs');
  const logger: Logger = logging
    ? await createLogger({
        level: 'info',
        logDir,
        stdout: true,
        secrets: [serverKey, KEY, SECRET, 'correct horse battery staple'],
      })
    : pino({ level: 'silent' });
  const store = await openStore(database, { logger, schema });
  const services = createServices(
    config,
    { logger, store, operator: { user: 'ops', pass: 'correct horse battery staple' } },
    { runtimeConfigCacheMs: 60_000, simulatorBaseUrl: sim.baseUrl },
  );
  const app = await buildApp(services);
  const simGet = async (p: string) => (await fetch(`${sim.baseUrl}${p}`)).json() as Promise<unknown>;
  const simPost = (p: string) =>
    fetch(`${sim.baseUrl}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const e = { app, services };
  try {
    const ids = Array.from({ length: n }, (_, i) => `CPU-${i}`);
    const bodies: Record<string, unknown>[] = [];
    await inParallel(ids, 8, async (orderId) => {
      const res = await e.app.inject({
        method: 'POST',
        url: '/api/charge',
        headers: { authorization: `Bearer ${KEY}` },
        payload: { order_id: orderId, nominal: 150000, payment_type: 'qris' },
      });
      const gid = (res.json() as { gateway_order_id: string }).gateway_order_id;
      await simPost(`/_sim/transactions/${gid}/pay`);
      const sent = await simGet(`/_sim/notifications?order_id=${encodeURIComponent(gid)}`);
      const found = (
        sent as { notifications: Array<{ transaction_status: string; payload: Record<string, unknown> }> }
      ).notifications.find((x) => x.transaction_status === 'settlement');
      if (!found) throw new Error(`no settlement notification for ${gid}`);
      bodies.push(found.payload);
    });
    /** Each webhook's time from its request to its answer, for the phase's p50 and p99. */
    let latencies: number[] = [];
    const post = async (payload: Record<string, unknown>, want: string) => {
      const t = performance.now();
      const r = await e.app.inject({ method: 'POST', url: '/webhook/midtrans', payload });
      latencies.push(performance.now() - t);
      const result = (r.json() as { result?: string }).result;
      if (result !== want) throw new Error(`expected ${want}, got ${r.statusCode} ${r.body}`);
    };
    const server = () => (kind === 'postgres' && pgUrl ? serverNs(pgUrl) : Promise.resolve(undefined));
    const session = profiling ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval });
    }
    const phase = async (name: string, fn: () => Promise<number>) => {
      if (logging) await flushLogger(logger);
      const lines0 = logging ? logLines(logDir) : 0;
      const s0 = await server();
      latencies = [];
      if (session) await session.post('Profiler.start');
      const c0 = cpuUs();
      const t0 = performance.now();
      const count = await fn();
      const cpu = (cpuUs() - c0) / count;
      const profile = session ? ((await session.post('Profiler.stop')).profile as Profile) : undefined;
      const s1 = await server();
      const backends =
        s0 === undefined || s1 === undefined
          ? ''
          : `; server backends ${Math.round((s1 - s0) / 1000 / count)} µs CPU each`;
      let perOp = '';
      if (logging) {
        await flushLogger(logger);
        perOp = `, ${((logLines(logDir) - lines0) / count).toFixed(2)} log lines each`;
      }
      const sorted = latencies.sort((a, b) => a - b);
      const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0);
      const answered = sorted.length > 0 ? `; answered in p50 ${at(0.5)} ms, p99 ${at(0.99)} ms` : '';
      report(
        `${kind} ${name}: ${Math.round(cpu)} µs CPU each, ${count} in ${Math.round(performance.now() - t0)} ms${backends}${answered}${perOp}${session ? ' (profiled)' : ''}`,
      );
      if (profile) {
        printProfile(name, profile, count, cpu);
        if (saveDir) {
          fs.mkdirSync(saveDir, { recursive: true });
          fs.writeFileSync(
            path.join(saveDir, `${kind}-${name.replace(/\W+/g, '-')}.cpuprofile`),
            JSON.stringify(profile),
          );
        }
      }
    };
    await phase('new notification', async () => {
      await inParallel(bodies, 16, (b) => post(b, 'applied'));
      return bodies.length;
    });
    await phase('duplicate', async () => {
      await inParallel(bodies, 16, (b) => post(b, 'duplicate'));
      return bodies.length;
    });
    const { document, version } = await services.runtimeConfig.overrides();
    const erpSettings = { ...document.erp, notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 5_000 };
    await services.runtimeConfig.save({ ...document, erp: erpSettings }, version, 'hot-path-cpu');
    await phase('delivered event', async () => e.services.outbox.drain());
    await phase('link creation', async () => {
      const links = Array.from({ length: n }, (_, i) => ({ order_id: `L${i % 50}-CPU-${i}`, nominal: 150_000 + i }));
      await inParallel(links, 16, async (payload) => {
        const r = await e.app.inject({
          method: 'POST',
          url: '/api/payment-links',
          headers: { authorization: `Bearer ${KEY}` },
          payload,
        });
        if (r.statusCode >= 300) throw new Error(`link creation: ${r.statusCode} ${r.body}`);
      });
      return links.length;
    });
    session?.disconnect();
  } finally {
    await app.close();
    await services.close();
    await sim.close();
    await erp.close();
    if (logging) await closeLogger(logger);
    if (schema && pgUrl) {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
