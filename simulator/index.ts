/**
 * The simulator's one entry for everything outside it: paylink's simulator mode (`src/server.ts`),
 * the `paylink simulator` command (`src/cli.ts`) and the tests' helpers. Lint keeps `src/` to this
 * file, so the simulator's insides can change without paylink noticing.
 */
export { buildSimulator, type BuiltSimulator, type MerchantOptions, type SimulatorOptions } from './app.js';
export { startSimulator, type RunningSimulator } from './start.js';
export { readStandaloneConfig, runStandalone, type StandaloneConfig } from './standalone.js';
export { midtransSignature } from './lib/format.js';
export { retriesFor, RETRY_INTERVALS_MIN, type NotificationRecord, type Attempt } from './notifier.js';
export type { Faults, CoreHttpStatus } from './faults.js';
export type { SnapBiOptions } from './snap-bi/index.js';
