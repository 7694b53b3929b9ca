/** The payment page's timeline: oldest first, with a report above the status change it caused. */
import { describe, expect, it } from 'vitest';
import { timelineOrder } from '../../src/http/console/transaction.js';
import { html } from '../../src/http/console/html.js';

const entry = (at: string, name: string, role?: 'applied-report' | 'status-event') => ({
  at,
  title: html`${name}`,
  ...(role ? { role } : {}),
});
const names = (xs: ReturnType<typeof timelineOrder>) => xs.map((x) => x.title.text);

describe('timelineOrder', () => {
  it('puts the report that changed the status above the ERP event of that change, stamped a moment earlier', () => {
    const order = timelineOrder([
      entry('2026-11-27T04:55:01.120Z', 'report', 'applied-report'),
      entry('2026-11-27T04:55:00.000Z', 'created'),
      entry('2026-11-27T04:55:01.100Z', 'status paid', 'status-event'),
      entry('2026-11-27T04:55:01.300Z', 'attempt 1'),
    ]);
    expect(names(order)).toEqual(['created', 'report', 'status paid', 'attempt 1']);
  });

  it('keeps time order otherwise: an event long before a report, or a report that changed nothing', () => {
    expect(
      names(
        timelineOrder([
          entry('2026-11-27T05:00:00.000Z', 'late report', 'applied-report'),
          entry('2026-11-27T04:55:01.100Z', 'status paid', 'status-event'),
        ]),
      ),
    ).toEqual(['status paid', 'late report']);
    expect(
      names(
        timelineOrder([
          entry('2026-11-27T04:55:01.120Z', 'duplicate report'),
          entry('2026-11-27T04:55:01.100Z', 'status paid', 'status-event'),
        ]),
      ),
    ).toEqual(['status paid', 'duplicate report']);
    // Times written with an offset compare as instants.
    expect(
      names(timelineOrder([entry('2026-11-27T11:55:02+07:00', 'b'), entry('2026-11-27T04:55:01.000Z', 'a')])),
    ).toEqual(['a', 'b']);
  });
});
