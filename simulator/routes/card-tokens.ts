import type { FastifyInstance } from 'fastify';
import {
  SANDBOX_CVV,
  TEST_CARDS,
  cardFor,
  luhnValid,
  maskPan,
  newSavedTokenId,
  newTokenId,
  type CardToken,
} from '../cards.js';
import type { SimContext } from '../context.js';
import { merchantOf } from '../gateway-hooks.js';
import { coreError, sendCore } from '../http.js';
import { grossString, jakartaTime, uuid } from '../lib/format.js';
import { isObject, type Json } from '../lib/validate.js';
import type { Ledger } from '../state.js';
import { VALIDATION_MESSAGE } from './charge.js';

const TOKEN_INVALID = 'Token id is missing, invalid, or timed out';

type Query = Record<string, unknown>;

function text(q: Query, key: string): string | undefined {
  const v = q[key];
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number') return String(v);
  return undefined;
}

/** Jakarta calendar month now, as year * 12 + month index. */
function currentMonthIndex(now = new Date()): number {
  const wib = new Date(now.getTime() + 7 * 3_600_000);
  return wib.getUTCFullYear() * 12 + wib.getUTCMonth();
}

function checkExpiry(q: Query, errors: string[]): void {
  const month = text(q, 'card_exp_month');
  const year = text(q, 'card_exp_year');
  if (!month) errors.push('card_exp_month is required');
  else if (!/^\d{1,2}$/.test(month) || Number(month) < 1 || Number(month) > 12)
    errors.push('card_exp_month must be between 01 and 12');
  if (!year) errors.push('card_exp_year is required');
  else if (!/^(\d{2}|\d{4})$/.test(year)) errors.push('card_exp_year must be 2 or 4 digits');
  if (errors.length > 0 || !month || !year) return;
  const fullYear = year.length === 2 ? 2000 + Number(year) : Number(year);
  if (fullYear * 12 + Number(month) - 1 < currentMonthIndex()) {
    errors.push('card_exp_month and card_exp_year must be equal or greater than the current month and year');
  }
}

/** Card number (spaces allowed, as the JS library sends it), expiry and, when asked for, the CVV. */
function checkCard(q: Query, needCvv: boolean, errors: string[]): { pan: string; cvv?: string } | undefined {
  const raw = text(q, 'card_number');
  const pan = raw?.replace(/[\s-]/g, '') ?? '';
  if (!raw) errors.push('card_number is required');
  else if (!/^\d{12,19}$/.test(pan)) errors.push('card_number must be 12 to 19 digits');
  else if (!luhnValid(pan)) errors.push('card_number does not match with luhn algorithm');
  checkExpiry(q, errors);
  const cvv = checkCvv(q, needCvv, errors);
  if (errors.length > 0) return undefined;
  return cvv === undefined ? { pan } : { pan, cvv };
}

function checkCvv(q: Query, required: boolean, errors: string[]): string | undefined {
  const cvv = text(q, 'card_cvv');
  if (!cvv) {
    if (required) errors.push('card_cvv is required');
    return undefined;
  }
  if (!/^\d{3,4}$/.test(cvv)) errors.push('card_cvv must be 3 or 4 digits');
  return cvv;
}

function checkAmount(q: Query, errors: string[]): void {
  const g = text(q, 'gross_amount');
  if (g !== undefined && !/^\d{1,15}(\.0{1,2})?$/.test(g)) errors.push('gross_amount must be a positive number');
}

/** Test cards only pass their sandbox CVV; the issuer declines the charge otherwise (N7). */
function cvvMatches(pan: string, cvv: string | undefined): boolean {
  return cvv === undefined || !TEST_CARDS.has(pan) || cvv === SANDBOX_CVV;
}

function issue(ledger: Ledger, pan: string, cvvOk: boolean, saved: boolean): CardToken {
  const token: CardToken = {
    token_id: saved ? newSavedTokenId(pan) : newTokenId(pan),
    pan,
    card: cardFor(pan),
    cvvOk,
    saved,
    created_at: new Date(),
  };
  ledger.cardTokens.set(token.token_id, token);
  return token;
}

function tokenAnswer(t: CardToken, secure: boolean): Json {
  const body: Json = {
    status_code: '200',
    status_message: 'Credit card token is created as Token ID.',
    token_id: t.token_id,
  };
  if (secure) body.bank = t.card.bank;
  body.hash = `${maskPan(t.pan)}-mami`;
  return body;
}

export function registerCardTokens(scope: FastifyInstance, ctx: SimContext): void {
  scope.get('/v2/token', async (req, reply) => {
    const q: Query = isObject(req.query) ? req.query : {};
    const errors: string[] = [];
    const secure = text(q, 'secure') === 'true';
    checkAmount(q, errors);
    const savedId = text(q, 'token_id');
    if (savedId) {
      // Two-click: a saved token plus (usually) the CVV gives a fresh one-charge token.
      const cvv = checkCvv(q, false, errors);
      if (errors.length > 0)
        return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
      const saved = merchantOf(req).ledger.cardTokens.get(savedId);
      if (!saved || !saved.saved) return sendCore(reply, coreError('411', TOKEN_INVALID), ctx.faults);
      return sendCore(
        reply,
        tokenAnswer(issue(merchantOf(req).ledger, saved.pan, saved.cvvOk && cvvMatches(saved.pan, cvv), false), secure),
        ctx.faults,
      );
    }
    const card = checkCard(q, true, errors);
    if (!card)
      return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
    return sendCore(
      reply,
      tokenAnswer(issue(merchantOf(req).ledger, card.pan, cvvMatches(card.pan, card.cvv), false), secure),
      ctx.faults,
    );
  });

  scope.get('/v2/card/register', async (req, reply) => {
    const q: Query = isObject(req.query) ? req.query : {};
    const errors: string[] = [];
    const card = checkCard(q, false, errors);
    if (!card)
      return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
    const saved = issue(merchantOf(req).ledger, card.pan, cvvMatches(card.pan, card.cvv), true);
    return sendCore(
      reply,
      { status_code: '200', saved_token_id: saved.token_id, transaction_id: uuid(), masked_card: maskPan(card.pan) },
      ctx.faults,
    );
  });

  scope.get<{ Params: { token: string } }>('/v2/point_inquiry/:token', async (req, reply) => {
    const t = merchantOf(req).ledger.cardTokens.get(req.params.token);
    if (!t) return sendCore(reply, coreError('411', TOKEN_INVALID), ctx.faults);
    // Only a card whose bank takes points answers (https://docs.midtrans.com/reference/point-inquiry);
    // for any other the merchant has no point payment with that bank (the clients' 402 tests).
    const points = t.card.pointsIdr;
    if (points === undefined)
      return sendCore(reply, coreError('402', 'Merchant does not have access for this payment type'), ctx.faults);
    const q: Query = isObject(req.query) ? req.query : {};
    const errors: string[] = [];
    checkAmount(q, errors);
    if (errors.length > 0)
      return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
    // `gross_amount` (the coming charge) caps the amount answered: what of the points that charge can use.
    const gross = text(q, 'gross_amount');
    const usable = gross === undefined ? points : Math.min(points, Math.floor(Number(gross)));
    return sendCore(
      reply,
      {
        status_code: '200',
        status_message: 'Success, Credit Card Point inquiry is successful',
        transaction_time: jakartaTime(new Date()),
        point_balance_amount: grossString(usable),
      },
      ctx.faults,
    );
  });
}
