/**
 * The direction of dependencies in src/, checked by `npm run lint` (dependency-cruiser, over src/,
 * bench/, scripts/ and test/ but its fixtures). Type-only imports count: a cycle through types is
 * still a cycle for a reader.
 *
 *   server.ts → services.ts (composition root) → app.ts → http/ → domain/ → gateway/ · storage/ · erp/
 *   workers: reconcile/ → domain/;  outbox/ → erp/ · storage/;  retention/ → storage/
 *   shared leaves used by all: types.ts, errors.ts, clock.ts, config.ts, settings.ts, metrics.ts,
 *   url-policy.ts, secret-box.ts, secrets.ts, logging/
 */
const adapters = '^src/(gateway|storage|erp)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Import cycles make the map unreadable: move the shared part down (a types module, a leaf).',
      from: { path: '^(src|bench|scripts|test)/' },
      to: { circular: true },
    },
    {
      name: 'adapters-below-domain',
      severity: 'error',
      comment: 'gateway/, storage/ and erp/ are below domain/: they never import domain/, http/, the workers or the service types.',
      from: { path: adapters },
      to: { path: '^src/(domain|http|outbox|reconcile|retention)/|^src/(app|services|server|types)\\.ts$' },
    },
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: 'domain/ is called by http/ and the workers, never the other way round.',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|outbox|reconcile|retention)/|^src/(app|services|server)\\.ts$' },
    },
    {
      name: 'workers-below-http',
      severity: 'error',
      comment: 'The outbox worker and the reconciler do not know about HTTP routes or the app.',
      from: { path: '^src/(outbox|reconcile|retention)/' },
      to: { path: '^src/http/|^src/(app|services|server)\\.ts$' },
    },
    {
      name: 'leaves-import-no-layer',
      severity: 'error',
      comment: 'Shared leaf modules are imported by every layer, so they import none above the adapters.',
      from: { path: '^src/(errors|clock|config|metrics|url-policy|operator-credentials|secret-box|secrets)\\.ts$|^src/logging/' },
      to: { path: '^src/(domain|http|gateway|storage|erp|outbox|reconcile)/|^src/(app|services|server|types|settings)\\.ts$' },
    },
    {
      name: 'composition-root-only-from-server',
      severity: 'error',
      comment: 'services.ts wires everything; only server.ts, the bench and the tests build services. Import types from types.ts.',
      from: { path: '^src/', pathNot: '^src/server\\.ts$' },
      to: { path: '^src/services\\.ts$' },
    },
    {
      name: 'tests-build-services-in-helpers',
      severity: 'error',
      comment: 'Tests build services through test/helpers/ (appOver, makeTestApp, …), so a change to the wiring lands in one place.',
      from: { path: '^test/', pathNot: '^test/helpers/' },
      to: { path: '^src/services\\.ts$' },
    },
    {
      name: 'http-only-from-app',
      severity: 'error',
      comment: 'Routes are registered by app.ts; nothing below imports http/.',
      from: { path: '^src/', pathNot: '^src/(http/|app\\.ts$|server\\.ts$)' },
      to: { path: '^src/http/' },
    },
    {
      name: 'storage-internals-stay-in-storage',
      severity: 'error',
      comment: 'Outside storage/, code uses the Store interface (store.ts) and the opener (kysely-store.ts), never repos or the schema.',
      from: { path: '^src/', pathNot: '^src/storage/' },
      to: { path: '^src/storage/', pathNot: '^src/storage/(store|kysely-store)\\.ts$' },
    },
    {
      name: 'store-opened-by-server-only',
      severity: 'error',
      comment: 'Only server.ts opens the database (kysely-store.ts, with its query builder); everything else gets the Store interface.',
      from: { path: '^src/', pathNot: '^src/(storage/|server\\.ts$)' },
      to: { path: '^src/storage/kysely-store\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
