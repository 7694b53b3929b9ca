export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function optString(obj: Json, key: string): string | undefined {
  const v = obj[key];
  return typeof v === 'string' ? v : undefined;
}

/** Integers may arrive as JSON numbers or digit strings; the gateway parses both as Long. */
export function asInteger(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d{1,15}$/.test(v.trim())) return Number(v.trim());
  return undefined;
}

export interface Item {
  id?: string;
  name: string;
  price: number;
  quantity: number;
  brand?: string;
  category?: string;
  merchant_name?: string;
}

export interface Customer {
  first_name?: string;
  last_name?: string;
  email?: string;
  phone?: string;
  notes?: string;
}

export interface OrderInput {
  order_id: string;
  gross_amount: number;
  items: Item[];
  customer?: Customer;
}

/** Core and Payment Link share the strict order id alphabet; Snap takes any printable text. */
export type OrderIdRule = 'core' | 'snap';

export interface OrderLimits {
  customer: Record<'first_name' | 'last_name' | 'email' | 'phone', number>;
  grossRequired: boolean;
  orderIdRule?: OrderIdRule;
}

export const ORDER_ID_RE = /^[A-Za-z0-9\-_~.]+$/;
/** Snap: printable ASCII incl. spaces and ':' (the client libraries' own tests use "test-2025-01-01 12:34:56"). */
export const SNAP_ORDER_ID_RE = /^[\x20-\x7e]+$/;
export const ORDER_ID_MAX = 50;

/** The gateway reads a JSON number order id as the string of its digits. */
function orderIdText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  return undefined;
}

export function validateOrderId(
  v: unknown,
  errors: string[],
  field = 'transaction_details.order_id',
  rule: OrderIdRule = 'core',
): string | undefined {
  if (v === undefined || v === null || v === '') {
    errors.push(`${field} is required`);
    return undefined;
  }
  const text = orderIdText(v);
  if (text === undefined) {
    errors.push(`${field} must be a string`);
    return undefined;
  }
  if (text.length > ORDER_ID_MAX) errors.push(`${field} too long, max ${ORDER_ID_MAX} characters`);
  if (rule === 'core' && !ORDER_ID_RE.test(text))
    errors.push(`${field} contains invalid characters, allowed: alphanumeric, '-', '_', '~' and '.'`);
  if (rule === 'snap' && (!SNAP_ORDER_ID_RE.test(text) || text.trim() === ''))
    errors.push(`${field} contains invalid characters`);
  return text;
}

function validateGross(v: unknown, required: boolean, errors: string[]): number | undefined {
  if (v === undefined || v === null) {
    if (required) errors.push('transaction_details.gross_amount is required');
    return undefined;
  }
  const n = asInteger(v);
  if (n === undefined) {
    errors.push('transaction_details.gross_amount must be an integer');
    return undefined;
  }
  if (n < 1) errors.push('transaction_details.gross_amount must be greater than or equal to 0.01');
  return n;
}

function limitedString(obj: Json, key: string, max: number, field: string, errors: string[]): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' && typeof v !== 'number') {
    errors.push(`${field} must be a string`);
    return undefined;
  }
  const s = String(v);
  if (s.length > max) errors.push(`${field} must be at most ${max} characters`);
  return s;
}

function validateItem(raw: unknown, i: number, errors: string[]): Item | undefined {
  const f = `item_details[${i}]`;
  if (!isObject(raw)) {
    errors.push(`${f} must be an object`);
    return undefined;
  }
  const name = limitedString(raw, 'name', 50, `${f}.name`, errors);
  if (name === undefined || name.length === 0) errors.push(`${f}.name is required`);
  const price = asInteger(raw.price);
  if (price === undefined) errors.push(`${f}.price must be an integer`);
  const quantity = asInteger(raw.quantity);
  if (quantity === undefined || quantity < 1)
    errors.push(`${f}.quantity must be an integer greater than or equal to 1`);
  const id =
    limitedString(raw, 'id', 50, `${f}.id`, errors) ?? limitedString(raw, 'item_id', 50, `${f}.item_id`, errors);
  const item: Item = { name: name ?? '', price: price ?? 0, quantity: quantity ?? 0 };
  if (id !== undefined) item.id = id;
  for (const k of ['brand', 'category', 'merchant_name'] as const) {
    const v = limitedString(raw, k, 50, `${f}.${k}`, errors);
    if (v !== undefined) item[k] = v;
  }
  return item;
}

export function validateItems(raw: unknown, errors: string[]): Item[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    errors.push('item_details must be an array');
    return [];
  }
  const items: Item[] = [];
  raw.forEach((r, i) => {
    const item = validateItem(r, i, errors);
    if (item) items.push(item);
  });
  return items;
}

export function validateCustomer(
  raw: unknown,
  limits: OrderLimits['customer'],
  errors: string[],
): Customer | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    errors.push('customer_details must be an object');
    return undefined;
  }
  const c: Customer = {};
  for (const k of ['first_name', 'last_name', 'email', 'phone'] as const) {
    const v = limitedString(raw, k, limits[k], `customer_details.${k}`, errors);
    if (v !== undefined) c[k] = v;
  }
  const notes = limitedString(raw, 'notes', 255, 'customer_details.notes', errors);
  if (notes !== undefined) c.notes = notes;
  if (c.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(c.email))
    errors.push('customer_details.email format is invalid');
  return c;
}

/** transaction_details + item_details + customer_details, shared by the three APIs with their own limits. */
export function validateOrder(body: Json, limits: OrderLimits, errors: string[]): OrderInput | undefined {
  const td = body.transaction_details;
  if (!isObject(td)) {
    errors.push('transaction_details is required');
    return undefined;
  }
  const orderId = validateOrderId(td.order_id, errors, 'transaction_details.order_id', limits.orderIdRule);
  const gross = validateGross(td.gross_amount, limits.grossRequired, errors);
  const items = validateItems(body.item_details, errors);
  const customer = validateCustomer(body.customer_details, limits.customer, errors);
  if (items.length > 0 && gross !== undefined) {
    const sum = items.reduce((acc, it) => acc + it.price * it.quantity, 0);
    if (sum !== gross) errors.push('transaction_details.gross_amount is not equal to the sum of item_details');
  }
  if (orderId === undefined) return undefined;
  const out: OrderInput = { order_id: orderId, gross_amount: gross ?? 0, items };
  if (customer) out.customer = customer;
  return out;
}

/** custom_field1..3 and metadata are echoed verbatim in status bodies and notifications. */
export function pickExtras(body: Json, errors: string[]): Json {
  const out: Json = {};
  for (const k of ['custom_field1', 'custom_field2', 'custom_field3']) {
    const v = body[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v.length > 255) errors.push(`${k} must be a string of at most 255 characters`);
    else out[k] = v;
  }
  if (body.metadata !== undefined && body.metadata !== null) out.metadata = body.metadata;
  return out;
}
