import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SimContext } from './context.js';
import { areaOf, basicAuthUser, faultBody, redact, redactQuery, unauthorizedBody } from './http.js';
import { IdempotencyStore } from './idempotency.js';
import type { Merchant } from './merchants.js';
import type { GatewayApi, RequestLogEntry } from './state.js';

const MAX_HOLD_MS = 60_000;

interface ReqState {
  api: GatewayApi;
  log: RequestLogEntry;
  merchant?: Merchant;
  idemKey?: string;
  hold?: boolean;
}

const states = new WeakMap<FastifyRequest, ReqState>();

function apiOf(req: FastifyRequest): GatewayApi {
  const area = areaOf(req.url);
  return area === 'payment_link' || area === 'snap' ? area : 'core';
}

const CARD_PATHS = /^\/v2\/(token|card\/register|point_inquiry\/[^/?]+)(\?|$)/;

/**
 * The merchant a gateway call is for: the one whose server key is the Basic-auth user. The card
 * paths are called from the customer's browser with the merchant's client key instead.
 */
function merchantOfCall(ctx: SimContext, req: FastifyRequest): Merchant | undefined {
  const byServerKey = ctx.merchants.byServerKey(basicAuthUser(req.headers.authorization));
  if (byServerKey || req.method !== 'GET' || !CARD_PATHS.test(req.url)) return byServerKey;
  const q = req.query;
  return typeof q === 'object' && q !== null && 'client_key' in q ? ctx.merchants.byClientKey(q.client_key) : undefined;
}

/** The merchant of a gateway call that passed the gate; a route outside the gate asking for one is a bug. */
export function merchantOf(req: FastifyRequest): Merchant {
  const m = states.get(req)?.merchant;
  if (!m) throw new Error('simulator: a gateway route ran without its merchant');
  return m;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Latency, request log, auth, error/timeout faults and Idempotency-Key — gateway paths only. */
export function registerGatewayHooks(scope: FastifyInstance, ctx: SimContext): void {
  scope.addHook('onRequest', async () => {
    if (ctx.faults.latency_ms > 0) await sleep(ctx.faults.latency_ms);
  });
  scope.addHook('preValidation', async (req, reply) => gatewayGate(ctx, req, reply));
  scope.addHook('onSend', async (req, reply, payload) => {
    const st = states.get(req);
    if (!st) return payload;
    if (st.idemKey !== undefined && st.merchant) finishIdempotency(st.merchant.idempotency, st.idemKey, reply, payload);
    if (st.hold) await holdOpen(ctx, req);
    return payload;
  });
  scope.addHook('onResponse', async (req, reply) => {
    const st = states.get(req);
    if (st) st.log.status = reply.statusCode;
  });
}

function logRequest(ctx: SimContext, req: FastifyRequest, api: GatewayApi, merchant?: Merchant): RequestLogEntry {
  const key = req.headers['idempotency-key'];
  const entry: Omit<RequestLogEntry, 'id'> = {
    at: new Date().toISOString(),
    method: req.method,
    path: redactQuery(req.url),
    api,
  };
  if (merchant) entry.merchant_id = merchant.id;
  if (typeof key === 'string') entry.idempotency_key = key;
  if (req.body !== undefined) entry.body = redact(req.body);
  return ctx.requests.add(entry);
}

async function gatewayGate(ctx: SimContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const api = apiOf(req);
  const merchant = merchantOfCall(ctx, req);
  const st: ReqState = { api, log: logRequest(ctx, req, api, merchant) };
  states.set(req, st);
  if (!merchant) {
    await reply.code(401).send(unauthorizedBody(api));
    return;
  }
  st.merchant = merchant;
  if (ctx.random() < ctx.faults.error_rate) {
    await reply.code(ctx.faults.status).send(faultBody(api, ctx.faults.status));
    return;
  }
  st.hold = ctx.random() < ctx.faults.timeout_rate;
  if (req.method !== 'POST') return;
  const key = IdempotencyStore.usable(req.headers['idempotency-key']);
  if (key === undefined) return;
  const hit = merchant.idempotency.lookup(key);
  if (hit === 'in_flight') {
    // The gateway answers 202 while the first request with this key is still being processed.
    await reply
      .code(202)
      .send(
        api === 'core'
          ? { status_code: '202', status_message: 'Request is being processed' }
          : { error_messages: ['Request is being processed'] },
      );
    return;
  }
  if (hit) {
    await reply
      .code(hit.status)
      .header('content-type', hit.contentType)
      .header('idempotent-replayed', 'true')
      .send(hit.body);
    return;
  }
  merchant.idempotency.begin(key);
  st.idemKey = key;
}

function finishIdempotency(store: IdempotencyStore, key: string, reply: FastifyReply, payload: unknown): void {
  const ok = reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string' && !isCoreError(payload);
  const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
  store.finish(
    key,
    ok && typeof payload === 'string' ? { status: reply.statusCode, body: payload, contentType } : undefined,
  );
}

/** In `body` mode a refusal is HTTP 200 with an error status_code; it is still not a success to store. */
function isCoreError(payload: string): boolean {
  const m = /"status_code":"(\d+)"/.exec(payload);
  return m !== null && Number(m[1]) >= 300 && m[1] !== '407';
}

/** Timeout fault: the work is done, but the answer never comes; the socket is cut after 60 s. */
function holdOpen(ctx: SimContext, req: FastifyRequest): Promise<void> {
  return new Promise((resolve) => {
    const socket = req.raw.socket;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      ctx.holds.delete(release);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(release, MAX_HOLD_MS);
    timer.unref();
    ctx.holds.add(release);
    socket.once('close', release);
  });
}
