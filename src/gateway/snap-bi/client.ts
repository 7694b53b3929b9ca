/**
 * The BI-SNAP wire client: one access token per set of credentials,
 * fetched once for concurrent callers, kept until shortly before its lifetime ends; every
 * transactional call signed (X-TIMESTAMP, X-SIGNATURE, X-PARTNER-ID, X-EXTERNAL-ID, CHANNEL-ID)
 * with a timeout; a `401SS01` (token invalid or expired) fetches a new token once and sends the same
 * request again under the same X-EXTERNAL-ID. Refusals are returned as answers (`responseCode`):
 * what they mean is the adapter's to say.
 */
import { Agent, request, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { GatewayError } from '../port.js';
import { readCapped } from '../read-capped.js';
import { jakartaWallClock } from '../../platform/time.js';
import { currentLogContext } from '../../platform/logging/context.js';
import { guardedLookup } from '../../platform/connect-guard.js';
import { tokenSignature, transactionSignature } from './signature.js';

export interface SnapBiCredentials {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  partnerId: string;
  channelId: string;
  /** The merchant's PKCS#8 PEM. */
  privateKey: string;
}

export interface SnapBiClientOptions {
  /** Read for every call: the runtime config may change them. */
  credentials: () => Promise<SnapBiCredentials>;
  logger: Logger;
  /** Per call, connect to last byte. Default 10 000 ms. */
  timeoutMs?: number;
  /** A token is replaced this long before its lifetime ends. Default 60 s. */
  refreshMarginMs?: number;
  maxResponseBytes?: number;
  /** Refuse hosts that resolve to private addresses (production). Default false. */
  blockPrivateAddresses?: boolean;
  now?: () => number;
}

/** An answer: the HTTP status and the body, whose `responseCode` is HTTP status + service code + case code. */
export interface SnapBiAnswer {
  httpStatus: number;
  responseCode: string;
  responseMessage: string;
  body: Record<string, unknown>;
}

interface Token {
  value: string;
  expiresAt: number;
  /** Which credentials it belongs to: a change of any of them is a new token. */
  owner: string;
}

/** `2026-11-27T10:00:00+07:00`: the documented X-TIMESTAMP form (WIB). */
export function snapTimestamp(at: Date): string {
  return `${jakartaWallClock(at).slice(0, 19)}+07:00`;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export class SnapBiClient {
  private readonly dispatcher: Dispatcher;
  private readonly timeoutMs: number;
  private readonly margin: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private token: Token | undefined;
  private inFlight: { owner: string; promise: Promise<Token> } | undefined;
  private keyCache: { pem: string; key: KeyObject } | undefined;
  /** How many tokens were fetched (for tests and metrics). */
  tokensFetched = 0;

  constructor(private readonly opts: SnapBiClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.margin = opts.refreshMarginMs ?? 60_000;
    this.maxBytes = opts.maxResponseBytes ?? 1024 * 1024;
    this.now = opts.now ?? Date.now;
    this.dispatcher = new Agent({
      connect: {
        timeout: Math.min(this.timeoutMs, 5_000),
        lookup: guardedLookup(opts.blockPrivateAddresses ?? false),
      },
      keepAliveTimeout: 10_000,
    });
  }

  /**
   * A signed transactional call. `externalId` is the caller's: a retry of the same operation passes
   * the same one, so the gateway answers it as the first call.
   */
  async call(op: string, path: string, body: Record<string, unknown>, externalId: string): Promise<SnapBiAnswer> {
    const c = await this.opts.credentials();
    const first = await this.send(op, c, path, body, externalId, await this.accessToken(c));
    // 401 + service code + 01: the token is invalid or expired: one new token, one retry.
    if (!/^401\d{2}01$/.test(first.responseCode)) return first;
    this.token = undefined;
    return this.send(op, c, path, body, externalId, await this.accessToken(c));
  }

  /** The current token, or a new one; concurrent callers share one request. */
  private async accessToken(c: SnapBiCredentials): Promise<string> {
    const owner = `${c.baseUrl}|${c.clientId}|${c.privateKey}`;
    const t = this.token;
    if (t && t.owner === owner && t.expiresAt - this.margin > this.now()) return t.value;
    if (!this.inFlight || this.inFlight.owner !== owner) {
      const promise = this.fetchToken(c, owner).finally(() => {
        if (this.inFlight?.promise === promise) this.inFlight = undefined;
      });
      this.inFlight = { owner, promise };
    }
    const fresh = await this.inFlight.promise;
    this.token = fresh;
    return fresh.value;
  }

  private async fetchToken(c: SnapBiCredentials, owner: string): Promise<Token> {
    const timestamp = snapTimestamp(new Date(this.now()));
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-timestamp': timestamp,
      'x-client-key': c.clientId,
      'x-signature': tokenSignature(c.clientId, timestamp, this.privateKey(c.privateKey)),
    };
    const started = this.now();
    const a = await this.post(
      'access_token',
      c.baseUrl,
      '/v1.0/access-token/b2b',
      headers,
      '{"grantType":"client_credentials"}',
    );
    const token = a.body.accessToken;
    const lifetime = Number(a.body.expiresIn ?? '900');
    if (a.responseCode !== '2007300' || typeof token !== 'string' || token === '')
      throw GatewayError.refused({ code: a.responseCode, message: a.responseMessage });
    this.tokensFetched++;
    const seconds = Number.isFinite(lifetime) && lifetime > 0 ? lifetime : 900;
    return { value: token, expiresAt: started + seconds * 1000, owner };
  }

  private privateKey(pem: string): KeyObject {
    if (this.keyCache?.pem !== pem) this.keyCache = { pem, key: createPrivateKey({ key: pem, format: 'pem' }) };
    return this.keyCache.key;
  }

  private send(
    op: string,
    c: SnapBiCredentials,
    path: string,
    body: Record<string, unknown>,
    externalId: string,
    accessToken: string,
  ): Promise<SnapBiAnswer> {
    // The exact bytes hashed are the bytes sent.
    const text = JSON.stringify(body);
    const timestamp = snapTimestamp(new Date(this.now()));
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Bearer ${accessToken}`,
      'x-timestamp': timestamp,
      'x-signature': transactionSignature({ method: 'POST', path, accessToken, body: text, timestamp }, c.clientSecret),
      'x-partner-id': c.partnerId,
      'x-external-id': externalId,
      'channel-id': c.channelId,
    };
    return this.post(op, c.baseUrl, path, headers, text);
  }

  private async post(
    op: string,
    base: string,
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<SnapBiAnswer> {
    const started = performance.now();
    const log = this.opts.logger;
    try {
      const res = await request(`${base}${path}`, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.dispatcher,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await readCapped(res.body, this.maxBytes);
      const durationMs = Math.round(performance.now() - started);
      const parsed = parseAnswer(text, res.statusCode);
      log.info(
        {
          ...currentLogContext(),
          gateway: {
            api: 'snap_bi',
            op,
            path,
            status: res.statusCode,
            code: parsed.responseCode,
            duration_ms: durationMs,
          },
        },
        'gateway call',
      );
      return parsed;
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const kind = timedOut(err) ? 'timeout' : 'unavailable';
      log.warn({ ...currentLogContext(), gateway: { api: 'snap_bi', op, path, error: kind } }, 'gateway call failed');
      throw new GatewayError(kind, `gateway ${kind} on ${op}`);
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

function parseAnswer(text: string, httpStatus: number): SnapBiAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    if (httpStatus >= 500)
      return { httpStatus, responseCode: `${httpStatus}0000`, responseMessage: 'non-JSON error', body: {} };
    throw new GatewayError('bad_response', 'gateway answered with invalid JSON');
  }
  if (!isObject(body) || typeof body.responseCode !== 'string' || !/^\d{7}$/.test(body.responseCode))
    throw new GatewayError('bad_response', 'gateway answer has no responseCode');
  const message = typeof body.responseMessage === 'string' ? body.responseMessage.slice(0, 512) : '';
  return { httpStatus, responseCode: body.responseCode, responseMessage: message, body };
}

function timedOut(err: unknown): boolean {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  return (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_ABORTED'
  );
}
