import type { FastifyInstance } from 'fastify';
import type { SimContext } from '../context.js';
import type { CreateTxnInput } from '../engine.js';
import { merchantOf } from '../gateway-hooks.js';
import { UNEXPECTED_MESSAGE, coreError, notifyTargets, sendCore } from '../http.js';
import { parseOffsetTime, unitMs } from '../lib/format.js';
import { asInteger, isObject, pickExtras, validateOrder, type Json } from '../lib/validate.js';
import { METHODS, chargeMessage, methodFromCharge } from '../methods.js';
import { chargeBody } from '../payloads.js';

const CORE_CUSTOMER = { first_name: 255, last_name: 255, email: 255, phone: 255 };
const MAX_CUSTOM_EXPIRY_MS = 180 * 86_400_000;

export const VALIDATION_MESSAGE = 'One or more parameters in the payload is invalid.';
const DUPLICATE_MESSAGE =
  'The request could not be completed due to a conflict with the current state of the target resource, please try again';

function parseCustomExpiry(raw: unknown, errors: string[]): Date | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    errors.push('custom_expiry must be an object');
    return undefined;
  }
  const duration = asInteger(raw.expiry_duration);
  const ms = typeof raw.unit === 'string' ? unitMs(raw.unit) : undefined;
  if (duration === undefined || duration < 1)
    errors.push('custom_expiry.expiry_duration must be an integer greater than 0');
  if (ms === undefined) errors.push('custom_expiry.unit must be one of second, minute, hour, day');
  let start = new Date();
  if (raw.order_time !== undefined) {
    const parsed = typeof raw.order_time === 'string' ? parseOffsetTime(raw.order_time) : undefined;
    if (!parsed) errors.push("custom_expiry.order_time must be formatted as 'yyyy-MM-dd HH:mm:ss Z'");
    else start = parsed;
  }
  if (duration === undefined || ms === undefined) return undefined;
  if (duration * ms > MAX_CUSTOM_EXPIRY_MS) errors.push('custom_expiry exceeds the maximum allowed expiry');
  return new Date(start.getTime() + duration * ms);
}

function subObject(body: Json, key: string): Json {
  const v = body[key];
  return isObject(v) ? v : {};
}

function methodOptions(body: Json, paymentType: string, method: string, errors: string[]): Partial<CreateTxnInput> {
  const out: Partial<CreateTxnInput> = {};
  const va = subObject(body, 'bank_transfer').va_number;
  if (va !== undefined) {
    if (typeof va !== 'string' || !/^\d{1,18}$/.test(va)) errors.push('bank_transfer.va_number must be numeric');
    else out.vaNumber = va;
  }
  if (method === 'other_qris') {
    const acq = subObject(body, 'qris').acquirer;
    if (acq !== undefined && acq !== 'gopay' && acq !== 'airpay shopee')
      errors.push("qris.acquirer must be 'gopay' or 'airpay shopee'");
    else if (typeof acq === 'string') out.acquirer = acq;
  }
  if (paymentType === 'echannel') {
    const e = subObject(body, 'echannel');
    if (typeof e.bill_info1 !== 'string') errors.push('echannel.bill_info1 is required');
    if (typeof e.bill_info2 !== 'string') errors.push('echannel.bill_info2 is required');
  }
  redirectTypeRules(body, paymentType, errors);
  return out;
}

/** CIMB Clicks needs its description; Akulaku scores the basket, so items and customer are required. */
function redirectTypeRules(body: Json, paymentType: string, errors: string[]): void {
  if (paymentType === 'cimb_clicks') {
    const d = subObject(body, 'cimb_clicks').description;
    if (typeof d !== 'string' || d.length === 0) errors.push('cimb_clicks.description is required');
    else if (d.length > 100) errors.push('cimb_clicks.description must be at most 100 characters');
  }
  if (paymentType === 'akulaku') {
    if (!Array.isArray(body.item_details) || body.item_details.length === 0) errors.push('item_details is required');
    if (!isObject(body.customer_details)) errors.push('customer_details is required');
  }
}

/** `credit_card.authentication` as a boolean, or the "true" string some clients send. */
function wantsAuthentication(body: Json): boolean {
  const a = subObject(body, 'credit_card').authentication;
  return a === true || a === 'true';
}

export function registerCharge(scope: FastifyInstance, ctx: SimContext): void {
  scope.post('/v2/charge', async (req, reply) => {
    // A JSON null, array or scalar body (whatever its content type: the gateway reads every body as JSON)
    // breaks the gateway's parser: its "unexpected" 500. Text that is not JSON never gets here (400, "413").
    if (req.body !== undefined && !isObject(req.body))
      return sendCore(reply, coreError('500', UNEXPECTED_MESSAGE), ctx.faults);
    const body: Json = isObject(req.body) ? req.body : {};
    const errors: string[] = [];
    const paymentType = typeof body.payment_type === 'string' ? body.payment_type : undefined;
    if (paymentType === undefined) errors.push('payment_type is required');
    const order = validateOrder(body, { customer: CORE_CUSTOMER, grossRequired: true }, errors);
    const method = paymentType === undefined ? undefined : methodFromCharge(paymentType, body);
    if (typeof method === 'object') errors.push(method.error);
    const expiry = parseCustomExpiry(body.custom_expiry, errors);
    const extras = pickExtras(body, errors);
    const opts = typeof method === 'string' && paymentType ? methodOptions(body, paymentType, method, errors) : {};
    if (errors.length > 0 || !order || typeof method !== 'string') {
      return sendCore(reply, coreError('400', VALIDATION_MESSAGE, { validation_messages: errors }), ctx.faults);
    }
    const token = subObject(body, 'credit_card').token_id;
    if (method === 'credit_card' && (typeof token !== 'string' || token.length === 0)) {
      return sendCore(reply, coreError('411', 'Token id is missing, invalid, or timed out'), ctx.faults);
    }
    const { engine } = merchantOf(req);
    if (engine.orderIdTaken(order.order_id)) return sendCore(reply, coreError('406', DUPLICATE_MESSAGE), ctx.faults);
    const input: CreateTxnInput = {
      ...opts,
      order,
      method,
      notify: notifyTargets(req.headers),
      source: { kind: 'core' },
      extras,
    };
    if (expiry) input.expiry = expiry;
    if (typeof token === 'string') input.cardToken = token;
    if (method === 'credit_card' && wantsAuthentication(body)) input.authentication = true;
    const t = engine.createTxn(input);
    const spec = METHODS.get(method);
    return sendCore(reply, chargeBody(t, spec ? chargeMessage(spec, t) : 'Success'), ctx.faults);
  });
}
