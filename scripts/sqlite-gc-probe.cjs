// With a package's Node: node scripts/sqlite-gc-probe.cjs ROOT/opt/metergate/node_modules/better-sqlite3
// (scripts/package runs it on every package it builds; test/package/on-arch.ts too).
// Leaves better-sqlite3 statements and databases to the garbage collector, then keeps
// allocating until V8 has run several major collections from its own tasks (not from
// JavaScript), and exits normally (teardown collects the rest). better-sqlite3 12 built
// against Node 24.19+ headers aborts here: https://github.com/nodejs/node/issues/65446
'use strict';
const { PerformanceObserver, constants } = require('node:perf_hooks');
const Database = require(process.argv[2]);

let majors = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
}).observe({ entryTypes: ['gc'] });

const db = new Database(':memory:');
for (let i = 0; i < 5000; i++) db.prepare('SELECT ?').get(i);
for (let i = 0; i < 20; i++) new Database(':memory:').prepare('SELECT 1').get();

let junk = [];
function allocate() {
  for (let i = 0; i < 20000; i++) junk.push({ i, s: `x${i}` });
  if (junk.length > 400000) junk = [];
  if (majors < 5) setImmediate(allocate);
  else setTimeout(() => console.log(`survived ${majors} major collections`), 100);
}
allocate();
