import { formatDuration } from '../status/format.js';

// One terminal for log lines and a progress bar. A bar redraws its own line with `\r` and no
// newline, so a log line written meanwhile started inside it (`6/6 windows | ETA 0s[04:08:39] INFO`).
// Log lines go through here: with a bar shown, the bar's line is cleared, the log line written
// above it, and the bar drawn again below (issue 40).

export interface TerminalSink {
  /** What the logger writes to (one or more complete lines). */
  write(text: string): boolean;
  /** While a bar is shown: `redraw` puts it back after a log line. Returns the detach function. */
  showingBar(redraw: () => void): () => void;
}

const CLEAR_LINE = '\r\u001b[2K';

export function createTerminalSink(out: NodeJS.WritableStream): TerminalSink {
  let redraw: (() => void) | undefined;
  return {
    write(text) {
      if (redraw === undefined) return out.write(text);
      const written = out.write(`${CLEAR_LINE}${text}`);
      redraw();
      return written;
    },
    showingBar(draw) {
      redraw = draw;
      return () => {
        if (redraw === draw) redraw = undefined;
      };
    },
  };
}

/**
 * Time left at the rate seen so far, for a progress bar: `—` until something moved (cli-progress's
 * own ETA printed `NFs` for an infinite estimate), `0s` when done.
 */
export function formatEta(progress: {
  done: number;
  total: number;
  elapsedMs: number;
  startDone?: number;
}): string {
  const left = progress.total - progress.done;
  if (left <= 0) return '0 s';
  const moved = progress.done - (progress.startDone ?? 0);
  if (moved <= 0 || progress.elapsedMs <= 0) return '—';
  const seconds = (left / moved) * (progress.elapsedMs / 1000);
  return Number.isFinite(seconds) ? formatDuration(Math.max(1, Math.round(seconds))) : '—';
}

/** The terminal's width for text cut at the right edge; 100 when it is not a terminal. */
export function terminalColumns(out: NodeJS.WritableStream, fallback = 100): number {
  const columns = (out as NodeJS.WriteStream).columns;
  return typeof columns === 'number' && columns >= 40 ? columns : fallback;
}
