import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Periodic, type PeriodicSpec } from '../../src/workers/periodic.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const macrotask = () => new Promise<void>((r) => setImmediate(r));

/** A worker on the abstraction whose ticks are counted, each one announced, and which logs to memory. */
function harness(spec: Partial<PeriodicSpec> & { tick?: PeriodicSpec['tick'] } = {}) {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const ticks: Date[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const clockTime = { t: new Date('2026-11-22T03:00:00.000Z').getTime() };
  const p = new Periodic({
    name: 'test',
    logger,
    clock: { now: () => new Date(clockTime.t) },
    firstDelayMs: 0,
    nextDelayMs: () => 600_000,
    fallbackDelayMs: 600_000,
    failureMessage: 'test tick failed',
    ...spec,
    tick: async (now) => {
      ticks.push(now);
      try {
        return spec.tick ? await spec.tick(now) : false;
      } finally {
        for (const w of waiters.filter((x) => ticks.length >= x.n)) w.resolve();
      }
    },
  });
  /** Resolves once `n` ticks have finished (or at once if they have). */
  const ticked = (n: number) =>
    new Promise<void>((resolve) => (ticks.length >= n ? resolve() : waiters.push({ n, resolve })));
  return { p, logs, ticks, ticked, clockTime };
}

describe("Periodic (the background workers' timer)", () => {
  const started: Periodic[] = [];
  afterEach(async () => {
    for (const p of started.splice(0)) await p.stop();
  });

  it("each tick gets the injected clock's time; the next tick comes after nextDelayMs", async () => {
    const delays = [0, 600_000];
    const h = harness({ nextDelayMs: () => delays.shift() ?? 600_000 });
    started.push(h.p);
    h.p.start();
    await h.ticked(1);
    h.clockTime.t += 60_000;
    await h.ticked(2);
    for (let i = 0; i < 5; i++) await macrotask();
    expect(h.ticks.map((d) => d.toISOString())).toEqual(['2026-11-22T03:00:00.000Z', '2026-11-22T03:01:00.000Z']);
  });

  it('a tick that fails is logged and the next tick is still scheduled; a failing nextDelayMs falls back', async () => {
    let calls = 0;
    const h = harness({
      tick: async () => {
        calls++;
        if (calls === 1) throw new Error('database unavailable');
        return false;
      },
      nextDelayMs: () => {
        if (calls === 1) throw new Error('settings unreadable');
        return 600_000;
      },
      fallbackDelayMs: 0,
    });
    started.push(h.p);
    h.p.start();
    await h.ticked(2);
    expect(h.logs).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'test tick failed',
        err: expect.objectContaining({ message: 'database unavailable' }),
      }),
    ]);
  });

  it('stop resolves only once the running tick has finished, and no tick follows', async () => {
    const gate = deferred();
    const h = harness({ tick: () => gate.promise.then(() => false), nextDelayMs: () => 0 });
    started.push(h.p);
    h.p.start();
    while (h.ticks.length === 0) await macrotask();
    let stopped = false;
    const stopping = h.p.stop().then(() => (stopped = true));
    for (let i = 0; i < 5; i++) await macrotask();
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(stopped).toBe(true);
    for (let i = 0; i < 5; i++) await macrotask();
    expect(h.ticks).toHaveLength(1);
    expect(h.p.running).toBe(false);
  });

  it('wake runs a tick now; wake-ups during a tick become one tick right after it', async () => {
    const gate = deferred();
    let n = 0;
    const h = harness({
      firstDelayMs: 600_000,
      tick: async () => (++n === 1 ? gate.promise.then(() => false) : false),
    });
    started.push(h.p);
    h.p.start();
    for (let i = 0; i < 5; i++) await macrotask();
    expect(h.ticks).toHaveLength(0);
    h.p.wake();
    while (h.ticks.length === 0) await macrotask();
    h.p.wake();
    h.p.wake();
    h.p.wake();
    gate.resolve();
    await h.ticked(2);
    for (let i = 0; i < 5; i++) await macrotask();
    expect(h.ticks).toHaveLength(2);
  });

  it('a tick that reports more work is followed at once by the next', async () => {
    let left = 3;
    const h = harness({ tick: async () => left-- > 0 });
    started.push(h.p);
    h.p.start();
    await h.ticked(4);
    for (let i = 0; i < 5; i++) await macrotask();
    expect(h.ticks).toHaveLength(4);
  });

  it('wake does nothing before start or after stop', async () => {
    const h = harness();
    h.p.wake();
    h.p.start();
    await h.ticked(1);
    await h.p.stop();
    h.p.wake();
    for (let i = 0; i < 5; i++) await macrotask();
    expect(h.ticks).toHaveLength(1);
  });

  it('its timer never keeps the process alive', async () => {
    const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const h = harness({ firstDelayMs: 600_000 });
    started.push(h.p);
    const before = timeouts();
    h.p.start();
    expect(timeouts()).toBe(before);
    h.p.wake();
    await h.ticked(1);
    expect(timeouts()).toBe(before);
  });
});
