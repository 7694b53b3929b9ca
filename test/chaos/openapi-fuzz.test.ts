/**
 * OpenAPI-driven fuzz of every endpoint: requests generated with fast-check from the service's own
 * `/openapi.json` (path, query, headers, bodies; conforming and hostile), sent to the real app with
 * its real file logger, a real simulator behind it and a real ERP receiver. Every answer must be
 * documented for its operation (status, content type, body schema), none may be a 500, and the
 * secret canaries (server key and its Basic form, API keys, operator password, ERP secret) must
 * appear in no answer and no log line.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { startSimulator } from '../../simulator/index.js';
import { startErpReceiver } from '../helpers/erp-receiver.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { midtransSignature } from '../../src/gateway/midtrans/signature.js';
import { SEED, reportFigures, scaled } from './support.js';
import { conforming, hostile, nastyString, resolve, type Json } from './schema-arbitrary.js';

const CANARY = {
  serverKey: 'SB-Mid-server-CANARYsk7Q2wX9',
  clientKey: 'SB-Mid-client-CANARYck4R8tY1',
  apiKeys: ['CANARYapikeyA3f9d2e7b1c4', 'CANARYapikeyB8e1a6c3d5f0'],
  operatorPass: 'CANARYoperatorPw5k2m9q',
  erpSecret: 'CANARYerpSecret7h3j6n1p0x',
};
const OPERATOR = { user: 'fuzz-ops', pass: CANARY.operatorPass };
const PER_OPERATION = scaled(80, 5);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every form a canary could leak in: raw, the gateway's Basic header, the operator's Basic header. */
function canaryForms(): Array<[string, string]> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    ['server key', CANARY.serverKey],
    ['server key (Basic)', b64(`${CANARY.serverKey}:`)],
    ['client key', CANARY.clientKey],
    ['API key', CANARY.apiKeys[0] ?? ''],
    ['API key', CANARY.apiKeys[1] ?? ''],
    ['operator password', CANARY.operatorPass],
    ['operator (Basic)', b64(`${OPERATOR.user}:${CANARY.operatorPass}`)],
    ['ERP secret', CANARY.erpSecret],
  ];
}

interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: Json;
}

interface FuzzRequest {
  url: string;
  headers: Record<string, string>;
  payload?: string;
  remoteAddress?: string;
}

/** Percent-encodes a path segment; a lone surrogate becomes its (malformed UTF-8) bytes, as a careless client sends it. */
function encodeSegment(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return v.replace(/[\ud800-\udfff]/g, '%ED%A0%80').replace(/[^%A-Za-z0-9\-_.~]/g, (c) => encodeURIComponent(c));
  }
}

/** Inlines `$ref`s (the document has no recursive schemas) so Ajv compiles a standalone schema. */
function inline(schema: unknown, doc: Json, depth = 0): unknown {
  if (depth > 20 || schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((s) => inline(s, doc, depth + 1));
  const s = schema as Json;
  if (typeof s.$ref === 'string') return inline(resolve(s, doc), doc, depth + 1);
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, inline(v, doc, depth + 1)]));
}

function authFor(op: Json, mode: 'ok' | 'wrong' | 'none', useHeaderKey: boolean): Record<string, string> {
  const security = (op.security as Array<Record<string, unknown>> | undefined) ?? [];
  const names = security.flatMap((s) => Object.keys(s));
  if (names.length === 0 || mode === 'none') return {};
  if (names.includes('operatorBasic')) {
    const pass = mode === 'ok' ? CANARY.operatorPass : 'not-the-password';
    return { authorization: `Basic ${Buffer.from(`${OPERATOR.user}:${pass}`).toString('base64')}` };
  }
  const key = mode === 'ok' ? (CANARY.apiKeys[0] ?? '') : 'not-a-key';
  return useHeaderKey ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
}

/** Keeps runtime configuration on loopback: the fuzz must never point the service at the internet. */
function loopbackOnly(body: unknown, simUrl: string, erpUrl: string): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out = { ...(body as Json) };
  const gw = out.gateway;
  if (gw !== null && typeof gw === 'object' && !Array.isArray(gw)) {
    const g = { ...(gw as Json) };
    for (const k of ['api_base_url', 'app_base_url']) if (typeof g[k] === 'string') g[k] = simUrl;
    out.gateway = g;
  }
  const erp = out.erp;
  if (erp !== null && typeof erp === 'object' && !Array.isArray(erp)) {
    const e = { ...(erp as Json) };
    if (typeof e.notify_url === 'string' && /^https?:/i.test(e.notify_url)) e.notify_url = erpUrl;
    out.erp = e;
  }
  return out;
}

