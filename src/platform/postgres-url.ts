/**
 * The TLS a PostgreSQL `DATABASE_URL` asks for, with libpq's meaning of `sslmode` and
 * `sslrootcert`, taken out of the URL so the driver cannot give them another meaning (pg's own
 * parser treats `require` as `verify-full`). Pure; problems never echo the URL (it holds a password).
 *
 * - no `sslmode`, or `disable`: no TLS (the embedded default: a database on the same host or network).
 * - `require`: encrypted, the server's certificate not checked, unless `sslrootcert` is given, which
 *   makes it `verify-ca` (as libpq does).
 * - `verify-ca`: the certificate must chain to `sslrootcert` (or the system's roots).
 * - `verify-full`: `verify-ca`, and the certificate must name the host of the URL.
 * `prefer` and `allow` are refused: they fall back to plain text when TLS fails, silently.
 */
export const PG_SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type PgSslMode = (typeof PG_SSL_MODES)[number];

export interface PgTls {
  mode: PgSslMode;
  /** `sslrootcert`: a PEM file of the certificate authorities to trust; `system` or unset: Node's own roots. */
  rootCert?: string;
}

export interface PgTarget {
  /** The URL without its TLS parameters, for the driver. */
  url: string;
  tls: PgTls;
  /** `host:port`, for messages (never the user or password). */
  where: string;
}

const TLS_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword', 'uselibpqcompat', 'ssl'];

/** The URL pg is given and the TLS asked for; a string is the problem (prefixed with nothing: the caller names the variable). */
export function postgresTarget(raw: string): PgTarget | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a postgres:// URL';
  }
  const q = url.searchParams;
  const asked = q.get('sslmode') ?? 'disable';
  const mode = PG_SSL_MODES.find((m) => m === asked);
  if (mode === undefined)
    return `sslmode must be one of ${PG_SSL_MODES.join(', ')} (prefer and allow fall back to plain text)`;
  if (q.has('sslcert') || q.has('sslkey') || q.has('sslpassword'))
    return 'sslcert, sslkey and sslpassword (client certificates) are not supported';
  if (q.has('ssl') || q.has('uselibpqcompat'))
    return 'set TLS with sslmode (and sslrootcert), not ssl or uselibpqcompat';
  const rootCert = q.get('sslrootcert') ?? undefined;
  if (rootCert !== undefined && (rootCert === '' || (rootCert !== 'system' && !rootCert.startsWith('/'))))
    return 'sslrootcert must be an absolute file path (or system)';
  if (rootCert !== undefined && mode === 'disable')
    return 'sslrootcert needs sslmode require, verify-ca or verify-full';
  const untouched = !TLS_PARAMS.some((p) => q.has(p));
  for (const p of TLS_PARAMS) q.delete(p);
  const effective: PgSslMode = mode === 'require' && rootCert !== undefined ? 'verify-ca' : mode;
  const port = url.port || '5432';
  return {
    url: untouched ? raw : url.toString(),
    tls: { mode: effective, ...(rootCert !== undefined && rootCert !== 'system' ? { rootCert } : {}) },
    where: `${url.hostname || 'localhost'}:${port}`,
  };
}
