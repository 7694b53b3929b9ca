import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  decideTransition,
  statusRank,
  type CurrentState,
  type IncomingReport,
} from '../../src/domain/reports/status-machine.js';
import { isReversibleChannel, mapGatewayStatus } from '../../src/gateway/status.js';
import type { PaymentStatus } from '../../src/model/payment.js';

describe('mapGatewayStatus', () => {
  it.each([
    ['settlement', undefined, 'paid'],
    ['settlement', 'accept', 'paid'],
    ['capture', 'accept', 'paid'],
    ['capture', undefined, 'paid'],
    ['capture', 'challenge', 'challenge'],
    ['capture', 'deny', 'failed'],
    ['deny', 'deny', 'failed'],
    ['failure', undefined, 'failed'],
    ['cancel', undefined, 'cancelled'],
    ['expire', undefined, 'expired'],
    ['refund', undefined, 'refunded'],
    ['partial_refund', undefined, 'partially_refunded'],
    ['chargeback', undefined, 'chargeback'],
    ['partial_chargeback', undefined, 'chargeback'],
    ['pending', undefined, 'pending'],
    ['authorize', undefined, 'pending'],
    ['PENDING', undefined, 'pending'],
    ['Settlement', 'ACCEPT', 'paid'],
  ] as const)('%s / %s → %s', (ts, fs, expected) => {
    expect(mapGatewayStatus(ts, fs)).toBe(expected);
  });

  it.each([['teleported'], [''], [undefined], ['capture_later']])('unknown %s → undefined (never guessed)', (ts) => {
    expect(mapGatewayStatus(ts, 'accept')).toBeUndefined();
  });

  it('an unknown fraud status on a capture is not guessed', () => {
    expect(mapGatewayStatus('capture', 'review')).toBeUndefined();
  });
});

describe('isReversibleChannel', () => {
  it('only Permata VA, Mandiri bill (echannel) and Indomaret', () => {
    expect(isReversibleChannel('echannel')).toBe(true);
    expect(isReversibleChannel('bank_transfer', { permataVa: true })).toBe(true);
    expect(isReversibleChannel('bank_transfer', { permataVa: false })).toBe(false);
    expect(isReversibleChannel('cstore', { store: 'indomaret' })).toBe(true);
    expect(isReversibleChannel('cstore', { store: 'alfamart' })).toBe(false);
    expect(isReversibleChannel('credit_card')).toBe(false);
    expect(isReversibleChannel(null)).toBe(false);
  });
});

const cur = (status: PaymentStatus, over: Partial<CurrentState> = {}): CurrentState => ({
  status,
  transactionStatus: null,
  gatewayTransactionId: 'A',
  transactionTime: '2026-11-22T10:00:00+07:00',
  ...over,
});
const inc = (transactionStatus: string, over: Partial<IncomingReport> = {}): IncomingReport => ({
  transactionStatus,
  fraudStatus: null,
  transactionId: 'A',
  transactionTime: '2026-11-22T10:00:00+07:00',
  superseded: false,
  reversible: false,
  ...over,
});

