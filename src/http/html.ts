// A tagged template that escapes every interpolated value unless it is already markup built by
// this same tag: the status page shows error texts and ids that come from remote systems.

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Interpolation =
  SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly Interpolation[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * `<tag name="value" …>content</tag>` on one line, attribute values and content escaped (as `html`
 * does), no whitespace added inside: CSS may then tell an empty cell by `:empty`.
 */
export function element(
  tag: string,
  attributes: Record<string, string | undefined>,
  content: Interpolation,
): SafeHtml {
  const attrs = Object.entries(attributes)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')
    .map(([name, value]) => ` ${name}="${escapeHtml(value)}"`)
    .join('');
  return new SafeHtml(`<${tag}${attrs}>${render(content)}</${tag}>`);
}

/** For constant markup only (the stylesheet): never pass data through this. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
