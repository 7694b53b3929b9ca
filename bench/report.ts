/** The bench's table: every figure beside the baseline it is judged against, from the same run. */
import type { Figures } from './scenarios.js';

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const rps = (v: unknown) => (num(v) === undefined ? '—' : `${Math.round(num(v) ?? 0).toLocaleString('en-US')}/s`);
const ms = (v: unknown) =>
  num(v) === undefined ? '—' : `${(num(v) ?? 0) < 10 ? (num(v) ?? 0).toFixed(1) : Math.round(num(v) ?? 0)} ms`;
const cpu = (v: unknown) =>
  num(v) === undefined ? '' : `, ${Math.round(num(v) ?? 0).toLocaleString('en-US')} µs CPU each`;
const ratio = (a: unknown, b: unknown) =>
  num(a) !== undefined && num(b) ? `${((num(a) ?? 0) / (num(b) ?? 1)).toFixed(2)}×` : '—';

type Cell = (f: Figures, floor: Figures | undefined) => string;

const ROWS: [string, Cell, string][] = [
  [
    'floor: Fastify + status GET to the simulator + one INSERT',
    (f) => `${rps(f.confirmed_floor_rps)}, p99 ${ms(f.confirmed_floor_p99_ms)}${cpu(f.confirmed_floor_cpu_us)}`,
    'the least a confirmed notification costs (same simulator process)',
  ],
  [
    'webhook, new settlement',
    (f, fl) =>
      `${rps(f.webhook_rps)} = ${ratio(f.webhook_rps, f.confirmed_floor_rps)} confirmed floor, ${ratio(f.webhook_rps, fl?.rps)} insert floor, p99 ${ms(f.webhook_p99_ms)}${cpu(f.webhook_cpu_us)} (confirmed floor ${Math.round(num(f.confirmed_floor_cpu_us) ?? 0)} µs)${num(f.webhook_unconfirmed) ? ` (${f.webhook_unconfirmed} left unverified: status API over 2 s)` : ''}`,
    'confirmed-ingest floor (goal ≥ 0.8×, ≤ 400 µs SQLite / 500 µs PostgreSQL)',
  ],
  [
    'webhook, duplicate',
    (f, fl) =>
      `${rps(f.duplicate_rps)} = ${ratio(f.duplicate_rps, fl?.rps)} floor, p99 ${ms(f.duplicate_p99_ms)}${cpu(f.duplicate_cpu_us)}`,
    'the insert floor (goal ≥ 2×, ≤ 150 µs)',
  ],
  [
    'link creation (16 conn.)',
    (f) =>
      `${rps(f.link_rps)} = ${ratio(f.link_rps, f.simulator_rps)} simulator (${rps(f.simulator_rps)}), p99 ${ms(f.link_p99_ms)}${cpu(f.link_cpu_us)} (simulator ${Math.round(num(f.simulator_cpu_us) ?? 0)} µs each direct)`,
    'the simulator hit directly (goal ≥ 0.5×, ≤ 300 µs)',
  ],
  [
    'outbox drain, fast receiver',
    (f) => `${rps(f.drain_eps)} events${cpu(f.drain_cpu_us)}`,
    'goal ≥ 4,000/s SQLite, ≥ 2,500/s PostgreSQL, ≤ 150 µs',
  ],
  [
    'notification → ERP, steady',
    (f) =>
      `${rps(f.steady_rate)}: p50 ${ms(f.steady_e2e_p50_ms)}, p99 ${ms(f.steady_e2e_p99_ms)} (webhook p99 ${ms(f.steady_webhook_p99_ms)})${cpu(f.steady_cpu_us)} (ingest + delivery)${num(f.steady_missing) ? `, ${f.steady_missing} missing` : ''}`,
    'goal p50 ≤ 10 ms, p99 ≤ 50 ms (PG ≤ 100 ms)',
  ],
  [
    'pull feed: long-poll answer after the commit',
    (f) =>
      `p50 ${ms(f.feed_wake_p50_ms)}, max ${ms(f.feed_wake_max_ms)}${num(f.feed_wake_across_p50_ms) !== undefined ? `; across two instances p50 ${ms(f.feed_wake_across_p50_ms)}, max ${ms(f.feed_wake_across_max_ms)}` : ''}`,
    'goal ≤ 50 ms one instance, ≤ 200 ms across instances (20 rounds each)',
  ],
  [
    'accounts fairness: B while A down',
    (f) =>
      `B's delay p50 ${ms(f.fairness_b_p50_ms)}, p99 ${ms(f.fairness_b_p99_ms)} at ${rps(f.fairness_rate)}${num(f.fairness_missing) ? `, ${f.fairness_missing} missing` : ''}`,
    "A's ERP refusing connections behind a backlog of due events (goal p99 ≤ 1 s)",
  ],
  ['peak RSS', (f) => `${Math.round(num(f.peak_rss_mb) ?? 0)} MB`, 'goal ≤ 150 MB'],
  ['idle RSS (5 s after start-up)', (f) => `${Math.round(num(f.idle_rss_mb) ?? 0)} MB`, 'goal ≤ 90 MB'],
  [
    'start-up: spawn to /health/ready (empty database, migrations included)',
    (f) => `${ms(f.startup_ms)}, ${Math.round(num(f.startup_cpu_ms) ?? 0)} ms CPU`,
    'goal ≤ 1 s',
  ],
];

