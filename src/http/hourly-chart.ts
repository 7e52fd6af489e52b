import { formatCount } from '../status/format.js';
import type { HourlyThroughput } from '../status/status-report.js';
import type { StreamName } from '../sync/stream-facts.js';
import { html, type SafeHtml } from './html.js';

// Stacked bars of rows per hour and stream, as inline SVG: no script, no external asset.

/** One colour per stream of the registry (the type makes it every one); none red, which means failure. */
export const STREAM_COLORS: Record<StreamName, string> = {
  checkins: '#4e79a7',
  restaurants: '#f28e2b',
  locations: '#59a14f',
  challenges: '#b07aa1',
  balance: '#76b7b2',
  payment_intents: '#edc948',
  alerts: '#9c755f',
  members: '#ff9da7',
};
const FALLBACK_COLOR = '#8c8c8c';

/**
 * The chart's drawing units. A browser scales the drawing to the card's width, text included, so a
 * phone gets a drawing of its own: fewer units across (its 12-unit text stays readable) and an
 * hour label every 6 hours instead of 3.
 */
export interface ChartLayout {
  name: 'wide' | 'narrow';
  width: number;
  height: number;
  labelEvery: number;
}

export const WIDE_CHART: ChartLayout = { name: 'wide', width: 960, height: 240, labelEvery: 3 };
export const NARROW_CHART: ChartLayout = { name: 'narrow', width: 400, height: 220, labelEvery: 6 };

const LEFT = 64;
const RIGHT = 12;
const TOP = 14;
const BOTTOM = 30;

/** The smallest 1, 2 or 5 × 10^k at or above `value` (an axis top people can read). */
export function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((m) => m * power >= value) ?? 10;
  return step * power;
}

export function streamColor(stream: string): string {
  return (STREAM_COLORS as Record<string, string>)[stream] ?? FALLBACK_COLOR;
}

/** Where a value and an hour land on the chart. */
interface ChartScale {
  top: number;
  plotWidth: number;
  plotHeight: number;
  slot: number;
  barWidth: number;
  y(value: number): number;
}

function chartScale(layout: ChartLayout, hourCount: number, totals: number[]): ChartScale {
  const top = niceCeiling(Math.max(0, ...totals));
  const plotWidth = layout.width - LEFT - RIGHT;
  const plotHeight = layout.height - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, hourCount);
  return {
    top,
    plotWidth,
    plotHeight,
    slot,
    barWidth: Math.max(2, slot * 0.72),
    y: (value) => TOP + plotHeight - (value / top) * plotHeight,
  };
}

export function renderHourlyChart(throughput: HourlyThroughput, layout: ChartLayout = WIDE_CHART): SafeHtml {
  const hours = throughput.hours;
  const totals = hours.map((_, i) => throughput.series.reduce((sum, s) => sum + (s.rows[i] ?? 0), 0));
  const scale = chartScale(layout, hours.length, totals);
  const bars = hours.map((hour, i) => hourBar(throughput, { scale, layout }, hour, i));
  const empty = totals.every((total) => total === 0)
    ? html`<text
        class="empty"
        x="${LEFT + scale.plotWidth / 2}"
        y="${TOP + scale.plotHeight / 2}"
        text-anchor="middle"
        >No rows ingested in the last ${hours.length} hours</text
      >`
    : '';
  return html`<svg
    class="chart ${layout.name}"
    viewBox="0 0 ${layout.width} ${layout.height}"
    role="img"
    aria-label="Rows ingested per hour, last ${hours.length} hours, by stream"
    preserveAspectRatio="xMidYMid meet"
  >
    ${gridLines(scale, layout)}
    <line
      class="baseline"
      x1="${LEFT}"
      x2="${layout.width - RIGHT}"
      y1="${scale.y(0).toFixed(1)}"
      y2="${scale.y(0).toFixed(1)}"
    />
    ${bars}${empty}
  </svg>`;
}

function gridLines(scale: ChartScale, layout: ChartLayout): SafeHtml[] {
  return [0, 0.25, 0.5, 0.75, 1].map((fraction) => {
    const y = scale.y(scale.top * fraction);
    return html`<line
        class="grid"
        x1="${LEFT}"
        x2="${layout.width - RIGHT}"
        y1="${y.toFixed(1)}"
        y2="${y.toFixed(1)}"
      />
      <text class="axis" x="${LEFT - 8}" y="${(y + 4).toFixed(1)}" text-anchor="end"
        >${formatCount(scale.top * fraction)}</text
      >`;
  });
}

/** One hour's stacked segments, one per stream, and its label every few hours and on the current one. */
function hourBar(
  throughput: HourlyThroughput,
  { scale, layout }: { scale: ChartScale; layout: ChartLayout },
  hour: string,
  i: number,
): SafeHtml {
  const hours = throughput.hours;
  let base = 0;
  const x = LEFT + i * scale.slot + (scale.slot - scale.barWidth) / 2;
  const label = `${hour.slice(11, 16)} UTC`;
  const segments = throughput.series.map((series) => {
    const rows = series.rows[i] ?? 0;
    if (rows === 0) return html``;
    const y1 = scale.y(base + rows);
    const height = scale.y(base) - y1;
    base += rows;
    return html`<rect
      class="bar"
      data-stream="${series.stream}"
      x="${x.toFixed(1)}"
      y="${y1.toFixed(1)}"
      width="${scale.barWidth.toFixed(1)}"
      height="${Math.max(1, height).toFixed(1)}"
      fill="${streamColor(series.stream)}"
      ><title>${series.stream}, ${label}: ${formatCount(rows)} rows</title></rect
    >`;
  });
  // Every few hours labelled, and always the current one, so the labels never collide.
  const labelled = (hours.length - 1 - i) % layout.labelEvery === 0;
  return html`${segments}${labelled ? html`<text class="axis" x="${(x + scale.barWidth / 2).toFixed(1)}" y="${layout.height - 10}" text-anchor="middle">${i === hours.length - 1 ? 'now' : hour.slice(11, 16)}</text>` : ''}`;
}
