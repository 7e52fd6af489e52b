// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from outside (partner errors, record ids, reasons) made safe for a terminal: tabs and line
 * breaks become spaces (they would break the layout), every other control character is removed.
 */
export function stripControlCharacters(text: string): string {
  return text.replace(/[\t\n\r]/g, ' ').replace(CONTROL, '');
}
