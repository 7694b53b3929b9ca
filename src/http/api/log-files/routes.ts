import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { AppError } from '../../../platform/errors.js';
import {
  LOG_FILE_NAME,
  LogFileChangedError,
  TAIL_MAX_LINES,
  listLogFiles,
  openLogView,
  tailLogFile,
} from '../../../platform/logging/files.js';
import { decodeLogCursor, queryLogs } from '../../../platform/logging/query.js';
import { Count, NoQuery, countParam, instantParam } from '../../schemas/common.js';
import { operatorActor } from '../../plugins/actor.js';
import { withExample } from '../../schemas/examples.js';
import { openLogFile } from '../../../domain/queries/log-files.js';
import { apiTime } from '../../../platform/time.js';
import { problems } from '../../schemas/problems.js';

const Level = Type.Union(
  ['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((l) => Type.Literal(l)),
  { description: 'Minimum level: `warn` returns warn, error and fatal' },
);
const Time = Type.String({ format: 'date-time', maxLength: 40 });

const LogsQuery = Type.Object(
  {
    level: Type.Optional(Level),
    since: Type.Optional(Time),
    until: Type.Optional(Time),
    q: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive text anywhere in the entry' }),
    ),
    order_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Optional(Count('1..1000, default 100', 5)),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_-]+$' })),
  },
  { additionalProperties: false },
);
const Entry = Type.Object(
  {},
  { additionalProperties: true, description: 'One pino log line as written (level, time, msg, request_id, order_id…)' },
);
const FileInfo = Type.Object({ name: Type.String(), size_bytes: Type.Integer(), modified_at: Type.String() });
const ViewQuery = Type.Object(
  {
    file: Type.String({
      minLength: 5,
      maxLength: 132,
      pattern: LOG_FILE_NAME.source,
      description: 'A name listed by /api/logs/files',
    }),
    tail: Type.Optional(Count(`Last N lines, 1..${TAIL_MAX_LINES}`, 5)),
  },
  { additionalProperties: false },
);
const ENTRIES_EXAMPLE = {
  entries: [
    {
      level: 30,
      time: '2026-11-22T10:20:00+07:00',
      request_id: '123d61e7-6c1e-4f6a-9a53-5f3b1f6b0a11',
      order_id: 'INV/2026/0042:1',
      gateway: {
        op: 'core.refund',
        method: 'POST',
        path: '/v2/INV.2026.0042.1-1795460839321/refund',
        status: 200,
        duration_ms: 84,
      },
      msg: 'gateway call',
    },
  ],
  next_cursor: 'eyJmIjoicGF5bGluay4yMDI2LTExLTIyLjEubG9nIn0',
};
const PlainTextBody = (description: string) =>
  Type.Unsafe<string | Buffer | Readable>({ description, content: { 'text/plain': { schema: { type: 'string' } } } });

export const logRoutes: RoutePlugin<Deps<'config' | 'logger'>> = async (app, services) => {
  const logDir = services.config.logDir;

  app.get(
    '/api/logs',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.logs],
        summary: 'Search log entries, newest first, across rotated files',
        description:
          "Searches the JSON log files newest first: `q` (text), `level` (minimum), `order_id`, `request_id`, `since`/`until`. Every request's lines carry its `request_id` (also in the `X-Request-Id` answer header), and lines about an order its `order_id`. Page with `cursor`.",
        querystring: LogsQuery,
        response: {
          200: withExample(
            Type.Object({ entries: Type.Array(Entry), next_cursor: Type.Optional(Type.String()) }),
            ENTRIES_EXAMPLE,
          ),
          ...problems(400),
        },
      },
    },
    async (req) => {
      const qs = req.query;
      const cursor = qs.cursor === undefined ? undefined : decodeLogCursor(qs.cursor);
      if (qs.cursor !== undefined && !cursor)
        throw new AppError('VALIDATION_FAILED', 'Unknown cursor.', {
          errors: [{ path: 'cursor', message: 'is not a cursor this endpoint returned' }],
        });
      const since = instantParam('since', qs.since);
      const until = instantParam('until', qs.until);
      return queryLogs(logDir, {
        level: qs.level,
        since,
        until,
        q: qs.q,
        order_id: qs.order_id,
        request_id: qs.request_id,
        limit: countParam('limit', qs.limit, 100, 1000),
        cursor,
      });
    },
  );

  app.get(
    '/api/logs/files',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.logs],
        summary: 'Log files in LOG_DIR, newest first',
        description:
          'The log files in LOG_DIR (rotated daily and at 20 MB), newest first, with size and modification time.',
        querystring: NoQuery,
        response: {
          200: withExample(Type.Object({ files: Type.Array(FileInfo) }), {
            files: [{ name: 'paylink.2026-11-22.1.log', size_bytes: 482113, modified_at: '2026-11-22T17:20:00+07:00' }],
          }),
        },
      },
    },
    async () => ({
      files: (await listLogFiles(logDir)).map(({ name, size_bytes, modified_at }) => ({
        name,
        size_bytes,
        modified_at: apiTime(modified_at),
      })),
    }),
  );

  app.get(
    '/api/logs/view',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.logs],
        summary: 'One log file as text (last 1 MiB, or the last N lines)',
        description:
          'One file listed by /api/logs/files, as text: the last 1 MiB, or its last `tail` lines. Only plain files directly in LOG_DIR are served.',
        querystring: ViewQuery,
        response: {
          200: PlainTextBody('The file content (JSON lines); `x-log-truncated: true` when cut'),
          ...problems(400, 404),
        },
      },
    },
    async (req, reply) => {
      const file = await openLogFile(services, req.query.file, operatorActor(req));
      if (!file) throw new AppError('NOT_FOUND', 'No such log file; see /api/logs/files.');
      reply
        .header('content-type', 'text/plain; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store');
      // Retention may delete the file between the listing and the read: that is a 404, not a 500.
      const gone = (err: unknown) => {
        if (err instanceof LogFileChangedError) {
          req.log.warn(
            { security_event: 'log_file_changed', file: req.query.file },
            'log view refused: the file was replaced or linked after it was checked',
          );
          throw new AppError('NOT_FOUND', 'No such log file; see /api/logs/files.');
        }
        if ((err as { code?: unknown }).code === 'ENOENT')
          throw new AppError('NOT_FOUND', 'The log file was removed by retention; see /api/logs/files.');
        throw err;
      };
      if (req.query.tail !== undefined) {
        const lines = countParam('tail', req.query.tail, 100, TAIL_MAX_LINES);
        const { text, truncated } = await tailLogFile(file, lines).catch(gone);
        return reply.header('x-log-truncated', String(truncated)).send(text);
      }
      const { stream, truncated } = await openLogView(file).catch(gone);
      return reply.header('x-log-truncated', String(truncated)).send(stream);
    },
  );
};
