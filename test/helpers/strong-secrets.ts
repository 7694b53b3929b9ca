/**
 * Secrets strong enough for production's check (src/config/secret-strength.ts), generated once
 * with `openssl rand`: the one source for every test that starts or checks a production
 * configuration. They are public (this file is), so they only ever guard test processes.
 */
export const STRONG = {
  /** `openssl rand -hex 20`. */
  apiKey: '9274ee59e8f90e34834aaa01b148093f7d8bd295',
  /** A second key, for lists of keys. */
  apiKey2: '54edad946e3857b27fcc1a5a1ff09743060399c5',
  /** `whsec_` and `openssl rand -base64 24`. */
  erpWebhookSecret: 'whsec_zKjemqbQbB5gjkw/stX7goPh/4/wYF9+',
  /** `openssl rand -hex 32`. */
  configEncryptionKey: '617f82c06a4a443bdb1877cce28ff7dc745dda4ecdfc2e208f4918e57d03f593',
  /** `openssl rand -base64 18`. */
  operatorPass: 'MMBlPYAzQ3lWo0axUTaPFwgI',
  /** `openssl rand -hex 24`. */
  metricsToken: '2246a3b5b8df366cb790c311f6c3f6cd8fabf2ebab9c78c5',
} as const;

/** The secret variables production requires, with strong values. */
export const STRONG_PRODUCTION_SECRETS = {
  log_pass: STRONG.operatorPass,
  API_KEYS: STRONG.apiKey,
  CONFIG_ENCRYPTION_KEY: STRONG.configEncryptionKey,
} as const;
