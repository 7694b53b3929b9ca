/**
 * `Idempotency-Key` for creating POSTs (kept at least 24 h), Stripe / IETF-draft semantics:
 * same key + same request → the first response replayed (status and bytes); same key + different
 * request → 422 IDEMPOTENCY_MISMATCH; same key while the first still runs → 409 IDEMPOTENCY_IN_FLIGHT.
 * Validation failures, auth failures and 5xx are not remembered, so a corrected or later retry with
 * the same key runs again (5xx: our creation paths recover instead of repeating, see link-gateway.ts).
 *
 * Use on any route by spreading the hooks into its options:
 *   app.post('/x', { ...idempotent(services, 'x.create'), config: { auth: 'key' }, schema }, handler)
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { stableStringify } from '../../domain/orders/request-hash.js';
import {
  CLAIM_LOCK_MS,
  KEY_RETENTION_MS,
  claimKey,
  keepOutcome,
  pruneExpiredKeys,
  releaseKey,
  type IdempotencyDeps,
  type KeyClaim,
} from '../../domain/idempotency.js';
import { inAccount } from '../../domain/accounts/scope.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';

export interface IdempotencyOptions {
  /** How long a key is remembered, ms. Default 24 h (the contract's minimum). */
  retentionMs?: number;
  /** How long an in-flight claim blocks its key before a retry may take over (crashed instance), ms. Default 90 s. */
  lockMs?: number;
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Answers that describe this request's input or a passing condition (another refund holding the payment), never its outcome: the same key may try again. */
const TRANSIENT_CODES = new Set([
  'IDEMPOTENCY_IN_FLIGHT',
  'IDEMPOTENCY_MISMATCH',
  'TOO_MANY_REQUESTS',
  'REFUND_IN_PROGRESS',
]);

const claims = new WeakMap<FastifyRequest, KeyClaim>();

/** Keys are per client: the hash of the presented API key, so two ERPs never share a key space. */
function clientOf(req: FastifyRequest): string {
  const auth = req.headers.authorization;
  const given =
    typeof auth === 'string' && /^Bearer\s+/i.test(auth)
      ? auth.replace(/^Bearer\s+/i, '').trim()
      : req.headers['x-api-key'];
  const id = typeof given === 'string' ? given : '';
  return createHash('sha256').update(id).digest('hex').slice(0, 16);
}

/**
 * The request's Idempotency-Key within its client's key space, hashed: a domain action keeps it to
 * recognise a retry of the same request after its outcome was lost (a refund whose answer timed out).
 */
export function requestKeyOf(req: FastifyRequest): string | undefined {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (typeof raw !== 'string' || !KEY.test(raw)) return undefined;
  return requestKeyWithin(clientOf(req), raw);
}

/** A key within its caller's key space, hashed: what a domain action keeps as the request's key. */
export function requestKeyWithin(space: string, key: string): string {
  return createHash('sha256').update(`${space}\n${key}`).digest('hex');
}

function fingerprint(req: FastifyRequest): string {
  return createHash('sha256')
    .update(`${req.method} ${req.url}\n${stableStringify(req.body ?? null)}`)
    .digest('hex');
}

/** Whether an answer is the request's outcome, kept for its key; `code`: its error code, if it has one. */
export function isOutcome(status: number, code: string | undefined): boolean {
  if (status < 400) return true;
  if (status >= 500 || [400, 401, 403, 404, 405, 408, 413, 415, 429].includes(status)) return false;
  return !(code !== undefined && TRANSIENT_CODES.has(code));
}

function remember(status: number, payload: string): boolean {
  if (status < 400) return true;
  try {
    const code: unknown = (JSON.parse(payload) as { code?: unknown }).code;
    return isOutcome(status, typeof code === 'string' ? code : undefined);
  } catch {
    return isOutcome(status, undefined);
  }
}

export function idempotent(services: IdempotencyDeps, scope: string, o: IdempotencyOptions = {}) {
  const retentionMs = o.retentionMs ?? KEY_RETENTION_MS;
  const lockMs = o.lockMs ?? CLAIM_LOCK_MS;

  async function preHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const raw = req.headers[IDEMPOTENCY_HEADER];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string' || !KEY.test(raw)) {
      throw new AppError('VALIDATION_FAILED', 'Idempotency-Key must be 1–255 visible ASCII characters.', {
        errors: [{ path: 'Idempotency-Key', message: 'must be 1–255 visible ASCII characters' }],
      });
    }
    const now = services.clock.now();
    await pruneExpiredKeys(services, now);
    const hash = fingerprint(req);
    const res = await claimKey(
      inAccount(services, req.account ?? DEFAULT_ACCOUNT),
      `${scope}:${clientOf(req)}`,
      raw,
      hash,
      { now, retentionMs, lockMs },
    );
    if (res.claimed) {
      claims.set(req, res.claim);
      return undefined;
    }
    const rec = res.record;
    if (rec.requestHash !== hash)
      throw new AppError('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was used with a different request.');
    if (rec.state !== 'completed' || rec.responseStatus === null || rec.responseBody === null) {
      throw new AppError(
        'IDEMPOTENCY_IN_FLIGHT',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        { headers: { 'retry-after': '1' } },
      );
    }
    const type = rec.responseStatus >= 400 ? 'application/problem+json' : 'application/json; charset=utf-8';
    reply.code(rec.responseStatus).header('content-type', type).header('idempotent-replayed', 'true');
    await reply.send(rec.responseBody);
    return reply;
  }

  async function onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const claim = claims.get(req);
    if (!claim) return payload;
    claims.delete(req);
    try {
      if (typeof payload === 'string' && remember(reply.statusCode, payload)) {
        const stored = await keepOutcome(
          inAccount(services, req.account ?? DEFAULT_ACCOUNT),
          claim,
          reply.statusCode,
          payload,
        );
        if (!stored) req.log.warn({ idempotency_scope: claim.scope }, 'idempotency claim was lost before completion');
      } else {
        await releaseKey(inAccount(services, req.account ?? DEFAULT_ACCOUNT), claim);
      }
    } catch (err) {
      // The answer still goes out; the claim's lock expires and a retry re-runs safely.
      req.log.warn(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        'idempotency record not saved',
      );
    }
    return payload;
  }

  return { preHandler, onSend };
}
