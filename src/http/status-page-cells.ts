import { formatInstant, relativeTime } from '../status/format.js';
import { element, html, type Interpolation, type SafeHtml } from './html.js';

// The status page's building blocks: badges, instants and tables. A table cell carries its column's
// heading (data-label), so on a narrow screen the stylesheet stacks each row into a card of
// "heading value" lines, error text at full width, instead of a table wider than a phone.

export type Tone = 'ok' | 'warn' | 'bad' | 'none';

export function badge(text: string, tone: Tone): SafeHtml {
  return html`<span class="badge ${tone}">${text}</span>`;
}

/** "3 min ago" over the instant itself; a dash for none. */
export function when(at: string | null, now: Date): SafeHtml {
  if (at === null) return html`<span class="when">—</span>`;
  return html`<span class="when">${relativeTime(at, now)}<small>${formatInstant(at)}</small></span>`;
}

/** A cell with a class of its own (e.g. `overdue`), beside the one its column gives. */
export interface Cell {
  value: Interpolation;
  className: string;
}

export interface TableRow {
  cells: ReadonlyArray<Interpolation | Cell>;
  /** A failed row is marked (a red edge when stacked), not only by its badge's colour. */
  tone?: Tone | undefined;
}

/** How wide a table must be before it is shown as a table rather than stacked rows. */
export type TableWidth = 'narrow' | 'wide';

const isCell = (value: unknown): value is Cell =>
  typeof value === 'object' && value !== null && 'className' in value && 'value' in value;

/**
 * A table with these column headings: `#name` is numeric (right-aligned), `!name` holds an error
 * text (full width when stacked). `wide` tables (many columns, long texts) stack on wider screens.
 */
export function tableWith(
  headings: readonly string[],
  width: TableWidth = 'narrow',
): (rows: ReadonlyArray<TableRow | ReadonlyArray<Interpolation | Cell>>) => SafeHtml {
  const columns = headings.map((heading) => {
    const kind = heading.startsWith('#') ? 'num' : heading.startsWith('!') ? 'err' : '';
    return { label: kind === '' ? heading : heading.slice(1), kind };
  });
  const head = columns.map((column) =>
    element('th', { class: column.kind === 'num' ? 'num' : undefined }, column.label),
  );
  return (rows) => {
    const body = rows.map((row) => {
      const { cells, tone } = 'cells' in row ? row : { cells: row, tone: undefined };
      const tds = cells.map((cell, i) => {
        const column = columns[i];
        const value = isCell(cell) ? cell.value : cell;
        const own = isCell(cell) ? cell.className : value === '—' ? 'dash' : '';
        const className = [column?.kind ?? '', own].filter((name) => name !== '').join(' ');
        return element('td', { 'data-label': column?.label, class: className }, value);
      });
      return element('tr', { class: tone === 'bad' || tone === 'warn' ? tone : undefined }, tds);
    });
    return html`<table class="stacks ${width}">
      <thead>
        <tr>
          ${head}
        </tr>
      </thead>
      <tbody>
        ${body}
      </tbody>
    </table>`;
  };
}

export function listOrNone(items: readonly unknown[], none: string, table: () => SafeHtml): SafeHtml {
  return items.length === 0 ? html`<p class="none-yet">${none}</p>` : table();
}