const GROWTH: [string, Cell, string][] = [
  [
    'webhook, new settlement',
    (g, e) => `${rps(g.webhook_rps)} = ${ratio(g.webhook_rps, e?.webhook_rps)} empty, p99 ${ms(g.webhook_p99_ms)}`,
    'the empty database above (goal ≥ 0.8×)',
  ],
  [
    'link creation',
    (g, e) => `${rps(g.link_rps)} = ${ratio(g.link_rps, e?.link_rps)} empty`,
    'the empty database above (goal ≥ 0.8×)',
  ],
  [
    '/api/transactions filtered page',
    (g) => `p99 ${ms(g.transactions_page_p99_ms)} (status only: ${ms(g.transactions_status_page_p99_ms)})`,
    'goal p99 ≤ 50 ms',
  ],
  ['/api/deliveries filtered page', (g) => `p99 ${ms(g.deliveries_page_p99_ms)}`, 'goal p99 ≤ 50 ms'],
  [
    'claim due events, ERP down',
    (g) =>
      `${ms(g.claim_100k_ms)} with 100k waiting vs ${ms(g.claim_10_ms)} with 10 (next due: ${ms(g.next_due_100k_ms)} vs ${ms(g.next_due_10_ms)})`,
    'the same with 10 waiting (goal: equal)',
  ],
  [
    'claim due events, ERP down, an event behind each',
    (g) =>
      `${ms(g.claim_behind_100k_ms)} with 100k orders each holding one back (next due: ${ms(g.next_due_behind_100k_ms)})`,
    'the same with 10 waiting (goal: equal)',
  ],
];

const n = (v: unknown) => String(num(v) ?? '—');
const sec = (v: unknown) => (num(v) === undefined ? '—' : `${((num(v) ?? 0) / 1000).toFixed(1)} s`);