describe('decideTransition', () => {
  it('forwards forward moves, ignores repeats and backward moves', () => {
    expect(decideTransition(cur('pending'), inc('settlement'))).toEqual({
      kind: 'apply',
      status: 'paid',
      newTransaction: false,
    });
    expect(decideTransition(cur('paid'), inc('settlement'))).toMatchObject({ kind: 'duplicate' });
    expect(decideTransition(cur('paid'), inc('pending'))).toEqual({ kind: 'stale', status: 'pending' });
    expect(decideTransition(cur('paid'), inc('expire'))).toEqual({ kind: 'stale', status: 'expired' });
    expect(decideTransition(cur('paid'), inc('refund'))).toMatchObject({ kind: 'apply', status: 'refunded' });
    expect(decideTransition(cur('paid'), inc('partial_refund'))).toMatchObject({
      kind: 'apply',
      status: 'partially_refunded',
    });
    expect(decideTransition(cur('partially_refunded'), inc('refund'))).toMatchObject({
      kind: 'apply',
      status: 'refunded',
    });
    expect(decideTransition(cur('refunded'), inc('partial_refund'))).toMatchObject({ kind: 'stale' });
    expect(decideTransition(cur('paid'), inc('chargeback'))).toMatchObject({ kind: 'apply', status: 'chargeback' });
    expect(decideTransition(cur('challenge'), inc('capture', { fraudStatus: 'accept' }))).toMatchObject({
      kind: 'apply',
      status: 'paid',
    });
    expect(decideTransition(cur('expired'), inc('cancel'))).toMatchObject({ kind: 'stale' });
    expect(decideTransition(cur('expired'), inc('nonsense'))).toEqual({ kind: 'unknown_status' });
  });

  it('settlement → deny is a reversal only on reversible channels, same transaction, from settlement', () => {
    const paid = cur('paid', { transactionStatus: 'settlement' });
    expect(decideTransition(paid, inc('deny', { reversible: true }))).toEqual({
      kind: 'apply',
      status: 'failed',
      newTransaction: false,
    });
    expect(decideTransition(paid, inc('deny', { reversible: false }))).toMatchObject({ kind: 'stale' });
    expect(
      decideTransition(cur('paid', { transactionStatus: 'capture' }), inc('deny', { reversible: true })),
    ).toMatchObject({ kind: 'stale' });
    expect(
      decideTransition(
        paid,
        inc('deny', { reversible: true, transactionId: 'B', transactionTime: '2026-11-21T10:00:00+07:00' }),
      ),
    ).toMatchObject({ kind: 'stale' });
  });

  it('a captured card payment cancelled before settlement is voided: paid → cancelled; later reports of it are stale', () => {
    const captured = cur('paid', { transactionStatus: 'capture' });
    expect(decideTransition(captured, inc('cancel'))).toEqual({
      kind: 'apply',
      status: 'cancelled',
      newTransaction: false,
    });
    expect(decideTransition(cur('paid', { transactionStatus: 'settlement' }), inc('cancel'))).toMatchObject({
      kind: 'stale',
    });
    expect(
      decideTransition(captured, inc('cancel', { transactionId: 'B', transactionTime: '2026-11-21T10:00:00+07:00' })),
    ).toMatchObject({ kind: 'stale' });
    const voided = cur('cancelled', { transactionStatus: 'cancel' });
    expect(decideTransition(voided, inc('capture', { fraudStatus: 'accept' }))).toEqual({
      kind: 'stale',
      status: 'paid',
    });
    expect(decideTransition(voided, inc('settlement'))).toMatchObject({ kind: 'stale' });
    // a new gateway transaction on the order is still accepted
    expect(
      decideTransition(voided, inc('settlement', { transactionId: 'B', transactionTime: '2026-11-23T10:00:00+07:00' })),
    ).toMatchObject({ kind: 'apply', status: 'paid', newTransaction: true });
  });

  it('a newer gateway transaction replaces an unpaid order; an older one is stale unless it reports money', () => {
    const newer = { transactionId: 'B', transactionTime: '2026-11-23T10:00:00+07:00' };
    const older = { transactionId: 'Z', transactionTime: '2026-11-21T10:00:00+07:00' };
    expect(decideTransition(cur('expired'), inc('pending', newer))).toEqual({
      kind: 'apply',
      status: 'pending',
      newTransaction: true,
    });
    expect(decideTransition(cur('failed'), inc('pending', newer))).toMatchObject({ kind: 'apply', status: 'pending' });
    expect(decideTransition(cur('pending'), inc('pending', newer))).toEqual({
      kind: 'duplicate',
      status: 'pending',
      adoptTransaction: true,
    });
    expect(decideTransition(cur('paid'), inc('pending', newer))).toMatchObject({ kind: 'stale' });
    expect(decideTransition(cur('pending'), inc('expire', older))).toMatchObject({ kind: 'stale' });
    expect(decideTransition(cur('expired'), inc('settlement', older))).toMatchObject({ kind: 'apply', status: 'paid' });
    expect(decideTransition(cur('paid'), inc('settlement', older))).toMatchObject({ kind: 'stale' });
    // without times, a transaction that was current before and was replaced counts as older
    const noTimes = { transactionId: 'B', transactionTime: null };
    expect(decideTransition(cur('pending'), inc('expire', { ...noTimes, superseded: true }))).toMatchObject({
      kind: 'stale',
    });
    expect(decideTransition(cur('pending'), inc('expire', { ...noTimes, superseded: false }))).toMatchObject({
      kind: 'apply',
      status: 'expired',
    });
  });

  it('a transaction we have no gateway id for yet takes the first report as its own', () => {
    expect(
      decideTransition(
        cur('pending', { gatewayTransactionId: null, transactionTime: null }),
        inc('settlement', { transactionId: 'X' }),
      ),
    ).toMatchObject({ kind: 'apply', status: 'paid', newTransaction: false });
  });
});

/** Gateway lifecycles, each rank-monotone as the gateway moves a transaction. */
type Step = [string, string?];
const FINAL_LIFECYCLES: Step[][] = [
  [['pending']],
  [['pending'], ['settlement']],
  [['pending'], ['expire']],
  [['pending'], ['cancel']],
  [
    ['capture', 'accept'],
    ['settlement', 'accept'],
    ['refund', 'accept'],
  ],
  [
    ['capture', 'challenge'],
    ['capture', 'accept'],
    ['settlement', 'accept'],
  ],
  [
    ['capture', 'challenge'],
    ['deny', 'deny'],
  ],
  [['pending'], ['settlement'], ['partial_refund'], ['refund']],
  [['settlement'], ['chargeback']],
  [['authorize'], ['capture', 'accept']],
  [['capture', 'accept'], ['cancel']],
];
/** Earlier transactions on a reused order ended unpaid. */
const ENDED_LIFECYCLES: Step[][] = [
  [['pending'], ['expire']],
  [['pending'], ['deny']],
  [['expire']],
  [
    ['capture', 'challenge'],
    ['deny', 'deny'],
  ],
];

