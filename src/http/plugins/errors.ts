/**
 * The one mapping of a thrown error onto the catalogue: the API's problem+json answers, the
 * console's error pages and the webhook all answer what `toProblem` decides, so a database that
 * is down is a 503 (the gateway retries a 503 four times, a 500 once) wherever it happens.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  isDatabaseUnavailable,
  plainFieldErrors,
  problem,
  type ErrorCode,
  type FieldError,
  type SchemaIssue,
} from '../../platform/errors.js';
import { GatewayError, toAppError } from '../../gateway/port.js';
import type { MethodTable } from './allowed-methods.js';
import { drainBody } from './drain-body.js';

/** A schema's complaints, as the catalogue's field errors in plain words (paths relative to the body). */
function fieldErrors(context: string | undefined, items: SchemaIssue[], root: unknown): FieldError[] {
  const where = context ?? 'body';
  return plainFieldErrors(root, items).map((e) => ({
    ...e,
    path: where === 'body' ? e.path || '(body)' : [where, e.path].filter(Boolean).join('.'),
  }));
}

/**
 * The answer to input its schema refused: the same 400 wherever the input came in (a JSON body, a
 * console form). `root` is the schema that was checked, so a field is described as a whole.
 */
export function schemaProblem(
  context: string | undefined,
  items: SchemaIssue[],
  root?: unknown,
  more: FieldError[] = [],
): AppError {
  const named = fieldErrors(context, items, root);
  const errors = [...named, ...more.filter((m) => !named.some((n) => n.path === m.path))];
  return new AppError('VALIDATION_FAILED', listed(errors), { errors });
}

const LISTED = 5;

/** The detail naming each problem (the first few of a long list; `errors` has them all). */
function listed(errors: FieldError[]): string {
  const [only] = errors;
  if (errors.length === 1 && only) return `${only.path} ${only.message}.`;
  const shown = errors.slice(0, LISTED).map((e) => `${e.path} ${e.message}`);
  return `${errors.length} problems: ${shown.join('; ')}${errors.length > LISTED ? '; …' : ''}.`;
}

/** The domain's checks of a refused body: extra detail only, so a check that fails adds nothing rather than a 500. */
function extraFieldProblems(checks: (body: unknown) => FieldError[], body: unknown): FieldError[] {
  try {
    return checks(body);
  } catch {
    return [];
  }
}

/** Fastify's own errors, mapped onto the catalogue. */
function frameworkCode(error: Error): ErrorCode | undefined {
  const err = error as Partial<FastifyError>;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'PAYLOAD_TOO_LARGE';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'UNSUPPORTED_MEDIA_TYPE' : 'VALIDATION_FAILED';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'INVALID_JSON';
    default:
      break;
  }
  if (error instanceof SyntaxError || /JSON|proto/i.test(error.message)) {
    if (err.statusCode === 400) return 'INVALID_JSON';
  }
  if (err.statusCode === 413) return 'PAYLOAD_TOO_LARGE';
  if (err.statusCode === 415) return 'UNSUPPORTED_MEDIA_TYPE';
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) return 'VALIDATION_FAILED';
  return undefined;
}

/** A gateway failure as the catalogue says it; apart, so the gateway's error type can move behind its port in one place. */
function gatewayProblem(err: unknown): AppError | undefined {
  return err instanceof GatewayError ? toAppError(err) : undefined;
}

/**
 * A refusal a domain action answers with (the catalogue's own errors and the gateway's, mapped onto
 * it); undefined for anything else, which a page that shows refusals in place lets through.
 */
export function knownProblem(err: unknown): AppError | undefined {
  return err instanceof AppError ? err : gatewayProblem(err);
}

/**
 * Any error as the catalogue says it: a known refusal, the console's CSRF refusal, a schema's
 * complaints, a database that cannot answer (503, its cause logged), Fastify's own errors (a body
 * too large, of the wrong type, not JSON). Anything else is logged and answered INTERNAL.
 */
export function toProblem(err: unknown, req: FastifyRequest): AppError {
  const known = knownProblem(err);
  if (known) return known;
  const fe: Partial<FastifyError> = typeof err === 'object' && err !== null ? err : {};
  if (typeof fe.code === 'string' && fe.code.startsWith('FST_CSRF')) return new AppError('CSRF_INVALID');
  if (Array.isArray(fe.validation)) {
    const schemas = req.routeOptions.schema as Record<string, unknown> | undefined;
    // The domain's own judgement of the fields the schema let through, so one answer names them all.
    const checks = req.routeOptions.config.fieldChecks;
    return schemaProblem(
      fe.validationContext,
      fe.validation as SchemaIssue[],
      fe.validationContext ? schemas?.[fe.validationContext] : undefined,
      fe.validationContext === 'body' && checks ? extraFieldProblems(checks, req.body) : [],
    );
  }
  if (isDatabaseUnavailable(err)) {
    req.log.error({ err: { message: fe.message } }, 'database unavailable');
    return new AppError('DATABASE_UNAVAILABLE');
  }
  const code = err instanceof Error ? frameworkCode(err) : undefined;
  if (code) return new AppError(code, fe.message?.slice(0, 300));
  req.log.error({ err }, 'unhandled error');
  return new AppError('INTERNAL');
}

export async function errorHandler(
  this: unknown,
  error: FastifyError | Error,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const appErr = toProblem(error, req);
  if (appErr.status >= 500 && appErr.code !== 'INTERNAL') req.log.warn({ code: appErr.code }, appErr.message);
  for (const [k, v] of Object.entries(appErr.extras.headers ?? {})) reply.header(k, v);
  // 5xx details stay in the log; the body says only what the catalogue says.
  const detail = appErr.code === 'INTERNAL' ? undefined : appErr.message;
  // An error met before the body has all arrived (a body refused for its size, an import failing
  // half-way) is answered once the rest is read and dropped: unread bytes would reset the connection
  // under the answer. A body left unread past the bound can only be followed by a close.
  if (!(await drainBody(req.raw))) reply.header('connection', 'close');
  await reply
    .code(appErr.status)
    .type('application/problem+json')
    .send(problem(appErr.code, req.id, detail, appErr.extras));
}

/** No route for this method and path: 405 with `Allow` when the path has routes for other methods, else 404. */
export function notFoundHandler(methods: MethodTable) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const path = req.url.split('?')[0] ?? '';
    const allowed = methods.allowed(path);
    if (allowed.length > 0) {
      await reply
        .code(405)
        .header('allow', allowed.join(', '))
        .type('application/problem+json')
        .send(
          problem('METHOD_NOT_ALLOWED', req.id, `${req.method} is not allowed here; allowed: ${allowed.join(', ')}.`),
        );
      return;
    }
    await reply
      .code(404)
      .type('application/problem+json')
      .send(problem('NOT_FOUND', req.id, `No route ${req.method} ${path}`.slice(0, 300)));
  };
}

/**
 * Errors Fastify raises before routing (a malformed percent-encoding, a path segment over the
 * router's limit): problem+json with a request id like every other answer, never the URL echoed.
 */
export function routingErrorHandler(error: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'A path segment is longer than 512 characters.'
      : 'The URL is not valid (malformed percent-encoding or characters).';
  req.log.info({ code: error.code }, 'request refused before routing');
  void reply
    .code(400)
    .header('x-request-id', req.id)
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send(problem('VALIDATION_FAILED', req.id, detail, { errors: [{ path: '(url)', message: detail }] }));
}
