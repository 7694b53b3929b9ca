/**
 * Redaction by value: every secret the process knows (gateway keys, API keys, the operator password,
 * the ERP secret) is replaced wherever it appears in a log line — raw, JSON-escaped, URL-encoded, or
 * base64-encoded as in an HTTP Basic header — so a secret logged by mistake, under any key or inside
 * a message or a stack trace, never reaches a file. Path-based redaction (pino `redact`) handles the
 * fields we know about; this is the net under it.
 */

export const REDACTED = '[redacted]';

/** Shorter values are ignored: scrubbing a 1–3 character "secret" would shred every log line. */
export const MIN_SECRET_LENGTH = 4;

export interface SecretScrubber {
  add(values: ReadonlyArray<string | undefined | null>): void;
  scrub(text: string): string;
  readonly size: number;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every textual form in which `secret` can show up in a JSON log line. */
export function secretForms(secret: string): string[] {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const forms = new Set<string>();
  const add = (f: string) => {
    if (f.length >= MIN_SECRET_LENGTH) forms.add(f);
  };
  add(secret);
  add(JSON.stringify(secret).slice(1, -1));
  add(encodeURIComponent(secret));
  for (const encoded of [b64(`${secret}:`), b64(secret)]) {
    add(encoded);
    add(encoded.replace(/=+$/, ''));
  }
  return [...forms];
}

export function createSecretScrubber(): SecretScrubber {
  const secrets = new Set<string>();
  let pattern: RegExp | undefined;
  return {
    add(values) {
      let changed = false;
      for (const v of values) {
        if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH || secrets.has(v)) continue;
        secrets.add(v);
        changed = true;
      }
      if (!changed) return;
      // Longest first, so a padded base64 form wins over its unpadded prefix.
      const forms = [...new Set([...secrets].flatMap(secretForms))].sort((a, b) => b.length - a.length);
      pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
    },
    scrub(text) {
      return pattern ? text.replace(pattern, REDACTED) : text;
    },
    get size() {
      return secrets.size;
    },
  };
}

const SECRET_NAME = /pass|secret|token|key|sign|auth|credential|session|cookie/;

function looksSecret(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // keep the raw name
  }
  return SECRET_NAME.test(decoded.toLowerCase().replace(/[^a-z]/g, ''));
}

/** The URL with the values of secret-looking query parameters replaced; the path is left alone. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0) return part;
      return looksSecret(part.slice(0, eq)) ? `${part.slice(0, eq)}=${REDACTED}` : part;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|auth|key|token|secret|signature|password|session/i;

/** A copy of the headers with credential-bearing values replaced and absent ones dropped. */
export function redactHeaders(
  headers: Record<string, string | string[] | number | undefined>,
): Record<string, string | string[] | number> {
  const out: Record<string, string | string[] | number> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADER.test(name) ? REDACTED : value;
  }
  return out;
}

/**
 * A copy of a parsed JSON value (a body, a query) with the values of secret-looking fields
 * (password, token, server_key, signature_key…) replaced, at any depth.
 */
export function redactFields<T>(value: T, depth = 0): T {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => redactFields(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = looksSecret(k) ? REDACTED : redactFields(v, depth + 1);
  return out as T;
}

/** A copy of a JSON value with every known secret value (in any form the scrubber knows) replaced in its strings and keys. */
export function scrubValues<T>(value: T, scrubber: SecretScrubber, depth = 0): T {
  if (typeof value === 'string') return scrubber.scrub(value) as T;
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => scrubValues(v, scrubber, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[scrubber.scrub(k)] = scrubValues(v, scrubber, depth + 1);
  return out as T;
}
