/**
 * In simulator mode the embedded simulator serves every account in simulator mode as a merchant of
 * its own (its server key, MID and ledger, notifying that account's URL). `default` is the
 * simulator's default merchant, keyed from the environment, and is not registered here.
 *
 * Such an account needs its own server key and MID: without them the simulator could tell its
 * calls from another merchant's only by sharing that merchant's ledger and notifications, so the
 * configuration is refused (400) rather than a key generated that no operator chose.
 */
import type { Deps, EmbeddedMerchant } from '../../types.js';
import { applyOverrides } from '../../config/runtime.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';
import type { RuntimeConfig } from '../../model/runtime-config.js';
import type { FieldError } from '../../platform/errors.js';

type EmbeddedDeps = Deps<'embeddedGateway' | 'logger' | 'runtimeConfig'>;

function served(services: Deps<'embeddedGateway'>, account: string, effective: RuntimeConfig): boolean {
  return (
    services.embeddedGateway !== undefined && account !== DEFAULT_ACCOUNT && effective.gateway.mode === 'simulator'
  );
}

function merchantOf(effective: RuntimeConfig): EmbeddedMerchant | undefined {
  const { server_key: serverKey, client_key: clientKey, merchant_id: merchantId } = effective.gateway;
  if (!serverKey || !merchantId) return undefined;
  return clientKey ? { serverKey, clientKey, merchantId } : { serverKey, merchantId };
}

/** Why the embedded simulator could not serve `account` with this configuration in effect (none outside simulator mode). */
export function embeddedMerchantProblems(
  services: Deps<'embeddedGateway'>,
  account: string,
  effective: RuntimeConfig,
): FieldError[] {
  const gateway = services.embeddedGateway;
  if (!gateway || !served(services, account, effective)) return [];
  const out: FieldError[] = [];
  if (!effective.gateway.server_key)
    out.push({
      path: 'gateway.server_key',
      message:
        "is required in simulator mode: the embedded simulator serves each account as a merchant of its own, chosen by the server key of the account's calls",
    });
  if (!effective.gateway.merchant_id)
    out.push({
      path: 'gateway.merchant_id',
      message:
        "is required in simulator mode: the embedded simulator names the account's merchant by its MID (such as G123456789)",
    });
  const merchant = merchantOf(effective);
  if (!merchant) return out;
  return gateway
    .merchantProblems(account, merchant)
    .map((p) => ({ path: p.field ? `gateway.${p.field}` : 'gateway', message: p.message }));
}

/**
 * Makes the embedded simulator serve `account` as its configuration now says: as a merchant while
 * it is in simulator mode with a server key and MID, else not at all. A refusal (a key or MID
 * taken since the configuration was checked) is logged, not thrown: the configuration is saved.
 */
export async function syncEmbeddedMerchant(services: EmbeddedDeps, account: string): Promise<void> {
  const gateway = services.embeddedGateway;
  if (!gateway || account === DEFAULT_ACCOUNT) return;
  const rc = services.runtimeConfig.forAccount(account);
  const effective = applyOverrides(rc.defaults(), (await rc.overrides()).document);
  const merchant = served(services, account, effective) ? merchantOf(effective) : undefined;
  if (!merchant) {
    gateway.dropMerchant(account);
    return;
  }
  try {
    gateway.merchantFor(account, merchant);
  } catch (err) {
    services.logger.warn(
      { account, err: err instanceof Error ? err.message : String(err) },
      `the embedded simulator does not serve account ${account}: its merchant was refused`,
    );
  }
}

/** At start: every enabled account other than `default` served as its configuration says. */
export async function registerEmbeddedMerchants(services: EmbeddedDeps & Deps<'store'>): Promise<void> {
  if (!services.embeddedGateway) return;
  for (const a of await services.store.accounts.list())
    if (a.disabledAt === null && a.id !== DEFAULT_ACCOUNT) await syncEmbeddedMerchant(services, a.id);
}
