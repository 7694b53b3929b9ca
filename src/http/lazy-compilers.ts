/**
 * Fastify's own compilers (ajv for request validation, fast-json-stringify for response
 * serialization), each route's function compiled on its first use instead of when the app is
 * ready. Compiling every route's schemas at start was about a third of the service's start-up
 * CPU (ajv ~0.7 s, fast-json-stringify ~0.3 s on a 2-core machine) and kept every compiled
 * function in the heap whether the route was ever called; a route's first request now pays its own
 * compilation, a few ms.
 *
 * The functions handed to Fastify behave as the compiled ones: `errors` and `schemaEnv` (which
 * Fastify reads after and before a validation) are the compiled function's. A schema that does not
 * compile now fails its route's first request (500) instead of the start: `compilePending` compiles
 * everything registered so far, which a test runs over the whole app.
 *
 * Supplying the validator factory makes Fastify treat it as custom, and Fastify then leaves header
 * schemas as given instead of lower-casing their property names (Node lower-cases every received
 * header name). The same is done here, for the property names and `required` at the schema's top
 * level, the only places paylink's header schemas name a header.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SchemaOptions = NonNullable<FastifyServerOptions['schemaController']>;
type Factories = NonNullable<SchemaOptions['compilersFactory']>;
type ValidatorFactory = NonNullable<Factories['buildValidator']>;
type SerializerFactory = NonNullable<Factories['buildSerializer']>;

type AnyFunction = ((...args: unknown[]) => unknown) & Record<string, unknown>;

/** `compile` run once, on the returned function's first call or first read of `errors`/`schemaEnv`; until then in `pending`. */
function deferred(pending: Set<() => unknown>, compile: () => unknown): AnyFunction {
  let compiled: AnyFunction | undefined;
  const get = (): AnyFunction => {
    if (compiled === undefined) {
      compiled = compile() as AnyFunction;
      pending.delete(get);
    }
    return compiled;
  };
  pending.add(get);
  const fn = function lazyCompiled(this: unknown, ...args: unknown[]): unknown {
    return get().apply(this, args);
  } as AnyFunction;
  Object.defineProperties(fn, {
    errors: { get: () => get().errors, enumerable: false },
    schemaEnv: { get: () => get().schemaEnv, enumerable: false },
  });
  return fn;
}

/** A header schema's top-level property names and `required`, lower-cased (as Fastify does for its own compiler). */
export function lowerCaseHeaderNames(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...s };
  if (s.properties !== null && typeof s.properties === 'object')
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), v]),
    );
  if (Array.isArray(s.required))
    out.required = s.required.map((n: unknown) => (typeof n === 'string' ? n.toLowerCase() : n));
  return out;
}

export interface LazySchemas {
  /** The `schemaController` server option. */
  option: SchemaOptions;
  /** Compiles every route function registered so far and not yet compiled; resolves how many. */
  compilePending(): number;
}

/** Fastify's default compilers, each route's functions compiled on first use. One per app. */
export function lazySchemaController(): LazySchemas {
  const pending = new Set<() => unknown>();
  const ajv = AjvCompiler();
  const fjs = SerializerSelector();
  const buildValidator = ((externalSchemas: unknown, options: unknown) => {
    // The ajv instance itself (with its formats) is made on the first compilation too.
    let compiler: ((route: Record<string, unknown>) => unknown) | undefined;
    return (route: Record<string, unknown>) =>
      deferred(pending, () => {
        compiler ??= (ajv as (e: unknown, o: unknown) => (r: Record<string, unknown>) => unknown)(
          externalSchemas,
          options,
        );
        return compiler(
          route.httpPart === 'headers' ? { ...route, schema: lowerCaseHeaderNames(route.schema) } : route,
        );
      });
  }) as unknown as ValidatorFactory;
  const buildSerializer = ((externalSchemas: unknown, options: unknown) => {
    const compiler = (fjs as (e: unknown, o: unknown) => (r: unknown) => unknown)(externalSchemas, options);
    return (route: unknown) => deferred(pending, () => compiler(route));
  }) as unknown as SerializerFactory;
  return {
    option: { compilersFactory: { buildValidator, buildSerializer } },
    compilePending: () => {
      const all = [...pending];
      for (const get of all) get();
      return all.length;
    },
  };
}

const byApp = new WeakMap<object, LazySchemas>();

/** Remembers which compilers an app was built with, for `compileRouteSchemas`. */
export function trackSchemas(app: object, schemas: LazySchemas): void {
  byApp.set(app, schemas);
}

/**
 * Compiles every route function of a ready app (ready: Fastify hands its routes' schemas to the
 * compilers then); resolves how many were compiled. The tests run it so that a schema that does not
 * compile fails them, not a route's first request.
 */
export function compileRouteSchemas(app: object): number {
  const schemas = byApp.get(app);
  if (!schemas) throw new Error('the app was not built with lazySchemaController');
  return schemas.compilePending();
}
