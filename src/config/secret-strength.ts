/**
 * Weak secrets: the one judgement of the environment's secrets, used three ways. Production
 * refuses to start on any of them (env.ts), development says each one once at start-up
 * (server.ts), and `paylink check-config` lists them. Each problem is one line naming the
 * variable, never its value.
 */
import { parseEncryptionKey } from '../platform/secret-box.js';

/** Shared secrets (API keys, the ERP webhook secret) are at least this long: 32 random characters. */
export const SHARED_SECRET_MIN_LENGTH = 32;
/** The operator password is typed by a person: shorter than a shared secret, still not guessable. */
export const OPERATOR_PASSWORD_MIN_LENGTH = 12;
/**
 * Fewer distinct characters than this is not random, whatever the length ('aaaa…', 'abab…',
 * '0000…1111'): 32 random hex characters hold about 14 distinct ones, base64 about 25.
 */
const MIN_DISTINCT_CHARACTERS = 8;
/** The same for the encryption key's 32 bytes (random: about 30 distinct byte values). */
const MIN_DISTINCT_KEY_BYTES = 16;

/**
 * Values published in this repository's documentation and examples: anyone can read them. The
 * `CHANGE-ME` placeholders of `.env.example` are matched as a word, whatever surrounds them.
 */
const PLACEHOLDER = /change-?me/i;
const PUBLISHED_VALUES: ReadonlySet<string> = new Set([
  // docs/first-payment.md: the receiver and the service of the first payment share it.
  'whsec_Zmlyc3QtcGF5bWVudC1kZW1vLXNlY3JldA==',
]);

const HOW = 'e.g. `openssl rand -hex 32`';

/** The secrets of the configuration (`Config` has this shape; named here so env.ts can use this module). */
export interface ConfiguredSecrets {
  apiKeys: string[];
  erp: { webhookSecret?: string };
  metricsToken?: string;
  operator: { pass?: string };
  configEncryption: { key?: string };
}

/** What is wrong with one secret's value, in words, or undefined; `min` is its shortest length. */
function weakness(value: string, min: number): string | undefined {
  if (PLACEHOLDER.test(value) || PUBLISHED_VALUES.has(value))
    return 'is an example value published in the documentation';
  // A Standard Webhooks secret's strength is the key after its `whsec_` prefix.
  const key = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  if (key.length < min) return `is shorter than ${min} characters`;
  if (new Set(key).size < MIN_DISTINCT_CHARACTERS) return 'is not random (too few distinct characters)';
  return undefined;
}

export interface WeakSecret {
  /** The environment variable, as the operator sets it. */
  variable: string;
  /** The problem in words, naming the variable and never its value. */
  message: string;
}

/**
 * Every weak secret of the configuration, one each. `API_KEYS` names the key by its position
 * in the list; log_pass is judged as given, whichever spelling (`log_pass`/`LOG_PASS`) set it.
 */
export function weakSecrets(c: ConfiguredSecrets): WeakSecret[] {
  const out: WeakSecret[] = [];
  const judge = (name: string, value: string | undefined, min: number, remedy: string) => {
    const w = value === undefined ? undefined : weakness(value, min);
    if (w) out.push({ variable: name.split(' ')[0] ?? name, message: `${name} ${w}: ${remedy}` });
  };
  const sharedRemedy = (what: string, how: string) =>
    `use a random ${what} of ${SHARED_SECRET_MIN_LENGTH} characters or more (${how})`;
  c.apiKeys.forEach((key, i) =>
    judge(
      c.apiKeys.length === 1 ? 'API_KEYS' : `API_KEYS (key ${i + 1} of ${c.apiKeys.length})`,
      key,
      SHARED_SECRET_MIN_LENGTH,
      sharedRemedy('key', HOW),
    ),
  );
  judge(
    'ERP_WEBHOOK_SECRET',
    c.erp.webhookSecret,
    SHARED_SECRET_MIN_LENGTH,
    sharedRemedy('secret', 'e.g. `whsec_` followed by `openssl rand -base64 24`'),
  );
  // METRICS_TOKEN's length (16 or more) is the schema's; only a guessable token is judged here.
  judge('METRICS_TOKEN', c.metricsToken, 0, `use a random token (${HOW})`);
  judge(
    'log_pass',
    c.operator.pass,
    OPERATOR_PASSWORD_MIN_LENGTH,
    `use a password of ${OPERATOR_PASSWORD_MIN_LENGTH} characters or more that no one could guess`,
  );
  const key = c.configEncryption.key === undefined ? undefined : parseEncryptionKey(c.configEncryption.key);
  if (key && new Set(key).size < MIN_DISTINCT_KEY_BYTES)
    out.push({
      variable: 'CONFIG_ENCRYPTION_KEY',
      message: `CONFIG_ENCRYPTION_KEY is not random (too few distinct bytes): use a random key (${HOW})`,
    });
  return out;
}

/** The weak secrets as problems, one line each (production's refusal, check-config's list). */
export function weakSecretProblems(c: ConfiguredSecrets): string[] {
  return weakSecrets(c).map((w) => w.message);
}
