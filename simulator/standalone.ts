/** The simulator on its own (`npm run simulator`, `paylink simulator`): its settings from the environment, stopped by a signal. */
import type { MerchantOptions } from './app.js';
import { isHttpUrl } from './lib/validate.js';
import { merchantListProblems, parseMerchantsJson } from './merchant-config.js';
import { startSimulator } from './start.js';
import { DEFAULT_MERCHANT_ID, type MerchantSettings } from './state.js';
import { readSnapBiEnv, type SnapBiOptions } from './snap-bi/index.js';

export interface StandaloneConfig {
  port: number;
  host: string;
  serverKey: string;
  clientKey: string;
  notificationUrl?: string;
  timeScale: number;
  merchants: MerchantOptions[];
  snapBi: SnapBiOptions;
}

const KEY_RE = /^\S+$/;

/**
 * `SIMULATOR_MERCHANTS`: the merchants beside the default one (`SIMULATOR_SERVER_KEY`); none when
 * unset. Their keys and MIDs are checked against the default merchant's (when its keys are valid:
 * a bad one has its own message).
 */
function readMerchants(
  text: string | undefined,
  defaults: MerchantSettings | undefined,
  errors: string[],
): MerchantOptions[] {
  if (text === undefined || text.trim() === '') return [];
  const parsed = parseMerchantsJson(text, 'SIMULATOR_MERCHANTS');
  if ('errors' in parsed) {
    errors.push(...parsed.errors);
    return [];
  }
  const first = defaults ? [{ name: 'the default merchant (SIMULATOR_SERVER_KEY)', settings: defaults }] : [];
  errors.push(...merchantListProblems([...first, ...parsed.merchants]));
  return parsed.merchants.map((m) => m.settings);
}

/** The standalone settings from `SIMULATOR_*` variables, or every problem found, each naming its variable. */
export function readStandaloneConfig(env: NodeJS.ProcessEnv): { config: StandaloneConfig } | { errors: string[] } {
  const errors: string[] = [];
  const portText = env.SIMULATOR_PORT ?? '3001';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    errors.push(`SIMULATOR_PORT must be an integer 0-65535, got '${portText}'`);
  const host = env.SIMULATOR_HOST ?? '127.0.0.1';
  if (host.trim() === '') errors.push('SIMULATOR_HOST must not be empty');
  const serverKey = env.SIMULATOR_SERVER_KEY ?? 'SB-Mid-server-simulator';
  if (!KEY_RE.test(serverKey)) errors.push('SIMULATOR_SERVER_KEY must be non-empty without whitespace');
  const clientKey = env.SIMULATOR_CLIENT_KEY ?? 'SB-Mid-client-simulator';
  if (!KEY_RE.test(clientKey)) errors.push('SIMULATOR_CLIENT_KEY must be non-empty without whitespace');
  const keysValid = KEY_RE.test(serverKey) && KEY_RE.test(clientKey);
  const notificationUrl = env.SIMULATOR_NOTIFICATION_URL || undefined;
  if (notificationUrl !== undefined && !isHttpUrl(notificationUrl))
    errors.push(`SIMULATOR_NOTIFICATION_URL must be an http(s) URL, got '${notificationUrl}'`);
  const defaults = { serverKey, clientKey, merchantId: DEFAULT_MERCHANT_ID };
  const merchants = readMerchants(env.SIMULATOR_MERCHANTS, keysValid ? defaults : undefined, errors);
  const scaleText = env.SIMULATOR_TIME_SCALE ?? '1';
  const timeScale = Number(scaleText);
  if (!Number.isFinite(timeScale) || timeScale <= 0)
    errors.push(`SIMULATOR_TIME_SCALE must be a positive number, got '${scaleText}'`);
  const snapBi = readSnapBiEnv(env, errors);
  if (errors.length > 0) return { errors };
  const config: StandaloneConfig = { port, host, serverKey, clientKey, timeScale, merchants, snapBi };
  if (notificationUrl !== undefined) config.notificationUrl = notificationUrl;
  return { config };
}

async function main(): Promise<void> {
  const parsed = readStandaloneConfig(process.env);
  if ('errors' in parsed) {
    for (const e of parsed.errors) console.error(`simulator: ${e}`);
    process.exit(1);
  }
  const { config } = parsed;
  let stopping = false;
  const running: { close?: () => Promise<void> } = {};
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`simulator: ${signal}, stopping`);
    (running.close ? running.close() : Promise.resolve()).then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('simulator: error while stopping', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const sim = await startSimulator({ ...config, logger: false });
  running.close = sim.close;
  console.log(`Midtrans simulator listening on ${sim.baseUrl}`);
  const wide = config.notificationUrl ?? '(none; set via PUT /_sim/config)';
  console.log(`  merchant ${DEFAULT_MERCHANT_ID}: notifications → ${wide}`);
  for (const m of config.merchants)
    console.log(`  merchant ${m.merchantId}: notifications → ${m.notificationUrl ?? wide}`);
  console.log(`  BI-SNAP notifications → ${config.snapBi.notificationUrl ?? '(none)'}; signing public key:`);
  console.log(sim.snapBiPublicKey);
}

/** Starts the simulator from `SIMULATOR_*` variables; resolves once it listens. A bad setting or a failed start ends the process with 1. */
export async function runStandalone(): Promise<void> {
  try {
    await main();
  } catch (err: unknown) {
    console.error('simulator: failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
