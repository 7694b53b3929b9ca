/**
 * BI-SNAP behind the gateway port, for the charges `gateway.snap_bi.methods` names: VA
 * (bank_transfer), direct debit (gopay, shopeepay) and QRIS MPM. Its
 * answers are written in the port's terms (`GatewayAnswer`, the legacy status words through the gateway's
 * interop mapping), so the report pipeline and the ERP see a BI-SNAP payment as any other.
 *
 * Identifiers: the gateway order id is the VA `trxId`, the QRIS and debit `partnerReferenceNo`, and
 * the create call's X-EXTERNAL-ID (VA and QRIS require that equality); a retried create therefore
 * reuses its X-EXTERNAL-ID. A refund's X-EXTERNAL-ID and `partnerRefundNo` are its refund key;
 * a cancel's is derived from the order id, so a retried cancel is the same request.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { GatewayAnswer } from '../answer.js';
import { GatewayError, type ActionResult, type Answered, type ChargeOrder, type RefundOrder } from '../port.js';
import { gatewayTime } from '../time.js';
import type { SnapBiAnswer, SnapBiClient } from './client.js';

export type SnapBiKind = 'va' | 'debit' | 'qris';

/** Which BI-SNAP product carries a charge of this payment type. */
export function kindOf(paymentType: string): SnapBiKind | undefined {
  if (paymentType === 'bank_transfer') return 'va';
  if (paymentType === 'qris') return 'qris';
  if (paymentType === 'gopay' || paymentType === 'shopeepay') return 'debit';
  return undefined;
}

const amount = (n: number) => ({ value: `${n}.00`, currency: 'IDR' });

/**
 * BI-SNAP's `latestTransactionStatus` / `paymentFlagStatus` as the legacy status word and code
 * the gateway maps them; undefined for `07` (not found) or an unknown code.
 */
export function legacyStatus(code: string): { transaction_status: string; status_code: string } | undefined {
  const map: Record<string, [string, string]> = {
    '00': ['settlement', '200'],
    '01': ['authorize', '200'],
    '03': ['pending', '201'],
    '04': ['refund', '200'],
    '05': ['cancel', '200'],
    '06': ['deny', '202'],
    '08': ['expire', '407'],
    '09': ['deny', '202'],
  };
  const m = map[code];
  return m ? { transaction_status: m[0], status_code: m[1] } : undefined;
}

/**
 * The VA numbers of an order, derived from its id so that a status or delete call needs nothing
 * stored. `partnerServiceId` is the bank company code Midtrans assigned at onboarding
 * (`gateway.snap_bi.partner_service_id`, 8 characters, space-padded); the gateway is still asked to
 * choose the number (`shouldRandomizeVaNumber`) and the one it answers is reported.
 */
export function vaNumbers(
  gatewayOrderId: string,
  partnerServiceId: string,
): {
  partnerServiceId: string;
  customerNo: string;
  virtualAccountNo: string;
} {
  const digits = BigInt(`0x${createHash('sha256').update(gatewayOrderId).digest('hex').slice(0, 15)}`)
    .toString()
    .padStart(12, '0')
    .slice(-12);
  return { partnerServiceId, customerNo: digits, virtualAccountNo: `${partnerServiceId}${digits}` };
}

const str = (o: Record<string, unknown>, k: string): string | undefined =>
  typeof o[k] === 'string' ? (o[k] as string) : undefined;
const obj = (o: Record<string, unknown>, k: string): Record<string, unknown> => {
  const v = o[k];
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
};
const valueOf = (a: unknown): string | undefined =>
  a !== null && typeof a === 'object' && typeof (a as Record<string, unknown>).value === 'string'
    ? ((a as Record<string, unknown>).value as string)
    : undefined;

/** A time of a BI-SNAP body (ISO-8601 with an offset) in the legacy spelling; undefined when unparseable. */
function legacyTime(iso: string | undefined): string | undefined {
  if (iso === undefined) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : gatewayTime(new Date(t)).slice(0, 19);
}

const ok = (a: SnapBiAnswer) => a.responseCode.startsWith('200') || a.responseCode.startsWith('202');
const notFound = (a: SnapBiAnswer) => /^404\d{2}01$/.test(a.responseCode);
const refusal = (a: SnapBiAnswer) => ({ code: a.responseCode, message: a.responseMessage });

/** A refusal nobody acts on (bad credentials, a server error) is thrown; the rest are the caller's. */
function thrownUnlessAnswer(a: SnapBiAnswer): void {
  if (a.httpStatus === 401 || a.httpStatus >= 500) throw GatewayError.refused(refusal(a));
}

export class SnapBiGateway {
  constructor(
    private readonly client: SnapBiClient,
    /** `additionalInfo.merchantId` / `merchantId` of the bodies (the MID). */
    private readonly merchantId: () => Promise<string | undefined>,
    /** The VA bank company code (`gateway.snap_bi.partner_service_id`). */
    private readonly partnerServiceId: () => Promise<string>,
  ) {}

