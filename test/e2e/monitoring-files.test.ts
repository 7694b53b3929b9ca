/**
 * The monitoring files against the service itself: every metric the Prometheus rules, their unit
 * test and the Grafana dashboard name exists in a real `/metrics` answer (after a payment link went
 * through the gateway simulator), with the labels the answer has; the dashboard is a well-formed
 * Grafana document; `promtool check rules` and `promtool test rules` pass where promtool is
 * installed (with PAYLINK_REQUIRE_PROMTOOL=1, as in CI, a missing promtool fails instead).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RULES = path.join(ROOT, 'deploy/prometheus/paylink-rules.yml');
const RULES_TEST = path.join(ROOT, 'deploy/prometheus/paylink-rules.test.yml');
const DASHBOARD = path.join(ROOT, 'deploy/grafana/paylink-dashboard.json');

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RulesFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}
interface RulesTest {
  rule_files: string[];
  tests: Array<{
    name: string;
    input_series: Array<{ series: string; values: string }>;
    alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }>;
  }>;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ expr?: string; refId?: string }>;
}

/** A scrape: metric families by name, each with its type and the label names of its samples. */
interface Scrape {
  types: Map<string, string>;
  /** Sample name (with _bucket/_sum/_count for histograms) → label-name sets seen. */
  samples: Map<string, Set<string>>;
}

function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const samples = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] && type[2]) types.set(type[1], type[2]);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!sample?.[1]) continue;
    const names = [...(sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1] ?? '');
    const set = samples.get(sample[1]) ?? new Set<string>();
    set.add(
      names
        .filter((n) => n !== 'le' && n !== 'quantile')
        .sort()
        .join(','),
    );
    samples.set(sample[1], set);
  }
  return { types, samples };
}

/** The family a sample name belongs to (`x_bucket` of histogram `x` → `x`). */
function familyOf(name: string, s: Scrape): string | undefined {
  if (s.types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return s.types.get(base) === 'histogram' || s.types.get(base) === 'summary' ? base : undefined;
}

const metricNames = (expr: string): string[] => [...new Set(expr.match(/\bpaylink_[a-z0-9_]+/g) ?? [])];

describe('monitoring files against a real /metrics answer', () => {
  let e: E2EContext;
  let scrape: Scrape;
  beforeAll(async () => {
    e = await startE2E('sqlite');
    const link = await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload: { order_id: 'MON-1', nominal: 150000 },
    });
    expect(link.statusCode).toBe(201);
    const res = await e.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: basicAuth() } });
    expect(res.statusCode).toBe(200);
    scrape = parseScrape(res.body);
  });
  afterAll(async () => e.close());

  const rules = parse(fs.readFileSync(RULES, 'utf8')) as RulesFile;
  const rulesTest = parse(fs.readFileSync(RULES_TEST, 'utf8')) as RulesTest;
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as {
    uid: string;
    title: string;
    schemaVersion: number;
    panels: Panel[];
    templating: { list: Array<{ name: string; type: string; query?: unknown }> };
  };
  const allRules = rules.groups.flatMap((g) => g.rules);

  it('the rules alert on ERP deliveries dead, the ERP failing, a payment stuck, the gateway, the oldest pending event', () => {
    expect(allRules.map((r) => r.alert).sort()).toEqual([
      'PaylinkErpDeliveryDead',
      'PaylinkErpEndpointFailing',
      'PaylinkGatewayUnreachable',
      'PaylinkOutboxOldestPending',
      'PaylinkPaymentStuckPending',
    ]);
    for (const r of allRules) {
      expect(['warning', 'critical'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      expect(r.annotations?.description, r.alert).toBeTruthy();
    }
    // Every alert is exercised by the rules' unit test.
    const tested = new Set(rulesTest.tests.flatMap((t) => t.alert_rule_test.map((a) => a.alertname)));
    for (const r of allRules) expect(tested.has(r.alert ?? ''), r.alert).toBe(true);
    expect(rulesTest.rule_files).toEqual(['paylink-rules.yml']);
  });

  it('every metric the rules and the dashboard use is in the answer', () => {
    const used = new Map<string, string>();
    for (const r of allRules) for (const n of metricNames(r.expr)) used.set(n, `rule ${r.alert}`);
    for (const p of dashboard.panels)
      for (const t of p.targets ?? []) for (const n of metricNames(t.expr ?? '')) used.set(n, `panel "${p.title}"`);
    for (const v of dashboard.templating.list)
      for (const n of metricNames(JSON.stringify(v.query ?? ''))) used.set(n, `variable ${v.name}`);
    expect(used.size).toBeGreaterThan(8);
    for (const [name, where] of used) expect(familyOf(name, scrape), `${name} (${where})`).toBeDefined();
  });

  it("the rules test's input series have the names and labels of the answer, plus job and instance", () => {
    for (const t of rulesTest.tests) {
      for (const { series } of t.input_series) {
        const m = /^([a-z_:][a-z0-9_:]*)\{(.*)\}$/.exec(series);
        expect(m, series).not.toBeNull();
        const name = m?.[1] ?? '';
        const labels = [...(m?.[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((x) => x[1] ?? '');
        expect(labels, series).toEqual(expect.arrayContaining(['job', 'instance']));
        const own = labels
          .filter((l) => l !== 'job' && l !== 'instance')
          .sort()
          .join(',');
        expect(familyOf(name, scrape), series).toBeDefined();
        expect([...(scrape.samples.get(name) ?? [])], series).toContain(own);
      }
    }
    // The label values the rules select on are the ones the service writes.
    expect([...(scrape.samples.get('paylink_erp_deliveries_total') ?? [])]).toEqual(['outcome']);
    expect(scrape.samples.get('paylink_gateway_call_duration_seconds_count')).toEqual(new Set(['operation,outcome']));
  });

  it('the dashboard is a Grafana document: a uid, unique panel ids, every panel placed and queried', () => {
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.title).toBe('paylink');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos.w, p.title).toBeGreaterThan(0);
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) expect(t.expr, p.title).toMatch(/paylink_/);
    }
    // No two panels overlap.
    const cells = new Set<string>();
    for (const p of dashboard.panels)
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), p.title).toBe(false);
          cells.add(`${x},${y}`);
        }
  });
});

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;

describe('promtool', () => {
  it.runIf(process.env.PAYLINK_REQUIRE_PROMTOOL === '1')('is installed (PAYLINK_REQUIRE_PROMTOOL=1)', () => {
    expect(havePromtool, 'promtool not found: apt-get install prometheus').toBe(true);
  });

  it.runIf(havePromtool)('check rules and test rules pass', () => {
    const check = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check.stdout + check.stderr, 'promtool check rules').toContain('SUCCESS: 5 rules found');
    expect(check.status).toBe(0);
    const test = spawnSync('promtool', ['test', 'rules', path.basename(RULES_TEST)], {
      cwd: path.dirname(RULES_TEST),
      encoding: 'utf8',
    });
    expect(test.stdout + test.stderr, 'promtool test rules').toContain('SUCCESS');
    expect(test.status).toBe(0);
  });
});
