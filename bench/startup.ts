/**
 * Start-up and idle memory of the built service, several starts in a row:
 *
 *   npx tsx bench/startup.ts sqlite|postgres [runs] [--entry bin|server|floor] [--idle 3] [--node-args "..."]
 *
 * Each run starts `node bin/paylink.js serve` (`--entry server`: `node dist/src/server.js`, unbundled) on a
 * fresh database (PostgreSQL: a database of its own under BENCH_DATABASE_URL, or
 * postgres://postgres@127.0.0.1:5432/test) with the embedded defaults otherwise (the built-in
 * simulator, no ERP), and prints per run: spawn → first 200 from /health/ready, the CPU the process
 * used by then, and after `--idle` seconds of idling its RSS and V8 heap spaces (read by a preload
 * that only imports node:v8 and node:fs and writes them to a file when asked, checking every 100 ms). Run `npm run build`
 * first: this measures dist/. `--entry floor` starts bench/startup-floor.mjs instead: the same
 * packages, one database and one route, without paylink — the least such a start can cost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { ROOT, epochMs, freePort } from './procs.js';
import { freshDatabase } from './seed.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const kind = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const runs = Number(process.argv[3] ?? 5) || 5;
const ENTRIES: Record<string, string[]> = {
  bin: ['bin/paylink.js', 'serve'],
  server: ['dist/src/server.js'],
  // The packages the service starts with, one database and one route, no paylink code: the floor.
  floor: ['bench/startup-floor.mjs'],
};
const entry = ENTRIES[arg('--entry') ?? 'bin'] ?? ENTRIES.bin ?? [];
const idleS = Number(arg('--idle') ?? 3);
const extraArgs = (arg('--node-args') ?? '').split(' ').filter((a) => a.length > 0);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(f[11]) + Number(f[12])) * 10;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m?.[1] ? Number(m[1]) / 1024 : 0;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-startup-'));
const statsFile = path.join(tmp, 'heap.json');
const trigger = path.join(tmp, 'heap.want');
const preload = path.join(tmp, 'preload.cjs');
fs.writeFileSync(
  preload,
  `const v8 = require('node:v8'); const fs = require('node:fs');
setInterval(() => {
  if (!fs.existsSync(${JSON.stringify(trigger)})) return;
  fs.rmSync(${JSON.stringify(trigger)});
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, +(s.space_size / 1048576).toFixed(1)]));
  const m = process.memoryUsage();
  fs.writeFileSync(${JSON.stringify(statsFile)}, JSON.stringify({ spaces, heapTotal: m.heapTotal / 1048576, heapUsed: m.heapUsed / 1048576, external: m.external / 1048576 }));
}, 100).unref();
`,
);

const rows: Array<Record<string, number>> = [];
for (let i = 0; i < runs; i++) {
  const db = await freshDatabase(kind, tmp, adminUrl);
  const port = await freePort();
  const started = epochMs();
  const child = spawn(
    process.execPath,
    ['--require', preload, ...extraArgs, path.join(ROOT, entry[0] ?? ''), ...entry.slice(1)],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...db.env,
        LOG_DIR: path.join(db.env.DATA_DIR ?? tmp, 'logs'),
        HOST: '127.0.0.1',
        PORT: String(port),
        SIMULATOR_PORT: String(await freePort()),
        TMPDIR: tmp,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${err}`);
    if (Date.now() > deadline) throw new Error(`not ready: ${err}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const readyMs = epochMs() - started;
  const cpu = cpuMs(child.pid ?? 0);
  await new Promise((r) => setTimeout(r, idleS * 1000));
  const rss = rssMb(child.pid ?? 0);
  fs.writeFileSync(trigger, '');
  for (let t = 0; t < 50 && !fs.existsSync(statsFile); t++) await new Promise((r) => setTimeout(r, 50));
  const heap = fs.existsSync(statsFile)
    ? (JSON.parse(fs.readFileSync(statsFile, 'utf8')) as {
        spaces: Record<string, number>;
        heapTotal: number;
        heapUsed: number;
        external: number;
      })
    : undefined;
  fs.rmSync(statsFile, { force: true });
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  await db.drop();
  const row = {
    ready_ms: Math.round(readyMs),
    cpu_ms: cpu,
    idle_rss_mb: Math.round(rss),
    heap_total_mb: Math.round(heap?.heapTotal ?? 0),
    heap_used_mb: Math.round(heap?.heapUsed ?? 0),
    new_mb: heap?.spaces.new_space ?? 0,
    old_mb: heap?.spaces.old_space ?? 0,
    code_mb: heap?.spaces.code_space ?? 0,
    external_mb: Math.round(heap?.external ?? 0),
  };
  rows.push(row);
  console.log(JSON.stringify(row));
}
const range = (k: string) => {
  const v = rows.map((r) => r[k] ?? 0).sort((a, b) => a - b);
  return `${v[0]}–${v.at(-1)} (median ${v[Math.floor(v.length / 2)]})`;
};
console.log(`${kind} ${entry.join(' ')}, ${runs} runs, load ${os.loadavg()[0]?.toFixed(1)}`);
for (const k of Object.keys(rows[0] ?? {})) console.log(`  ${k}: ${range(k)}`);
fs.rmSync(tmp, { recursive: true, force: true });
