// The status page's stylesheet, inline (the page must work with no network). System fonts,
// contrast at WCAG AA or better, colour never the only signal (every state is also a word).
// Every width from 360 px up: no horizontal scroll. Each card is a size container; a table whose
// card is too narrow for its columns stacks its rows into "heading value" lines, errors at full
// width (`wide` tables, with many columns, stack sooner).

/** Container widths (px) below which a table's rows stack; see status-page-cells.ts. */
const STACK_BELOW = { narrow: 500, wide: 780 } as const;

/**
 * The stacked layout of `table.stacks.<width>`: a row is a card whose first cell is its title, the
 * others labelled by their heading in as many columns as fit, an error across the whole card; cells
 * with nothing to say (empty, or a dash) are left out.
 */
function stackedTable(width: keyof typeof STACK_BELOW): string {
  const t = `table.stacks.${width}`;
  return `
@container (max-width: ${STACK_BELOW[width]}px) {
  ${t}, ${t} tbody { display:block; width:100%; }
  ${t} thead { position:absolute; width:1px; height:1px; overflow:hidden; clip-path:inset(50%); white-space:nowrap; }
  ${t} tr { display:grid; grid-template-columns:repeat(auto-fill,minmax(6.5em,1fr)); gap:4px 12px;
    padding:8px 0 10px; border-bottom:1px solid var(--line); }
  ${t} tr:last-child { border-bottom:0; }
  ${t} tr.bad { border-left:4px solid var(--bad); padding-left:10px; }
  ${t} tr.warn { border-left:4px solid #d69e00; padding-left:10px; }
  ${t} td { display:block; border:0; padding:0; text-align:left; max-width:none; min-width:0; }
  ${t} td::before { content:attr(data-label); display:block; color:var(--muted); font-size:11px;
    text-transform:uppercase; letter-spacing:.05em; }
  ${t} td:first-child, ${t} td.err { grid-column:1 / -1; }
  ${t} td:first-child { font-size:16px; }
  ${t} td:first-child::before { content:none; }
  ${t} td:empty, ${t} td.dash { display:none; }
  ${t} .when, ${t} .badge { white-space:normal; }
  ${t} .badge { border-radius:8px; }
  ${t} td code { overflow-wrap:anywhere; }
}`;
}

export const STATUS_PAGE_CSS = `
:root { --ink:#1b2430; --muted:#5b6675; --line:#dde3ea; --bg:#f4f6f9; --card:#fff;
  --ok:#1a7f37; --ok-bg:#e8f5ec; --warn:#8a5a00; --warn-bg:#fff4d6; --bad:#b42318; --bad-bg:#fdecea; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust:100%; text-size-adjust:100%; }
body { margin:0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color:var(--ink); background:var(--bg); }
.wrap { max-width:1200px; margin:0 auto; padding:0 24px; }
header { color:#fff; padding:20px 0 22px; }
header.ok { background:linear-gradient(120deg,#14532d,#1a7f37); }
header.attention { background:linear-gradient(120deg,#7a1d12,#b42318); }
.brand { font-size:13px; letter-spacing:.08em; text-transform:uppercase; opacity:.85; }
h1 { margin:4px 0 6px; font-size:30px; line-height:1.2; }
.problems { margin:6px 0 8px; padding-left:20px; font-size:16px; }
.problems li { margin:2px 0; overflow-wrap:anywhere; }
.meta { margin:0; font-size:13px; opacity:.9; }
.meta a { color:#fff; }
main.wrap { padding:22px 24px 40px; }
h2 { font-size:17px; margin:0 0 10px; }
h2 small { font-weight:normal; color:var(--muted); font-size:13px; margin-left:6px; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px; margin-bottom:18px;
  container-type:inline-size; min-width:0; }
.cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(min(170px,100%),1fr)); gap:14px; background:none; border:0; padding:0; }
.card { background:var(--card); border:1px solid var(--line); border-left:5px solid var(--line); border-radius:10px; padding:12px 14px; min-width:0; }
.card.ok { border-left-color:var(--ok); } .card.warn { border-left-color:#d69e00; } .card.bad { border-left-color:var(--bad); }
.card .label { font-size:12px; text-transform:uppercase; letter-spacing:.06em; color:var(--muted); }
.card .value { font-size:26px; font-weight:650; margin:2px 0; font-variant-numeric:tabular-nums; }
.card.bad .value { color:var(--bad); } .card.warn .value { color:var(--warn); }
.card .sub { font-size:13px; color:var(--muted); }
table { width:100%; border-collapse:collapse; font-variant-numeric:tabular-nums; }
th { text-align:left; font-size:12px; text-transform:uppercase; letter-spacing:.05em; color:var(--muted);
  font-weight:600; border-bottom:2px solid var(--line); padding:6px 10px 6px 0; }
td { border-bottom:1px solid var(--line); padding:7px 10px 7px 0; vertical-align:top; }
tr:last-child td { border-bottom:0; }
td.num, th.num { text-align:right; }
td.err { color:var(--bad); font-size:13px; max-width:420px; overflow-wrap:anywhere; }
td code { overflow-wrap:break-word; }
table.pairs td:first-child { color:var(--muted); padding-right:14px; width:40%; }
.when, .name { white-space:nowrap; }
.when small { display:block; color:var(--muted); font-size:12px; }
.badge { display:inline-block; padding:1px 9px; border-radius:999px; font-size:12.5px; font-weight:600; white-space:nowrap; }
.badge.ok { color:var(--ok); background:var(--ok-bg); } .badge.warn { color:var(--warn); background:var(--warn-bg); }
.badge.bad { color:var(--bad); background:var(--bad-bg); } .badge.none { color:var(--muted); background:#eef1f4; }
.overdue { color:var(--bad); font-weight:600; }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit,minmax(min(440px,100%),1fr)); gap:18px; background:none; border:0; padding:0; }
.grid2 > div { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px;
  container-type:inline-size; min-width:0; }
.none-yet { color:var(--muted); margin:0; }
.legend { display:flex; flex-wrap:wrap; gap:6px 16px; margin:0 0 8px; padding:0; list-style:none; font-size:13px; }
.legend li { display:flex; align-items:center; gap:6px; }
.swatch { width:12px; height:12px; border-radius:3px; display:inline-block; }
.chart { width:100%; height:auto; display:block; }
.chart.narrow { display:none; }
@container (max-width: ${STACK_BELOW.narrow}px) { .chart.wide { display:none; } .chart.narrow { display:block; } }
.chart .grid { stroke:#e7ebf0; stroke-width:1; } .chart .baseline { stroke:#9aa5b1; stroke-width:1; }
.chart .axis { fill:#5b6675; font-size:12px; } .chart .empty { fill:#5b6675; font-size:15px; }
.chart .bar:hover { opacity:.8; }
.note { color:var(--muted); font-size:12.5px; margin:8px 0 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:13px; }
@media (max-width: 600px) {
  .wrap, main.wrap { padding-left:14px; padding-right:14px; }
  main.wrap { padding-top:14px; }
  header { padding:14px 0 16px; }
  h1 { font-size:24px; }
  .problems { font-size:15px; }
  section, .grid2 > div { padding:12px 12px; }
  .cards { gap:10px; }
  .card { padding:10px 12px; }
  .card .value { font-size:22px; }
}
${stackedTable('wide')}
${stackedTable('narrow')}
`;
