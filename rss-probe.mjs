const base = process.memoryUsage();
for (const m of process.argv.slice(2)) await import(m);
global.gc?.();
const after = process.memoryUsage();
console.log(process.argv.slice(2).join(' ').replace(/.*\/dist\//g,'dist/'), 'rss +', ((after.rss-base.rss)/1048576).toFixed(1), 'MB, total', (after.rss/1048576).toFixed(1), 'heap', (after.heapUsed/1048576).toFixed(1));
