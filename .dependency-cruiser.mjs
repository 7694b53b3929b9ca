/**
 * The direction of dependencies in src/, checked by `npm run lint` (dependency-cruiser, over src/,
 * bench/, scripts/ and test/ but its fixtures). Type-only imports count: a cycle through types is
 * still a cycle for a reader.
 *
 *   cli.ts (the paylink command) → server.ts → services.ts (composition root) → app.ts → http/ → domain/ → gateway/ · storage/ · erp/
 *   cli/ (migrate, backup, check-config) → storage/kysely-store.ts · config.ts
 *   workers: reconcile/ → domain/;  outbox/ → erp/ · storage/;  retention/ → storage/
 *   model/: the plain types every layer shares; it imports nothing else of src/.
 *   shared leaves used by all: errors.ts, clock.ts, config.ts, metrics.ts, time.ts, version.ts,
 *   url-policy.ts, connect-guard.ts, private-files.ts, secret-box.ts, secrets.ts, logging/context.ts
 *   (settings.ts and types.ts know the store: above the adapters, beside domain/)
 */
const adapters = '^src/(gateway|storage|erp)/';
const leaves = '^src/(errors|clock|config|metrics|time|version|url-policy|connect-guard|private-files|operator-credentials|secret-box|secrets)\\.ts$|^src/logging/context\\.ts$';

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
      name: 'model-is-the-bottom',
      severity: 'error',
      comment: 'model/ holds the plain types every layer shares: it imports nothing else of src/.',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/' },
    },
    {
      name: 'adapters-only-model-and-leaves',
      severity: 'error',
      comment: 'gateway/, storage/ and erp/ each import, from the rest of src/, only model/ and the shared leaves: never each other, settings.ts or the service types.',
      from: { path: adapters },
      to: { path: '^src/', pathNot: `^src/($1|model)/|${leaves}` },
    },
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: 'domain/ is called by http/ and the workers, never the other way round.',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|outbox|reconcile|retention)/|^src/(app|services|server)\\.ts$' },
    },
    {
      name: 'http-through-domain',
      severity: 'error',
      comment: 'http/ parses, calls a domain function and renders: what it reads or writes goes through domain/, never storage/.',
      from: { path: '^src/http/' },
      to: { path: '^src/storage/' },
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
      from: { path: leaves },
      to: { path: '^src/', pathNot: `${leaves}|^src/model/` },
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
      comment: 'Only the entry points open the database (server.ts, and cli/ for migrate and backup); everything else gets the Store interface.',
      from: { path: '^src/', pathNot: '^src/(storage/|cli/|server\\.ts$)' },
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
