import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.js';
import { secretEquals } from '../../platform/secrets.js';
import type { Deps } from '../../types.js';
import { audit } from '../../domain/audit.js';
import { API_KEY_THROTTLE, LOCKOUT, createLockout, type Lockout } from '../../domain/sign-in-throttle.js';
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

export function checkOperator(req: FastifyRequest, operator: { user: string; pass: string }): string | undefined {
  const creds = parseBasic(req.headers.authorization);
  if (!creds) return undefined;
  // Both compared every time, so timing does not tell which one was wrong.
  const userOk = secretEquals(creds.user, operator.user);
  const passOk = secretEquals(creds.pass, operator.pass);
  return userOk && passOk ? creds.user : undefined;
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

async function operatorFailure(
  req: FastifyRequest,
  reply: FastifyReply,
  services: Deps<'logger' | 'operator'>,
  lockout: Lockout,
): Promise<never> {
  const creds = parseBasic(req.headers.authorization);
  // The user name is logged only when it is the real one: people type passwords into user fields.
  const user = creds && secretEquals(creds.user, services.operator.user) ? creds.user : undefined;
  // Only a presented credential counts as a guess: a browser's first, anonymous request (and
  // anyone who can reach the port without credentials) must not lock real operators out.
  const locked = req.headers.authorization === undefined ? false : (await lockout.fail(req.ip)) > 0;
  // A browser asks without credentials first and sends them after the Basic prompt: that first
  // request is the handshake, not a failure (debug); wrong credentials are (warn, audited).
  if (req.headers.authorization === undefined)
    services.logger.debug(
      { ip: req.ip, subject: req.routeOptions.url ?? null },
      'operator credentials requested (request without credentials)',
    );
  else
    refusal(services, req, 'auth_failed', 'operator authentication failed', {
      user,
      scheme: authScheme(req.headers.authorization),
    });
  if (locked)
    refusal(services, req, 'auth_lockout', 'operator login locked for this client after repeated failures', {
      user,
      locked_for_s: LOCKOUT.lockMs / 1000,
    });
  reply.header('www-authenticate', 'Basic realm="paylink", charset="UTF-8"');
  throw new AppError('UNAUTHORIZED', 'Operator credentials are required (HTTP Basic).');
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

/** The key presented has the shape of an account's key (`pl_…`). */
function isAccountKey(req: FastifyRequest): boolean {
  return presentedKey(req)?.startsWith('pl_') ?? false;
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
  const lockout = createLockout(services, 'operator', LOCKOUT);
  const keyThrottle = createLockout(services, 'api_key', API_KEY_THROTTLE);
  return async function enforceAuth(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const auth = req.routeOptions.config.auth;
    if (auth === 'key') {
      const account = await keyAccount(services, req);
      if (account === undefined) await apiKeyFailure(services, req, keyThrottle);
      req.account = account;
    } else if (auth === 'doc' && presentsApiKey(req) && (services.config.apiKeys.length > 0 || isAccountKey(req))) {
      if ((await keyAccount(services, req)) === undefined) await apiKeyFailure(services, req, keyThrottle);
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
      const { lockedFor, failures } = await lockout.state(req.ip);
      if (lockedFor > 0) {
        refusal(services, req, 'auth_locked_out', 'operator request refused: client locked out', {
          retry_after_s: lockedFor,
        });
        throw new AppError('TOO_MANY_REQUESTS', 'Too many failed logins from this address; try again later.', {
          headers: { 'retry-after': String(lockedFor) },
        });
      }
      const user = checkOperator(req, services.operator);
      if (!user) await operatorFailure(req, reply, services, lockout);
      // A success forgets earlier failures; nothing is written when there were none.
      else if (failures > 0) await lockout.succeed(req.ip);
      req.operatorUser = user;
    }
  };
}
