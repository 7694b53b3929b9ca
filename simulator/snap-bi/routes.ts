/**
 * The gateway's BI-SNAP API: the B2B access token, then VA, direct
 * debit and QRIS MPM operations, each checked for a live token, the partner id, the HMAC signature
 * over the body as received (or its compact form, as the gateway's samples minify), and a fresh
 * X-EXTERNAL-ID of the day (the same request again is answered as before; another body is a conflict).
 * Transactions live in the default merchant's ledger, so `/_sim/transactions/{id}/pay` pays them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyObject } from 'node:crypto';
import type { Merchant } from '../merchants.js';
import { METHODS } from '../methods.js';
import { isObject, type Json } from '../lib/validate.js';
import { hmacSignature, sameSecret, sha256Hex, verifyRsa } from './crypto.js';
import type { SnapBiOptions } from './options.js';
import type { Answer, SnapBiState, SnapKind, SnapTxn } from './state.js';
import { amount, latestStatus, statusBody, vaData, wib } from './wire.js';
import { HISTORY_DETAIL_PATH, HISTORY_LIST_PATH, historyDetail, historyList } from './history.js';

export interface SnapBiRouteDeps {
  options: () => SnapBiOptions;
  merchantKey: () => KeyObject | undefined;
  state: SnapBiState;
  merchant: () => Merchant;
  baseUrl: () => string;
}

const answer = (code: string, message: string, extra: Record<string, unknown> = {}): Answer => ({
  status: Number(code.slice(0, 3)),
  body: { responseCode: code, responseMessage: message, ...extra },
});

const raws = new WeakMap<FastifyRequest, string>();

function send(reply: FastifyReply, a: Answer): FastifyReply {
  return reply.code(a.status).header('x-timestamp', wib(new Date())).send(a.body);
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

const str = (o: Json, k: string): string | undefined => (typeof o[k] === 'string' ? o[k] : undefined);
const obj = (o: Json, k: string): Json => {
  const v = o[k];
  return isObject(v) ? v : {};
};

/** Whole rupiah from `{value: "10000.00", currency: "IDR"}`; undefined when malformed. */
function rupiah(v: unknown): number | undefined {
  if (!isObject(v) || v.currency !== 'IDR' || typeof v.value !== 'string') return undefined;
  if (!/^\d{1,13}\.\d{2}$/.test(v.value)) return undefined;
  const n = Number(v.value);
  return n >= 1 && Number.isInteger(n) ? n : undefined;
}

function tokenRoute(app: FastifyInstance, deps: SnapBiRouteDeps): void {
  app.post('/v1.0/access-token/b2b', async (req, reply) => {
    const o = deps.options();
    const ts = header(req, 'x-timestamp');
    const clientKey = header(req, 'x-client-key');
    const sig = header(req, 'x-signature');
    if (!ts || Number.isNaN(Date.parse(ts)))
      return send(reply, answer('4007301', 'Invalid field format [X-TIMESTAMP]'));
    if (!clientKey || !sig) return send(reply, answer('4007302', 'Invalid mandatory field'));
    const body = isObject(req.body) ? req.body : {};
    const grant = body.grantType ?? body.grant_type;
    if (grant !== 'client_credentials') return send(reply, answer('4007302', 'Invalid mandatory field [grantType]'));
    const key = deps.merchantKey();
    if (!key || clientKey !== o.clientId || !verifyRsa(`${clientKey}|${ts}`, sig, key))
      return send(reply, answer('4017300', 'Unauthorized. [Signature]'));
    const lifetime = o.tokenLifetimeS ?? 900;
    return send(
      reply,
      answer('2007300', 'Successful', {
        accessToken: deps.state.issueToken(lifetime),
        tokenType: 'Bearer',
        expiresIn: String(lifetime),
      }),
    );
  });
}

type Handler = (body: Json, externalId: string, svc: string) => Answer;

