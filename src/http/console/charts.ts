/**
 * Charts drawn on the server as inline SVG: nothing loaded from elsewhere, no script, and only SVG
 * presentation attributes (no `style`), so the console's Content-Security-Policy stays as strict as
 * it is. Each chart carries a title and a description for screen readers, and the numbers it shows
 * are in the page's table beside it too.
 */
import { html, type Html } from './html.js';

export interface Bar {
  label: string;
  value: number;
  /** What the bar's value reads as (e.g. `Rp 150.000`). */
  text: string;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** Vertical bars over time (one per day), labelled every few bars, with the largest value marked. */
export function columnChart(o: {
  id: string;
  title: string;
  description: string;
  bars: readonly Bar[];
  width?: number;
  height?: number;
}): Html {
  const width = o.width ?? 640;
  const height = o.height ?? 180;
  const top = 20;
  const bottom = 22;
  const plot = height - top - bottom;
  const max = Math.max(1, ...o.bars.map((b) => b.value));
  const step = o.bars.length === 0 ? width : width / o.bars.length;
  const every = Math.max(1, Math.ceil(o.bars.length / 8));
  const peak = o.bars.reduce((best, b, i) => (b.value > (o.bars[best]?.value ?? -1) ? i : best), 0);
  return html`<svg class="chart" id="${o.id}" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-labelledby="${o.id}-t ${o.id}-d" preserveAspectRatio="none">
<title id="${o.id}-t">${o.title}</title><desc id="${o.id}-d">${o.description}</desc>
<line x1="0" y1="${top + plot}" x2="${width}" y2="${top + plot}" stroke="currentColor" stroke-opacity="0.3"/>
${o.bars.map((b, i) => {
  const h = round((b.value / max) * plot);
  const x = round(i * step + step * 0.15);
  return html`<rect x="${x}" y="${round(top + plot - h)}" width="${round(step * 0.7)}" height="${h}" fill="#2f6fde"><title>${b.label}: ${b.text}</title></rect>${
    i % every === 0
      ? html`<text x="${round(i * step + step / 2)}" y="${height - 6}" font-size="10" text-anchor="middle" fill="currentColor">${b.label}</text>`
      : ''
  }`;
})}
${o.bars.length > 0 && (o.bars[peak]?.value ?? 0) > 0 ? html`<text x="${round(Math.min(Math.max(peak * step + step / 2, 40), width - 40))}" y="${top - 6}" font-size="10" text-anchor="middle" fill="currentColor">${o.bars[peak]?.text ?? ''}</text>` : ''}
</svg>`;
}

/** Horizontal bars, one per row (a payment type), each with its value written after it. */
export function barChart(o: {
  id: string;
  title: string;
  description: string;
  bars: readonly Bar[];
  max?: number;
  width?: number;
}): Html {
  const width = o.width ?? 640;
  const row = 22;
  const labelW = 130;
  const textW = 110;
  const height = Math.max(row, o.bars.length * row) + 4;
  const max = o.max ?? Math.max(1, ...o.bars.map((b) => b.value));
  const plot = width - labelW - textW;
  return html`<svg class="chart" id="${o.id}" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-labelledby="${o.id}-t ${o.id}-d">
<title id="${o.id}-t">${o.title}</title><desc id="${o.id}-d">${o.description}</desc>
${o.bars.map((b, i) => {
  const w = round((Math.max(0, b.value) / max) * plot);
  const y = i * row + 2;
  return html`<text x="${labelW - 6}" y="${y + 14}" font-size="11" text-anchor="end" fill="currentColor">${b.label}</text><rect x="${labelW}" y="${y + 3}" width="${w}" height="${row - 8}" fill="#2f6fde"/><text x="${labelW + w + 6}" y="${y + 14}" font-size="11" fill="currentColor">${b.text}</text>`;
})}
</svg>`;
}
