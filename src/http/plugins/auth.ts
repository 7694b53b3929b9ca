import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { secretEquals } from '../../platform/secrets.js';
import type { Deps } from '../../types.js';
import { audit } from '../../domain/audit.js';
import {
  API_KEY_THROTTLE,
  LOCKOUT,
  createLockout,
  createOperatorThrottle,
  type Lockout,
  type OperatorThrottle,
} from '../../domain/sign-in-throttle.js';
import { signIn, type SignInResult } from '../../domain/operators/sign-in.js';
import { sessionIdentity } from '../../domain/operators/sessions.js';
import { hasStoredOperators } from '../../domain/operators/manage.js';
import type { OperatorIdentity } from '../../domain/operators/identity.js';
import { crossSiteRefusal } from './same-origin.js';
import { accountOfKey } from '../../domain/accounts/api-keys.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';

/** The key presented with `Authorization: Bearer K` or `X-API-Key: K`, if any. */
function presentedKey(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  const header = req.headers['x-api-key'];
  const given =
    typeof auth === 'string' && /^Bearer\s+/i.test(auth)
      ? auth.replace(/^Bearer\s+/i, '').trim()
      : typeof header === 'string'
        ? header.trim()
        : undefined;
  return given === '' ? undefined : given;
}

/** `Authorization: Bearer K` or `X-API-Key: K`; every configured key is compared in constant time. */
export function checkApiKey(req: FastifyRequest, keys: string[]): boolean {
  if (keys.length === 0) return true;
  const given = presentedKey(req);
  if (!given) return false;
  let ok = false;
  for (const k of keys) ok = secretEquals(given, k) || ok;
  return ok;
}

/** Parses `Authorization: Basic base64(user:pass)`; undefined when absent or malformed. */
export function parseBasic(header: string | undefined): { user: string; pass: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,1024})\s*$/i.exec(header);
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  return { user: decoded.slice(0, i), pass: decoded.slice(i + 1) };
}

/** An audit line for a client refused at the door: not signed in, so named by its address only. */
function refusal(
  services: Deps<'logger'>,
  req: FastifyRequest,
  action: string,
  message: string,
  detail: Record<string, unknown> = {},
): void {
  const outcome = action === 'auth_lockout' ? 'locked' : 'refused';
  audit(
    services,
    { actor: { kind: 'anonymous', ip: req.ip }, action, subject: req.routeOptions.url ?? null, outcome },
    message,
    detail,
    'warn',
  );
}

/** The console's session cookie: a random id, of which the store keeps only the hash. */
export const SESSION_COOKIE = 'paylink_session';

/** The value of the session cookie, when the request carries one. */
export function sessionCookie(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === SESSION_COOKIE) return part.slice(i + 1).trim();
  }
  return undefined;
}

/**
 * A person opening a console page in a browser without being signed in. Once operators sign in by
 * name, they are sent to the sign-in page; until then (no operator stored) the browser's own Basic
 * dialog is asked for, as always.
 */
function isConsoleNavigation(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return (
    req.method === 'GET' &&
    /^\/console(\/|$|\?)/.test(req.url) &&
    !req.url.startsWith('/console/assets/') &&
    typeof accept === 'string' &&
    accept.includes('text/html')
  );
}

function signInRedirect(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply
    .code(303)
    .header('location', `/sign-in?next=${encodeURIComponent(req.url.slice(0, 500))}`)
    .send();
}

function challenge(reply: FastifyReply): never {
  reply.header('www-authenticate', 'Basic realm="paylink", charset="UTF-8"');
  throw new AppError('UNAUTHORIZED', 'Operator credentials are required (HTTP Basic).');
}

