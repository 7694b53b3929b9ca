/** Gauges read from the database when `/metrics` is scraped, not on every request: one indexed count each. */
import type { Deps } from '../../types.js';

/** `paylink_payments_pending_past_expiry`: payments the gateway should have closed, still pending here. */
export async function refreshPaymentGauges(deps: Deps<'clock' | 'metrics' | 'store'>): Promise<void> {
  const n = await deps.store.transactions.countPendingPastExpiry(deps.clock.now().toISOString());
  deps.metrics.paymentsPendingPastExpiry.set(n);
}
