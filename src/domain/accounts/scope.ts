/**
 * One account's view of the services: its store view (every lookup by an order id, every new row
 * and every idempotency key within the account), its runtime configuration and its gateway. An
 * action handed these cannot reach another account's payments: another account's order is
 * unknown to it, exactly like an order that does not exist.
 */
import type { Gateway, Gateways } from '../../gateway/port.js';
import type { RuntimeConfigService } from '../../config/runtime.js';
import type { Store } from '../../storage/contract.js';

interface Scoped {
  store: Store;
  runtimeConfig?: RuntimeConfigService;
  gateway?: Gateway;
  gateways?: Gateways;
}

/** Services that use a gateway must carry every account's (`gateways`) to be scoped. */
type Scopable<S> = S extends { gateway: Gateway } ? S & { gateways: Gateways } : S;

/** `services` as `account` sees them; the same object when they are that account's already. */
export function inAccount<S extends Scoped>(services: Scopable<S>, account: string): S {
  if (services.store.account === account) return services;
  if (services.gateway && !services.gateways) throw new Error("services with a gateway need every account's gateways");
  return {
    ...services,
    store: services.store.forAccount(account),
    ...(services.runtimeConfig ? { runtimeConfig: services.runtimeConfig.forAccount(account) } : {}),
    ...(services.gateway && services.gateways ? { gateway: services.gateways.for(account) } : {}),
  };
}
