/**
 * Cross-site request refusal for operator routes that change something (every method but GET,
 * HEAD and OPTIONS), CSRF token or not: a browser that holds the operator's Basic credentials
 * sends them with a form or fetch from any site, and some of these routes take no body at all
 * (`/api/deliveries/{id}/retry`, `/test-notify-erp`). Browsers say where a request comes from:
 * - `Sec-Fetch-Site` (set by the browser, not by the page): `same-origin` or `none` (typed by the
 *   user) is allowed; `same-site` and `cross-site` are refused;
 * - without it (older browsers), `Origin`: allowed when its host is the one the request was sent
 *   to (`Host`) or the one of PUBLIC_BASE_URL; `null` (sandboxed or privacy-stripped) and any other
 *   host are refused;
 * - neither header: not a browser (curl, the ERP, scripts), which must send the credentials
 *   itself: allowed.
 */
import type { FastifyRequest } from 'fastify';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function hostOf(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** Why `req` is refused as a cross-site request, or undefined when it is allowed. */
export function crossSiteRefusal(req: FastifyRequest, publicBaseUrl: string): string | undefined {
  if (SAFE_METHODS.has(req.method)) return undefined;
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') {
    return site === 'same-origin' || site === 'none'
      ? undefined
      : `the browser reports a ${site} request (Sec-Fetch-Site)`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const from = hostOf(origin);
  const to = [hostOf(`http://${req.headers.host ?? ''}`), hostOf(publicBaseUrl)];
  if (from !== undefined && to.includes(from)) return undefined;
  return 'the request comes from another site (Origin)';
}
