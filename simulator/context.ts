import type { Faults } from './faults.js';
import type { Merchants } from './merchants.js';
import type { Notifier } from './notifier.js';
import type { RequestLog } from './state.js';

export interface SimConfig {
  /** Where notifications go for the default merchant, and for any merchant without a URL of its own. */
  notificationUrl: string | undefined;
  timeScale: number;
  baseUrl: string;
}

export interface SimContext {
  /** The gateway's merchants, each with its keys and ledger; the first is the default one. */
  merchants: Merchants;
  notifier: Notifier;
  requests: RequestLog;
  config: SimConfig;
  faults: Faults;
  defaultFaults(): Faults;
  random(): number;
  /** Releases for requests held open by the timeout fault, run when the simulator stops. */
  holds: Set<() => void>;
}
