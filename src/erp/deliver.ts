/**
 * One signed HTTP delivery of an ERP event (Standard Webhooks headers). No redirects are followed
 * (a 3xx is a failed attempt), the answer body is read only up to a small cap and never stored,
 * and every attempt has a hard timeout.
 */
import { createHmac } from 'node:crypto';
import { Agent, request, type Dispatcher } from 'undici';
import { Webhook } from 'standardwebhooks';

export interface DeliveryRequest {
  url: string;
  /** `whsec_<base64>` (Standard Webhooks) or any other string used as raw UTF-8 key bytes. */
  secret?: string;
  eventId: string;
  /** The stored body bytes. */
  body: string;
  timeoutMs: number;
  /** Wall-clock time of sending: the receiver checks it against its own clock (±5 min). */
  sentAt: Date;
}

export interface DeliveryResponse {
  /** HTTP status, null when no answer arrived. */
  statusCode: number | null;
  /** The `Retry-After` header as sent, if any. */
  retryAfter?: string;
  /** Short, secret-free description of a failure. */
  error: string | null;
  latencyMs: number;
}

const MAX_BODY_READ = 4096;
const signingKeys = new Map<string, Buffer>();

/**
 * The HMAC key of a secret: `whsec_…` secrets are base64 per Standard Webhooks; anything else (or
 * what the `standardwebhooks` package refuses as a `whsec_` secret: bad base64, an empty key) is
 * its raw UTF-8 bytes.
 */
function signingKey(secret: string): Buffer {
  const cached = signingKeys.get(secret);
  if (cached) return cached;
  let key = Buffer.from(secret, 'utf8');
  if (secret.startsWith('whsec_')) {
    try {
      // The package's decoder is strict where Buffer's is lenient: it says which secrets are base64.
      new Webhook(secret);
      key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    } catch {
      // raw bytes
    }
  }
  if (signingKeys.size > 16) signingKeys.clear();
  signingKeys.set(secret, key);
  return key;
}

/**
 * The `webhook-signature` value: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`, as the
 * `standardwebhooks` package signs, with node's native HMAC (the package's pure-JS SHA-256 was
 * about 4 % of the CPU of a drain).
 */
export function webhookSignature(secret: string, eventId: string, sentAt: Date, body: string): string {
  const mac = createHmac('sha256', signingKey(secret));
  mac.update(`${eventId}.${Math.floor(sentAt.getTime() / 1000)}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

export function deliveryHeaders(
  eventId: string,
  sentAt: Date,
  body: string,
  secret: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'paylink-webhooks/1',
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
  };
  if (secret) headers['webhook-signature'] = webhookSignature(secret, eventId, sentAt, body);
  return headers;
}

async function drainCapped(body: Dispatcher.ResponseData['body']): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_READ) {
        body.destroy();
        return;
      }
    }
  } catch {
    // the answer's body does not matter once the status is known
  }
}

function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  )
    return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'EPRIVATEADDR') return 'refused: private address';
  if (code === 'ELINKLOCALADDR') return 'refused: link-local or metadata address';
  return typeof code === 'string' ? `network error (${code})` : 'network error';
}

/**
 * Sends one delivery through `dispatcher` (the owner's agent, e.g. the outbox worker's, which it
 * closes on stop). Without one, the call gets an agent of its own, closed when it returns.
 */
export async function deliver(req: DeliveryRequest, dispatcher?: Dispatcher): Promise<DeliveryResponse> {
  if (dispatcher) return send(req, dispatcher);
  const own = new Agent({ connect: { timeout: 5_000 }, keepAliveTimeout: 4_000 });
  try {
    return await send(req, own);
  } finally {
    await own.close().catch(() => undefined);
  }
}

async function send(req: DeliveryRequest, dispatcher: Dispatcher): Promise<DeliveryResponse> {
  const headers = deliveryHeaders(req.eventId, req.sentAt, req.body, req.secret);
  const started = performance.now();
  try {
    const res = await request(req.url, {
      method: 'POST',
      headers,
      body: req.body,
      dispatcher,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    await drainCapped(res.body);
    const latencyMs = Math.round(performance.now() - started);
    const ra = res.headers['retry-after'];
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const out: DeliveryResponse = {
      statusCode: res.statusCode,
      error: ok ? null : `HTTP ${res.statusCode}`,
      latencyMs,
    };
    if (typeof ra === 'string') out.retryAfter = ra.slice(0, 64);
    return out;
  } catch (err) {
    return { statusCode: null, error: describe(err), latencyMs: Math.round(performance.now() - started) };
  }
}
