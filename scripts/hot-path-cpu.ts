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
 * Prints µs CPU per new notification (confirmed with the simulator's status API), per duplicate,
 * and per delivered ERP event (the outbox drained once the ERP is set), each phase 16 at a time.
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
import pino from 'pino';
import { startSimulator } from '../simulator/index.js';
import { loadConfig, type DatabaseConfig } from '../src/config/env.js';
import { createServices } from '../src/services.js';
import { buildApp } from '../src/app.js';
import { openStore } from '../src/storage/kysely/store.js';
import { startErpReceiver } from '../test/helpers/erp-receiver.js';
import { selfTimes, type Profile } from './profile-summary.js';

const KEY = 'erp-key-hot-path-cpu-0123456789';
const SECRET = 'raw-erp-secret-hot-path-cpu-0123456789';
const kind = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const n = Number(process.argv[3] ?? '400');
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
  console.log(
    `\n## ${kind} ${name}: ${Math.round(cpuPerOp)} µs CPU, ${per(busy).trim()} µs sampled (main thread) per operation`,
  );
  console.log('\ncpu µs/op  sampled   share  self time by group');
  for (const [g, v] of sorted(groups)) console.log(`  ${ofCpu(v)}  ${per(v)}  ${share(v)}  ${g}`);
  console.log('\ncpu µs/op  sampled   share  self time by function');
  for (const [f, v] of sorted(functions)) console.log(`  ${ofCpu(v)}  ${per(v)}  ${share(v)}  ${f}`);
  console.log('');
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
  const database: DatabaseConfig =
    kind === 'postgres' && pgUrl ? { kind: 'postgres', url: pgUrl } : { kind: 'sqlite', path: path.join(dir, 'p.db') };
  const schema = kind === 'postgres' ? `cpu_${randomBytes(4).toString('hex')}` : undefined;
  const config = {
    ...loadConfig({ PORT: '0', MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: serverKey, API_KEYS: KEY }),
    database,
  };
  const logger = pino({ level: 'silent' });
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
    const post = async (payload: Record<string, unknown>, want: string) => {
      const r = await e.app.inject({ method: 'POST', url: '/webhook/midtrans', payload });
      const result = (r.json() as { result?: string }).result;
      if (result !== want) throw new Error(`expected ${want}, got ${r.statusCode} ${r.body}`);
    };
    const session = profiling ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval });
    }
    const phase = async (name: string, fn: () => Promise<number>) => {
      if (session) await session.post('Profiler.start');
      const c0 = cpuUs();
      const t0 = performance.now();
      const count = await fn();
      const cpu = (cpuUs() - c0) / count;
      const profile = session ? ((await session.post('Profiler.stop')).profile as Profile) : undefined;
      console.log(
        `${kind} ${name}: ${Math.round(cpu)} µs CPU each, ${count} in ${Math.round(performance.now() - t0)} ms${session ? ' (profiled)' : ''}`,
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
    session?.disconnect();
  } finally {
    await app.close();
    await services.close();
    await sim.close();
    await erp.close();
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
