/** A stored JSON body (an ERP event, a notification) as an object to show; anything else shows as empty. */
export function jsonObject(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
