/**
 * `npm run bench`: paylink's hot paths against the machine's floors, all measured in the same run
 * (figures from different runs or machines are not comparable; ratios within one run are).
 *
 *   npm run bench                                     # floors + SQLite (about 2 minutes)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench   # + PostgreSQL
 *   npm run bench -- --scale                          # + growth: 1,000,000 stored transactions and events
 *   npm run bench -- --quick                          # fewer requests (a quick look)
 *   npm run bench -- --fairness                       # only the accounts-fairness row (seconds, no build)
 *   npm run bench -- --burst [--postgres]             # only the burst rows (about 6 minutes; --quick: 2)
 *   npm run bench -- --floors                         # only the per-path floors (no service; --quick: fewer)
 *   npm run bench -- --service [--postgres]           # only the service rows, no burst or fairness (for pairs of runs)
 *   BENCH_SERVICE_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench -- --quick   # profile the service
 *   BENCH_TRACING=0.1 npm run bench -- --quick         # the service tracing 10 % (1 = all) to a loopback OTLP sink
 *
 * The service runs as built (`node dist/bundle/cli.mjs serve`, `npm run build` first), the floors and the
 * load generator (autocannon) each in a process of their own. Writes bench/results/latest.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, benchTracing, closeOtlpSink, startSimulatorProcess } from './procs.js';
import {
  SERVER_KEY,
  benchGrowth,
  benchService,
  pathFloors,
  runFloor,
  type Figures,
  type Options,
} from './scenarios.js';
import { freshDatabase } from './seed.js';
import { printBurst, printPathFloors, printReport } from './report.js';
import { benchFairness } from './fairness.js';
import { benchBurst, type BurstOptions } from './burst.js';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const opts: Options = {
  notifications: quick ? 1000 : 3000,
  links: quick ? 300 : 1000,
  rate: Number(process.env.BENCH_RATE ?? '500'),
  connections: 50,
  tmp: fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-bench-')),
};

/**
 * The burst: 10/s steady, 300/s for two minutes (quick: 20 s), 10/s for a minute after (quick:
 * 20 s); in the second variant A's ERP answers 503 for the burst's first minute (quick: 10 s).
 */
const burstOpts: BurstOptions = {
  steadyS: quick ? 10 : 30,
  burstS: quick ? 20 : 120,
  tailS: quick ? 20 : 60,
  downS: quick ? 10 : 60,
  rate: 10,
  burstRate: 300,
  erpDelayMs: 200,
};

async function floor(kind: 'bare' | 'sqlite' | 'pg', target: string, n: number): Promise<Figures> {
  return runFloor(kind, target, n, opts);
}

async function pgFloor(adminUrl: string, n: number): Promise<Figures> {
  const db = await freshDatabase('postgres', opts.tmp, adminUrl);
  try {
    return await floor('pg', db.config.kind === 'postgres' ? db.config.url : '', n);
  } finally {
    await db.drop();
  }
}

/** Account B's delivery delay while account A's ERP refuses connections behind a backlog. */
async function fairness(kind: 'sqlite' | 'postgres', pgUrl?: string): Promise<Figures> {
  return benchFairness(kind, opts.tmp, { backlog: quick ? 200 : 1000, events: quick ? 50 : 200, rate: 20 }, pgUrl);
}

async function fairnessOnly(pgUrl: string | undefined): Promise<void> {
  const sqlite = await fairness('sqlite');
  const postgres = pgUrl ? await fairness('postgres', pgUrl) : undefined;
  for (const [kind, f] of [
    ['SQLite', sqlite],
    ['PostgreSQL', postgres],
  ] as const)
    if (f)
      console.log(
        `accounts fairness (${kind}): B's delay p50 ${Math.round(Number(f.fairness_b_p50_ms))} ms, p99 ${Math.round(Number(f.fairness_b_p99_ms))} ms at ${f.fairness_rate}/s, A's ERP down behind ${f.fairness_backlog} due events${f.fairness_missing ? `, ${f.fairness_missing} missing` : ''}`,
      );
}

async function burstOnly(pgUrl: string | undefined): Promise<void> {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const load = os.loadavg()[0] ?? 0;
  const results: Record<string, Figures> = {};
  if (!args.has('--postgres')) results.sqlite_burst = await benchBurst('sqlite', opts, burstOpts);
  if (pgUrl) results.postgres_burst = await benchBurst('postgres', opts, burstOpts, pgUrl);
  printBurst(results, { loadavg_before: load, loadavg_after: os.loadavg()[0] ?? 0 });
  console.log(`\n${JSON.stringify(results)}`);
}