/** Signs the operator in from Basic credentials, or refuses with 401 (wrong) or 429 (locked). */
async function basicSignIn(
  req: FastifyRequest,
  reply: FastifyReply,
  services: Deps<'clock' | 'logger' | 'operator' | 'store'>,
  throttle: OperatorThrottle,
): Promise<OperatorIdentity> {
  const creds = parseBasic(req.headers.authorization);
  // A browser asks without credentials first and sends them after the Basic prompt: that first
  // request is the handshake, not a failure (debug), and never counts as a guess.
  if (req.headers.authorization === undefined) {
    services.logger.debug(
      { ip: req.ip, subject: req.routeOptions.url ?? null },
      'operator credentials requested (request without credentials)',
    );
    challenge(reply);
  }
  const result = creds
    ? await signIn(services, throttle, { user: creds.user, pass: creds.pass, ip: req.ip })
    : ({ kind: 'failed', known: undefined, ...(await throttle.fail(req.ip, undefined)) } as const);
  if (result.kind === 'ok') return result.identity;
  auditSignInRefusal(services, req, result, authScheme(req.headers.authorization));
  if (result.kind === 'locked')
    throw new AppError('TOO_MANY_REQUESTS', 'Too many failed logins from this address; try again later.', {
      headers: { 'retry-after': String(result.lockedFor) },
    });
  challenge(reply);
}

/** The audit lines of a refused sign-in (Basic Auth or the sign-in page): failed, locked, slowed down. */
export function auditSignInRefusal(
  services: Deps<'logger'>,
  req: FastifyRequest,
  result: Exclude<SignInResult, { kind: 'ok' }>,
  scheme: string,
): void {
  if (result.kind === 'locked') {
    refusal(services, req, 'auth_locked_out', 'operator request refused: client locked out', {
      retry_after_s: result.lockedFor,
    });
    return;
  }
  // The user name is logged only when it is an operator's: people type passwords into user fields.
  const user = result.known;
  refusal(services, req, 'auth_failed', 'operator authentication failed', { user, scheme });
  if (result.lockedFor > 0)
    refusal(services, req, 'auth_lockout', 'operator login locked for this client after repeated failures', {
      user,
      locked_for_s: LOCKOUT.lockMs / 1000,
    });
  if (result.slowedNow)
    refusal(services, req, 'auth_slowed', 'operator sign-ins from this client slowed down after repeated failures', {
      slowed_for_s: LOCKOUT.lockMs / 1000,
    });
}

/**
 * A wrong or missing API key: counted per client; once locked, 429 with Retry-After instead of
 * 401. A right key is never counted, looked up or slowed (an ERP sharing an address with a
 * guesser keeps working); keys are long random strings, so the throttle's job is to stop scans
 * and floods, not to make a guess feasible.
 */
async function apiKeyFailure(services: Deps<'logger'>, req: FastifyRequest, throttle: Lockout): Promise<never> {
  // No key at all is not a guess: 401 without touching the database.
  const presented = req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
  const lockedFor = presented ? await throttle.fail(req.ip) : 0;
  if (lockedFor > 0) {
    refusal(services, req, 'api_key_throttled', 'API request refused: too many wrong keys from this client', {
      retry_after_s: lockedFor,
    });
    throw new AppError('TOO_MANY_REQUESTS', 'Too many wrong API keys from this address; try again later.', {
      headers: { 'retry-after': String(lockedFor) },
    });
  }
  if (presented) refusal(services, req, 'api_key_failed', 'API key authentication failed');
  throw new AppError('UNAUTHORIZED', 'A valid API key is required (Authorization: Bearer <key> or X-API-Key).');
}

/** An API key was presented (Bearer or X-API-Key), as opposed to Basic credentials or none. */
function presentsApiKey(req: FastifyRequest): boolean {
  const auth = req.headers.authorization;
  return (typeof auth === 'string' && /^Bearer\s/i.test(auth)) || req.headers['x-api-key'] !== undefined;
}

function authScheme(header: string | undefined): string {
  if (!header) return 'none';
  const scheme = /^([A-Za-z]{1,20})(\s|$)/.exec(header)?.[1];
  return scheme ? scheme.toLowerCase() : 'malformed';
}

/** The route accepts METRICS_TOKEN, one is configured, and the request presents a Bearer credential. */
function presentsMetricsToken(req: FastifyRequest, token: string | undefined): token is string {
  const auth = req.headers.authorization;
  return (
    token !== undefined &&
    req.routeOptions.config.metricsToken === true &&
    typeof auth === 'string' &&
    /^Bearer\s/i.test(auth)
  );
}

/**
 * A Bearer credential on a route that accepts METRICS_TOKEN: the token, compared in constant time,
 * and nothing else. A right one is never counted or looked up; wrong ones are throttled per client
 * like wrong API keys, apart from the operators' sign-in lockout (a scraper with a stale token must
 * not lock the operators out, nor be refused because someone else mistyped a password).
 */
