import type { FastifyInstance, FastifyReply } from 'fastify';
import { merchantOf } from '../gateway-hooks.js';
import { jakartaTime, parseOffsetTime, uuid } from '../lib/format.js';
import { asInteger, isObject, type Json } from '../lib/validate.js';
import type { Ledger, Subscription } from '../state.js';

const NAME_RE = /^[A-Za-z0-9\-_~.]+$/;
const UNITS = ['day', 'week', 'month'];
const AMOUNT_MESSAGE = 'subscription.amount must be between 0.01 - 99999999999.00';
const UPDATED = { status_message: 'Subscription is updated.' };

/** The Subscription API's own error shape: no `status_code` in the body, the HTTP status says it. */
function badRequest(reply: FastifyReply, errors: string[]): FastifyReply {
  return reply.code(400).send({ status_message: 'Bad request', validation_messages: errors });
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ status_message: "Subscription doesn't exist." });
}

/** The amount as sent (a string, or a number the client did not quote), when it is within the gateway's range. */
function checkAmount(v: unknown, errors: string[]): string | undefined {
  if (v === undefined || v === null || v === '') {
    errors.push('subscription.amount is required');
    return undefined;
  }
  const text = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
  const n = /^\d+(\.\d{1,2})?$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0.01 && n <= 99_999_999_999)) {
    errors.push(AMOUNT_MESSAGE);
    return undefined;
  }
  return text;
}

function checkName(v: unknown, errors: string[]): string | undefined {
  if (typeof v !== 'string' || v.trim() === '') errors.push('subscription.name is required');
  else if (!NAME_RE.test(v)) errors.push('subscription.name may contain only letters, digits, -, _, ~ and .');
  else return v;
  return undefined;
}

function checkCommon(
  body: Json,
  errors: string[],
): { name?: string; amount?: string; currency?: string; token?: string } {
  const name = checkName(body.name, errors);
  const amount = checkAmount(body.amount, errors);
  const currency = body.currency;
  if (currency === undefined || currency === null || currency === '') errors.push('subscription.currency is required');
  else if (currency !== 'IDR') errors.push('subscription.currency must be IDR');
  const token = typeof body.token === 'string' && body.token.trim() !== '' ? body.token : undefined;
  if (token === undefined) errors.push('subscription.token is required');
  const out: { name?: string; amount?: string; currency?: string; token?: string } = {};
  if (name !== undefined) out.name = name;
  if (amount !== undefined) out.amount = amount;
  if (currency === 'IDR') out.currency = currency;
  if (token !== undefined) out.token = token;
  return out;
}

function positiveInt(v: unknown): number | undefined {
  const n = asInteger(v);
  return n !== undefined && n >= 1 ? n : undefined;
}

function checkSchedule(v: unknown, errors: string[], now: Date): Subscription['schedule'] | undefined {
  if (!isObject(v)) {
    errors.push('subscription.schedule is required');
    return undefined;
  }
  const interval = positiveInt(v.interval);
  if (interval === undefined) errors.push('subscription.schedule.interval must be a whole number of at least 1');
  const unit = v.interval_unit;
  if (typeof unit !== 'string' || !UNITS.includes(unit))
    errors.push('subscription.schedule.interval_unit must be one of day, week, month');
  let maxInterval: number | undefined;
  if (v.max_interval !== undefined && v.max_interval !== null) {
    maxInterval = positiveInt(v.max_interval);
    if (maxInterval === undefined)
      errors.push('subscription.schedule.max_interval must be a whole number of at least 1');
  }
  let start = now;
  if (v.start_time !== undefined && v.start_time !== null) {
    const at = typeof v.start_time === 'string' ? parseOffsetTime(v.start_time) : undefined;
    if (at === undefined) errors.push('subscription.schedule.start_time must be yyyy-MM-dd HH:mm:ss Z');
    else start = at;
  }
  if (interval === undefined || typeof unit !== 'string' || !UNITS.includes(unit)) return undefined;
  const schedule: Subscription['schedule'] = { interval, interval_unit: unit, start_time: start };
  if (maxInterval !== undefined) schedule.max_interval = maxInterval;
  return schedule;
}

/** GoPay subscriptions charge a linked account: it must be this merchant's and ENABLED. */
function checkGopay(ledger: Ledger, v: unknown, errors: string[]): Json | undefined {
  const accountId = isObject(v) && typeof v.account_id === 'string' ? v.account_id : undefined;
  if (accountId === undefined) {
    errors.push('subscription.gopay.account_id is required');
    return undefined;
  }
  if (ledger.payAccounts.get(accountId)?.status !== 'ENABLED') {
    errors.push('subscription.gopay.account_id must be an enabled GoPay account');
    return undefined;
  }
  return { account_id: accountId };
}

