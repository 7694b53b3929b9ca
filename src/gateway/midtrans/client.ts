import { Agent, request, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { RuntimeConfig } from '../../model/runtime-config.js';
import { GatewayError } from '../port.js';
import { readCapped } from '../read-capped.js';
import { MidtransRefusal } from './errors.js';
import { currentLogContext } from '../../platform/logging/context.js';
import {
  PrivateAddressError,
  guardedLookup,
  literalRefusal,
  refusalOf,
  type Resolve,
} from '../../platform/connect-guard.js';
import {
  parseCoreResponse,
  parseErrorMessages,
  type PaymentLinkCreated,
  type PaymentLinkDetails,
  type SnapCreated,
  parsePaymentLinkCreated,
  parsePaymentLinkDetails,
  parseSnapCreated,
} from './wire.js';
import type { GatewayAnswer } from '../answer.js';
import type { PaymentLinkRequest, RefundRequest, SnapRequest } from './requests.js';
import type { ChargeRequest } from './charge-body.js';

/** Every body the client sends: each built by its builder in gateway/ and typed by its schema. */
type RequestBody = PaymentLinkRequest | SnapRequest | ChargeRequest | RefundRequest;

export interface GatewayCallOptions {
  /** Sent as `Idempotency-Key` (the gateway keeps it 5 minutes, ≤46 chars). */
  idempotencyKey?: string;
  /** Sent as `X-Override-Notification` (≤3 comma-separated URLs). */
  overrideNotification?: string;
  /** A tighter limit than the client's for this call (e.g. while a webhook waits for it). */
  timeoutMs?: number;
  /**
   * The transaction was created through BI-SNAP: sent as `transaction-source: SNAP_API`, without
   * which the Core API does not act on it (status, cancel and refund accept it; expire is not
   * documented to).
   */
  snapApiSource?: boolean;
}

type ActOptions = Pick<GatewayCallOptions, 'snapApiSource'>;

export interface GatewayCallObservation {
  operation: string;
  /** HTTP status, or the failure kind when there was no answer. */
  outcome: number | 'timeout' | 'unavailable';
  durationMs: number;
}

export interface GatewayClientOptions {
  runtimeConfig: () => Promise<RuntimeConfig>;
  logger: Logger;
  /** Per call, connect to last byte. Default 10 000 ms. */
  timeoutMs?: number;
  /** Largest response body read. Default 1 MiB. */
  maxResponseBytes?: number;
  observe?: (o: GatewayCallObservation) => void;
  /**
   * Refuse gateway hosts that are or resolve to loopback or private addresses (production; the
   * embedded simulator listens on loopback). Link-local and metadata addresses are refused always,
   * checked for every resolved address when connecting. Default false.
   */
  blockPrivateAddresses?: boolean;
  /** Tests: the name resolver behind the connect-time address check (default `dns.lookup`). */
  resolve?: Resolve;
}

type Host = 'api' | 'app';

interface RawResponse {
  status: number;
  body: unknown;
}

/** Ids travel in paths: anything outside the gateway's id charset would change the URL, so it is encoded. */
function pathId(id: string): string {
  return encodeURIComponent(id);
}

export class MidtransClient {
  private readonly dispatcher: Dispatcher;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly blockPrivate: boolean;

  constructor(private readonly opts: GatewayClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxBytes = opts.maxResponseBytes ?? 1024 * 1024;
    this.blockPrivate = opts.blockPrivateAddresses ?? false;
    this.dispatcher = new Agent({
      connect: { timeout: Math.min(this.timeoutMs, 5_000), lookup: guardedLookup(this.blockPrivate, opts.resolve) },
      keepAliveTimeout: 10_000,
    });
  }

  async createPaymentLink(body: PaymentLinkRequest, o: GatewayCallOptions = {}): Promise<PaymentLinkCreated> {
    const res = await this.call('payment_link.create', 'api', 'POST', '/v1/payment-links', body, o);
    if (res.status >= 300) throw this.refusal(res);
    return parsePaymentLinkCreated(res.body);
  }

  /** Undefined when the gateway does not know the link. */
  async getPaymentLink(orderId: string): Promise<PaymentLinkDetails | undefined> {
    const res = await this.call('payment_link.get', 'api', 'GET', `/v1/payment-links/${pathId(orderId)}`);
    if (res.status === 404) return undefined;
    if (res.status >= 300) throw this.refusal(res);
    return parsePaymentLinkDetails(res.body);
  }

  /** False when the gateway did not know the link. */
  async deletePaymentLink(orderId: string): Promise<boolean> {
    const res = await this.call('payment_link.delete', 'api', 'DELETE', `/v1/payment-links/${pathId(orderId)}`);
    if (res.status === 404) return false;
    if (res.status >= 300) throw this.refusal(res);
    return true;
  }

  async createSnapTransaction(body: SnapRequest, o: GatewayCallOptions = {}): Promise<SnapCreated> {
    const res = await this.call('snap.create', 'app', 'POST', '/snap/v1/transactions', body, o);
    if (res.status >= 300) throw this.refusal(res);
    return parseSnapCreated(res.body);
  }

  async charge(body: ChargeRequest, o: GatewayCallOptions = {}): Promise<GatewayAnswer> {
    return this.core('core.charge', 'POST', '/v2/charge', body, o);
  }

  /** By order id or transaction id. Undefined when the gateway does not know it (404 "Transaction doesn't exist."). */
  async status(
    id: string,
    o: Pick<GatewayCallOptions, 'timeoutMs' | 'snapApiSource'> = {},
  ): Promise<GatewayAnswer | undefined> {
    try {
      return await this.core('core.status', 'GET', `/v2/${pathId(id)}/status`, undefined, o);
    } catch (err) {
      if (err instanceof MidtransRefusal && err.refusal.code === '404') return undefined;
      throw err;
    }
  }

  cancel(id: string, o: ActOptions = {}): Promise<GatewayAnswer> {
    return this.core('core.cancel', 'POST', `/v2/${pathId(id)}/cancel`, undefined, o);
  }
  expire(id: string): Promise<GatewayAnswer> {
    return this.core('core.expire', 'POST', `/v2/${pathId(id)}/expire`);
  }
  approve(id: string): Promise<GatewayAnswer> {
    return this.core('core.approve', 'POST', `/v2/${pathId(id)}/approve`);
  }
  deny(id: string): Promise<GatewayAnswer> {
    return this.core('core.deny', 'POST', `/v2/${pathId(id)}/deny`);
  }
  refund(id: string, body: RefundRequest, o: ActOptions = {}): Promise<GatewayAnswer> {
    return this.core('core.refund', 'POST', `/v2/${pathId(id)}/refund`, body, o);
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** Core API errors may come as HTTP 200 with an error `status_code` in the body; 407 is an answer, not an error. */
  private async core(
    op: string,
    method: 'GET' | 'POST',
    path: string,
    body?: ChargeRequest | RefundRequest,
    o: GatewayCallOptions = {},
  ): Promise<GatewayAnswer> {
    const res = await this.call(op, 'api', method, path, body, o);
    const parsed = res.status < 500 ? parseCoreResponse(res.body) : undefined;
    const code = parsed ? Number(parsed.status_code) : NaN;
    if (res.status >= 300 || !parsed || (code >= 400 && code !== 407)) throw this.refusal(res);
    return parsed;
  }

  /** The code is the body's `status_code`, else the HTTP status; the message its `status_message`, else its first error message. */
  private refusal(res: RawResponse): MidtransRefusal {
    const b = res.body;
    const rec = b !== null && typeof b === 'object' ? (b as Record<string, unknown>) : {};
    const code = typeof rec.status_code === 'string' ? rec.status_code : String(res.status);
    const message = typeof rec.status_message === 'string' ? rec.status_message : (parseErrorMessages(b)[0] ?? '');
    return new MidtransRefusal(res.status, { code, message });
  }

  private async call(
    op: string,
    host: Host,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: RequestBody,
    o: GatewayCallOptions = {},
  ): Promise<RawResponse> {
    const s = await this.opts.runtimeConfig();
    const base = host === 'api' ? s.gateway.api_base_url : s.gateway.app_base_url;
    const key = s.gateway.server_key ?? '';
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
      'user-agent': 'paylink/0.1',
    };
    if (body) headers['content-type'] = 'application/json';
    if (o.idempotencyKey) headers['idempotency-key'] = o.idempotencyKey;
    if (o.overrideNotification) headers['x-override-notification'] = o.overrideNotification;
    if (o.snapApiSource) headers['transaction-source'] = 'SNAP_API';
    const started = performance.now();
    const log = this.opts.logger;
    const timeoutMs = Math.min(o.timeoutMs ?? this.timeoutMs, this.timeoutMs);
    try {
      const literal = literalRefusal(base, this.blockPrivate);
      if (literal) throw new PrivateAddressError('the gateway host', literal === 'link-local');
      const res = await request(`${base}${path}`, {
        method,
        headers,
        body: body ? JSON.stringify(body) : undefined,
        dispatcher: this.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await readCapped(res.body, this.maxBytes);
      const durationMs = Math.round(performance.now() - started);
      this.opts.observe?.({ operation: op, outcome: res.statusCode, durationMs });
      log.info(
        { ...currentLogContext(), gateway: { op, method, path, status: res.statusCode, duration_ms: durationMs } },
        'gateway call',
      );
      return { status: res.statusCode, body: parseJson(text, res.statusCode) };
    } catch (err) {
      const durationMs = Math.round(performance.now() - started);
      if (err instanceof GatewayError) throw err;
      const kind = classify(err);
      const refused = refusalOf(err);
      this.opts.observe?.({ operation: op, outcome: kind, durationMs });
      if (refused) {
        log.error(
          { ...currentLogContext(), gateway: { op, method, path, error: kind, refused, duration_ms: durationMs } },
          `gateway call refused: the gateway host is or resolves to a ${refused === 'link-local' ? 'link-local or cloud metadata' : 'private or loopback'} address`,
        );
      } else
        log.warn(
          { ...currentLogContext(), gateway: { op, method, path, error: kind, duration_ms: durationMs } },
          'gateway call failed',
        );
      throw new GatewayError(kind, `gateway ${kind} on ${op}`);
    }
  }
}

function parseJson(text: string, status: number): unknown {
  if (text.length === 0) return {};
  try {
    return JSON.parse(text);
  } catch {
    if (status >= 500) return { status_code: String(status), status_message: 'non-JSON error from gateway' };
    throw new GatewayError('bad_response', 'gateway answered with invalid JSON');
  }
}

function classify(err: unknown): 'timeout' | 'unavailable' {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_ABORTED'
  )
    return 'timeout';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'unavailable';
  return 'unavailable';
}
