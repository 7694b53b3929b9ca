import fs from 'node:fs';
import { inlineCode } from '../../src/http/reference/routes.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate } from '@readme/openapi-parser';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { ERRORS } from '../../src/platform/errors.js';
import { TAGS } from '../../src/http/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { statusChangedEvent, testEvent } from '../../src/erp/events.js';

type Json = Record<string, unknown>;
const auth = { authorization: basicAuth() };
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head', 'trace'];

/** Every string without maxLength and every array without maxItems in a request schema. */
function unbounded(schema: unknown, at: string, doc: Json, out: string[], depth = 0): void {
  if (!schema || typeof schema !== 'object' || depth > 30) return;
  const s = schema as Json;
  if (typeof s.$ref === 'string') {
    const target = s.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Json)[k] : undefined), doc);
    unbounded(target, at, doc, out, depth + 1);
    return;
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const bounded = s.enum !== undefined || s.const !== undefined;
  if (types.includes('string') && s.maxLength === undefined && !bounded) out.push(`${at}: string without maxLength`);
  if (types.includes('array') && s.maxItems === undefined) out.push(`${at}: array without maxItems`);
  for (const [k, v] of Object.entries((s.properties as Json | undefined) ?? {}))
    unbounded(v, `${at}.${k}`, doc, out, depth + 1);
  if (s.items) unbounded(s.items, `${at}[]`, doc, out, depth + 1);
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    unbounded(s.additionalProperties, `${at}.*`, doc, out, depth + 1);
  for (const k of ['anyOf', 'oneOf', 'allOf'])
    for (const v of (s[k] as unknown[] | undefined) ?? []) unbounded(v, at, doc, out, depth + 1);
}

