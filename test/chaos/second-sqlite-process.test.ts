/**
 * A second process on the same SQLite file refuses to start, with a message that says why and
 * what to do; the first keeps working. The lock dies with its holder: after a SIGKILL the next
 * process starts at once and carries on with what the first left.
 */
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { signedNotification } from '../helpers/notifications.js';
import { OP, chaosDatabase, postJson, reportFigures, type ChaosDatabase, START_MS } from './support.js';

const SECRET = 'chaos-second-process-secret-0123456789';

async function webhook(url: string, orderId: string): Promise<number> {
  const res = await fetch(`${url}/webhook/midtrans`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(signedNotification({ order_id: orderId, transaction_status: 'settlement' })),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('a second process on the same SQLite file', () => {
  const children: ServiceProcess[] = [];
  let db: ChaosDatabase | undefined;
  let erp: ErpReceiver | undefined;

  afterEach(async () => {
    for (const c of children.splice(0)) await stopServiceProcess(c, 'SIGKILL');
    await erp?.close();
    await db?.dispose();
  });

  it('refuses to start with a clear message while the first runs; starts once the first is gone (even SIGKILLed)', async () => {
    db = await chaosDatabase('sqlite');
    erp = await startErpReceiver({ secret: SECRET });
    // simulator mode: the notifications below are signed with its dev key
    const env = {
      DATA_DIR: db.dir,
      LOG_DIR: path.join(db.dir, 'logs'),
      log_user: OP.user,
      log_pass: OP.pass,
      ERP_NOTIFY_URL: erp.url,
      ERP_WEBHOOK_SECRET: SECRET,
    };
    const first = await startServiceProcess(env, START_MS);
    children.push(first);
    // The orders below exist nowhere but in these notifications: no status API to confirm them with.
    expect(await postJson(`${first.url}/api/config`, { gateway: { confirm_notifications: false } })).toBe(200);
    expect(await webhook(first.url, 'SECOND-1')).toBe(200);

    const attempt = Date.now();
    const refused = await startServiceProcess({ ...env, LOG_DIR: path.join(db.dir, 'logs2') }, START_MS).then(
      (c) => {
        children.push(c);
        return undefined;
      },
      (err: unknown) => String(err),
    );
    const refusedMs = Date.now() - attempt;
    const exitCode = /service exited \((-?\d+|null)\)/.exec(refused ?? '')?.[1] ?? 'none';
    const namesFileAndPid =
      refused?.includes(
        `${path.join(db.dir, 'paylink.db')} is in use by another paylink process (pid ${first.proc.pid})`,
      ) ?? false;
    const saysWhatToDo = refused?.includes('use PostgreSQL (DATABASE_URL) to run several instances') ?? false;
    expect(refused).toBeDefined();
    expect(exitCode).toBe('1');
    expect(namesFileAndPid).toBe(true);
    expect(saysWhatToDo).toBe(true);

    // The first one was not disturbed by the attempt.
    const firstAfterAttempt = await webhook(first.url, 'SECOND-2');
    expect(firstAfterAttempt).toBe(200);
    await erp.waitFor((r) => new Set(r.accepted().map((d) => d.json?.order_id)).size === 2, 30_000);

    await stopServiceProcess(first, 'SIGKILL');
    const killed = Date.now();
    const next = await startServiceProcess(env, START_MS);
    const startAfterKillMs = Date.now() - killed;
    children.push(next);
    expect(await webhook(next.url, 'SECOND-3')).toBe(200);
    await erp.waitFor((r) => new Set(r.accepted().map((d) => d.json?.order_id)).size === 3, 30_000);
    const stopped = await stopServiceProcess(next, 'SIGTERM');
    expect(stopped).toEqual({ code: 0, signal: null });
    // A clean stop frees the lock as well.
    const cleanStop = Date.now();
    const after = await startServiceProcess(env, START_MS);
    const startAfterStopMs = Date.now() - cleanStop;
    children.push(after);
    reportFigures('second-sqlite-process', 'sqlite', {
      second_started: refused === undefined,
      second_refused_ms: refusedMs,
      second_exit_code: exitCode,
      message_names_file_and_pid: namesFileAndPid,
      message_says_use_postgres: saysWhatToDo,
      first_answered_after_attempt: firstAfterAttempt,
      start_after_sigkill_ms: startAfterKillMs,
      sigterm_exit_code: stopped.code ?? `signal ${stopped.signal}`,
      start_after_sigterm_ms: startAfterStopMs,
    });
  }, 120_000);
});
