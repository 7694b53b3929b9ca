/**
 * A real ERP on a loopback port (port 0): records every delivery, verifies Standard Webhooks
 * signatures with the `standardwebhooks` package, and can be told to fail, refuse connections,
 * stall, or answer with Retry-After. Reusable by any test or demo:
 *
 *   const erp = await startErpReceiver({ secret: 'whsec_…' });
 *   // point erp.notify_url at erp.url; later:
 *   await erp.waitFor((r) => r.accepted().length >= 1);
 *   erp.setMode({ kind: 'fail', status: 503, retryAfter: '1' });
 *   await erp.close();
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type ErpMode =
  | { kind: 'ok'; status?: number }
  | { kind: 'fail'; status: number; retryAfter?: string }
  /** Drops the connection without an answer (looks like an ERP that is down). */
  | { kind: 'refuse' }
  /** Answers after `delayMs` (use beyond the service's timeout to simulate a hang). */
  | { kind: 'slow'; delayMs: number; status?: number };

export interface ErpDelivery {
  webhookId: string | undefined;
  webhookTimestamp: string | undefined;
  webhookSignature: string | undefined;
  body: string;
  json: Record<string, unknown> | undefined;
  /** null when the receiver has no secret to check with. */
  verified: boolean | null;
  /** What the receiver answered (0 = connection dropped). */
  answered: number;
  receivedAt: number;
}

export interface ErpReceiverOptions {
  /** `whsec_…` or a raw secret, as configured in the service's `erp.webhook_secret`. */
  secret?: string;
  /** Answer 401 to deliveries whose signature does not verify (default false: record them and answer by mode). */
  rejectInvalid?: boolean;
  /** Path deliveries are posted to; default `/erp/events`. */
  path?: string;
}

export interface ErpReceiver {
  /** Full URL to configure as `erp.notify_url`. */
  url: string;
  deliveries: ErpDelivery[];
  /** Deliveries answered with a 2xx. */
  accepted(): ErpDelivery[];
  /** Requests received and not yet answered (or dropped) now. */
  inFlight(): number;
  /** The most requests in flight at once since the start or the last `resetMaxInFlight`. */
  maxInFlight(): number;
  resetMaxInFlight(): void;
  setMode(mode: ErpMode): void;
  /** Decides per delivery; return undefined to fall back to the current mode. */
  setScript(fn: ((d: ErpDelivery, index: number) => ErpMode | undefined) | undefined): void;
  waitFor(predicate: (r: ErpReceiver) => boolean, timeoutMs?: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

function verifierFor(secret: string): Webhook {
  if (secret.startsWith('whsec_')) {
    try {
      return new Webhook(secret);
    } catch {
      // undecodable base64: the service falls back to raw bytes, so do the same
    }
  }
  return new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function verify(wh: Webhook | undefined, d: ErpDelivery): boolean | null {
  if (!wh) return null;
  try {
    wh.verify(d.body, {
      'webhook-id': d.webhookId ?? '',
      'webhook-timestamp': d.webhookTimestamp ?? '',
      'webhook-signature': d.webhookSignature ?? '',
    });
    return true;
  } catch {
    return false;
  }
}

function parse(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function startErpReceiver(opts: ErpReceiverOptions = {}): Promise<ErpReceiver> {
  const path = opts.path ?? '/erp/events';
  const wh = opts.secret ? verifierFor(opts.secret) : undefined;
  let mode: ErpMode = { kind: 'ok' };
  let script: ((d: ErpDelivery, index: number) => ErpMode | undefined) | undefined;
  const deliveries: ErpDelivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let maxInFlight = 0;

  const server = http.createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let counted = true;
    const done = () => {
      if (counted) inFlight--;
      counted = false;
    };
    res.on('finish', done);
    res.on('close', done);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1024 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const d: ErpDelivery = {
        webhookId: header(req, 'webhook-id'),
        webhookTimestamp: header(req, 'webhook-timestamp'),
        webhookSignature: header(req, 'webhook-signature'),
        body,
        json: parse(body),
        verified: null,
        answered: 0,
        receivedAt: Date.now(),
      };
      d.verified = verify(wh, d);
      deliveries.push(d);
      if (req.method !== 'POST' || req.url !== path) return answer(res, d, 404);
      if (opts.rejectInvalid && d.verified === false) return answer(res, d, 401);
      const m = script?.(d, deliveries.length - 1) ?? mode;
      if (m.kind === 'refuse') {
        req.socket.destroy();
        return;
      }
      if (m.kind === 'slow') {
        const t = setTimeout(() => {
          timers.delete(t);
          answer(res, d, m.status ?? 200);
        }, m.delayMs);
        timers.add(t);
        return;
      }
      if (m.kind === 'fail') return answer(res, d, m.status, m.retryAfter);
      return answer(res, d, m.status ?? 200);
    });
  });

  function answer(res: http.ServerResponse, d: ErpDelivery, status: number, retryAfter?: string): void {
    if (res.destroyed) return;
    d.answered = status;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    res.writeHead(status, headers).end(JSON.stringify({ received: status < 300 }));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: ErpReceiver = {
    url: `http://127.0.0.1:${port}${path}`,
    deliveries,
    accepted: () => deliveries.filter((d) => d.answered >= 200 && d.answered < 300),
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    resetMaxInFlight() {
      maxInFlight = inFlight;
    },
    setMode(m) {
      mode = m;
    },
    setScript(fn) {
      script = fn;
    },
    async waitFor(predicate, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(receiver)) {
        if (Date.now() > until)
          throw new Error(
            `ERP receiver: condition not met within ${timeoutMs} ms (${deliveries.length} deliveries so far)`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    reset() {
      deliveries.length = 0;
      mode = { kind: 'ok' };
      script = undefined;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
