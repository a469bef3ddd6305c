// Where a process's resident memory is, from /proc/PID/smaps: the mappings grouped by what
// they hold (docs/architecture.md, Memory). Used by daemon-rss.ts; also on its own, on a
// file SMAPS=<path> kept:  npx tsx scripts/bench/smaps.ts <smaps file>...
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Resident MB per group; groups in the order printed. */
export interface SmapsBreakdown {
  /** The node binary's executable pages (its code: V8, ICU, OpenSSL, libuv, ...). */
  nodeCode: number;
  /** The node binary's read-only data (ICU's data is there) and its relocated data. */
  nodeData: number;
  /** glibc's main heap (brk): malloc's small blocks (SQLite's page cache, OpenSSL, V8's compile zones). */
  mallocHeap: number;
  /** Anonymous mappings of exactly 256 KiB: V8's heap pages. */
  v8Pages: number;
  /** Anonymous mappings of 8 MiB: thread stacks (main thread's is [stack]). */
  threadStacks: number;
  /** Other anonymous mappings: malloc's mmapped blocks (>= MALLOC_MMAP_THRESHOLD_), V8's large objects and code space, buffers. */
  otherAnon: number;
  /** Shared libraries (better-sqlite3's SQLite, libc, libstdc++, ...). */
  libraries: number;
  /** Everything else ([stack], [vdso], files). */
  rest: number;
  total: number;
}

interface Mapping {
  name: string;
  perms: string;
  sizeKb: number;
  rssKb: number;
}

function mappings(text: string): Mapping[] {
  const out: Mapping[] = [];
  let cur: Mapping | null = null;
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = { perms: head[1], name: head[2].trim(), sizeKb: 0, rssKb: 0 };
      out.push(cur);
      continue;
    }
    const field = /^(Size|Rss):\s+(\d+) kB/.exec(line);
    if (cur && field) cur[field[1] === 'Size' ? 'sizeKb' : 'rssKb'] = Number(field[2]);
  }
  return out;
}

export function smapsBreakdown(text: string): SmapsBreakdown {
  const b: SmapsBreakdown = { nodeCode: 0, nodeData: 0, mallocHeap: 0, v8Pages: 0, threadStacks: 0, otherAnon: 0, libraries: 0, rest: 0, total: 0 };
  for (const m of mappings(text)) {
    const mb = m.rssKb / 1024;
    b.total += mb;
    if (m.name !== '' && basename(m.name) === 'node') b[m.perms.includes('x') ? 'nodeCode' : 'nodeData'] += mb;
    else if (m.name === '[heap]') b.mallocHeap += mb;
    else if (m.name === '') b[m.sizeKb === 256 ? 'v8Pages' : m.sizeKb === 8192 ? 'threadStacks' : 'otherAnon'] += mb;
    else if (/\.so(\.|$)|\.node$/.test(m.name)) b.libraries += mb;
    else b.rest += mb;
  }
  return b;
}

export function formatBreakdown(b: SmapsBreakdown): string {
  const f = (x: number) => x.toFixed(1);
  return `node code ${f(b.nodeCode)} + node data ${f(b.nodeData)} + malloc heap ${f(b.mallocHeap)} + V8 pages ${f(b.v8Pages)} + thread stacks ${f(b.threadStacks)} + other anonymous ${f(b.otherAnon)} + libraries ${f(b.libraries)} + rest ${f(b.rest)} = ${f(b.total)} MB`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of process.argv.slice(2)) console.log(`${file}: ${formatBreakdown(smapsBreakdown(readFileSync(file, 'utf8')))}`);
}