interface Report {
  txId: string;
  time: string;
  ts: string;
  fs: string | null;
}

interface Model {
  state: CurrentState;
  seen: Set<string>;
  keys: Set<string>;
  events: Array<{ status: PaymentStatus; txId: string }>;
}

/** Mirrors the pipeline: dedupe on the report, then the decision, then the state change. */
function ingest(m: Model, r: Report): void {
  const key = `${r.txId}|${r.ts}|${r.fs ?? ''}`;
  if (m.keys.has(key)) return;
  m.keys.add(key);
  const otherTx = m.state.gatewayTransactionId !== null && m.state.gatewayTransactionId !== r.txId;
  const d = decideTransition(m.state, {
    transactionStatus: r.ts,
    fraudStatus: r.fs,
    transactionId: r.txId,
    transactionTime: r.time,
    superseded: otherTx && m.seen.has(r.txId),
    reversible: false,
  });
  if (d.kind === 'apply') {
    m.state = { status: d.status, transactionStatus: r.ts, gatewayTransactionId: r.txId, transactionTime: r.time };
    m.events.push({ status: d.status, txId: r.txId });
    m.seen.add(r.txId);
  } else if (d.kind === 'duplicate' && (d.adoptTransaction || m.state.gatewayTransactionId === null)) {
    m.state = { ...m.state, gatewayTransactionId: r.txId, transactionTime: r.time };
    m.seen.add(r.txId);
  } else if (d.kind === 'duplicate') m.seen.add(r.txId);
}

const scenario = fc
  .record({
    earlier: fc.array(fc.constantFrom(...ENDED_LIFECYCLES), { maxLength: 2 }),
    last: fc.constantFrom(...FINAL_LIFECYCLES),
    dupes: fc.array(fc.nat(2), { minLength: 16, maxLength: 16 }),
    order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 40, maxLength: 40 }),
  })
  .map(({ earlier, last, dupes, order }) => {
    const lifecycles = [...earlier, last];
    const reports: Report[] = lifecycles.flatMap((steps, i) =>
      steps.map(([ts, fs]) => ({ txId: `T${i}`, time: `2026-11-2${i}T10:00:00+07:00`, ts, fs: fs ?? null })),
    );
    const withDupes = reports.flatMap((r, i) => Array.from({ length: 1 + (dupes[i] ?? 0) }, () => r));
    const shuffled = withDupes
      .map((r, i) => ({ r, k: order[i % order.length] ?? 0 }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.r);
    const finalStep = last[last.length - 1] ?? ['pending'];
    return { reports, shuffled, expected: mapGatewayStatus(finalStep[0], finalStep[1]) };
  });

function run(reports: Report[]): Model {
  const m: Model = {
    state: { status: 'pending', transactionStatus: null, gatewayTransactionId: null, transactionTime: null },
    seen: new Set(),
    keys: new Set(),
    events: [],
  };
  for (const r of reports) ingest(m, r);
  return m;
}

describe('status machine model (fast-check)', () => {
  it('any order, any duplicates: the final status is the last transaction’s final state', () => {
    fc.assert(
      fc.property(scenario, ({ shuffled, expected }) => {
        expect(run(shuffled).state.status).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('never the same status twice in a row, and never backwards within one gateway transaction', () => {
    fc.assert(
      fc.property(scenario, ({ shuffled }) => {
        const { events } = run(shuffled);
        for (let i = 1; i < events.length; i++) {
          const prev = events[i - 1];
          const ev = events[i];
          if (!prev || !ev) continue;
          expect(ev.status).not.toBe(prev.status);
          // the one documented step down within a transaction: a capture voided before settlement
          const voided = prev.status === 'paid' && ev.status === 'cancelled';
          if (ev.txId === prev.txId && !voided) expect(statusRank(ev.status)).toBeGreaterThan(statusRank(prev.status));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('in gateway order, every status change is forwarded exactly once', () => {
    fc.assert(
      fc.property(scenario, ({ reports }) => {
        const statuses = reports.map((r) => mapGatewayStatus(r.ts, r.fs));
        const changes = statuses.filter((s, i) => s !== (i === 0 ? 'pending' : statuses[i - 1]));
        expect(run(reports).events.map((e) => e.status)).toEqual(changes);
      }),
      { numRuns: 1000 },
    );
  });
});
