import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { niceCeiling } from '../../../src/http/hourly-chart.js';
import { escapeHtml, html } from '../../../src/http/html.js';
import { formatDuration } from '../../../src/status/format.js';
import { stripControlCharacters } from '../../../src/terminal-text.js';
import { renderTable, wrapVerdict } from '../../../src/status/render-text.js';

// eslint-disable-next-line no-control-regex
const CONTROL_OR_BIDI = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('status rendering pieces (pure)', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const hostile = `"><img src=x onerror=alert(1)>'&`;
    const markup = html`<td title="${hostile}">${hostile}</td>`.value;
    expect(markup).toBe(`<td title="${escapeHtml(hostile)}">${escapeHtml(hostile)}</td>`);
    expect(markup).not.toMatch(/<img/);
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(escapeHtml(text)).not.toMatch(/[<>"']/);
      }),
    );
  });

  it('puts the chart top at the smallest 1-2-5 step not below the largest bar', () => {
    expect([0, 1, 3, 8, 120, 200, 201, 4_999].map(niceCeiling)).toEqual([1, 1, 5, 10, 200, 200, 500, 5_000]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 9 }), (value) => {
        const top = niceCeiling(value);
        expect(top).toBeGreaterThanOrEqual(value);
        expect(top).toBeLessThanOrEqual(value * 5);
      }),
    );
  });

  it('strips control characters: none survive, printable text is left as it is', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(stripControlCharacters(text)).not.toMatch(CONTROL_OR_BIDI);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abc xyz…→é漢😀-_/:'.split('')) }), (text) => {
        expect(stripControlCharacters(text)).toBe(text);
      }),
    );
    expect(stripControlCharacters('a\tb\nc\u001b[31md')).toBe('a b c[31md');
  });

  it('formats durations with two units at most', () => {
    expect([0, 59, 60, 3_599, 3_600, 7_140, 172_800, 180_000].map(formatDuration)).toEqual([
      '0 s',
      '59 s',
      '1 min',
      '59 min',
      '1 h',
      '1 h 59 min',
      '2 d',
      '2 d 2 h',
    ]);
  });

  it('wraps a long verdict at commas and never cuts it', () => {
    const problems = Array.from({ length: 12 }, (_, i) => `problem number ${i}`);
    const lines = wrapVerdict(`ATTENTION: ${problems.join(', ')}`, 60);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(lines.map((line) => line.trim()).join(' ')).toBe(`ATTENTION: ${problems.join(', ')}`);
  });

  it('aligns numbers right and puts long details under their row', () => {
    expect(
      renderTable(
        ['name', 'rows'],
        [
          ['a', 5],
          ['bbb', 1_234],
        ],
        { details: [null, 'boom'] },
      ),
    ).toEqual(['  name   rows', '  a         5', '  bbb   1,234', '      ↳ boom']);
  });
});
