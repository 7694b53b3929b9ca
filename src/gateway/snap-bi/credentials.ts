/** The BI-SNAP credentials of a runtime config, and the host of each gateway mode. */
import type { GatewayMode, RuntimeConfig } from '../../model/runtime-config.js';
import { GatewayError } from '../port.js';
import type { SnapBiCredentials } from './client.js';

export const SNAP_BI_HOSTS: Record<Exclude<GatewayMode, 'simulator'>, string> = {
  sandbox: 'https://merchants.sbx.midtrans.com',
  production: 'https://merchants.midtrans.com',
};

/** `gateway.snap_bi.base_url`, else the mode's host (in simulator mode the simulator, which serves both APIs). */
export function snapBiBaseUrl(s: RuntimeConfig): string {
  const b = s.gateway.snap_bi.base_url;
  if (b) return b.replace(/\/+$/, '');
  return s.gateway.mode === 'simulator' ? s.gateway.api_base_url : SNAP_BI_HOSTS[s.gateway.mode];
}

/** Thrown as unavailable when a credential is missing (the runtime config refuses methods without them). */
export function snapBiCredentials(s: RuntimeConfig): SnapBiCredentials {
  const b = s.gateway.snap_bi;
  const { client_id, client_secret, partner_id, channel_id, private_key } = b;
  if (!client_id || !client_secret || !partner_id || !channel_id || !private_key)
    throw new GatewayError('unavailable', 'BI-SNAP credentials are not configured');
  return {
    baseUrl: snapBiBaseUrl(s),
    clientId: client_id,
    clientSecret: client_secret,
    partnerId: partner_id,
    channelId: channel_id,
    privateKey: private_key,
  };
}