/** The checks every transactional call passes, then the operation; answers are remembered by X-EXTERNAL-ID. */
function transactional(app: FastifyInstance, deps: SnapBiRouteDeps, path: string, svc: string, run: Handler): void {
  app.post(path, async (req, reply) => {
    const o = deps.options();
    const raw = raws.get(req) ?? '';
    const token = /^Bearer (\S+)$/.exec(header(req, 'authorization') ?? '')?.[1];
    if (!token || !deps.state.tokenValid(token)) return send(reply, answer(`401${svc}01`, 'Invalid Token (B2B)'));
    const ts = header(req, 'x-timestamp');
    if (!ts || Number.isNaN(Date.parse(ts)))
      return send(reply, answer(`400${svc}01`, 'Invalid field format [X-TIMESTAMP]'));
    if (header(req, 'x-partner-id') !== o.partnerId)
      return send(reply, answer(`401${svc}00`, 'Unauthorized. [Unknown client]'));
    const sig = header(req, 'x-signature') ?? '';
    const compact = isObject(req.body) ? JSON.stringify(req.body) : raw;
    const signedOk = [raw, compact].some((b) =>
      sameSecret(hmacSignature('POST', path, token, b, ts, o.clientSecret), sig),
    );
    if (!signedOk) return send(reply, answer(`401${svc}00`, 'Unauthorized. [Signature]'));
    const externalId = header(req, 'x-external-id');
    if (!externalId || externalId.length > 36)
      return send(reply, answer(`400${svc}02`, 'Invalid mandatory field [X-EXTERNAL-ID]'));
    if (!header(req, 'channel-id')) return send(reply, answer(`400${svc}02`, 'Invalid mandatory field [CHANNEL-ID]'));
    const digest = sha256Hex(compact);
    const before = deps.state.seen(externalId);
    if (before)
      return send(
        reply,
        before.digest === digest ? before.answer : answer(`409${svc}00`, 'Cannot use same X-EXTERNAL-ID'),
      );
    if (!isObject(req.body)) return send(reply, answer(`400${svc}00`, 'Bad Request'));
    const a = run(req.body, externalId, svc);
    if (a.status < 500) deps.state.remember(externalId, digest, a);
    return send(reply, a);
  });
}

function create(
  deps: SnapBiRouteDeps,
  kind: SnapKind,
  orderId: string,
  externalId: string,
  gross: number,
  method: string,
  extra: Partial<SnapTxn>,
): SnapTxn {
  const s: SnapTxn = { kind, orderId, externalId, referenceNo: '', refunds: [], ...extra };
  // Registered before the ledger's transaction exists: its first notification is already BI-SNAP's.
  deps.state.byOrder.set(orderId, s);
  const t = deps.merchant().engine.createTxn({
    order: { order_id: orderId, gross_amount: gross, items: [] },
    method,
    notify: {},
    source: { kind: 'snap_api' },
    extras: {},
  });
  s.referenceNo = t.transaction_id;
  return s;
}

function findSnap(deps: SnapBiRouteDeps, body: Json, kinds: SnapKind[]): SnapTxn | undefined {
  const ref = str(body, 'originalReferenceNo');
  const byRef = ref ? deps.state.byReference(ref) : undefined;
  const id =
    str(body, 'originalPartnerReferenceNo') ??
    str(body, 'originalExternalId') ??
    str(body, 'inquiryRequestId') ??
    str(body, 'trxId');
  const s =
    byRef ??
    (id ? deps.state.byOrder.get(id) : undefined) ??
    [...deps.state.byOrder.values()].find((x) => x.externalId === str(body, 'originalExternalId'));
  return s && kinds.includes(s.kind) ? s : undefined;
}

const VA_BANKS = new Set(['bca', 'bni', 'bri', 'cimb', 'danamon', 'bsi', 'permata']);

