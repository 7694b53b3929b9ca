import { describe, expect, it } from 'vitest';
import { barChart, columnChart } from '../../src/http/console/charts.js';

describe('server-drawn SVG charts', () => {
  const bars = [
    { label: '11-20', value: 100, text: 'Rp 100' },
    { label: '11-21', value: 50, text: 'Rp 50' },
    { label: '<b>x</b>', value: 0, text: 'Rp 0' },
  ];

  it('draw each value in proportion, with a title and description and no style attribute (the CSP allows none)', () => {
    const svg = columnChart({
      id: 'c',
      title: 'Paid per day',
      description: 'Rupiah paid each day',
      bars,
      width: 300,
      height: 140,
    }).text;
    expect(svg).toContain('<title id="c-t">Paid per day</title>');
    expect(svg).toContain('<desc id="c-d">Rupiah paid each day</desc>');
    expect(svg).not.toMatch(/style=/);
    const heights = [...svg.matchAll(/<rect [^>]*height="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(heights).toEqual([98, 49, 0]);
    // Labels are escaped like every other value of the console.
    expect(svg).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(svg).not.toContain('<b>');
  });

  it('horizontal bars scale to the given maximum and write their value', () => {
    const svg = barChart({
      id: 'b',
      title: 'Success rate',
      description: 'Share paid',
      bars: [{ label: 'qris', value: 0.5, text: '50%' }],
      max: 1,
      width: 440,
    }).text;
    expect(svg).toMatch(/<rect x="130" y="5" width="100"/);
    expect(svg).toContain('>50%</text>');
  });
});
