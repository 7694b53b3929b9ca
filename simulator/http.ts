import type { FastifyReply } from 'fastify';
import { uuid } from './lib/format.js';
import { isHttpUrl, type Json } from './lib/validate.js';
import type { Faults } from './faults.js';
import type { GatewayApi, NotifyTargets } from './state.js';

export type Area = GatewayApi | 'hosted' | 'control' | 'other';

export function areaOf(url: string): Area {
  const path = url.split('?')[0] ?? url;
  if (path.startsWith('/v1/payment-links')) return 'payment_link';
  if (path.startsWith('/snap/v1/')) return 'snap';
  if (path.startsWith('/v2/')) return 'core';
  if (path.startsWith('/_sim/') || path === '/_sim') return 'control';
  if (path.startsWith('/payment-links/') || path.startsWith('/snap/v3/')) return 'hosted';
  return 'other';
}

const SNAP_401 = [
  'Access denied due to unauthorized transaction, please check client or server key',
  'Visit https://snap-docs.midtrans.com/#request-headers for more details',
];

/** Each API words a refused key differently; Payment Link even sends a bare string. */
export function unauthorizedBody(api: GatewayApi): Json {
  if (api === 'payment_link') return { error_messages: 'Access denied due to unauthorized request' };
  if (api === 'snap') return { error_messages: SNAP_401 };
  return {
    status_code: '401',
    status_message: 'Transaction cannot be authorized with the current client/server key.',
    id: uuid(),
  };
}

export const UNEXPECTED_MESSAGE = 'Sorry. Our system is recovering from unexpected issues. Please retry.';

const SERVER_ERRORS: Record<number, string> = {
  500: UNEXPECTED_MESSAGE,
  502: 'Internal Server Error: Bank connection problem',
  503: 'Sorry, we are experiencing a problem connecting to our partner. Please try again later.',
  504: 'Internal Server Error: Fraud detection service is unavailable',
};

/** The error body a failing gateway would send, used by the error_rate fault. */
export function faultBody(api: GatewayApi, status: number): Json {
  if (api === 'core') {
    const message =
      SERVER_ERRORS[status] ??
      (status === 429 ? 'Too many requests' : 'Sorry. Our system is recovering from unexpected issues. Please retry.');
    return { status_code: String(status), status_message: message, id: uuid() };
  }
  if (status === 401) return unauthorizedBody(api);
  return { error_messages: ['Sorry, we encountered internal server error. We will fix this soon.'] };
}

/** The Basic-auth user name, which is the server key at the gateway (the password is empty). */
export function basicAuthUser(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+(\S+)$/i.exec(header.trim());
  if (!m || m[1] === undefined) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const idx = decoded.indexOf(':');
  return idx === -1 ? decoded : decoded.slice(0, idx);
}

export function coreError(code: string, message: string, extra: Json = {}): Json {
  return { status_code: code, status_message: message, ...extra, id: uuid() };
}

/**
 * Core API errors live in the body's status_code. Validation (400) and auth (401) always mirror it
 * in the HTTP status; 404/406/411/412/414 do so only in `mirror` mode (docs list them under HTTP 200).
 * 407 (expired) is always HTTP 200, as every official client expects.
 */
export function coreHttpStatus(code: string, faults: Faults): number {
  const n = Number(code);
  if (!Number.isFinite(n) || n < 400 || n === 407) return 200;
  if (n === 400 || n === 401 || n >= 500) return n;
  return faults.core_http_status === 'mirror' ? n : 200;
}

export function sendCore(reply: FastifyReply, body: Json, faults: Faults): FastifyReply {
  const code = typeof body.status_code === 'string' ? body.status_code : '200';
  return reply.code(coreHttpStatus(code, faults)).send(body);
}

function parseUrlList(v: string | string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const raw = (Array.isArray(v) ? v.join(',') : v).split(',').map((s) => s.trim());
  const valid = raw.filter(isHttpUrl);
  // The gateway takes at most three URLs per header.
  return valid.length > 0 ? valid.slice(0, 3) : undefined;
}

export function notifyTargets(headers: Record<string, string | string[] | undefined>): NotifyTargets {
  const out: NotifyTargets = {};
  const override = parseUrlList(headers['x-override-notification']);
  const append = parseUrlList(headers['x-append-notification']);
  if (override) out.override = override;
  if (append) out.append = append;
  return out;
}

const SECRET_KEYS = new Set(['token_id', 'card_number', 'card_cvv', 'server_key', 'password']);

export function redact(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(redact);
  if (typeof v !== 'object' || v === null) return v;
  const out: Json = {};
  for (const [k, val] of Object.entries(v)) out[k] = SECRET_KEYS.has(k) ? '****' : redact(val);
  return out;
}

const SECRET_QUERY = new Set(['card_number', 'card_cvv', 'card_exp_month', 'card_exp_year', 'token_id', 'client_key']);

/** Card data travels in the /v2/token query string; logs keep only its shape. */
export function redactQuery(url: string): string {
  const i = url.indexOf('?');
  if (i === -1) return url;
  const params = new URLSearchParams(url.slice(i + 1));
  for (const k of [...params.keys()]) if (SECRET_QUERY.has(k)) params.set(k, '****');
  return `${url.slice(0, i)}?${params.toString()}`;
}

/** Fastify's request log line, with the query's card data masked. */
export function safeRequestSerializer(req: { method?: string; url?: string; ip?: string }): Record<string, unknown> {
  return { method: req.method, url: redactQuery(req.url ?? ''), remoteAddress: req.ip };
}
