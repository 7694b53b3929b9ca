/**
 * `paylink check-config`: the go-live checklist, as far as the environment can show it. It applies
 * the production rules whatever NODE_ENV says (so a staging shell sees what production would
 * refuse), adds the checks that only matter once real payments flow, and lists what no command can
 * see (the gateway dashboard, the ERP's copy of the keys, backups, metrics) for a person to confirm.
 */
import { ConfigError, loadConfig, pemOrFile, type Config } from '../config/env.js';
import { isPrivateHost } from '../platform/url-policy.js';
import { resolveSecretFiles } from '../config/secret-files.js';
import { privateKeyProblem, publicKeyProblem } from '../platform/rsa-keys.js';

export interface CheckConfigOptions {
  /** A staging environment: sandbox mode and sandbox keys are accepted. */
  allowSandbox?: boolean;
}

export interface CheckConfigReport {
  problems: string[];
  /** What a person confirms by hand before going live. */
  toConfirm: string[];
  /** The configuration as production reads it, when it is valid. */
  config?: Config;
}

const present = (env: Record<string, string | undefined>, name: string): boolean => (env[name] ?? '') !== '';

export function checkConfig(given: Record<string, string | undefined>, o: CheckConfigOptions = {}): CheckConfigReport {
  // The checks below read secrets by name: those given as NAME_FILE are read first.
  const { env, problems } = resolveSecretFiles(given);
  if (env.NODE_ENV !== 'production')
    problems.push('NODE_ENV must be production: it turns every insecure default into a refusal to start');
  let config: Config | undefined;
  try {
    config = loadConfig({ ...env, NODE_ENV: 'production' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }

  if (!present(env, 'MIDTRANS_SERVER_KEY') && !problems.some((p) => p.startsWith('MIDTRANS_SERVER_KEY')))
    problems.push('MIDTRANS_SERVER_KEY is required: the production server key from the Midtrans dashboard');
  if (!present(env, 'PUBLIC_BASE_URL')) {
    // Unset, it defaults to http://HOST:PORT, which the production rules already refuse as not https: one message says it.
    const i = problems.findIndex((p) => p.startsWith('PUBLIC_BASE_URL must use https'));
    if (i >= 0) problems.splice(i, 1);
    problems.push(
      'PUBLIC_BASE_URL is required: the gateway sends its notifications to PUBLIC_BASE_URL/webhook/midtrans, and payment pages return there',
    );
  } else {
    const host = hostOf(env.PUBLIC_BASE_URL ?? '');
    if (host !== undefined && isPrivateHost(host))
      problems.push(
        'PUBLIC_BASE_URL names a loopback or private address: the gateway cannot reach it from the internet',
      );
  }

  const mode = config?.gateway.mode ?? env.MIDTRANS_MODE;
  if (mode === 'sandbox' && !o.allowSandbox)
    problems.push(
      'MIDTRANS_MODE is sandbox (the default when a server key is set): real payments need MIDTRANS_MODE=production and production keys (--allow-sandbox checks a staging environment)',
    );
  if (mode === 'production' && (env.MIDTRANS_SERVER_KEY ?? '').startsWith('SB-'))
    problems.push(
      'MIDTRANS_SERVER_KEY is a sandbox key (SB-…) but MIDTRANS_MODE is production: use the production server key',
    );
  if (mode === 'production' && (env.MIDTRANS_CLIENT_KEY ?? '').startsWith('SB-'))
    problems.push('MIDTRANS_CLIENT_KEY is a sandbox key (SB-…) but MIDTRANS_MODE is production');

  // The keys are judged even when the rest of the environment is not valid; an unreadable file is loadConfig's problem.
  const keyText = (name: string) => (present(env, name) ? pemOrFile(name, env[name], process.cwd(), []) : undefined);
  const privatePem = keyText('MIDTRANS_SNAP_BI_PRIVATE_KEY');
  const privateProblem = privatePem === undefined ? undefined : privateKeyProblem(privatePem);
  if (privateProblem) problems.push(`MIDTRANS_SNAP_BI_PRIVATE_KEY ${privateProblem}`);
  const publicPem = keyText('MIDTRANS_SNAP_BI_PUBLIC_KEY');
  const publicProblem = publicPem === undefined ? undefined : publicKeyProblem(publicPem);
  if (publicProblem) problems.push(`MIDTRANS_SNAP_BI_PUBLIC_KEY ${publicProblem}`);

  // A value set through /api/config overrides these, but lives in the database: this check reads the environment only.
  if (!present(env, 'ERP_NOTIFY_URL'))
    problems.push('ERP_NOTIFY_URL is not set: payment events would wait in the outbox and never reach the ERP');
  if (!present(env, 'ERP_WEBHOOK_SECRET'))
    problems.push('ERP_WEBHOOK_SECRET is not set: the ERP could not verify that an event comes from paylink');

  // The service speaks plain HTTP; an https public URL means a TLS proxy in front of it.
  if ((env.PUBLIC_BASE_URL ?? '').startsWith('https://') && !present(env, 'TRUST_PROXY')) {
    problems.push(
      "TRUST_PROXY is not set while PUBLIC_BASE_URL is https (so a TLS proxy sits in front): every client would share the proxy's address for lockouts and throttles; name the proxy (e.g. TRUST_PROXY=loopback)",
    );
  }

  const base = (config?.publicBaseUrl ?? env.PUBLIC_BASE_URL ?? 'PUBLIC_BASE_URL').replace(/\/+$/, '');
  const toConfirm = [
    `the Midtrans dashboard (Settings → Configuration → Payment Notification URL) names ${base}/webhook/midtrans`,
    'the ERP holds one of the API_KEYS, the ERP_WEBHOOK_SECRET to verify events, and accepts deliveries at ERP_NOTIFY_URL',
    config?.database.kind === 'postgres'
      ? 'pg_dump of the database is scheduled and a restore was tried'
      : '`paylink backup FILE` is scheduled (and copied off the machine) and a restore was tried',
    present(env, 'METRICS_TOKEN')
      ? "GET /metrics is scraped with Authorization: Bearer METRICS_TOKEN and GET /health/ready is the load balancer's check"
      : "GET /metrics is scraped (set METRICS_TOKEN so the scraper needs no operator password and can never be locked out) and GET /health/ready is the load balancer's check",
    'CONFIG_ENCRYPTION_KEY and the operator password are kept where the team can find them',
  ];
  // The gateway's notifier speaks TLS up to 1.2 only: a TLS-1.3-only proxy passes every browser and
  // curl check while no notification ever arrives. Nothing here can see the proxy, so it is asked.
  const host = hostOf(env.PUBLIC_BASE_URL ?? '');
  if ((env.PUBLIC_BASE_URL ?? '').startsWith('https://') && host !== undefined)
    toConfirm.push(
      `the TLS proxy in front of ${host} keeps TLS 1.2 enabled (not TLS 1.3 only): the Midtrans notifier speaks TLS up to 1.2, and a TLS-1.3-only endpoint silently receives no notifications (check: openssl s_client -connect ${host}:443 -tls1_2)`,
    );
  return { problems, toConfirm, config };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}