describe('GET /openapi.json and /docs', () => {
  let ctx: LoggedApp;
  let doc: Json;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { LOG_EXPOSE_API: 'true', API_KEYS: 'k1' });
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json();
  });
  afterAll(async () => ctx.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect(result.valid, JSON.stringify(result.valid ? [] : result.errors).slice(0, 2000)).toBe(true);
  });

  it("describes every registered route, under one of the contract's groups", () => {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    const missing: string[] = [];
    for (const r of ctx.routes) {
      const url = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      for (const m of Array.isArray(r.method) ? r.method : [r.method]) {
        if (m === 'HEAD') continue;
        const op = paths[url]?.[m.toLowerCase()];
        if (!op) missing.push(`${m} ${url}`);
        else expect(Object.values(TAGS), `${m} ${url}`).toContain((op.tags as string[] | undefined)?.[0]);
      }
    }
    expect(missing).toEqual([]);
    expect(ctx.routes.length).toBeGreaterThan(15);
  });

  it('declares security per route and problem+json error responses', () => {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    expect(paths['/api/config']?.get?.security).toEqual([{ operatorBasic: [] }]);
    expect(paths['/api/config']?.post?.responses).toMatchObject({
      401: { $ref: '#/components/responses/Unauthorized' },
      429: { $ref: '#/components/responses/TooManyRequests' },
    });
    expect(paths['/api/payment-links']?.post?.security).toEqual([{ apiKeyBearer: [] }, { apiKeyHeader: [] }]);
    expect(paths['/health']?.get?.security).toEqual([]);
    const components = doc.components as Json;
    expect(Object.keys(components.securitySchemes as Json).sort()).toEqual([
      'apiKeyBearer',
      'apiKeyHeader',
      'operatorBasic',
    ]);
    const problem = (components.schemas as Record<string, Json>).Problem;
    expect((problem?.properties as Record<string, Json>).code?.enum).toEqual(Object.keys(ERRORS));
    for (const item of Object.values(paths)) {
      for (const m of METHODS) {
        const op = item[m];
        if (op) expect(Object.keys(op.responses as Json)).toContain('500');
      }
    }
  });

  it('describes the ERP event under webhooks, and the events paylink sends match that description', () => {
    const hooks = doc.webhooks as Record<string, { post: Json }>;
    const body = hooks['payment.status_changed']?.post.requestBody as {
      content: { 'application/json': { schema: object } };
    };
    const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
    const valid = ajv.compile(body.content['application/json'].schema);
    const tx = {
      id: 't',
      orderId: 'INV/2026/0042:1',
      gatewayOrderId: 'INV.2026.0042.1',
      mercantId: 'INV/2026/0042',
      kind: 'payment_link',
      attempt: 1,
      nominal: 150000,
      status: 'paid',
      transactionStatus: 'settlement',
      fraudStatus: 'accept',
      paymentType: 'bank_transfer',
      gatewayTransactionId: 'g-1',
      paymentUrl: null,
      paymentLinkId: null,
      paymentLinkOrderId: null,
      snapToken: null,
      requestHash: null,
      requestJson: null,
      gatewayJson: null,
      expireAt: null,
      settlementTime: '2026-11-22T10:05:00+07:00',
      transactionTime: '2026-11-22T10:00:00+07:00',
      statusVersion: 2,
      refundedAmount: 0,
      paidAmount: 150000,
      originalAmount: null,
      feeAmount: null,
      netAmount: null,
      flags: null,
      lastEventAt: null,
      createdAt: '',
      updatedAt: '',
      account: 'default',
      carrier: 'legacy',
    } as const;
    const events = [
      statusChangedEvent(tx, 150000, 'ev-1', new Date()),
      statusChangedEvent(
        {
          ...tx,
          status: 'expired',
          transactionStatus: null,
          fraudStatus: null,
          paymentType: null,
          gatewayTransactionId: null,
          settlementTime: null,
          transactionTime: null,
        },
        150000,
        'ev-2',
        new Date(),
      ),
      testEvent({}, 'ev-3', new Date()),
    ];
    for (const ev of events) expect(valid(ev) ? [] : valid.errors, ev.event_id).toEqual([]);
    expect(valid({ ...events[0], unexpected: 1 })).toBe(false);
  });

  it('bounds every string and array a request can carry', () => {
    const out: string[] = [];
    const paths = doc.paths as Record<string, Record<string, Json>>;
    for (const [p, item] of Object.entries(paths)) {
      for (const m of METHODS) {
        const op = item[m];
        if (!op) continue;
        for (const param of (op.parameters as Json[] | undefined) ?? [])
          unbounded(param.schema, `${m.toUpperCase()} ${p} ${String(param.in)}:${String(param.name)}`, doc, out);
        const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
        for (const [type, c] of Object.entries(content))
          unbounded(c.schema, `${m.toUpperCase()} ${p} body(${type})`, doc, out);
      }
    }
    expect(out).toEqual([]);
  });

  it('/docs is the reference renderer served from here, with the error catalogue as #error-CODE anchors', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    // Scripts and connections only to this origin: the page cannot load or send anything elsewhere.
    for (const d of [
      "default-src 'self'",
      "script-src 'self';",
      "connect-src 'self'",
      "font-src 'self' data:",
      "frame-ancestors 'none'",
    ])
      expect(csp).toContain(d);
    const html = res.body;
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[a-z]/i);
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/docs/scalar.js">', '<script src="/docs/init.js">']);
    for (const code of Object.keys(ERRORS)) expect(html).toContain(`id="error-${code}"`);
    const bundle = await ctx.app.inject({ method: 'GET', url: '/docs/scalar.js', headers: auth });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.body.length).toBeGreaterThan(1_000_000);
    const init = await ctx.app.inject({ method: 'GET', url: '/docs/init.js', headers: auth });
    expect(init.body).toContain("url: '/openapi.json'");
    for (const url of ['/docs', '/docs/scalar.js', '/docs/init.js', '/docs/docs.css'])
      expect((await ctx.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
  });

  it('refers to nothing the reader does not have, and leaves no answer undescribed', async () => {
    const markdown = [
      'README.md',
      'simulator/README.md',
      ...fs
        .readdirSync('docs')
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const texts: Array<readonly [string, string]> = [
      ['/openapi.json', JSON.stringify(doc)],
      ['/docs', (await ctx.app.inject({ method: 'GET', url: '/docs', headers: auth })).body],
      ...markdown.map((f) => [f, fs.readFileSync(f, 'utf8')] as const),
    ];
    for (const [where, text] of texts) {
      for (const word of ['CONTRACT', '§', 'DESIGN', 'shared/', 'Default Response'])
        expect(text.includes(word), `${where} contains ${word}`).toBe(false);
    }
  });

  it('every operation has a summary, a description that says more, and an example of each JSON success answer', () => {
    const problems: string[] = [];
    for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const m of METHODS) {
        const op = item[m];
        if (!op) continue;
        const at = `${m.toUpperCase()} ${p}`;
        // Compared without case and closing punctuation: "Summary." is not a description.
        const plain = (v: unknown) =>
          typeof v === 'string'
            ? v
                .trim()
                .replace(/[.!:\s]+$/, '')
                .toLowerCase()
            : '';
        const summary = plain(op.summary);
        const description = plain(op.description);
        if (summary === '') problems.push(`${at}: no summary`);
        if (description.length <= summary.length) problems.push(`${at}: the description says no more than the summary`);
        for (const [status, answer] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
          if (!/^2/.test(status)) continue;
          const json = (answer.content as Record<string, Json> | undefined)?.['application/json'];
          if (json && json.example === undefined && json.examples === undefined)
            problems.push(`${at}: no example for ${status}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("the error catalogue on /docs shows the lines' code spans as code, never raw backticks", async () => {
    const page = (await ctx.app.inject({ method: 'GET', url: '/docs', headers: auth })).body;
    const catalogue = page.slice(page.indexOf('id="error-catalogue"'));
    expect(catalogue).not.toContain('`');
    expect(catalogue).not.toContain('&#96;');
    expect(catalogue).toContain('<code>payment_status</code> names its state');
    expect(inlineCode('a `b` c `d').text).toBe('a `b` c `d'.replace(/`/g, '&#96;'));
  });

  it('problem types point at the docs anchors', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/config', headers: { authorization: 'Basic Og==' } });
    expect(res.json().type).toBe('/docs#error-UNAUTHORIZED');
  });
});

describe('the examples of the reference', () => {
  it('every JSON example matches the schema it illustrates', async () => {
    const ctx = await makeLoggedApp('sqlite', { LOG_EXPOSE_API: 'true', API_KEYS: 'k1' });
    try {
      const doc: Json = (await ctx.app.inject({ method: 'GET', url: '/openapi.json', headers: auth })).json();
      const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
      ajv.addSchema({ $id: 'doc', ...doc } as object);
      const ptr = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
      const problems: string[] = [];
      let checked = 0;
      for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
        for (const [m, op] of Object.entries(item)) {
          const where = `doc#/paths/${ptr(p)}/${m}`;
          const check = (example: unknown, schemaPath: string, what: string) => {
            if (example === undefined) return;
            checked++;
            const validate = ajv.getSchema(schemaPath) ?? ajv.compile({ $ref: schemaPath });
            if (!validate(example))
              problems.push(`${m.toUpperCase()} ${p} ${what}: ${ajv.errorsText(validate.errors)}`);
          };
          const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
          check(
            body?.['application/json']?.example,
            `${where}/requestBody/content/application~1json/schema`,
            'request',
          );
          for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
            const content = r.content as Record<string, Json> | undefined;
            check(
              content?.['application/json']?.example,
              `${where}/responses/${status}/content/application~1json/schema`,
              `answer ${status}`,
            );
          }
        }
      }
      expect(problems).toEqual([]);
      expect(checked).toBeGreaterThan(20);
    } finally {
      await ctx.close();
    }
  });
});
