/** Child processes of the bench (servers and the load generator) and the loopback ERP receiver. */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { LoadResult, LoadSpec } from './load.js';

const here = path.dirname(new URL(import.meta.url).pathname);
export const ROOT = path.resolve(here, '..');
const TSX = ['--import', 'tsx'];

export const epochMs = () => performance.timeOrigin + performance.now();

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface Running {
  pid: number;
  url: string;
  /** Spawn to first good answer (the service: /health/ready), ms. */
  startupMs: number;
  /** CPU time used by then, ms (the start-up's cost, which other work on the machine does not inflate). */
  startupCpuMs: number;
  /** Peak resident set so far (VmHWM), MB. */
  peakRssMb(): number;
  /** Resident set now (VmRSS), MB. */
  rssMb(): number;
  /** CPU time the process has used so far (user + system), ms: a cost that other work on the machine does not inflate as much as a rate. */
  cpuMs(): number;
  stop(): Promise<void>;
}

function statusMb(pid: number, field = 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function cpuTime(pid: number): number {
  try {
    // Fields 14 and 15 of /proc/PID/stat (after the command name): utime and stime, in clock ticks (100 per second).
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

/** Polls `url` until it answers `ok`; rejects when the child exits first or after 30 s. */
async function waitReady(child: ChildProcess, url: string, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${stderr().slice(-2000)}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`server not ready at ${url}: ${stderr().slice(-2000)}`);
}

/** Extra node options for the service (`--cpu-prof …`), from BENCH_SERVICE_NODE_ARGS. */
const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0);

/**
 * BENCH_TRACING=<ratio> (0.1, 1): the service traces that share of its work to an OTLP/HTTP sink on
 * loopback (spans counted, not kept); unset or `off`: no tracing.
 */
export const benchTracing = (process.env.BENCH_TRACING ?? 'off').trim();

export interface OtlpSink {
  url: string;
  /** Export requests and bytes received so far. */
  received(): { requests: number; bytes: number };
  close(): Promise<void>;
}

/** An OTLP/HTTP receiver that answers 200 to every export and counts what it got. */
export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ requests, bytes }),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let sink: Promise<OtlpSink> | undefined;

/** The environment that turns tracing on for the service, per BENCH_TRACING. */
async function tracingEnv(): Promise<Record<string, string>> {
  if (benchTracing === 'off' || benchTracing === '') return {};
  const ratio = Number(benchTracing);
  if (!(ratio > 0 && ratio <= 1))
    throw new Error(`BENCH_TRACING must be off or a ratio in (0, 1] (got ${benchTracing})`);
  sink ??= startOtlpSink();
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: (await sink).url,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(ratio),
  };
}

/** What the bench's OTLP sink received (undefined without tracing); closes it. */
export async function closeOtlpSink(): Promise<{ requests: number; bytes: number } | undefined> {
  if (!sink) return undefined;
  const s = await sink;
  sink = undefined;
  const got = s.received();
  await s.close();
  return got;
}

/**
 * The built service as an operator starts it (`paylink serve`): the bundle `dist/bundle/cli.mjs serve`
 * that `bin/paylink.js` runs, without its check that the build is current. Without a bundle (esbuild
 * missing), the compiled sources: `node dist/src/server.js`, or with tracing `node dist/src/cli.js
 * serve`, which starts tracing before the server loads.
 */
export async function startService(env: Record<string, string>, port: number): Promise<Running> {
  const started = epochMs();
  const tracing = await tracingEnv();
  const entry = fs.existsSync(path.join(ROOT, 'dist/bundle/cli.mjs'))
    ? ['dist/bundle/cli.mjs', 'serve']
    : Object.keys(tracing).length > 0
      ? ['dist/src/cli.js', 'serve']
      : ['dist/src/server.js'];
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, entry[0] ?? ''), ...entry.slice(1)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env, ...tracing, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}/health/ready`, () => err);
  const startupMs = epochMs() - started;
  return {
    pid: child.pid ?? 0,
    url,
    startupMs,
    startupCpuMs: cpuTime(child.pid ?? 0),
    peakRssMb: () => statusMb(child.pid ?? 0),
    rssMb: () => statusMb(child.pid ?? 0, 'VmRSS'),
    cpuMs: () => cpuTime(child.pid ?? 0),
    stop: stopper(child),
  };
}

/**
 * The gateway simulator as built (`node dist/simulator/main.js`), in a process of its own as
 * Midtrans is in production: its CPU is not the service's, and every status call crosses a socket.
 */
export async function startSimulatorProcess(serverKey: string): Promise<Running> {
  const started = epochMs();
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'simulator', 'main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SIMULATOR_PORT: String(port),
      SIMULATOR_HOST: '127.0.0.1',
      SIMULATOR_SERVER_KEY: serverKey,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}/_sim/config`, () => err);
  return {
    pid: child.pid ?? 0,
    url,
    startupMs: epochMs() - started,
    startupCpuMs: cpuTime(child.pid ?? 0),
    peakRssMb: () => statusMb(child.pid ?? 0),
    rssMb: () => statusMb(child.pid ?? 0, 'VmRSS'),
    cpuMs: () => cpuTime(child.pid ?? 0),
    stop: stopper(child),
  };
}

