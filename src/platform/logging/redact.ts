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

export interface FieldCensorOptions {
  /** Field names whose values are replaced on a line's top level and one level down (`*.name`). */
  fields: Iterable<string>;
  /** Header names replaced inside `headers` on the top level and one level down (`*.headers.name`). */
  headers: Iterable<string>;
  /**
   * Top-level keys left alone because a serializer turns them into fixed fields, none of them a
   * secret (the request and reply objects, whose own keys are many getters).
   */
  serialized: Iterable<string>;
}

/** An own copy of `value` with `keys` replaced; an error stays an error (type, message, stack). */
function censoredCopy(value: object, keys: string[]): object {
  const copy: Record<string, unknown> =
    value instanceof Error
      ? (Object.create(Object.getPrototypeOf(value) as object, Object.getOwnPropertyDescriptors(value)) as Record<
          string,
          unknown
        >)
      : { ...value };
  for (const k of keys) Object.defineProperty(copy, k, { value: REDACTED, enumerable: true, writable: true });
  return copy;
}

/**
 * Redaction by name of a log line's fields, as pino's `formatters.log` and `formatters.bindings`
 * (it runs before the serializers; errors are censored before theirs copies their fields). The
 * same fields as pino's `redact` paths would replace, for about a tenth of their cost: with one
 * `*.name` path, pino's redaction runs on every field of every line (a clone and a JSON
 * serialization each), about 20 of the 35–50 µs CPU a line costs (`scripts/log-line-cpu.ts`).
 * Lines with nothing to censor are returned as they are; the caller's objects are never changed.
 */
export function createFieldCensor(o: FieldCensorOptions): <T extends Record<string, unknown>>(line: T) => T {
  const fields = new Set(o.fields);
  const headers = new Set(o.headers);
  const serialized = new Set(o.serialized);
  /** The keys of `value` to replace: secret fields, and `headers` when a credential header is in it. */
  const hits = (value: object, inHeaders: boolean): string[] | undefined => {
    let found: string[] | undefined;
    const record = value as Record<string, unknown>;
    // for…in, as the error serializer and pino read fields (inherited enumerable ones included).
    for (const k in record) {
      const v = record[k];
      if (v === undefined) continue;
      if (inHeaders ? headers.has(k) : fields.has(k)) (found ??= []).push(k);
    }
    return found;
  };
  const censorHeaders = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value)) return value;
    const keys = hits(value, true);
    return keys ? censoredCopy(value, keys) : value;
  };
  /** A top-level value: its secret fields replaced, and its `headers`' credentials. */
  const censorChild = (value: object): object => {
    let copy: Record<string, unknown> | undefined;
    const secret = hits(value, false);
    if (secret) copy = censoredCopy(value, secret) as Record<string, unknown>;
    const h = (value as Record<string, unknown>).headers;
    if (h !== undefined && !secret?.includes('headers')) {
      const censored = censorHeaders(h);
      if (censored !== h) {
        copy ??= censoredCopy(value, []) as Record<string, unknown>;
        Object.defineProperty(copy, 'headers', { value: censored, enumerable: true, writable: true });
      }
    }
    return copy ?? value;
  };
  return <T extends Record<string, unknown>>(line: T): T => {
    let out: Record<string, unknown> | undefined;
    for (const k in line) {
      if (!Object.prototype.hasOwnProperty.call(line, k) || serialized.has(k)) continue;
      const v: unknown = line[k];
      let w = v;
      if (v === undefined) continue;
      if (fields.has(k)) w = REDACTED;
      else if (k === 'headers') w = censorHeaders(v);
      else if (typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v)) w = censorChild(v);
      if (w !== v) (out ??= { ...line })[k] = w;
    }
    return (out ?? line) as T;
  };
}