function view(s: Subscription): Json {
  const schedule: Json = {
    interval: s.schedule.interval,
    interval_unit: s.schedule.interval_unit,
    current_interval: 0,
    start_time: jakartaTime(s.schedule.start_time),
    next_execution_at: jakartaTime(s.schedule.start_time),
  };
  if (s.schedule.max_interval !== undefined) schedule.max_interval = s.schedule.max_interval;
  const out: Json = {
    id: s.id,
    name: s.name,
    amount: s.amount,
    currency: s.currency,
    created_at: jakartaTime(s.created_at),
    schedule,
    status: s.status,
    token: s.token,
    payment_type: s.payment_type,
  };
  if (s.retry_schedule) out.retry_schedule = s.retry_schedule;
  if (s.gopay) out.gopay = s.gopay;
  if (s.metadata) out.metadata = s.metadata;
  if (s.customer_details) out.customer_details = s.customer_details;
  return out;
}

/**
 * The Subscription API (`/v1/subscriptions`): create, read, update, enable and disable. A subscription is
 * a record only: its schedule is never run (no recurring charges, no notifications).
 */
export function registerSubscriptions(scope: FastifyInstance): void {
  scope.post('/v1/subscriptions', async (req, reply) => {
    const body = isObject(req.body) ? req.body : {};
    const ledger = merchantOf(req).ledger;
    const errors: string[] = [];
    const now = new Date();
    const common = checkCommon(body, errors);
    const paymentType = body.payment_type;
    if (paymentType !== 'credit_card' && paymentType !== 'gopay')
      errors.push('subscription.payment_type must be credit_card or gopay');
    const schedule = checkSchedule(body.schedule, errors, now);
    const gopay = paymentType === 'gopay' ? checkGopay(ledger, body.gopay, errors) : undefined;
    if (
      errors.length > 0 ||
      !schedule ||
      (paymentType !== 'credit_card' && paymentType !== 'gopay') ||
      common.name === undefined ||
      common.amount === undefined ||
      common.currency === undefined ||
      common.token === undefined
    )
      return badRequest(reply, errors);
    const s: Subscription = {
      id: uuid(),
      name: common.name,
      amount: common.amount,
      currency: common.currency,
      payment_type: paymentType,
      token: common.token,
      status: 'active',
      schedule,
      created_at: now,
    };
    if (isObject(body.retry_schedule)) s.retry_schedule = body.retry_schedule;
    if (gopay) s.gopay = gopay;
    if (isObject(body.metadata)) s.metadata = body.metadata;
    if (isObject(body.customer_details)) s.customer_details = body.customer_details;
    ledger.subscriptions.set(s.id, s);
    return reply.code(200).send(view(s));
  });

  scope.get<{ Params: { id: string } }>('/v1/subscriptions/:id', async (req, reply) => {
    const s = merchantOf(req).ledger.subscriptions.get(req.params.id);
    return s ? reply.code(200).send(view(s)) : notFound(reply);
  });

  // Only `schedule.interval` of the schedule can change, and never the payment type.
  scope.patch<{ Params: { id: string } }>('/v1/subscriptions/:id', async (req, reply) => {
    const ledger = merchantOf(req).ledger;
    const s = ledger.subscriptions.get(req.params.id);
    if (!s) return notFound(reply);
    const body = isObject(req.body) ? req.body : {};
    const errors: string[] = [];
    const common = checkCommon(body, errors);
    if (body.payment_type !== undefined && body.payment_type !== s.payment_type)
      errors.push('subscription.payment_type cannot be updated');
    let interval: number | undefined;
    if (isObject(body.schedule) && body.schedule.interval !== undefined) {
      interval = positiveInt(body.schedule.interval);
      if (interval === undefined) errors.push('subscription.schedule.interval must be a whole number of at least 1');
    }
    const gopay =
      s.payment_type === 'gopay' && body.gopay !== undefined ? checkGopay(ledger, body.gopay, errors) : undefined;
    if (errors.length > 0) return badRequest(reply, errors);
    Object.assign(s, common);
    if (interval !== undefined) s.schedule.interval = interval;
    if (isObject(body.retry_schedule)) s.retry_schedule = body.retry_schedule;
    if (gopay) s.gopay = gopay;
    if (isObject(body.metadata)) s.metadata = body.metadata;
    if (isObject(body.customer_details)) s.customer_details = body.customer_details;
    return reply.code(200).send(UPDATED);
  });

  for (const [action, status] of [
    ['enable', 'active'],
    ['disable', 'inactive'],
  ] as const) {
    scope.post<{ Params: { id: string } }>(`/v1/subscriptions/:id/${action}`, async (req, reply) => {
      const s = merchantOf(req).ledger.subscriptions.get(req.params.id);
      if (!s) return notFound(reply);
      s.status = status;
      return reply.code(200).send(UPDATED);
    });
  }
}
