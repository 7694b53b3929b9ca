import { resolveCard, type CardToken } from './cards.js';
import type { FraudStatus, Txn, TxnStatus } from './state.js';

/** A 3DS-pending card charge expires like the gateway's: 10 minutes. */
export const THREE_DS_EXPIRY_MS = 10 * 60_000;

export interface CardOutcome {
  status: TxnStatus;
  fraud: FraudStatus;
}

/**
 * Starts a Core card charge from its token: fields of the card, then either the 3DS wait
 * (`authentication: true`) or the outcome at once.
 */
export function startCardCharge(
  t: Txn,
  tokenId: string,
  issued: ReadonlyMap<string, CardToken>,
  threeDsBase: string | undefined,
): CardOutcome | 'pending' {
  const r = resolveCard(tokenId, issued);
  t.card = { behaviour: r.card.behaviour, cvvOk: r.cvvOk, brand: r.card.brand };
  t.fields = { masked_card: r.masked, bank: r.card.bank, card_type: 'credit' };
  t.fraud_status = 'accept';
  if (threeDsBase !== undefined) {
    // The gateway's 3DS URL ends in the masked card and the transaction id.
    t.redirect_url = `${threeDsBase}/${r.masked}-${t.transaction_id}`;
    t.expiry_time = new Date(t.transaction_time.getTime() + THREE_DS_EXPIRY_MS);
    return 'pending';
  }
  return settleCard(t, 'none');
}

/**
 * What the issuer and the fraud system decide. `authenticated` is the 3DS result: `none` when the
 * charge skipped 3DS, `failed` when the customer did not pass it (wrong OTP).
 */
export function settleCard(t: Txn, authenticated: 'ok' | 'failed' | 'none'): CardOutcome {
  const card = t.card ?? { behaviour: 'accept', cvvOk: true, brand: 'visa' };
  const eciOk = card.brand === 'visa' ? '05' : '02';
  const f = t.fields;
  delete t.expiry_time;
  f.eci = authenticated === 'ok' ? eciOk : '07';
  if (authenticated === 'failed') {
    Object.assign(f, { channel_response_code: '01', channel_response_message: 'Card is not authenticated.' });
    return { status: 'deny', fraud: 'accept' };
  }
  if (card.behaviour === 'deny_fds') return { status: 'deny', fraud: 'deny' };
  if (!card.cvvOk) {
    Object.assign(f, { channel_response_code: 'N7', channel_response_message: 'Decline for CVV2 failure' });
    return { status: 'deny', fraud: 'accept' };
  }
  if (card.behaviour === 'deny_bank') {
    Object.assign(f, { channel_response_code: '05', channel_response_message: 'Do not honor' });
    return { status: 'deny', fraud: 'accept' };
  }
  Object.assign(f, {
    channel_response_code: '00',
    channel_response_message: 'Approved',
    approval_code: String(Date.now()),
  });
  return { status: 'capture', fraud: card.behaviour === 'challenge' ? 'challenge' : 'accept' };
}