/** The burst's rows: `up` with A's ERP answering throughout, `down` with it answering 503 first. */
const burstRows = (v: 'up' | 'down'): [string, Cell, string][] => {
  const k = (f: Figures, name: string) => f[`burst_${v}_${name}`];
  return [
    [
      'lost / sent twice / non-2xx to the gateway',
      (f) =>
        `${n(k(f, 'lost'))} / ${n(k(f, 'twice'))} / ${n(k(f, 'non2xx'))}${num(k(f, 'non2xx')) ? ` (by status ${String(k(f, 'non2xx_codes'))}; the rest transport errors or 30 s timeouts)` : ''}`,
      'goal 0 / 0 / 0',
    ],
    [
      'webhook latency during the burst',
      (f) =>
        `p50 ${ms(k(f, 'webhook_p50_ms'))}, p99 ${ms(k(f, 'webhook_p99_ms'))} at ${rps(k(f, 'rate'))} answered (${n(f.burst_rate_burst)}/s offered)`,
      'goal p99 ≤ 100 ms',
    ],
    ['ERP lag during the burst (sent → ERP)', (f) => `p99 ${sec(k(f, 'lag_p99_ms'))}`, '—'],
    [
      "after the burst's end until the lag is under 1 s",
      (f) => `${sec(k(f, 'recovery_ms'))}${cpu(k(f, 'cpu_us'))} (ingest + delivery)`,
      'goal ≤ 60 s',
    ],
    [
      "account B's delay (10/s) without / with A's burst",
      (f) =>
        `p50 ${ms(k(f, 'b_without_p50_ms'))}, p99 ${ms(k(f, 'b_without_p99_ms'))} / p50 ${ms(k(f, 'b_with_p50_ms'))}, p99 ${ms(k(f, 'b_with_p99_ms'))}`,
      'goal: unmoved by A',
    ],
  ];
};

/** The burst's tables, from `sqlite_burst` and `postgres_burst`. */
export function printBurst(r: Record<string, Figures>, meta: { loadavg_before: number; loadavg_after: number }): void {
  const sq = r.sqlite_burst;
  const pg = r.postgres_burst;
  const f = sq ?? pg;
  if (!f) return;
  const head = `${n(f.burst_rate_steady)}/s, then ${n(f.burst_rate_burst)}/s for ${n(f.burst_seconds)} s, on account A; B at ${n(f.burst_rate_steady)}/s; each ERP answers in 200 ms`;
  console.log(
    `\nburst: ${head} (load average ${meta.loadavg_before.toFixed(1)} before / ${meta.loadavg_after.toFixed(1)} after)\n`,
  );
  table(burstRows('up'), sq, pg, () => undefined);
  console.log(`\nburst, A's ERP answering 503 for the burst's first ${n(f.burst_down_seconds)} s\n`);
  table(burstRows('down'), sq, pg, () => undefined);
}

function table(
  rows: [string, Cell, string][],
  sqlite: Figures | undefined,
  pg: Figures | undefined,
  base: (kind: 'sqlite' | 'pg') => Figures | undefined,
): void {
  console.log('| path | SQLite | PostgreSQL | baseline in the same run |');
  console.log('|---|---|---|---|');
  for (const [name, cell, baseline] of rows)
    console.log(
      `| ${name} | ${sqlite ? cell(sqlite, base('sqlite')) : '—'} | ${pg ? cell(pg, base('pg')) : '—'} | ${baseline} |`,
    );
}

const us = (v: unknown) => (num(v) === undefined ? '—' : `${Math.round(num(v) ?? 0).toLocaleString('en-US')} µs`);

/** Each path's row as "CPU per op (× its floor)", its own floor's figures, and what that floor does. */
const PATH_FLOORS: [string, string, string, string, string][] = [
  [
    'webhook, new settlement',
    'webhook_cpu_us',
    'floor_new_cpu_us',
    'floor_new_rps',
    'Fastify POST, the webhook body schema, SHA-512 check, one SELECT by unique key, one status GET to the simulator, one durable write transaction (notification insert, transaction update, event insert); 50 conn.',
  ],
  [
    'webhook, duplicate',
    'duplicate_cpu_us',
    'floor_duplicate_cpu_us',
    'floor_duplicate_rps',
    'the same server, the same bodies again: schema, SHA-512 check, one SELECT by unique key, 200; 50 conn.',
  ],
  [
    'link creation',
    'link_cpu_us',
    'floor_link_cpu_us',
    'floor_link_rps',
    "Fastify POST of a small validated JSON body, one undici POST to the simulator's payment-link endpoint, one durable insert; 16 conn.",
  ],
  [
    'delivered event (drain)',
    'drain_cpu_us',
    'floor_delivered_cpu_us',
    'floor_delivered_eps',
    'undici POST (keep-alive, 16 connections) of a ~700-byte event with an HMAC-SHA256 signature to the same kind of loopback receiver, one durable UPDATE in a commit of its own (then: the UPDATEs of events answered together in one commit); 16 lanes',
  ],
  [
    'notification → ERP, steady',
    'steady_cpu_us',
    'floor_steady_cpu_us',
    '',
    'the new-settlement floor + the delivered-event floor',
  ],
];