async function checkMetricsToken(
  req: FastifyRequest,
  token: string,
  services: Deps<'logger'>,
  throttle: Lockout,
): Promise<void> {
  const given = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '').trim();
  if (secretEquals(given, token)) return;
  const lockedFor = await throttle.fail(req.ip);
  if (lockedFor > 0) {
    refusal(services, req, 'metrics_token_throttled', 'metrics request refused: too many wrong tokens', {
      retry_after_s: lockedFor,
    });
    throw new AppError('TOO_MANY_REQUESTS', 'Too many wrong metrics tokens from this address; try again later.', {
      headers: { 'retry-after': String(lockedFor) },
    });
  }
  refusal(services, req, 'metrics_token_failed', 'metrics token authentication failed');
  throw new AppError(
    'UNAUTHORIZED',
    'A valid metrics token (Authorization: Bearer) or operator credentials are required.',
  );
}

/**
 * The account the request's API key acts for: a key of `API_KEYS` is `default`'s, an account's key
 * (looked up by its hash on every request) its account's; undefined when the key is wrong, revoked
 * or of a disabled account. Without `API_KEYS` (development) anyone may call, as `default` unless
 * an account's key is presented.
 */
async function keyAccount(
  services: Deps<'clock' | 'config' | 'logger' | 'store'>,
  req: FastifyRequest,
): Promise<string | undefined> {
  const given = presentedKey(req);
  const found = given === undefined ? undefined : await accountOfKey(services, given);
  if (found !== undefined || services.config.apiKeys.length > 0) return found;
  // An account's key that no longer acts (revoked, account disabled) is refused even here.
  return given?.startsWith('pl_') ? undefined : DEFAULT_ACCOUNT;
}

/** Checks the credentials each route's `config.auth` asks for, before anything else of the request. */
export function authHook(services: Deps<'clock' | 'config' | 'logger' | 'operator' | 'store'>) {
  const throttle = createOperatorThrottle(services);
  const keyThrottle = createLockout(services, 'api_key', API_KEY_THROTTLE);
  const metricsThrottle = createLockout(services, 'metrics_token', API_KEY_THROTTLE);
  return async function enforceAuth(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const auth = req.routeOptions.config.auth;
    if (auth === 'key') {
      const account = await keyAccount(services, req);
      if (account === undefined) await apiKeyFailure(services, req, keyThrottle);
      req.account = account;
    } else if (auth === 'doc' && services.config.apiKeys.length === 0) {
      // The ERP endpoints are open (no API_KEYS), so their description tells nothing they do not answer themselves.
    } else if (auth === 'doc' && presentsApiKey(req)) {
      if ((await keyAccount(services, req)) === undefined) await apiKeyFailure(services, req, keyThrottle);
    } else if (auth === 'op' && presentsMetricsToken(req, services.config.metricsToken)) {
      await checkMetricsToken(req, services.config.metricsToken, services, metricsThrottle);
    } else if (auth === 'op' || auth === 'doc') {
      // Before the credentials: a cross-site page must not even add to the failed-login count.
      const crossSite = crossSiteRefusal(req, services.config.publicBaseUrl);
      if (crossSite) {
        const origin = typeof req.headers.origin === 'string' ? req.headers.origin.slice(0, 200) : undefined;
        refusal(services, req, 'cross_site_refused', 'operator request refused: cross-site', {
          origin,
          sec_fetch_site: req.headers['sec-fetch-site'],
        });
        throw new AppError(
          'CROSS_SITE_REFUSED',
          `Refused: ${crossSite}. Operator changes are accepted from the console itself or from clients that are not browsers.`,
        );
      }
      // A live console session first; Basic Auth stays accepted on every operator route.
      const session = sessionCookie(req);
      const fromSession = session === undefined ? undefined : await sessionIdentity(services, session);
      if (!fromSession && isConsoleNavigation(req) && req.headers.authorization === undefined)
        if (await hasStoredOperators(services)) return signInRedirect(req, reply);
      const identity = fromSession ?? (await basicSignIn(req, reply, services, throttle));
      req.operatorUser = identity.username;
      req.operatorIdentity = identity;
      req.operatorSession = fromSession !== undefined;
    }
  };
}
