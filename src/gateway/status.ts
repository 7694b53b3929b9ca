/**
 * The gateway's status words read in paylink's terms: `transaction_status` and `fraud_status` as
 * the contract's `status`, the phase of the gateway transaction that the status machine
 * (`domain/reports/status-machine.ts`) needs to recognise the documented reversals, and the channels whose
 * settlement the gateway may reverse. Pure: no I/O, no clock.
 */
import type { PaymentStatus } from '../model/payment.js';
import type { GatewayReport } from './report.js';

/**
 * The contract status for a gateway report; undefined when the gateway sent something we do not
 * know (it is then recorded and flagged, never guessed). Case-insensitive: some channels (DANA)
 * report upper case.
 */
export function mapGatewayStatus(
  transactionStatus: string | null | undefined,
  fraudStatus?: string | null,
): PaymentStatus | undefined {
  const ts = (transactionStatus ?? '').trim().toLowerCase();
  const fs = (fraudStatus ?? '').trim().toLowerCase();
  switch (ts) {
    case 'settlement':
      return 'paid';
    case 'capture':
      if (fs === '' || fs === 'accept') return 'paid';
      if (fs === 'challenge') return 'challenge';
      if (fs === 'deny') return 'failed';
      return undefined;
    case 'pending':
    case 'authorize':
      return 'pending';
    case 'deny':
    case 'failure':
      return 'failed';
    case 'cancel':
      return 'cancelled';
    case 'expire':
      return 'expired';
    case 'refund':
      return 'refunded';
    case 'partial_refund':
      return 'partially_refunded';
    case 'chargeback':
    case 'partial_chargeback':
      return 'chargeback';
    default:
      return undefined;
  }
}

/**
 * Where a gateway transaction stands, as far as reversals go: `settled` (the money arrived),
 * `captured` (a card payment taken but not settled yet: it can still be voided), `voided` (cancelled:
 * nothing of that transaction follows), `denied` (refused, or a settlement taken back), `other`.
 */
export type GatewayPhase = 'settled' | 'captured' | 'voided' | 'denied' | 'other';

const PHASES: ReadonlyMap<string, GatewayPhase> = new Map([
  ['settlement', 'settled'],
  ['capture', 'captured'],
  ['cancel', 'voided'],
  ['deny', 'denied'],
]);

export function gatewayPhase(transactionStatus: string | null | undefined): GatewayPhase {
  return PHASES.get((transactionStatus ?? '').toLowerCase()) ?? 'other';
}

/** What a report says, without the gateway's words: the contract status (undefined: not recognised) and the phase. */
export interface StatusVerdict {
  status: PaymentStatus | undefined;
  phase: GatewayPhase;
}

export function statusVerdict(
  transactionStatus: string | null | undefined,
  fraudStatus?: string | null,
): StatusVerdict {
  return { status: mapGatewayStatus(transactionStatus, fraudStatus), phase: gatewayPhase(transactionStatus) };
}

/** Channels whose settlement the gateway may reverse into a deny (CYCLE: Permata VA, Mandiri bill, Indomaret). */
export function isReversibleChannel(
  paymentType: string | null | undefined,
  details: { permataVa?: boolean; store?: string | null } = {},
): boolean {
  const pt = (paymentType ?? '').toLowerCase();
  if (pt === 'echannel') return true;
  if (pt === 'cstore') return (details.store ?? '').toLowerCase() === 'indomaret';
  if (pt === 'bank_transfer') return details.permataVa === true;
  return false;
}

/** Whether the report's channel may reverse its settlement (see `isReversibleChannel`). */
export function reportIsReversible(r: GatewayReport): boolean {
  return isReversibleChannel(r.payment_type, { permataVa: r.permata_va_number !== undefined, store: r.store });
}