function vaRoutes(app: FastifyInstance, deps: SnapBiRouteDeps): void {
  transactional(app, deps, '/v1.0/transfer-va/create-va', '27', (b, externalId) => {
    const trxId = str(b, 'trxId');
    const gross = rupiah(b.totalAmount);
    const info = obj(b, 'additionalInfo');
    const bank = str(info, 'bank') ?? '';
    const vaNo = str(b, 'virtualAccountNo');
    if (!trxId || !gross || !vaNo || !str(b, 'virtualAccountName') || !VA_BANKS.has(bank))
      return answer('4002702', 'Invalid mandatory field');
    if (trxId !== externalId) return answer('4002701', 'Invalid field format [trxId must equal X-EXTERNAL-ID]');
    // The bank company code: 8 characters, digits left-padded with spaces, the VA number's start.
    // Any well-formed code is taken: which code the gateway issued to the merchant is not modelled.
    const serviceId = str(b, 'partnerServiceId') ?? '';
    if (!/^ *[0-9]+$/.test(serviceId) || serviceId.length !== 8)
      return answer('4002701', 'Invalid field format [partnerServiceId]');
    if (vaNo !== `${serviceId}${str(b, 'customerNo') ?? ''}`)
      return answer('4002701', 'Invalid field format [virtualAccountNo must be partnerServiceId + customerNo]');
    if (deps.state.byOrder.has(trxId) || deps.merchant().engine.orderIdTaken(trxId))
      return answer('4092700', 'Conflict');
    const va = {
      partnerServiceId: str(b, 'partnerServiceId') ?? '',
      customerNo: str(b, 'customerNo') ?? '',
      virtualAccountNo: vaNo,
      virtualAccountName: str(b, 'virtualAccountName') ?? '',
    };
    const s = create(deps, 'va', trxId, externalId, gross, METHODS.has(`${bank}_va`) ? `${bank}_va` : 'bca_va', { va });
    const t = deps.merchant().ledger.findTxn(s.orderId);
    if (!t) return answer('5002700', 'Internal Server Error');
    return answer('2002700', 'Successful', {
      virtualAccountData: {
        ...vaData(s, t),
        ...(t.expiry_time ? { expiredDate: wib(t.expiry_time) } : {}),
        additionalInfo: { bank, merchantId: deps.merchant().id },
      },
    });
  });
  transactional(app, deps, '/v1.0/transfer-va/status', '26', (b) => {
    const s = findSnap(deps, b, ['va']);
    const t = s && deps.merchant().ledger.findTxn(s.orderId);
    if (!s || !t) return answer('4042601', 'Transaction Not Found');
    const st = latestStatus(t.status);
    return answer('2002600', 'Successful', {
      virtualAccountData: {
        ...vaData(s, t),
        inquiryRequestId: s.orderId,
        paymentFlagStatus: st.code,
        paymentFlagReason: { english: st.desc, indonesia: st.desc },
        trxDateTime: wib(t.transaction_time),
        ...(t.settlement_time ? { transactionDate: wib(t.settlement_time), paymentRequestId: t.transaction_id } : {}),
      },
    });
  });
  transactional(app, deps, '/v1.0/transfer-va/delete-va', '31', (b) => {
    const s = findSnap(deps, b, ['va']);
    const t = s && deps.merchant().ledger.findTxn(s.orderId);
    if (!s || !t) return answer('4043101', 'Transaction Not Found');
    const r = deps.merchant().engine.cancel(t);
    if (!r.ok) return answer('4003102', r.message);
    return answer('2003100', 'Successful', { virtualAccountData: vaData(s, t) });
  });
}

function refund(deps: SnapBiRouteDeps, b: Json, svc: string, kinds: SnapKind[], externalId: string): Answer {
  const s = findSnap(deps, b, kinds);
  const t = s && deps.merchant().ledger.findTxn(s.orderId);
  if (!s || !t) return answer(`404${svc}01`, 'Transaction Not Found');
  const asked = b.refundAmount === undefined ? undefined : rupiah(b.refundAmount);
  if (b.refundAmount !== undefined && asked === undefined)
    return answer(`400${svc}01`, 'Invalid field format [refundAmount]');
  const reason = str(b, 'reason');
  const partnerRefundNo = str(b, 'partnerRefundNo') ?? externalId;
  const r = deps.merchant().engine.refund(t, {
    ...(asked === undefined ? {} : { amount: asked }),
    ...(reason ? { reason } : {}),
    refund_key: partnerRefundNo,
  });
  if (!r.ok) return answer(`403${svc}02`, r.message);
  const refundNo = String(r.refund.refund_chargeback_id);
  s.refunds.push({
    refundNo,
    partnerRefundNo,
    amount: r.refund.refund_amount,
    at: r.refund.created_at,
    ...(reason ? { reason } : {}),
  });
  return answer(`200${svc}00`, 'Successful', {
    originalReferenceNo: s.referenceNo,
    originalPartnerReferenceNo: s.orderId,
    refundNo,
    referenceNo: refundNo,
    partnerRefundNo,
    refundAmount: amount(r.refund.refund_amount),
    refundTime: wib(r.refund.created_at),
  });
}

function cancel(deps: SnapBiRouteDeps, b: Json, svc: string, kinds: SnapKind[]): Answer {
  const s = findSnap(deps, b, kinds);
  const t = s && deps.merchant().ledger.findTxn(s.orderId);
  if (!s || !t) return answer(`404${svc}01`, 'Transaction Not Found');
  const r = deps.merchant().engine.cancel(t);
  if (!r.ok) return answer(`403${svc}15`, r.message);
  return answer(`200${svc}00`, 'Successful', {
    originalReferenceNo: s.referenceNo,
    originalPartnerReferenceNo: s.orderId,
    cancelTime: wib(new Date()),
    transactionDate: wib(t.transaction_time),
  });
}

function status(deps: SnapBiRouteDeps, b: Json, svc: string, kinds: SnapKind[]): Answer {
  const s = findSnap(deps, b, kinds);
  const t = s && deps.merchant().ledger.findTxn(s.orderId);
  if (!s || !t) return answer(`404${svc}01`, 'Transaction Not Found');
  return answer(`200${svc}00`, 'Successful', statusBody(s, t));
}