  async charge(order: ChargeOrder): Promise<Answered> {
    const kind = kindOf(order.paymentType);
    if (!kind) throw new Error(`payment type ${order.paymentType} does not go through BI-SNAP`);
    const mid = (await this.merchantId()) ?? '';
    const id = order.gatewayOrderId;
    if (kind === 'va') {
      const n = vaNumbers(id, await this.partnerServiceId());
      const bank = 'bank' in order.method && typeof order.method.bank === 'string' ? order.method.bank : 'bca';
      const a = await this.client.call(
        'va.create',
        '/v1.0/transfer-va/create-va',
        {
          ...n,
          virtualAccountName: order.customer?.first_name ?? 'Customer',
          trxId: id,
          totalAmount: amount(order.nominal),
          additionalInfo: { merchantId: mid, bank, flags: { shouldRandomizeVaNumber: true } },
        },
        id,
      );
      if (!ok(a)) return this.refused(a);
      const data = obj(a.body, 'virtualAccountData');
      return this.answered(id, order, 'bank_transfer', {
        va_numbers: [{ bank, va_number: (str(data, 'virtualAccountNo') ?? n.virtualAccountNo).trim() }],
        expiry_time: legacyTime(str(data, 'expiredDate')),
      });
    }
    if (kind === 'qris') {
      const acquirer =
        'acquirer' in order.method && order.method.acquirer === 'airpay shopee' ? 'AIRPAY SHOPEE' : 'GOPAY';
      const a = await this.client.call(
        'qris.generate',
        '/v1.0/qr/qr-mpm-generate',
        {
          partnerReferenceNo: id,
          amount: amount(order.nominal),
          merchantId: mid,
          additionalInfo: { acquirer },
        },
        id,
      );
      if (!ok(a)) return this.refused(a);
      const qrUrl = str(a.body, 'qrUrl');
      return this.answered(id, order, 'qris', {
        transaction_id: str(a.body, 'referenceNo'),
        qr_string: str(a.body, 'qrContent'),
        actions: qrUrl ? [{ name: 'generate-qr-code', method: 'GET', url: qrUrl }] : undefined,
      });
    }
    const payMethod = order.paymentType === 'gopay' ? 'GOPAY' : 'SHOPEEPAY';
    const a = await this.client.call(
      'debit.payment',
      '/v1.0/debit/payment-host-to-host',
      {
        partnerReferenceNo: id,
        chargeToken: '',
        merchantId: mid,
        payOptionDetails: [{ payMethod, payOption: `${payMethod}_WALLET`, transAmount: amount(order.nominal) }],
        additionalInfo: {},
      },
      id,
    );
    if (!ok(a)) return this.refused(a);
    const url = str(a.body, 'webRedirectUrl');
    return this.answered(id, order, order.paymentType, {
      transaction_id: str(a.body, 'referenceNo'),
      actions: url ? [{ name: 'deeplink-redirect', method: 'GET', url }] : undefined,
    });
  }

  private refused(a: SnapBiAnswer): Answered {
    thrownUnlessAnswer(a);
    return { kind: 'refused', refusal: refusal(a) };
  }

  private answered(id: string, order: ChargeOrder, paymentType: string, extra: Partial<GatewayAnswer>): Answered {
    const answer: GatewayAnswer = {
      status_code: '201',
      status_message: 'Success, transaction is created',
      order_id: id,
      gross_amount: `${order.nominal}.00`,
      payment_type: paymentType,
      transaction_status: 'pending',
      fraud_status: 'accept',
    };
    for (const [k, v] of Object.entries(extra)) if (v !== undefined) Object.assign(answer, { [k]: v });
    return { kind: 'answered', answer };
  }

  /** The status of `id` as `kind` reports it; undefined when that product does not know it. */
  async status(kind: SnapBiKind, id: string): Promise<GatewayAnswer | undefined> {
    const mid = (await this.merchantId()) ?? '';
    const a =
      kind === 'va'
        ? await this.client.call(
            'va.status',
            '/v1.0/transfer-va/status',
            {
              ...vaNumbers(id, await this.partnerServiceId()),
              inquiryRequestId: id,
              additionalInfo: { merchantId: mid },
            },
            randomUUID(),
          )
        : kind === 'qris'
          ? await this.client.call(
              'qris.query',
              '/v1.0/qr/qr-mpm-query',
              { originalPartnerReferenceNo: id, merchantId: mid, serviceCode: '47' },
              randomUUID(),
            )
          : await this.client.call(
              'debit.status',
              '/v1.0/debit/status',
              { originalPartnerReferenceNo: id, serviceCode: '54' },
              randomUUID(),
            );
    if (notFound(a)) return undefined;
    if (!ok(a)) {
      thrownUnlessAnswer(a);
      throw GatewayError.refused(refusal(a));
    }
    return kind === 'va' ? vaStatusAnswer(id, a) : statusAnswer(id, kind, a);
  }

