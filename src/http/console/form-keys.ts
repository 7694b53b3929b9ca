/**
 * One-time keys of the console's forms that act (a confirmed refund, cancel or expire, a delivery
 * retry), so a double click, a browser's re-POST or a replayed form acts once. A key is made when
 * the page showing its form is rendered: a random nonce and its time of issue under an HMAC over the
 * operator and what the form does (its action, subject and values), so it is good for that operator
 * and that form only. It is the form's Idempotency-Key, kept in the API's idempotency records under a
 * scope of the operator's own (`console:…`, a name no API scope has), with the API's rules: the same
 * key with another request is refused, one still running is waited for, an outcome is answered again.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { AppError, ERRORS, type ErrorCode } from '../../platform/errors.js';
import { knownProblem } from '../plugins/errors.js';
import { requestHash, stableStringify } from '../../domain/orders/request-hash.js';
import type { Deps } from '../../types.js';
import { isOutcome, requestKeyWithin } from '../plugins/idempotency.js';
import {
  CLAIM_LOCK_MS,
  KEY_RETENTION_MS,
  claimKey,
  keepOutcome,
  releaseKey,
  type IdempotencyDeps,
  type KeyClaim,
} from '../../domain/idempotency.js';
import { CSRF_VALIDITY_MS, type FormRequest } from './context.js';
import { html, type Html } from './html.js';

export type FormKeyDeps = IdempotencyDeps & Deps<'formKeySecret'>;

/** The form field carrying the key. */
export const FormKeyField = Type.Optional(Type.String({ maxLength: 200 }));

/** The hidden field carrying a form's key. */
export function formKeyField(key: string): Html {
  return html`<input type="hidden" name="_key" value="${key}">`;
}

/**
 * How long a key is taken: as long as the CSRF token beside it, well inside the 24 h its record is
 * kept, so a key is never taken again once its record could be gone.
 */
const VALIDITY_MS = CSRF_VALIDITY_MS;
/** A clock a little behind another instance's must not refuse that instance's fresh keys. */
const CLOCK_SKEW_MS = 60_000;
/** How long a second submit waits for the first to finish before answering that it is under way: above a refund's own wait for another (15 s). */
const WAIT_FOR_FIRST_MS = 20_000;
const POLL_MS = 100;
const SHAPE = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** What a form does, as its key is bound to: amounts as the refund form reads them (dots and spaces dropped), reasons trimmed. */
export function formRequest(
  form: string,
  subject: string,
  fields: { amount?: string; reason?: string; from?: string } = {},
): FormRequest {
  const amount = (fields.amount ?? '').replace(/[\s.]/g, '');
  // A browser sends a line break in a value as CRLF whatever the page held.
  const reason = (fields.reason ?? '').trim().replace(/\r\n?/g, '\n');
  return {
    form,
    subject,
    amount: amount === '' ? null : amount,
    reason: reason === '' ? null : reason,
    from: fields.from ?? null,
  };
}

function mac(secret: Buffer, operator: string, issued: string, nonce: string, request: FormRequest): string {
  return createHmac('sha256', secret)
    .update(`console-form-key\n${operator}\n${issued}\n${nonce}\n${stableStringify(request)}`)
    .digest('base64url');
}

/** A new key for one form shown to `operator`. */
export function issueFormKey(
  services: Deps<'clock' | 'formKeySecret'>,
  operator: string,
  request: FormRequest,
): string {
  const issued = services.clock.now().getTime().toString(36);
  const nonce = randomBytes(16).toString('base64url');
  return `${issued}.${nonce}.${mac(services.formKeySecret, operator, issued, nonce, request)}`;
}

/** Whether `key` was made here for this operator and this very request, and is young enough. */
function isValidKey(
  services: Deps<'clock' | 'formKeySecret'>,
  operator: string,
  key: string,
  request: FormRequest,
): boolean {
  const m = SHAPE.exec(key);
  const [issued, nonce, given] = [m?.[1], m?.[2], m?.[3]];
  if (issued === undefined || nonce === undefined || given === undefined) return false;
  const age = services.clock.now().getTime() - Number.parseInt(issued, 36);
  if (age < -CLOCK_SKEW_MS || age > VALIDITY_MS) return false;
  const expected = Buffer.from(mac(services.formKeySecret, operator, issued, nonce, request));
  const got = Buffer.from(given);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

const FieldErrors = Type.Array(Type.Object({ path: Type.String(), message: Type.String() }));
const StoredOutcome = Type.Union([
  Type.Object({ location: Type.String() }),
  Type.Object({
    code: Type.String(),
    message: Type.String(),
    errors: Type.Optional(FieldErrors),
    gateway: Type.Optional(Type.Object({ status_code: Type.String(), status_message: Type.String() })),
  }),
]);

const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERRORS, code);