function requestsFor(o: Operation, doc: Json, n: number, seed: number, simUrl: string, erpUrl: string): FuzzRequest[] {
  const params = ((o.op.parameters as Json[] | undefined) ?? []).map((p) => resolve(p, doc));
  const jsonBody = resolve(o.op.requestBody, doc).content as Record<string, Json> | undefined;
  const bodySchema = jsonBody?.['application/json']?.schema;
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const arb = fc.record({
    // '.' and '..' as a whole segment address another path (the URL is normalised): not this operation's answer.
    path: fc.tuple(
      ...pathParams.map((p) =>
        fc
          .oneof({ weight: 4, arbitrary: conforming(p.schema, doc) }, { weight: 1, arbitrary: nastyString })
          .filter((v) => v !== '.' && v !== '..'),
      ),
    ),
    query: fc.tuple(...queryParams.map((p) => fc.option(hostile(p.schema, doc), { freq: 2 }))),
    extraQuery: fc.option(fc.tuple(fc.string({ maxLength: 8 }), nastyString), { freq: 5 }),
    idempotencyKey: fc.option(fc.oneof(fc.uuid(), nastyString), { freq: 3 }),
    body: bodySchema
      ? hostile(bodySchema, doc)
      : o.method === 'get'
        ? fc.constant(undefined)
        : fc.option(fc.jsonValue({ maxDepth: 3 }), { freq: 2 }),
    rawBody: fc.option(
      fc.oneof(
        nastyString,
        fc.constantFrom('{', '{"a":', '[1,2', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
        fc.integer({ min: 30, max: 3000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
      ),
      { freq: 8 },
    ),
    contentType: fc.constantFrom(
      'application/json',
      'application/json',
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
    ),
    auth: fc.constantFrom<'ok' | 'wrong' | 'none'>(
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'wrong',
      'none',
    ),
    headerKey: fc.boolean(),
    sign: fc.boolean(),
    address: fc.tuple(fc.integer({ min: 1, max: 254 }), fc.integer({ min: 1, max: 254 })),
  });
  return fc.sample(arb, { seed, numRuns: n }).map((r) => {
    let p = o.path;
    pathParams.forEach((param, i) => {
      p = p.replace(`{${String(param.name)}}`, encodeSegment(String(r.path[i] ?? '')));
    });
    const qs = new URLSearchParams();
    queryParams.forEach((param, i) => {
      const v = r.query[i];
      if (v === null || v === undefined) return;
      for (const item of Array.isArray(v) ? v : [v])
        qs.append(String(param.name), typeof item === 'object' ? JSON.stringify(item) : String(item));
    });
    if (r.extraQuery) qs.append(r.extraQuery[0], r.extraQuery[1]);
    const headers: Record<string, string> = { ...authFor(o.op, r.auth, r.headerKey) };
    if (r.idempotencyKey !== null && params.some((x) => x.in === 'header' && x.name === 'idempotency-key'))
      headers['idempotency-key'] = r.idempotencyKey.replace(/[^\t\x20-\x7e]/g, '?');
    let payload: string | undefined;
    if (o.method !== 'get') {
      let body = o.path === '/api/config' ? loopbackOnly(r.body, simUrl, erpUrl) : r.body;
      if (
        o.path.startsWith('/webhook/midtrans') &&
        r.sign &&
        body !== null &&
        typeof body === 'object' &&
        !Array.isArray(body)
      ) {
        // A correctly signed notification with fuzzed fields: it gets past the signature check.
        const b = body as Json;
        const triple = [b.order_id, b.status_code, b.gross_amount];
        if (triple.every((x) => typeof x === 'string'))
          body = {
            ...b,
            signature_key: midtransSignature(
              String(b.order_id),
              String(b.status_code),
              String(b.gross_amount),
              CANARY.serverKey,
            ),
          };
      }
      payload = r.rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
      if (payload !== undefined) headers['content-type'] = r.contentType;
    }
    // Failed credentials come from addresses of their own, so the operator lockout never shuts
    // the fuzz out of the operator endpoints.
    const remoteAddress = r.auth === 'ok' ? undefined : `10.77.${r.address[0]}.${r.address[1]}`;
    return { url: qs.size > 0 ? `${p}?${qs.toString()}` : p, headers, payload, remoteAddress };
  });
}

describe.each(DATABASE_KINDS)('OpenAPI-driven fuzz of every endpoint (%s)', (kind) => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  it('no 500, every answer as documented, no secret in any answer or log line', async () => {
    const sim = await startSimulator({ serverKey: CANARY.serverKey, logger: false, seed: SEED });
    closers.push(() => sim.close());
    const erp = await startErpReceiver({ secret: CANARY.erpSecret });
    closers.push(() => erp.close());
    const ctx: LoggedApp = await makeLoggedApp(
      kind,
      {
        LOG_EXPOSE_API: 'true',
        API_KEYS: CANARY.apiKeys.join(','),
        MIDTRANS_MODE: 'simulator',
        MIDTRANS_SERVER_KEY: CANARY.serverKey,
        MIDTRANS_CLIENT_KEY: CANARY.clientKey,
        ERP_NOTIFY_URL: erp.url,
        ERP_WEBHOOK_SECRET: CANARY.erpSecret,
      },
      { simulatorBaseUrl: sim.baseUrl },
      OPERATOR,
    );
    closers.push(() => ctx.close());
    ctx.services.outbox.start();

    const docRes = await ctx.app.inject({
      method: 'GET',
      url: '/openapi.json',
      headers: authFor({ security: [{ operatorBasic: [] }] }, 'ok', false),
    });
    expect(docRes.statusCode).toBe(200);
    const doc = docRes.json<Json>();
    const ops: Operation[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>))
      for (const method of METHODS) if (item[method]) ops.push({ method, path, op: item[method] as Json });
    expect(ops.length).toBeGreaterThan(20);

    const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: false });
    const validators = new Map<string, ValidateFunction>();
    const validatorFor = (schema: unknown): ValidateFunction => {
      const key = JSON.stringify(schema);
      let v = validators.get(key);
      if (!v) validators.set(key, (v = ajv.compile(inline(schema, doc) as object)));
      return v;
    };

    const violations: string[] = [];
    const statuses = new Map<number, number>();
    const leaks: string[] = [];
    const forms = canaryForms();
    let sent = 0;
    for (const [i, o] of ops.entries()) {
      for (const req of requestsFor(
        o,
        doc,
        PER_OPERATION,
        SEED + i * 7919 + (kind === 'sqlite' ? 0 : 1),
        sim.baseUrl,
        erp.url,
      )) {
        const res = await ctx.app.inject({
          method: o.method.toUpperCase() as 'GET',
          url: req.url,
          headers: req.headers,
          payload: req.payload,
          remoteAddress: req.remoteAddress,
        });
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const what = `${o.method.toUpperCase()} ${req.url.slice(0, 120)} → ${res.statusCode}`;
        if (res.statusCode >= 500 && res.statusCode !== 502 && res.statusCode !== 503 && res.statusCode !== 504)
          violations.push(`${what}: ${res.body.slice(0, 300)}`);
        const responses = o.op.responses as Json;
        const documented =
          responses[String(res.statusCode)] ?? responses[`${String(res.statusCode).charAt(0)}XX`] ?? responses.default;
        const text = `${JSON.stringify(res.headers)}\n${res.body}`;
        for (const [name, value] of forms) if (text.includes(value)) leaks.push(`${name} in the answer to ${what}`);
        if (documented === undefined) {
          violations.push(`${what}: status not documented (${res.body.slice(0, 200)})`);
          continue;
        }
        const content = resolve(documented, doc).content as Record<string, Json> | undefined;
        if (!content || res.statusCode === 204 || (o.method === 'get' && res.body === '' && res.statusCode === 304))
          continue;
        const type =
          String(res.headers['content-type'] ?? '')
            .split(';')[0]
            ?.trim() ?? '';
        const media = content[type] ?? content[`${type.split('/')[0] ?? ''}/*`] ?? content['*/*'];
        if (!media) {
          violations.push(`${what}: content type ${type} not documented (${Object.keys(content).join(', ')})`);
          continue;
        }
        // A wildcard media type (the raw echo) documents bytes, not a JSON document.
        if (!/json$/.test(type) || content[type] === undefined || media.schema === undefined) continue;
        let body: unknown;
        try {
          body = JSON.parse(res.body);
        } catch {
          violations.push(`${what}: body is not JSON`);
          continue;
        }
        const valid = validatorFor(media.schema);
        if (!valid(body))
          violations.push(
            `${what}: body does not match its schema: ${ajv.errorsText(valid.errors)} in ${res.body.slice(0, 200)}`,
          );
      }
    }

    const logs = await ctx.rawLogs();
    const lines = logs.split('\n').filter((l) => l.length > 0);
    for (const line of lines)
      for (const [name, value] of forms)
        if (line.includes(value)) leaks.push(`${name} in a log line: ${line.slice(0, 200)}`);

    const count = (pred: (s: number) => boolean) =>
      [...statuses.entries()].filter(([s]) => pred(s)).reduce((n, [, c]) => n + c, 0);
    reportFigures('openapi-fuzz', kind, {
      operations: ops.length,
      requests: sent,
      '2xx': count((s) => s < 300),
      '4xx': count((s) => s >= 400 && s < 500),
      '5xx': count((s) => s >= 500),
      http_500: statuses.get(500) ?? 0,
      violations: violations.length,
      log_lines: lines.length,
      leaks: leaks.length,
    });
    expect(violations.slice(0, 30)).toEqual([]);
    expect(leaks.slice(0, 30)).toEqual([]);
    expect(lines.length).toBeGreaterThan(sent);
    expect(count((s) => s < 300)).toBeGreaterThan(sent / 10);
  }, 600_000);
});