/** The per-path floors alone, against the simulator as built (no service): to see what the floors cost. */
async function floorsOnly(pgUrl: string | undefined): Promise<void> {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const load = os.loadavg()[0] ?? 0;
  const sim = await startSimulatorProcess(SERVER_KEY);
  const results: Record<string, Figures> = {};
  try {
    results.sqlite = await pathFloors('sqlite', sim.url, opts, undefined, opts.notifications);
    if (pgUrl) results.postgres = await pathFloors('postgres', sim.url, opts, pgUrl, opts.notifications);
  } finally {
    await sim.stop();
  }
  console.log(`\nload average ${load.toFixed(1)} before / ${(os.loadavg()[0] ?? 0).toFixed(1)} after`);
  printPathFloors(results);
  console.log(`\n${JSON.stringify(results)}`);
}

/**
 * The service rows alone (floors, notifications, links, drain, steady) with no burst or fairness:
 * short enough to alternate two trees several times. `--postgres` leaves SQLite out.
 */
async function serviceOnly(pgUrl: string | undefined): Promise<void> {
  if (args.has('--postgres') && !pgUrl) throw new Error('--postgres needs BENCH_DATABASE_URL');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const load = os.loadavg()[0] ?? 0;
  const results: Record<string, Figures> = {};
  results.floor_bare = await floor('bare', '', quick ? 10_000 : 30_000);
  if (!args.has('--postgres')) {
    results.floor_sqlite = await floor('sqlite', path.join(opts.tmp, 'floor', 'floor.db'), quick ? 2_000 : 6_000);
    results.sqlite = await benchService('sqlite', opts);
  }
  if (pgUrl) {
    results.floor_pg = await pgFloor(pgUrl, quick ? 2_000 : 6_000);
    results.postgres = await benchService('postgres', opts, pgUrl);
  }
  printReport(results, {
    cpus: os.cpus().length,
    node: process.version,
    loadavg_before: load,
    loadavg_after: os.loadavg()[0] ?? 0,
  });
  console.log(`\n${JSON.stringify(results)}`);
}

async function main(): Promise<void> {
  const pgUrl = process.env.BENCH_DATABASE_URL;
  if (args.has('--service')) return serviceOnly(pgUrl);
  if (args.has('--fairness')) return fairnessOnly(pgUrl);
  if (args.has('--burst')) return burstOnly(pgUrl);
  if (args.has('--floors')) return floorsOnly(pgUrl);
  const started = Date.now();
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  const load = os.loadavg()[0] ?? 0;
  const results: Record<string, Figures> = {};
  results.floor_bare = await floor('bare', '', quick ? 10_000 : 30_000);
  results.floor_sqlite = await floor('sqlite', path.join(opts.tmp, 'floor', 'floor.db'), quick ? 2_000 : 6_000);
  if (pgUrl) results.floor_pg = await pgFloor(pgUrl, quick ? 2_000 : 6_000);
  // Written after every phase: a failure later still leaves what was measured.
  const out = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(out, { recursive: true });
  const save = (r: Record<string, Figures>, extra: object = {}) =>
    fs.writeFileSync(
      path.join(out, 'latest.json'),
      `${JSON.stringify({ meta: { at: new Date().toISOString(), partial: true, ...extra }, results: r }, null, 2)}\n`,
    );
  save(results);
  results.sqlite = { ...(await benchService('sqlite', opts)), ...(await fairness('sqlite')) };
  save(results);
  if (pgUrl)
    results.postgres = { ...(await benchService('postgres', opts, pgUrl)), ...(await fairness('postgres', pgUrl)) };
  save(results);
  results.sqlite_burst = await benchBurst('sqlite', opts, burstOpts);
  save(results);
  if (pgUrl) results.postgres_burst = await benchBurst('postgres', opts, burstOpts, pgUrl);
  save(results);
  if (args.has('--scale')) {
    const history = Number(process.env.BENCH_HISTORY ?? '1000000');
    results.sqlite_growth = await benchGrowth('sqlite', opts, history);
    save(results);
    if (pgUrl) results.postgres_growth = await benchGrowth('postgres', opts, history, pgUrl);
  }
  const otlp = await closeOtlpSink();
  const meta = {
    at: new Date().toISOString(),
    tracing: benchTracing,
    ...(otlp ? { otlp_exports: otlp.requests, otlp_bytes: otlp.bytes } : {}),
    node: process.version,
    cpus: os.cpus().length,
    loadavg_before: load,
    loadavg_after: os.loadavg()[0] ?? 0,
    seconds: (Date.now() - started) / 1000,
    options: { ...opts, tmp: undefined },
    quick,
    scale: args.has('--scale'),
  };
  printReport(results, meta);
  fs.writeFileSync(path.join(out, 'latest.json'), `${JSON.stringify({ meta, results }, null, 2)}\n`);
  console.log(`\nwritten: bench/results/latest.json (${meta.seconds.toFixed(0)} s)`);
}

main()
  .catch((err: unknown) => {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(opts.tmp, { recursive: true, force: true }));