/** A completed record's outcome: where the first submit went, or (thrown) what refused it. Undefined when unreadable. */
function replay(body: string | null): string | undefined {
  let stored: unknown;
  try {
    stored = JSON.parse(body ?? '');
  } catch {
    return undefined;
  }
  if (!Value.Check(StoredOutcome, stored)) return undefined;
  if ('location' in stored) return stored.location;
  if (!isErrorCode(stored.code)) return undefined;
  throw new AppError(stored.code, stored.message, {
    ...(stored.errors ? { errors: stored.errors } : {}),
    ...(stored.gateway ? { gateway: stored.gateway } : {}),
  });
}

/** Runs the action under its claim, then keeps its outcome for the key — or frees the key when the answer is not an outcome (a timeout, a 5xx), so a later submit runs it again. */
async function runClaimed(services: FormKeyDeps, c: KeyClaim, act: () => Promise<string>): Promise<string> {
  let outcome: { status: number; body: object } | undefined;
  try {
    const location = await act();
    outcome = { status: 303, body: { location } };
    return location;
  } catch (err) {
    const e = knownProblem(err);
    if (e && isOutcome(e.status, e.code))
      outcome = {
        status: e.status,
        body: { code: e.code, message: e.message, errors: e.extras.errors, gateway: e.extras.gateway },
      };
    throw err;
  } finally {
    await keep(services, c, outcome);
  }
}

async function keep(
  services: FormKeyDeps,
  c: KeyClaim,
  outcome: { status: number; body: object } | undefined,
): Promise<void> {
  try {
    const kept = outcome
      ? await keepOutcome(services, c, outcome.status, JSON.stringify(outcome.body))
      : await releaseKey(services, c);
    if (!kept)
      services.logger.warn(
        { idempotency_scope: c.scope },
        'console form key: the claim was lost before its outcome was kept',
      );
  } catch (err) {
    // The answer still goes out; the claim's lock expires and a later submit is a retry of the same request.
    services.logger.warn(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'console form key: outcome not kept',
    );
  }
}

/**
 * Does what the form asks once for its key: `act` gets the request key a domain action keeps (as an
 * API Idempotency-Key gives it) and answers where to go next. A submit of a form already acted on
 * answers the first outcome (its location, or its refusal thrown again); one arriving while the first
 * runs waits for it. A missing or foreign key → FORM_KEY_INVALID, nothing done.
 */
export async function actOnce(
  services: FormKeyDeps,
  o: { operator: string; key: string | undefined; request: FormRequest },
  act: (requestKey: string) => Promise<string>,
): Promise<string> {
  const { key } = o;
  if (key === undefined || !isValidKey(services, o.operator, key, o.request)) throw new AppError('FORM_KEY_INVALID');
  const scope = `console:${createHash('sha256').update(o.operator).digest('hex').slice(0, 16)}`;
  const hash = requestHash(o.request);
  for (let waited = 0; ; waited += POLL_MS) {
    const res = await claimKey(services, scope, key, hash, {
      now: services.clock.now(),
      retentionMs: KEY_RETENTION_MS,
      lockMs: CLAIM_LOCK_MS,
    });
    if (res.claimed) return runClaimed(services, res.claim, () => act(requestKeyWithin(scope, key)));
    // A key is only taken for the request it was made for, so this holds while its HMAC does; a record is still never answered for another request.
    if (res.record.requestHash !== hash)
      throw new AppError('IDEMPOTENCY_MISMATCH', 'This form was already sent with other values; nothing was done.');
    const location = res.record.state === 'completed' ? replay(res.record.responseBody) : undefined;
    if (location !== undefined) return location;
    if (waited >= WAIT_FOR_FIRST_MS)
      throw new AppError(
        'IDEMPOTENCY_IN_FLIGHT',
        'This form is being acted on right now; open the page again in a moment to see the outcome.',
        { headers: { 'retry-after': '2' } },
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
