/**
 * The direction of dependencies, checked by `npm run lint` (dependency-cruiser over src/,
 * simulator/, bench/, scripts/ and test/ but its fixtures). Every rule names folders, never files
 * one by one, so a new module falls under the rules of the folder it is put in. Type-only imports
 * count: a cycle through types is still a cycle for a reader.
 *
 *   cli.ts → server.ts → services.ts (the composition root) → app.ts → http/ → domain/ → gateway/ · storage/ · erp/
 *   workers/ → domain/ · erp/ · storage/ (never http/)
 *   config/ (environment and runtime config) → storage/contract.ts · platform/ · model/
 *   platform/ (time, clock, errors, logging, metrics, secrets, url policy, …) → model/ only
 *   model/ imports nothing else of src/
 *   simulator/ is the gateway's stand-in and the tests' oracle: it imports nothing from src/
 */
const root = '^src/[^/]+\\.ts$';
const adapters = '^src/(gateway|storage|erp)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Import cycles make the map unreadable: move the shared part down (a types module, a leaf).',
      from: { path: '^(src|simulator|bench|scripts|test)/' },
      to: { circular: true },
    },
    {
      name: 'model-is-the-bottom',
      severity: 'error',
      comment: 'model/ holds the plain types every layer shares: it imports nothing else of src/.',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/' },
    },
    {
      name: 'platform-is-a-leaf',
      severity: 'error',
      comment: 'platform/ is used by every layer, so it imports none of them: only itself and model/.',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/(platform|model)/' },
    },
    {
      name: 'config-below-domain',
      severity: 'error',
      comment:
        'config/ reads the environment and keeps the runtime config: it knows the storage contract, never the layers that use it.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(config|platform|model)/|^src/storage/contract\\.ts$' },
    },
    {
      name: 'adapters-only-model-and-leaves',
      severity: 'error',
      comment:
        "gateway/, storage/ and erp/ import, from the rest of src/, only model/, platform/ and the environment's types: never each other, the domain, the workers or http/.",
      from: { path: adapters },
      to: { path: '^src/', pathNot: '^src/($1|model|platform)/|^src/config/env\\.ts$' },
    },
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: 'domain/ is called by http/ and the workers, never the other way round.',
      from: { path: '^src/domain/' },
      to: { path: `^src/(http|workers|cli)/|${root}`, pathNot: '^src/types\\.ts$' },
    },
    // Property access is beyond an import rule: test/unit/dependency-rules.test.ts checks that http/ never reads `.store` (idempotency and sign-in counts go through domain/ too).
    {
      name: 'domain-through-the-gateway-port',
      severity: 'error',
      comment:
        'The domain calls the gateway through its port (gateway/port.ts) and the domain-level facts beside it; the Midtrans wire stays inside gateway/midtrans/.',
      from: { path: '^src/domain/' },
      to: { path: '^src/gateway/midtrans/' },
    },
    {
      name: 'http-through-domain',
      severity: 'error',
      comment:
        'http/ parses, calls a domain function and renders: what it reads or writes goes through domain/, never storage/ or a gateway adapter.',
      from: { path: '^src/http/' },
      to: { path: '^src/(storage|workers)/|^src/gateway/midtrans/' },
    },
    {
      name: 'workers-below-http',
      severity: 'error',
      comment: 'The workers (outbox, status sweeper, pruner) do not know about HTTP routes or the app.',
      from: { path: '^src/workers/' },
      to: { path: `^src/(http|cli)/|${root}`, pathNot: '^src/types\\.ts$' },
    },
    {
      name: 'composition-root-only-from-server',
      severity: 'error',
      comment:
        'services.ts wires everything; only server.ts, the bench and the tests build services. Import types from types.ts.',
      from: { path: '^src/', pathNot: '^src/server\\.ts$' },
      to: { path: '^src/services\\.ts$' },
    },
    {
      name: 'tests-build-services-in-helpers',
      severity: 'error',
      comment:
        'Tests build services through test/helpers/ (appOver, makeTestApp, …), so a change to the wiring lands in one place.',
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
      comment:
        "Outside storage/, code uses the contract (storage/contract.ts) and the opener (storage/kysely/store.ts), never repositories, the schema or a database's own SQL.",
      from: { path: '^src/', pathNot: '^src/storage/' },
      to: { path: '^src/storage/', pathNot: '^src/storage/(contract|kysely/store)\\.ts$' },
    },
    {
      name: 'store-opened-by-entry-points-only',
      severity: 'error',
      comment:
        'Only the entry points open the database (server.ts, and cli/ for migrate and backup); everything else gets the Store contract.',
      from: { path: '^src/', pathNot: '^src/(storage/|cli/|server\\.ts$)' },
      to: { path: '^src/storage/kysely/store\\.ts$' },
    },
    {
      name: 'storage-contract-imports-no-implementation',
      severity: 'error',
      comment: 'The contract is what the rest of the service sees: it names domain types, never a database or Kysely.',
      from: { path: '^src/storage/contract\\.ts$' },
      to: { path: '^src/storage/(kysely|sqlite|postgres)/' },
    },
    {
      name: 'simulator-imports-nothing-of-src',
      severity: 'error',
      comment:
        'The simulator checks paylink the way the real gateway would: sharing code with what it checks would let a bug agree with itself.',
      from: { path: '^simulator/' },
      to: { path: '^src/' },
    },
    {
      name: 'src-reaches-simulator-through-its-entry',
      severity: 'error',
      comment:
        'paylink embeds the simulator in simulator mode through its one entry; nothing else of src/ knows its insides.',
      from: { path: '^src/' },
      to: { path: '^simulator/', pathNot: '^simulator/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
