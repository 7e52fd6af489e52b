import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createTerminalSink, formatEta, terminalColumns } from '../../../src/cli/terminal.js';

describe('terminal output: progress bars and the width of status', () => {
  it('the ETA is a duration or —, never cli-progress’s `NFs`', () => {
    expect(formatEta({ done: 0, total: 6, elapsedMs: 5_000 })).toBe('—');
    expect(formatEta({ done: 2, total: 6, startDone: 2, elapsedMs: 5_000 })).toBe('—');
    expect(formatEta({ done: 3, total: 6, elapsedMs: 30_000 })).toBe('30 s');
    expect(formatEta({ done: 6, total: 6, elapsedMs: 30_000 })).toBe('0 s');
    expect(formatEta({ done: 1, total: 601, elapsedMs: 1_000 })).toBe('10 min');
  });

  it('a log line written while a bar is shown prints above the bar, which is drawn again below it', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const sink = createTerminalSink(out);
    sink.write('before\n');
    out.write('6/6 windows | ETA 0 s'); // the bar's line, no newline
    const detach = sink.showingBar(() => out.write('\r6/6 windows | ETA 0 s'));
    sink.write('[04:08:39.301] INFO: window paged\n');
    detach();
    sink.write('after\n');
    expect(text).toBe(
      'before\n6/6 windows | ETA 0 s\r\u001b[2K[04:08:39.301] INFO: window paged\n\r6/6 windows | ETA 0 s' +
        'after\n',
    );
    // The log line never shares a line with the bar's text.
    expect(text).not.toContain('ETA 0 s[04:08:39.301]');
  });

  it("status cuts lines at the terminal's width, 100 columns when not a terminal", () => {
    expect(terminalColumns(Object.assign(new PassThrough(), { columns: 180 }))).toBe(180);
    expect(terminalColumns(new PassThrough())).toBe(100);
  });
});