/** The delivered-event floor with its marks sharing commits, and the drain against it. */
const grouped = (f: Figures, floor: string) =>
  floor === 'floor_delivered_cpu_us' && num(f.floor_delivered_grouped_cpu_us) !== undefined
    ? `; commits shared: ${us(f.floor_delivered_grouped_cpu_us)} (row ${ratio(f.drain_cpu_us, f.floor_delivered_grouped_cpu_us)})`
    : '';

/** The hot paths against their own floors (CPU per operation of the floor's process, same run). */
export function printPathFloors(r: Record<string, Figures>): void {
  const sq = r.sqlite;
  const pg = r.postgres;
  if (!sq && !pg) return;
  console.log("\nCPU per operation against each path's own floor (the floor's process, same load shape, same run)\n");
  console.log(
    '| path | SQLite: CPU per op (× its floor) | PostgreSQL | SQLite floor | PostgreSQL floor | the floor does |',
  );
  console.log('|---|---|---|---|---|---|');
  const cell = (f: Figures | undefined, row: string, floor: string) =>
    !f ? '—' : num(f[row]) === undefined ? '—' : `${us(f[row])} (${ratio(f[row], f[floor])})`;
  const fl = (f: Figures | undefined, floor: string, rate: string) =>
    !f || num(f[floor]) === undefined
      ? '—'
      : `${us(f[floor])}${rate && num(f[rate]) !== undefined ? `, ${rps(f[rate])}` : ''}${grouped(f, floor)}`;
  for (const [name, row, floor, rate, what] of PATH_FLOORS)
    console.log(
      `| ${name} | ${cell(sq, row, floor)} | ${cell(pg, row, floor)} | ${fl(sq, floor, rate)} | ${fl(pg, floor, rate)} | ${what} |`,
    );
}

export function printReport(
  r: Record<string, Figures>,
  meta: { cpus: number; node: string; loadavg_before: number; loadavg_after: number; tracing?: string },
): void {
  console.log(
    `\npaylink bench — ${meta.cpus} CPUs, node ${meta.node}, tracing ${meta.tracing ?? 'off'}, load average ${meta.loadavg_before.toFixed(1)} before / ${meta.loadavg_after.toFixed(1)} after (other work on the machine skews absolute figures; ratios are within this run)\n`,
  );
  const fb = r.floor_bare;
  const fs = r.floor_sqlite;
  const fp = r.floor_pg;
  console.log('| path | SQLite | PostgreSQL | baseline in the same run |');
  console.log('|---|---|---|---|');
  console.log(`| floor: bare Fastify GET | ${rps(fb?.rps)}, p99 ${ms(fb?.p99_ms)}${cpu(fb?.cpu_us)} | | — |`);
  console.log(
    `| floor: Fastify + one INSERT (WAL, synchronous=FULL / pg pool) | ${rps(fs?.rps)}, p99 ${ms(fs?.p99_ms)}${cpu(fs?.cpu_us)} | ${fp ? `${rps(fp.rps)}, p99 ${ms(fp.p99_ms)}${cpu(fp.cpu_us)}` : '—'} | the least "receive and persist durably" costs |`,
  );
  for (const [name, cell, baseline] of ROWS)
    console.log(
      `| ${name} | ${r.sqlite ? cell(r.sqlite, fs) : '—'} | ${r.postgres ? cell(r.postgres, fp) : '—'} | ${baseline} |`,
    );
  printPathFloors(r);
  printBurst(r, meta);
  if (r.sqlite_growth || r.postgres_growth) {
    console.log(`\ngrowth: ${'1,000,000'} stored transactions, notifications, delivered events and attempts\n`);
    table(GROWTH, r.sqlite_growth, r.postgres_growth, (k) => (k === 'sqlite' ? r.sqlite : r.postgres));
  }
}
