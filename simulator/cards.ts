import { randomBytes } from 'node:crypto';
import { uuid } from './lib/format.js';

/** What the issuer and the fraud system do with a sandbox card. */
export type CardBehaviour = 'accept' | 'challenge' | 'deny_fds' | 'deny_bank';

export interface TestCard {
  behaviour: CardBehaviour;
  bank: string;
  brand: 'visa' | 'mastercard';
  /** Rupiah the card's bank points are worth, for a card whose issuer takes points (point inquiry). */
  pointsIdr?: number;
}

/**
 * The gateway's sandbox test cards (CVV 123, any future expiry, OTP 112233). 4911…1113 and
 * 4411…1118 keep the meaning this simulator always gave them (challenge / deny; the gateway's own
 * table calls them "denied by bank" / "accept"), because tests and users rely on it — see README.
 */
export const TEST_CARDS: ReadonlyMap<string, TestCard> = new Map<string, TestCard>([
  ['4811111111111114', { behaviour: 'accept', bank: 'bni', brand: 'visa' }],
  ['5211111111111117', { behaviour: 'accept', bank: 'bni', brand: 'mastercard' }],
  // The BNI card of the Python client's card tests: its point inquiry answers a balance there.
  ['5264221038874659', { behaviour: 'accept', bank: 'bni', brand: 'mastercard', pointsIdr: 10_000 }],
  ['5410111111111116', { behaviour: 'accept', bank: 'bni', brand: 'mastercard' }],
  ['4911111111111113', { behaviour: 'challenge', bank: 'bni', brand: 'visa' }],
  ['4511111111111117', { behaviour: 'challenge', bank: 'bni', brand: 'visa' }],
  ['5510111111111115', { behaviour: 'challenge', bank: 'bni', brand: 'mastercard' }],
  ['4411111111111118', { behaviour: 'deny_fds', bank: 'bni', brand: 'visa' }],
  ['4611111111111116', { behaviour: 'deny_fds', bank: 'bni', brand: 'visa' }],
  ['5411111111111115', { behaviour: 'deny_fds', bank: 'bni', brand: 'mastercard' }],
  ['4711111111111115', { behaviour: 'deny_bank', bank: 'bni', brand: 'visa' }],
  ['5111111111111118', { behaviour: 'deny_bank', bank: 'bni', brand: 'mastercard' }],
  ['5511111111111114', { behaviour: 'deny_bank', bank: 'bni', brand: 'mastercard' }],
  // The BNI card the Go and Java clients' point-inquiry tests use ("bniCardNumber"). The points
  // cards' balance is this simulator's choice; the gateway's sample answer shows 10000.00.
  ['4105058689481467', { behaviour: 'accept', bank: 'bni', brand: 'visa', pointsIdr: 10_000 }],
]);

export const SANDBOX_CVV = '123';
export const SANDBOX_OTP = '112233';

export function luhnValid(pan: string): boolean {
  if (!/^\d{12,19}$/.test(pan)) return false;
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let d = Number(pan[pan.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** "481111-1114", the masked form used in token ids, charge answers and notifications. */
export function maskPan(pan: string): string {
  return `${pan.slice(0, 6)}-${pan.slice(-4)}`;
}

/** A card the gateway knows only by BIN and last four digits (a token from elsewhere). */
export function cardByMask(bin6: string, last4: string): { pan: string; card: TestCard } | undefined {
  for (const [pan, card] of TEST_CARDS) if (pan.startsWith(bin6) && pan.endsWith(last4)) return { pan, card };
  return undefined;
}

/** Any other Luhn-valid number is an ordinary card that is approved. */
export function cardFor(pan: string): TestCard {
  return (
    TEST_CARDS.get(pan) ?? { behaviour: 'accept', bank: 'bni', brand: pan.startsWith('4') ? 'visa' : 'mastercard' }
  );
}

export interface CardToken {
  token_id: string;
  pan: string;
  card: TestCard;
  /** The CVV given matched the sandbox card's; a mismatch is declined by the issuer at charge time. */
  cvvOk: boolean;
  /** A saved token (card/register) is reusable; a plain token stands for one charge. */
  saved: boolean;
  created_at: Date;
}

/** Plain tokens look like the gateway's: BIN6-last4-uuid. */
export function newTokenId(pan: string): string {
  return `${maskPan(pan)}-${uuid()}`;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Saved tokens look like the gateway's: BIN6 + 22 letters + last4. */
export function newSavedTokenId(pan: string): string {
  const bytes = randomBytes(22);
  let mid = '';
  for (const b of bytes) mid += LETTERS[b % LETTERS.length];
  return `${pan.slice(0, 6)}${mid}${pan.slice(-4)}`;
}

export interface ResolvedCard {
  pan?: string;
  masked: string;
  card: TestCard;
  cvvOk: boolean;
}

const DEFAULT_CARD: TestCard = { behaviour: 'accept', bank: 'bni', brand: 'visa' };

/**
 * The card behind a charge's token_id: a token this simulator issued, a token shaped like the
 * gateway's (BIN6-last4-… or a saved BIN6…last4), or the older shortcuts (a token containing a
 * whole test card number, or starting `challenge` / `deny`).
 */
export function resolveCard(tokenId: string, issued: ReadonlyMap<string, CardToken>): ResolvedCard {
  const known = issued.get(tokenId);
  if (known) return { pan: known.pan, masked: maskPan(known.pan), card: known.card, cvvOk: known.cvvOk };
  const whole = /\d{16}/.exec(tokenId)?.[0];
  if (whole !== undefined) return { pan: whole, masked: maskPan(whole), card: cardFor(whole), cvvOk: true };
  const shaped = /^(\d{6})-(\d{4})-/.exec(tokenId) ?? /^(\d{6})[A-Za-z]{8,}(\d{4})$/.exec(tokenId);
  if (shaped && shaped[1] !== undefined && shaped[2] !== undefined) {
    const hit = cardByMask(shaped[1], shaped[2]);
    const masked = `${shaped[1]}-${shaped[2]}`;
    return hit ? { pan: hit.pan, masked, card: hit.card, cvvOk: true } : { masked, card: DEFAULT_CARD, cvvOk: true };
  }
  if (tokenId.startsWith('deny'))
    return { masked: '481111-1114', card: { ...DEFAULT_CARD, behaviour: 'deny_fds' }, cvvOk: true };
  if (tokenId.startsWith('challenge'))
    return { masked: '481111-1114', card: { ...DEFAULT_CARD, behaviour: 'challenge' }, cvvOk: true };
  return { masked: '481111-1114', card: DEFAULT_CARD, cvvOk: true };
}