export type FloorKind =
  | 'bare'
  | 'sqlite'
  | 'pg'
  | 'confirmed-sqlite'
  | 'confirmed-pg'
  | 'ingest-sqlite'
  | 'ingest-pg'
  | 'link-sqlite'
  | 'link-pg';

/**
 * A floor server of `bench/floors.ts`. The confirmed floors also take the simulator's URL and the
 * server key (`extra`): each request asks the simulator for its order's status before inserting.
 */
export async function startFloor(kind: FloorKind, target = '', extra: string[] = []): Promise<Running> {
  const started = epochMs();
  const child = spawn(process.execPath, [...TSX, path.join(here, 'floors.ts'), kind, target, ...extra], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`floor ${kind} exited (${code}): ${err}`)));
  });
  return {
    pid: child.pid ?? 0,
    url,
    startupMs: epochMs() - started,
    startupCpuMs: cpuTime(child.pid ?? 0),
    peakRssMb: () => statusMb(child.pid ?? 0),
    rssMb: () => statusMb(child.pid ?? 0, 'VmRSS'),
    cpuMs: () => cpuTime(child.pid ?? 0),
    stop: stopper(child),
  };
}

export interface DeliverFloor {
  events: number;
  seconds: number;
  /** CPU per event, each event's UPDATE committed on its own. */
  cpu_us: number;
  grouped_seconds: number;
  /** CPU per event, the UPDATEs of events answered together sharing one commit. */
  grouped_cpu_us: number;
}

/**
 * The delivered-event floor of `bench/floors.ts` (`deliver-sqlite` or `deliver-pg`): `events` signed
 * POSTs to `receiver`, `lanes` at a time, each with its durable UPDATE, after `warm` more, then
 * `events` more whose UPDATEs share commits; its own CPU per event (after the warm-up) and the
 * time they took.
 */
export async function runDeliverFloor(
  kind: 'deliver-sqlite' | 'deliver-pg',
  target: string,
  receiver: string,
  events: number,
  lanes: number,
  warm: number,
): Promise<DeliverFloor> {
  const child = spawn(
    process.execPath,
    [...TSX, path.join(here, 'floors.ts'), kind, target, receiver, String(events), String(lanes), String(warm)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`floor ${kind} exited (${code}): ${err}`);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as DeliverFloor;
}

/** Runs autocannon in its own process with `spec`. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-load-'));
  const file = path.join(dir, 'spec.json');
  fs.writeFileSync(file, JSON.stringify(spec));
  try {
    const child = spawn(process.execPath, [...TSX, path.join(here, 'load.ts'), file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`load generator exited (${code}): ${err}`);
    return JSON.parse(out) as LoadResult;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `bodies` where the load generator reads them; returns the file. */
export function bodiesFile(dir: string, name: string, bodies: unknown[]): string {
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(bodies.map((b) => JSON.stringify(b))));
  return file;
}

export interface Receiver {
  url: string;
  received(): number;
  /** Arrival time (epoch ms) of the first event of each order id. */
  arrivals: Map<string, number>;
  /** Events answered 2xx, by order id: exactly one each when nothing is lost or sent twice. */
  accepted: Map<string, number>;
  firstAt(): number;
  lastAt(): number;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** How long the ERP takes to answer each event, ms (0: at once). */
  delayMs?: number;
  /** While true the ERP answers 503 and the event does not count as received. */
  down?: () => boolean;
}

/**
 * A loopback ERP: answers 204 (after `delayMs`, or 503 while `down()`) and notes when each order's
 * event arrived; the default is a fast one answering at once.
 */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  let count = 0;
  let first = 0;
  let last = 0;
  const arrivals = new Map<string, number>();
  const accepted = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (opts.down?.()) return void res.writeHead(503).end();
      const at = epochMs();
      count++;
      if (first === 0) first = at;
      last = at;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { order_id?: unknown };
        if (typeof body.order_id === 'string') {
          if (!arrivals.has(body.order_id)) arrivals.set(body.order_id, at);
          accepted.set(body.order_id, (accepted.get(body.order_id) ?? 0) + 1);
        }
      } catch {
        // not ours to judge
      }
      if (opts.delayMs) setTimeout(() => res.writeHead(204).end(), opts.delayMs);
      else res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/erp`,
    received: () => count,
    arrivals,
    accepted,
    firstAt: () => first,
    lastAt: () => last,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}