  async cancel(kind: SnapBiKind, id: string): Promise<ActionResult> {
    const mid = (await this.merchantId()) ?? '';
    const externalId = derivedId('cancel', id);
    const a =
      kind === 'va'
        ? await this.client.call(
            'va.delete',
            '/v1.0/transfer-va/delete-va',
            { ...vaNumbers(id, await this.partnerServiceId()), trxId: id, additionalInfo: { merchantId: mid } },
            externalId,
          )
        : kind === 'qris'
          ? await this.client.call(
              'qris.cancel',
              '/v1.0/qr/qr-mpm-cancel',
              { originalPartnerReferenceNo: id, merchantId: mid, reason: 'cancelled by the merchant' },
              externalId,
            )
          : await this.client.call(
              'debit.cancel',
              '/v1.0/debit/cancel',
              { originalPartnerReferenceNo: id, merchantId: mid },
              externalId,
            );
    if (notFound(a)) return { kind: 'not_found', refusal: refusal(a) };
    if (!ok(a)) {
      thrownUnlessAnswer(a);
      throw GatewayError.refused(refusal(a));
    }
    const answer = await this.status(kind, id);
    return answer ? { kind: 'answered', answer } : { kind: 'not_found', refusal: refusal(a) };
  }

  async refund(kind: SnapBiKind, id: string, r: RefundOrder): Promise<Answered> {
    if (kind === 'va')
      return {
        kind: 'refused',
        refusal: { code: '412', message: 'A virtual-account payment cannot be refunded online' },
      };
    const mid = (await this.merchantId()) ?? '';
    const body = {
      originalPartnerReferenceNo: id,
      merchantId: mid,
      partnerRefundNo: r.refundKey,
      ...(r.amount === undefined ? {} : { refundAmount: amount(r.amount) }),
      ...(r.reason === undefined ? {} : { reason: r.reason }),
    };
    const path = kind === 'qris' ? '/v1.0/qr/qr-mpm-refund' : '/v1.0/debit/refund';
    const a = await this.client.call(`${kind}.refund`, path, body, r.refundKey.slice(0, 36));
    if (!ok(a)) return this.refused(a);
    const answer = await this.status(kind, id);
    if (!answer) throw new GatewayError('bad_response', 'the refunded transaction is unknown to the gateway');
    return { kind: 'answered', answer };
  }
}

/** A stable X-EXTERNAL-ID (≤ 36 characters) for an operation on an order. */
function derivedId(op: string, id: string): string {
  return `${op}-${createHash('sha256').update(id).digest('hex').slice(0, 29)}`;
}

function statusAnswer(id: string, kind: SnapBiKind, a: SnapBiAnswer): GatewayAnswer | undefined {
  const st = legacyStatus(str(a.body, 'latestTransactionStatus') ?? '');
  if (!st) return undefined;
  const gross = valueOf(a.body.transAmount) ?? valueOf(a.body.amount);
  const refunds = Array.isArray(obj(a.body, 'additionalInfo').refundHistory)
    ? (obj(a.body, 'additionalInfo').refundHistory as unknown[])
    : Array.isArray(a.body.refundHistory)
      ? (a.body.refundHistory as unknown[])
      : [];
  const answer: GatewayAnswer = {
    ...st,
    status_message: str(a.body, 'transactionStatusDesc') ?? a.responseMessage,
    order_id: str(a.body, 'originalPartnerReferenceNo') ?? id,
    payment_type: kind === 'qris' ? 'qris' : 'gopay',
  };
  const tx = str(a.body, 'originalReferenceNo');
  if (tx) answer.transaction_id = tx;
  if (gross) answer.gross_amount = gross;
  const paid = legacyTime(str(a.body, 'paidTime'));
  if (paid) answer.settlement_time = paid;
  const listed = refunds.flatMap((x) => {
    if (x === null || typeof x !== 'object') return [];
    const r = x as Record<string, unknown>;
    const key = str(r, 'partnerReferenceNo') ?? str(r, 'partnerRefundNo');
    const value = valueOf(r.refundAmount);
    return [{ ...(key ? { refund_key: key } : {}), ...(value ? { refund_amount: value } : {}) }];
  });
  if (listed.length > 0) answer.refunds = listed;
  return answer;
}

function vaStatusAnswer(id: string, a: SnapBiAnswer): GatewayAnswer | undefined {
  const data = obj(a.body, 'virtualAccountData');
  const st = legacyStatus(str(data, 'paymentFlagStatus') ?? '');
  if (!st) return undefined;
  const answer: GatewayAnswer = { ...st, order_id: str(data, 'trxId') ?? id, payment_type: 'bank_transfer' };
  const gross = valueOf(data.totalAmount);
  if (gross) answer.gross_amount = gross;
  const paid = legacyTime(str(data, 'transactionDate'));
  if (paid) answer.settlement_time = paid;
  const va = str(data, 'virtualAccountNo');
  const bank = str(obj(data, 'additionalInfo'), 'bank');
  if (va) answer.va_numbers = [{ va_number: va.trim(), ...(bank ? { bank } : {}) }];
  return answer;
}
