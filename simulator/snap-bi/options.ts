/** The simulator's BI-SNAP merchant: its credentials, the key it verifies tokens with, its own signing key. */
export interface SnapBiOptions {
  clientId: string;
  clientSecret: string;
  partnerId: string;
  /** The merchant's RSA public key (PEM or a file path): verifies access-token requests. Unset: every token request is refused. */
  merchantPublicKey?: string;
  /** The simulator's RSA private key (PEM or a file path) for its notifications; unset: generated at start. */
  privateKey?: string;
  /** The merchant's notification base URL; the relative paths (`/v1.0/debit/notify`, …) are appended. */
  notificationUrl?: string;
  /** Access-token lifetime in seconds (the gateway's 900 by default). */
  tokenLifetimeS?: number;
}

export const SNAP_BI_DEFAULTS = {
  clientId: 'simulator-snap-bi-client',
  clientSecret: 'simulator-snap-bi-secret',
  partnerId: 'simulator-partner',
} as const;

/** `SIMULATOR_SNAP_BI_*` of the standalone simulator, or the problems found. */
export function readSnapBiEnv(env: NodeJS.ProcessEnv, errors: string[]): SnapBiOptions {
  const o: SnapBiOptions = {
    clientId: env.SIMULATOR_SNAP_BI_CLIENT_ID || SNAP_BI_DEFAULTS.clientId,
    clientSecret: env.SIMULATOR_SNAP_BI_CLIENT_SECRET || SNAP_BI_DEFAULTS.clientSecret,
    partnerId: env.SIMULATOR_SNAP_BI_PARTNER_ID || SNAP_BI_DEFAULTS.partnerId,
  };
  for (const [name, v] of [
    ['SIMULATOR_SNAP_BI_CLIENT_ID', o.clientId],
    ['SIMULATOR_SNAP_BI_CLIENT_SECRET', o.clientSecret],
    ['SIMULATOR_SNAP_BI_PARTNER_ID', o.partnerId],
  ] as const)
    if (!/^\S+$/.test(v)) errors.push(`${name} must be non-empty without whitespace`);
  if (env.SIMULATOR_SNAP_BI_MERCHANT_PUBLIC_KEY) o.merchantPublicKey = env.SIMULATOR_SNAP_BI_MERCHANT_PUBLIC_KEY;
  if (env.SIMULATOR_SNAP_BI_PRIVATE_KEY) o.privateKey = env.SIMULATOR_SNAP_BI_PRIVATE_KEY;
  const url = env.SIMULATOR_SNAP_BI_NOTIFICATION_URL;
  if (url) {
    if (/^https?:\/\/\S+$/.test(url)) o.notificationUrl = url.replace(/\/+$/, '');
    else errors.push(`SIMULATOR_SNAP_BI_NOTIFICATION_URL must be an http(s) URL, got '${url}'`);
  }
  return o;
}
