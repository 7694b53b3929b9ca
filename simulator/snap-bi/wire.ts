/** The simulator's BI-SNAP bodies: amounts, status codes, time, and a transaction as each product reports it. */
import type { Txn, TxnStatus } from '../state.js';
import type { SnapTxn } from './state.js';

export const amount = (n: number) => ({ value: n.toFixed(2), currency: 'IDR' });

/** ISO-8601 in Jakarta time with its offset, as BI-SNAP bodies carry times. */
export function wib(at: Date): string {
  return `${new Date(at.getTime() + 7 * 3_600_000).toISOString().slice(0, 19)}+07:00`;
}

/** A ledger status as BI-SNAP's `latestTransactionStatus`. */
export function latestStatus(s: TxnStatus): { code: string; desc: string } {
  switch (s) {
    case 'settlement':
    case 'capture':
      return { code: '00', desc: 'SUCCESS' };
    case 'pending':
      return { code: '03', desc: 'PENDING' };
    case 'refund':
    case 'partial_refund':
      return { code: '04', desc: 'REFUNDED' };
    case 'cancel':
      return { code: '05', desc: 'CANCELED' };
    case 'deny':
      return { code: '06', desc: 'FAILED' };
    case 'expire':
      return { code: '08', desc: 'EXPIRED' };
  }
}

export function refundHistory(s: SnapTxn): Record<string, unknown>[] {
  return s.refunds.map((r) => ({
    refundNo: r.refundNo,
    partnerReferenceNo: r.partnerRefundNo,
    refundAmount: amount(r.amount),
    refundStatus: '00',
    refundDate: wib(r.at),
    ...(r.reason === undefined ? {} : { reason: r.reason }),
  }));
}

export function vaData(s: SnapTxn, t: Txn): Record<string, unknown> {
  return {
    partnerServiceId: s.va?.partnerServiceId ?? '',
    customerNo: s.va?.customerNo ?? '',
    virtualAccountNo: s.va?.virtualAccountNo ?? '',
    virtualAccountName: s.va?.virtualAccountName ?? '',
    trxId: s.orderId,
    totalAmount: amount(t.gross_amount),
  };
}

/** The status body of a debit or QRIS transaction (`/v1.0/debit/status`, `/v1.0/qr/qr-mpm-query`). */
export function statusBody(s: SnapTxn, t: Txn): Record<string, unknown> {
  const st = latestStatus(t.status);
  return {
    originalPartnerReferenceNo: s.orderId,
    originalReferenceNo: s.referenceNo,
    originalExternalId: s.externalId,
    serviceCode: s.kind === 'qris' ? '47' : '54',
    latestTransactionStatus: st.code,
    transactionStatusDesc: st.desc,
    ...(s.kind === 'qris' ? { amount: amount(t.gross_amount) } : { transAmount: amount(t.gross_amount) }),
    ...(t.settlement_time ? { paidTime: wib(t.settlement_time) } : {}),
    additionalInfo: { refundHistory: refundHistory(s) },
  };
}

/** A notification: where it goes (relative path) and its body. */
export function notification(s: SnapTxn, t: Txn): { path: string; body: Record<string, unknown> } {
  const st = latestStatus(t.status);
  if (s.kind === 'va') {
    return {
      path: '/v1.0/transfer-va/payment',
      body: {
        ...vaData(s, t),
        paymentRequestId: t.transaction_id,
        paidAmount: amount(t.gross_amount),
        referenceNo: s.referenceNo,
        additionalInfo: {
          bank: typeof t.fields.bank === 'string' ? t.fields.bank : 'bca',
          merchantId: t.merchant_id,
          paymentFlagStatus: st.code,
          ...(t.settlement_time ? { paidTime: wib(t.settlement_time) } : {}),
        },
      },
    };
  }
  const common = {
    originalReferenceNo: s.referenceNo,
    originalPartnerReferenceNo: s.orderId,
    latestTransactionStatus: st.code,
    transactionStatusDesc: st.desc,
    amount: amount(t.gross_amount),
  };
  if (s.kind === 'qris')
    return {
      path: '/v1.0/qr/qr-mpm-notify',
      body: {
        ...common,
        additionalInfo: {
          refundHistory: refundHistory(s),
          qris: { issuerName: 'gopay', acquirerName: 'gopay', transactionType: 'ON-US' },
        },
      },
    };
  return {
    path: '/v1.0/debit/notify',
    body: {
      ...common,
      originalExternalId: s.externalId,
      merchantId: t.merchant_id,
      createdTime: wib(t.transaction_time),
      ...(t.settlement_time ? { finishedTime: wib(t.settlement_time) } : {}),
      additionalInfo: {
        refundHistory: refundHistory(s),
        userPaymentDetails: [{ payMethod: s.payMethod ?? 'GOPAY', payOption: `${s.payMethod ?? 'GOPAY'}_WALLET` }],
      },
    },
  };
}
