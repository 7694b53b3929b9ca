/**
 * The process logger: pino writing JSON lines to LOG_DIR through pino-roll (one file per Jakarta
 * day, `paylink.<yyyy-MM-dd>.<n>.log`, a new <n> when a file passes its size limit, the oldest files
 * removed past a count: daily-file.ts), and to stdout when asked. Every line passes the secret scrubber before it
 * is written anywhere.
 */
import path from 'node:path';
import fs from 'node:fs';
import pino, { type Logger, type DestinationStream } from 'pino';
import type { RollStream } from 'pino-roll';
import { openDailyFile } from './daily-file.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createFieldCensor, createSecretScrubber, redactUrl, type SecretScrubber } from './redact.js';
import { extendLogContext } from './context.js';
import { SECRET_FIELD_NAMES } from '../secrets.js';
import { privateDir, privateFile } from '../private-files.js';
import { traceLogMixin } from '../tracing.js';

export interface LoggerOptions {
  level: string;
  logDir: string;
  /** Also write every line to stdout (the service does; tests do not). */
  stdout: boolean;
  /** Values scrubbed from every line, in every encoding (see redact.ts). */
  secrets?: ReadonlyArray<string | undefined | null>;
  /** Size at which a file is rolled, pino-roll syntax. Default `20m`. */
  maxFileSize?: string;
  /**
   * Rotated files kept beside the active one. Default 400: more than a year of daily files (the
   * PCI DSS 10.5.1 bar is 12 months kept, 3 immediately available), at most ~8 GB at 20 MB each.
   */
  keepFiles?: number;
  /** The clock that names the day's file (Jakarta date); default the system clock. */
  now?: () => Date;
}

const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Fields whose values are replaced whatever they hold, on a line's top level and one level down
 * (`{ erp: { webhook_secret } }`): the runtime-config secrets, also as the environment's Config
 * names them (`serverKey`…), and the operator's and API credentials.
 */
const SECRET_LOG_FIELDS = [
  'password',
  'pass',
  'log_pass',
  'api_keys',
  'apiKeys',
  ...SECRET_FIELD_NAMES.flatMap((f) => [f, camelCase(f)]),
];

/** Headers replaced inside `headers`, on the top level and one level down (`{ gateway: { headers } }`). */
const SECRET_LOG_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization'];

/** What every logger created here writes through; kept per stream so child loggers find it. */
interface Sink extends DestinationStream {
  scrubber: SecretScrubber;
  flush(cb?: (err?: Error | null) => void): void;
  end(): Promise<void>;
}

const sinks = new WeakSet<object>();

/** The state SonicBoom keeps about its pending writes (not in its typings). */
function internals(file: RollStream): { _opening: boolean; _writing: boolean; _len: number } {
  return file as unknown as { _opening: boolean; _writing: boolean; _len: number };
}

/**
 * Resolves when nothing is buffered or being written (SonicBoom's own flush() answers at once when
 * minLength is 0). Rolls reopen the file in between, so the check runs again on every event that
 * can change the answer, with a slow timer as a safety net.
 */
function settled(file: RollStream): Promise<void> {
  return new Promise((resolve) => {
    const events = ['drain', 'ready', 'close', 'write', 'error'] as const;
    const timer = setInterval(() => check(), 20);
    const stop = () => {
      clearInterval(timer);
      for (const e of events) file.off(e, check);
      resolve();
    };
    function check(): void {
      const s = internals(file);
      if (file.destroyed || (!s._opening && !s._writing && s._len === 0)) stop();
    }
    for (const e of events) file.on(e, check);
    check();
  });
}

function sinkOf(logger: Logger): Sink | undefined {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  return typeof stream === 'object' && stream !== null && sinks.has(stream) ? (stream as Sink) : undefined;
}

/** Standard output's buffer: written when it holds this much, or at the latest every STDOUT_FLUSH_MS. */
const STDOUT_BUFFER_BYTES = 4096;
const STDOUT_FLUSH_MS = 100;

interface Stdout {
  write(line: string): void;
  /** Writes what is buffered now. */
  flush(): void;
}

let stdout: Stdout | undefined;

/**
 * The process's standard output for log lines, one per process, buffered: a write of each line
 * to a pipe or a file (synchronous in Node on Linux) cost 3–8 µs CPU of the 10–17 a line cost
 * (`scripts/log-line-cpu.ts` with stdout to a pipe, then a file); buffered, one write (still
 * synchronous, as blocking as before) carries about ten lines. The trade-off: after a crash that
 * skips the process's `exit` (SIGKILL, out of memory), stdout lacks up to the last 100 ms or 4 KB
 * of lines; the LOG_DIR file, written as before, keeps them. A normal shutdown loses none:
 * closeLogger writes the buffer, and so does the process's `exit`.
 */
