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
  /** Label size in the chart's own units: drawn at about this many pixels when the chart is shown `width` pixels wide. */
  fontSize?: number;
  /** How many bars a label spans at most (default: about eight labels). */
  labelEvery?: number;
}): Html {
  const width = o.width ?? 640;
  const font = o.fontSize ?? 10;
  const height = o.height ?? 180;
  const top = 20;
  const bottom = 22;
  const plot = height - top - bottom;
  const max = Math.max(1, ...o.bars.map((b) => b.value));
  const step = o.bars.length === 0 ? width : width / o.bars.length;
  const every = o.labelEvery ?? Math.max(1, Math.ceil(o.bars.length / 8));
  const peak = o.bars.reduce((best, b, i) => (b.value > (o.bars[best]?.value ?? -1) ? i : best), 0);
  return html`<svg class="chart" id="${o.id}" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-labelledby="${o.id}-t ${o.id}-d" preserveAspectRatio="none">
<title id="${o.id}-t">${o.title}</title><desc id="${o.id}-d">${o.description}</desc>
<line x1="0" y1="${top + plot}" x2="${width}" y2="${top + plot}" stroke="currentColor" stroke-opacity="0.3"/>
${o.bars.map((b, i) => {
  const h = round((b.value / max) * plot);
  const x = round(i * step + step * 0.15);
  return html`<rect x="${x}" y="${round(top + plot - h)}" width="${round(step * 0.7)}" height="${h}" fill="#2f6fde"><title>${b.label}: ${b.text}</title></rect>${
    i % every === 0
      ? // The first label starts at the left edge rather than being centred past it.
        html`<text x="${i === 0 ? 0 : round(i * step + step / 2)}" y="${height - 6}" font-size="${font}" text-anchor="${i === 0 ? 'start' : 'middle'}" fill="currentColor">${b.label}</text>`
      : ''
  }`;
})}
${o.bars.length > 0 && (o.bars[peak]?.value ?? 0) > 0 ? html`<text x="${round(Math.min(Math.max(peak * step + step / 2, 40), width - 40))}" y="${top - 6}" font-size="${font}" text-anchor="middle" fill="currentColor">${o.bars[peak]?.text ?? ''}</text>` : ''}
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
  /** Label size in the chart's own units (see `columnChart`). */
  fontSize?: number;
}): Html {
  const width = o.width ?? 640;
  const font = o.fontSize ?? 11;
  const row = Math.max(22, font * 2);
  // Room for the longest label and value text, at about 0.55 em a character, within half the width
  // each; without a size asked for, the fixed room of 130 and 110 units.
  const room = (texts: string[], fixed: number) =>
    o.fontSize === undefined
      ? fixed
      : Math.min(width * 0.45, Math.round(Math.max(4, ...texts.map((x) => x.length)) * font * 0.55) + 10);
  const labelW = room(
    o.bars.map((b) => b.label),
    130,
  );
  const textW = room(
    o.bars.map((b) => b.text),
    110,
  );
  const height = Math.max(row, o.bars.length * row) + 4;
  const max = o.max ?? Math.max(1, ...o.bars.map((b) => b.value));
  const plot = width - labelW - textW;
  return html`<svg class="chart" id="${o.id}" viewBox="0 0 ${width} ${height}" width="100%" role="img" aria-labelledby="${o.id}-t ${o.id}-d">
<title id="${o.id}-t">${o.title}</title><desc id="${o.id}-d">${o.description}</desc>
${o.bars.map((b, i) => {
  const w = round((Math.max(0, b.value) / max) * plot);
  const y = i * row + 2;
  const base = o.fontSize === undefined ? y + 14 : y + Math.round(row / 2 + font * 0.35);
  return html`<text x="${labelW - 6}" y="${base}" font-size="${font}" text-anchor="end" fill="currentColor">${b.label}</text><rect x="${labelW}" y="${y + 3}" width="${w}" height="${row - 8}" fill="#2f6fde"/><text x="${labelW + w + 6}" y="${base}" font-size="${font}" fill="currentColor">${b.text}</text>`;
})}
</svg>`;
}