const PAY_METHODS: Record<string, string> = { GOPAY: 'gopay', SHOPEEPAY: 'shopeepay' };

function debitRoutes(app: FastifyInstance, deps: SnapBiRouteDeps): void {
  transactional(app, deps, '/v1.0/debit/payment-host-to-host', '54', (b, externalId) => {
    const ref = str(b, 'partnerReferenceNo');
    const options = Array.isArray(b.payOptionDetails) ? b.payOptionDetails : [];
    const first: unknown = options[0];
    const option = isObject(first) ? first : {};
    const payMethod = (str(option, 'payMethod') ?? '').toUpperCase();
    const gross = rupiah(option.transAmount);
    if (!ref || !/^[A-Za-z0-9\-_~.]{1,64}$/.test(ref) || !gross) return answer('4005402', 'Invalid mandatory field');
    const method = PAY_METHODS[payMethod];
    if (!method)
      return answer('4005402', `Invalid mandatory field [payMethod ${payMethod || 'missing'} is not offered]`);
    if (deps.state.byOrder.has(ref) || deps.merchant().engine.orderIdTaken(ref)) return answer('4095400', 'Conflict');
    const s = create(deps, 'debit', ref, externalId, gross, method, { payMethod });
    const t = deps.merchant().ledger.findTxn(ref);
    return answer('2005400', 'Successful', {
      referenceNo: s.referenceNo,
      partnerReferenceNo: ref,
      webRedirectUrl: `${deps.baseUrl()}/v2/${method}/${s.referenceNo}/deeplink`,
      additionalInfo: {
        paymentType: method,
        grossAmount: amount(gross),
        transactionTime: wib(t?.transaction_time ?? new Date()),
        ...(t?.expiry_time ? { validUpTo: wib(t.expiry_time) } : {}),
      },
    });
  });
  transactional(app, deps, '/v1.0/debit/status', '55', (b) => status(deps, b, '55', ['debit']));
  transactional(app, deps, '/v1.0/debit/cancel', '57', (b) => cancel(deps, b, '57', ['debit']));
  transactional(app, deps, '/v1.0/debit/refund', '58', (b, ext) => refund(deps, b, '58', ['debit'], ext));
}

function qrisRoutes(app: FastifyInstance, deps: SnapBiRouteDeps): void {
  transactional(app, deps, '/v1.0/qr/qr-mpm-generate', '47', (b, externalId) => {
    const ref = str(b, 'partnerReferenceNo');
    const gross = rupiah(b.amount);
    if (!ref || !/^[A-Za-z0-9\-_~.]{1,36}$/.test(ref) || !gross) return answer('4004702', 'Invalid mandatory field');
    if (ref !== externalId)
      return answer('4004701', 'Invalid field format [partnerReferenceNo must equal X-EXTERNAL-ID]');
    if (deps.state.byOrder.has(ref) || deps.merchant().engine.orderIdTaken(ref))
      return answer('4094700', 'Cannot use same X-EXTERNAL-ID');
    const acquirer = str(obj(b, 'additionalInfo'), 'acquirer') ?? 'GOPAY';
    const s = create(deps, 'qris', ref, externalId, gross, 'other_qris', {});
    const t = deps.merchant().ledger.findTxn(ref);
    const qr = t && typeof t.fields.qr_string === 'string' ? t.fields.qr_string : '';
    return answer('2004700', 'Successful', {
      referenceNo: s.referenceNo,
      partnerReferenceNo: ref,
      qrContent: qr,
      qrUrl: `${deps.baseUrl()}/v2/qris/${s.referenceNo}/qr-code`,
      additionalInfo: { acquirer },
    });
  });
  transactional(app, deps, '/v1.0/qr/qr-mpm-query', '51', (b) => status(deps, b, '51', ['qris']));
  transactional(app, deps, '/v1.0/qr/qr-mpm-cancel', '77', (b) => cancel(deps, b, '77', ['qris']));
  transactional(app, deps, '/v1.0/qr/qr-mpm-refund', '78', (b, ext) => refund(deps, b, '78', ['qris'], ext));
}

/** Registers the BI-SNAP paths in their own scope: bodies are kept as received, for the signature check. */
export function registerSnapBiRoutes(app: FastifyInstance, deps: SnapBiRouteDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      raws.set(req, text);
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(null, text);
      }
    });
    tokenRoute(scope, deps);
    vaRoutes(scope, deps);
    debitRoutes(scope, deps);
    qrisRoutes(scope, deps);
    transactional(scope, deps, HISTORY_LIST_PATH, '12', (b) => historyList(deps.merchant(), b));
    transactional(scope, deps, HISTORY_DETAIL_PATH, '13', (b) => historyDetail(deps.merchant(), b));
  });
}