function sharedStdout(): Stdout {
  if (stdout) return stdout;
  const out = pino.destination({ dest: 1, minLength: STDOUT_BUFFER_BYTES, sync: true });
  let broken = false;
  let pending = false;
  // A closed pipe (the reader gone) must not take the service down; the file still has the lines.
  out.on('error', (err: Error) => {
    if (broken) return;
    broken = true;
    process.stderr.write(`paylink: log lines no longer written to stdout: ${err.message}\n`);
  });
  const flush = () => {
    if (!pending || broken) return;
    pending = false;
    // flush, not flushSync: a synchronous stream writes at once, and flushSync retries a closed
    // pipe for ever.
    out.flush();
  };
  setInterval(flush, STDOUT_FLUSH_MS).unref();
  process.once('exit', flush);
  stdout = {
    write(line) {
      if (broken) return;
      pending = true;
      out.write(line);
    },
    flush,
  };
  return stdout;
}

export const LOG_FILE_BASE = 'paylink';

/**
 * Log lines name orders, customers' e-mail addresses and the addresses that called: LOG_DIR is for
 * this service's user alone (0700, files 0600, whatever the umask), as DATA_DIR is. Files left
 * more open by an earlier version are narrowed at start.
 */
function privateLogDir(dir: string): void {
  privateDir(dir);
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.log')) privateFile(path.join(dir, name));
}

export async function createLogger(opts: LoggerOptions): Promise<Logger> {
  privateLogDir(opts.logDir);
  const daily = await openDailyFile({
    dir: opts.logDir,
    base: LOG_FILE_BASE,
    size: opts.maxFileSize ?? '20m',
    keep: opts.keepFiles ?? 400,
    now: opts.now ?? (() => new Date()),
    // A full disk or a removed directory must not take the service down; say so on stderr.
    onError: (err) => process.stderr.write(`paylink: log file write failed: ${err.message}\n`),
  });
  const scrubber = createSecretScrubber();
  scrubber.add(opts.secrets ?? []);
  let closed: Promise<void> | undefined;
  const out = opts.stdout ? sharedStdout() : undefined;
  const sink: Sink = {
    scrubber,
    write(line: string) {
      const clean = scrubber.scrub(line);
      if (!closed) daily.current().write(clean);
      out?.write(clean);
    },
    flush(cb) {
      settled(daily.current()).then(
        () => cb?.(null),
        (err: Error) => cb?.(err),
      );
    },
    end() {
      out?.flush();
      closed ??= daily.end();
      return closed;
    },
  };
  const censor = createFieldCensor({
    fields: SECRET_LOG_FIELDS,
    headers: SECRET_LOG_HEADERS,
    serialized: ['req', 'res'],
  });
  const logger = pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // With tracing on, a line written inside a span names it (trace_id, span_id).
      mixin: traceLogMixin(),
      // Redaction by name, on the line and on child loggers' bindings (see createFieldCensor).
      formatters: { level: (label) => ({ level: label }), log: censor, bindings: censor },
      serializers: {
        err: pino.stdSerializers.err,
        req: (req: { method?: string; url?: string; ip?: string; headers?: Record<string, unknown> }) => ({
          method: req.method,
          url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
          remote_address: req.ip,
          user_agent:
            typeof req.headers?.['user-agent'] === 'string' ? req.headers['user-agent'].slice(0, 200) : undefined,
        }),
        res: (res: { statusCode?: number }) => ({ status_code: res.statusCode }),
      },
    },
    sink,
  );
  // pino applies `formatters.bindings` to the root's bindings only (a child resets it): the
  // bindings of every child (children inherit these methods) and of setBindings pass the censor here.
  type Methods = {
    child(this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger;
    setBindings(this: Logger, bindings: pino.Bindings): void;
  };
  const { child, setBindings } = logger as unknown as Methods;
  Object.assign(logger, {
    child(bindings, options) {
      return child.call(this, censor(bindings), options);
    },
    setBindings(bindings) {
      setBindings.call(this, censor(bindings));
    },
  } satisfies Methods);
  sinks.add(sink);
  return logger;
}

/** Adds values to the scrubber behind `logger` (and all its children), e.g. after a key is rotated. */
export function registerLogSecrets(logger: Logger, secrets: ReadonlyArray<string | undefined | null>): void {
  sinkOf(logger)?.scrubber.add(secrets);
}

/** Resolves once every line logged so far is in the file. */
export function flushLogger(logger: Logger): Promise<void> {
  const sink = sinkOf(logger);
  if (!sink) return Promise.resolve();
  return new Promise((resolve) => sink.flush(() => resolve()));
}

/** Flushes and closes the file; later lines go to stdout only (when enabled). Idempotent. */
export async function closeLogger(logger: Logger): Promise<void> {
  const sink = sinkOf(logger);
  if (!sink) return;
  await flushLogger(logger);
  await sink.end();
}

/**
 * Puts the order on every later line of this request, "request completed" included, so
 * `/api/logs?order_id=…` finds the whole story of a call.
 */
export function bindLogContext(
  req: FastifyRequest,
  reply: FastifyReply,
  context: { order_id?: string; mercant_id?: string; gateway_order_id?: string },
): void {
  const bindings: Record<string, string> = {};
  for (const [k, v] of Object.entries(context)) if (typeof v === 'string') bindings[k] = v;
  if (Object.keys(bindings).length === 0) return;
  extendLogContext(bindings);
  const log = req.log as unknown as Logger;
  log.setBindings(bindings);
  if ((reply.log as unknown) !== log) (reply.log as unknown as Logger).setBindings(bindings);
}
