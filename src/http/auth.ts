import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { secretEquals } from '../gateway/signature.js';
import type { Services } from '../types.js';
import type { Clock } from '../clock.js';

/** `Authorization: Bearer K` or `X-API-Key: K`; every configured key is compared in constant time. */
export function checkApiKey(req: FastifyRequest, keys: string[]): boolean {
  if (keys.length === 0) return true;
  const auth = req.headers.authorization;
  const header = req.headers['x-api-key'];
  const given = typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : typeof header === 'string' ? header.trim() : undefined;
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

/** PCI DSS 8.3.4: at most 10 failed attempts, then locked for at least 30 minutes. */
export const LOCKOUT = { maxFailures: 10, windowMs: 15 * 60_000, lockMs: 30 * 60_000, maxTrackedClients: 10_000 };

export interface Lockout {
  /** Seconds left when `ip` is locked out, else 0. */
  lockedFor(ip: string): number;
  /** Records a failure; true when it locked the client out. */
  fail(ip: string): boolean;
  succeed(ip: string): void;
}

/**
 * Failed operator logins per client IP, in memory: each instance counts on its own, so with N
 * instances behind a balancer a client gets at most N × 10 tries per window. Good enough for the
 * bar (each instance still locks after 10) and it needs no database write on every failure.
 */
export function createLockout(clock: Clock, o = LOCKOUT): Lockout {
  const clients = new Map<string, { failures: number[]; lockedUntil: number }>();
  const prune = (now: number) => {
    if (clients.size < o.maxTrackedClients) return;
    for (const [ip, c] of clients) if (c.lockedUntil <= now && (c.failures.at(-1) ?? 0) <= now - o.windowMs) clients.delete(ip);
    // Still full of live entries: forget the oldest rather than grow without bound.
    while (clients.size >= o.maxTrackedClients) {
      const first = clients.keys().next();
      if (first.done) break;
      clients.delete(first.value);
    }
  };
  return {
    lockedFor(ip) {
      const c = clients.get(ip);
      const now = clock.now().getTime();
      return c && c.lockedUntil > now ? Math.ceil((c.lockedUntil - now) / 1000) : 0;
    },
    fail(ip) {
      const now = clock.now().getTime();
      prune(now);
      const c = clients.get(ip) ?? { failures: [], lockedUntil: 0 };
      c.failures = c.failures.filter((t) => t > now - o.windowMs);
      c.failures.push(now);
      clients.set(ip, c);
      if (c.failures.length < o.maxFailures) return false;
      c.lockedUntil = now + o.lockMs;
      c.failures = [];
      return true;
    },
    succeed(ip) {
      clients.delete(ip);
    },
  };
}

function operatorFailure(req: FastifyRequest, reply: FastifyReply, services: Services, lockout: Lockout): never {
  const creds = parseBasic(req.headers.authorization);
  // The user name is logged only when it is the real one: people type passwords into user fields.
  const user = creds && secretEquals(creds.user, services.operator.user) ? creds.user : undefined;
  // Only a presented credential counts as a guess: a browser's first, anonymous request (and
  // anyone who can reach the port without credentials) must not lock real operators out.
  const locked = req.headers.authorization === undefined ? false : lockout.fail(req.ip);
  req.log.warn({ audit: 'auth_failed', ip: req.ip, user, scheme: authScheme(req.headers.authorization), route: req.routeOptions.url }, 'operator authentication failed');
  if (locked) {
    req.log.warn({ audit: 'auth_lockout', ip: req.ip, user, locked_for_s: LOCKOUT.lockMs / 1000 }, 'operator login locked for this client after repeated failures');
  }
  reply.header('www-authenticate', 'Basic realm="paylink", charset="UTF-8"');
  throw new AppError('UNAUTHORIZED', 'Operator credentials are required (HTTP Basic).');
}

function authScheme(header: string | undefined): string {
  if (!header) return 'none';
  const scheme = /^([A-Za-z]{1,20})(\s|$)/.exec(header)?.[1];
  return scheme ? scheme.toLowerCase() : 'malformed';
}

export function authHook(services: Services) {
  const lockout = createLockout(services.clock);
  return async function enforceAuth(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const auth = req.routeOptions.config.auth;
    if (auth === 'key') {
      if (!checkApiKey(req, services.config.apiKeys)) throw new AppError('UNAUTHORIZED', 'A valid API key is required (Authorization: Bearer <key> or X-API-Key).');
    } else if (auth === 'op') {
      const lockedFor = lockout.lockedFor(req.ip);
      if (lockedFor > 0) {
        req.log.warn({ audit: 'auth_locked_out', ip: req.ip, retry_after_s: lockedFor }, 'operator request refused: client locked out');
        throw new AppError('TOO_MANY_REQUESTS', 'Too many failed logins from this address; try again later.', { headers: { 'retry-after': String(lockedFor) } });
      }
      const user = checkOperator(req, services.operator);
      if (!user) operatorFailure(req, reply, services, lockout);
      lockout.succeed(req.ip);
      req.operatorUser = user;
    }
  };
}
