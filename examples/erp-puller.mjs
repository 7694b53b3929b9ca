// An ERP that cannot receive webhooks pulls its events instead (Node 18+, no dependencies).
// Keep the cursor where the ERP keeps its data: after a restart it goes on from there.

/**
 * Pulls paylink's events for ever (until `signal` aborts): each page is handled in order,
 * the cursor saved, then acknowledged, so the outbox stops retrying those events. An
 * acknowledgement that fails is sent again after the next pull (it covers every event up to the
 * cursor); the pull itself goes on from the saved cursor, so nothing handled comes again.
 * `handle(event)` must be idempotent per `event.event_id`: after a crash between handling and
 * saving the cursor, the same page comes again.
 */
export async function pullPaylinkEvents({ baseUrl, apiKey, loadCursor, saveCursor, handle, signal }) {
  const headers = { authorization: `Bearer ${apiKey}` };
  let cursor = await loadCursor();
  let unacknowledged = false;
  while (!signal?.aborted) {
    try {
      const query = new URLSearchParams({ limit: '200', wait: '25', ...(cursor ? { after: cursor } : {}) });
      const res = await fetch(`${baseUrl}/api/erp-events?${query}`, { headers, signal });
      if (res.status === 400) throw new Error(`paylink refused the cursor: ${await res.text()}`);
      if (!res.ok) throw new Error(`paylink answered ${res.status}`);
      const page = await res.json();
      for (const { event } of page.data) await handle(event);
      if (page.data.length > 0) {
        await saveCursor(page.next_cursor);
        unacknowledged = true;
      }
      cursor = page.next_cursor;
      if (unacknowledged) {
        const ack = await fetch(`${baseUrl}/api/erp-events/ack`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ cursor }), signal });
        unacknowledged = !ack.ok;
      }
    } catch (err) {
      if (signal?.aborted) return;
      if (String(err.message).startsWith('paylink refused the cursor')) throw err;
      await new Promise((r) => setTimeout(r, 2000)); // paylink restarting or unreachable: try again
    }
  }
}
