import type { Engine } from './engine.js';
import type { Faults } from './faults.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Notifier } from './notifier.js';
import type { Ledger } from './state.js';

export interface SimConfig {
  notificationUrl: string | undefined;
  timeScale: number;
  baseUrl: string;
}

export interface SimContext {
  serverKey: string;
  /** Accepted as `client_key` on the browser-side card paths (/v2/token, /v2/card/register, /v2/point_inquiry). */
  clientKey: string;
  ledger: Ledger;
  engine: Engine;
  notifier: Notifier;
  idempotency: IdempotencyStore;
  config: SimConfig;
  faults: Faults;
  defaultFaults(): Faults;
  random(): number;
  /** Releases for requests held open by the timeout fault, run when the simulator stops. */
  holds: Set<() => void>;
}
