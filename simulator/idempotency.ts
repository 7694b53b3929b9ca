/** Gateway Idempotency-Key semantics (api-headers): ≤46 chars, 5 minutes, successes only, global namespace. */
export const IDEMPOTENCY_MAX_LEN = 46;
export const IDEMPOTENCY_TTL_MS = 5 * 60_000;

export interface StoredResponse {
  status: number;
  body: string;
  contentType: string;
}

export class IdempotencyStore {
  private done = new Map<string, StoredResponse & { expires: number }>();
  private inFlight = new Set<string>();

  /** Keys longer than the limit are ignored by the gateway rather than rejected. */
  static usable(key: string | string[] | undefined): string | undefined {
    if (typeof key !== 'string' || key.length === 0 || key.length > IDEMPOTENCY_MAX_LEN) return undefined;
    return key;
  }

  lookup(key: string, now = Date.now()): StoredResponse | 'in_flight' | undefined {
    const hit = this.done.get(key);
    if (hit && hit.expires > now) return hit;
    if (hit) this.done.delete(key);
    return this.inFlight.has(key) ? 'in_flight' : undefined;
  }

  begin(key: string): void {
    this.inFlight.add(key);
  }

  finish(key: string, res: StoredResponse | undefined, now = Date.now()): void {
    this.inFlight.delete(key);
    if (res) this.done.set(key, { ...res, expires: now + IDEMPOTENCY_TTL_MS });
  }

  clear(): void {
    this.done.clear();
    this.inFlight.clear();
  }
}
