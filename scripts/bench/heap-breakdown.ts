// What a V8 heap snapshot holds, summarized for the memory work (docs/architecture.md, Memory):
//   npx tsx scripts/bench/heap-breakdown.ts FILE.heapsnapshot [top=30]
// (HEAPSNAPSHOT=<dir> with scripts/bench/daemon-rss.ts writes them of the running daemon.)
// Prints: the total; self size by node type and by constructor/name; per script its source
// text and the code V8 keeps for its functions (bytecode, scope infos, ...: what the
// functions' SharedFunctionInfos retain); what each module's top-level scope retains (the
// objects no other module reaches: a module's ajv validators, registries, tables); and the
// objects that retain most, each with its dominators' chain. Retained sizes come from the
// dominator tree (weak edges not followed), as Chrome DevTools computes them.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: heap-breakdown.ts FILE.heapsnapshot [top=30]');
const TOP = Number(process.argv[3] ?? 30);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { meta } = snap.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const [nType, nName, nSelf, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f));
const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const WEAK = edgeTypes.indexOf('weak');
const SHORTCUT = edgeTypes.indexOf('shortcut');
const nameIsIndex = new Set(['element', 'hidden'].map((t) => edgeTypes.indexOf(t)));
const N = snap.nodes.length / NF;
const { nodes, edges, strings } = snap;

const firstEdge = new Uint32Array(N + 1);
for (let i = 0; i < N; i++) firstEdge[i + 1] = firstEdge[i] + nodes[i * NF + nEdges] * EF;
const typeOf = (i: number) => nodeTypes[nodes[i * NF + nType]];
const nameOf = (i: number) => strings[nodes[i * NF + nName]];
const selfOf = (i: number) => nodes[i * NF + nSelf];
const edgeName = (e: number) => (nameIsIndex.has(edges[e + eType]) ? `[${edges[e + eName]}]` : strings[edges[e + eName]]);
function* out(i: number): Generator<{ e: number; to: number; type: number }> {
  for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += EF) yield { e, to: edges[e + eTo] / NF, type: edges[e + eType] };
}
const mb = (b: number) => (b / 1048576).toFixed(2).padStart(7);
const label = (i: number) => {
  const t = typeOf(i);
  const n = nameOf(i);
  return t === 'string' || t === 'concatenated string' || t === 'sliced string' ? `string "${n.slice(0, 40).replace(/\s+/g, ' ')}"` : `${t} ${n.slice(0, 80)}`;
};

// Dominators (Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm"), root = node 0.
const post = new Int32Array(N).fill(-1); // post-order number
const order: number[] = []; // nodes in post-order
{
  const stack: Array<[number, number]> = [[0, firstEdge[0]]];
  const seen = new Uint8Array(N);
  seen[0] = 1;
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const [i, e] = top;
    if (e < firstEdge[i + 1]) {
      top[1] = e + EF;
      const type = edges[e + eType];
      if (type === WEAK || type === SHORTCUT) continue;
      const to = edges[e + eTo] / NF;
      if (!seen[to]) {
        seen[to] = 1;
        stack.push([to, firstEdge[to]]);
      }
    } else {
      post[i] = order.length;
      order.push(i);
      stack.pop();
    }
  }
}
const preds: number[][] = Array.from({ length: N }, () => []);
for (const i of order) for (const { to, type } of out(i)) if (type !== WEAK && type !== SHORTCUT && post[to] >= 0) preds[to].push(i);
const idom = new Int32Array(N).fill(-1);
idom[0] = 0;
for (let changed = true; changed; ) {
  changed = false;
  for (let k = order.length - 2; k >= 0; k--) {
    const b = order[k];
    let nd = -1;
    for (const p of preds[b]) {
      if (idom[p] < 0) continue;
      if (nd < 0) {
        nd = p;
        continue;
      }
      let [x, y] = [p, nd];
      while (x !== y) {
        while (post[x] < post[y]) x = idom[x];
        while (post[y] < post[x]) y = idom[y];
      }
      nd = x;
    }
    if (nd >= 0 && idom[b] !== nd) {
      idom[b] = nd;
      changed = true;
    }
  }
}
const retained = new Float64Array(N);
for (const i of order) retained[i] += selfOf(i);
for (const i of order) if (i !== 0 && idom[i] >= 0) retained[idom[i]] += retained[i];
const reachable = order.length;

let total = 0;
for (let i = 0; i < N; i++) if (post[i] >= 0) total += selfOf(i);
console.log(`${file}: ${N} nodes (${reachable} reachable), ${mb(total)} MB self size reachable`);

function table(title: string, groups: Map<string, { n: number; size: number }>, top = TOP): void {
  console.log(`\n${title}`);
  for (const [k, g] of [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, top)) console.log(`  ${mb(g.size)} MB ${String(g.n).padStart(7)}  ${k}`);
}
const add = (m: Map<string, { n: number; size: number }>, k: string, size: number) => {
  const g = m.get(k) ?? { n: 0, size: 0 };
  g.n++;
  g.size += size;
  m.set(k, g);
};

const byType = new Map<string, { n: number; size: number }>();
const byName = new Map<string, { n: number; size: number }>();
for (let i = 0; i < N; i++) {
  if (post[i] < 0) continue;
  const t = typeOf(i);
  add(byType, t, selfOf(i));
  add(byName, t.includes('string') ? `(${t})` : `${t}: ${nameOf(i).slice(0, 70)}`, selfOf(i));
}
table('self size by node type (MB, count)', byType);
table('self size by type and constructor / name', byName);

// Scripts (a code node with a source): the source text V8 keeps, and what their functions'
// SharedFunctionInfos retain. Scripts without a name are code made at run time (new Function:
// ajv's compiled validators): grouped by how their source begins.
const scripts = new Map<number, { name: string; source: number; code: number; fns: number }>();
for (let i = 0; i < N; i++) {
  if (post[i] < 0 || typeOf(i) !== 'code') continue;
  let name: string | null = null;
  let source = -1;
  for (const { e, to } of out(i)) {
    const en = edgeName(e);
    if (en === 'source') {
      source = retained[to];
      if (name === null || name === '') name = name || `(no name) ${nameOf(to).slice(0, 30).replace(/\s+/g, ' ')}`;
    }
    if (en === 'name' && typeOf(to).includes('string') && nameOf(to) !== '') name = nameOf(to);
  }
  if (source >= 0) scripts.set(i, { name: name ?? '', source, code: 0, fns: 0 });
}
for (let i = 0; i < N; i++) {
  if (post[i] < 0 || scripts.has(i)) continue;
  for (const { e, to } of out(i)) {
    const en = edgeName(e);
    if ((en !== 'script' && en !== 'script_or_debug_info') || !scripts.has(to)) continue;
    const s = scripts.get(to)!;
    s.code += retained[i];
    s.fns++;
  }
}
const scriptGroups = new Map<string, { n: number; source: number; code: number; fns: number }>();
for (const s of scripts.values()) {
  const key = s.name.replace(/^.*\/(dist|node_modules)\//, '$1/');
  const g = scriptGroups.get(key) ?? { n: 0, source: 0, code: 0, fns: 0 };
  g.n++;
  g.source += s.source;
  g.code += s.code;
  g.fns += s.fns;
  scriptGroups.set(key, g);
}
const scriptRows = [...scriptGroups].sort((a, b) => b[1].source + b[1].code - (a[1].source + a[1].code));
const sum = (k: 'source' | 'code') => scriptRows.reduce((a, [, s]) => a + s[k], 0);
console.log(`\nscripts: ${scripts.size}, source text ${mb(sum('source')).trim()} MB, retained by their functions' infos ${mb(sum('code')).trim()} MB (source MB, code MB, functions, scripts, name)`);
for (const [name, s] of scriptRows.slice(0, TOP)) console.log(`  ${mb(s.source)} ${mb(s.code)} ${String(s.fns).padStart(6)} ${String(s.n).padStart(4)}  ${name}`);

// Module scopes: a module's top-level variables live in its outermost context (the one whose
// `previous` is the native context); what that retains is what only that module holds. Found
// through the closures each script's functions made.
const edgeTo = (i: number, name: string): number => {
  for (const { e, to } of out(i)) if (edgeName(e) === name) return to;
  return -1;
};
const scopeOf = new Map<number, number>(); // module context -> script
for (let i = 0; i < N; i++) {
  if (post[i] < 0 || typeOf(i) !== 'closure') continue;
  const shared = edgeTo(i, 'shared');
  const script = shared < 0 ? -1 : Math.max(edgeTo(shared, 'script'), edgeTo(shared, 'script_or_debug_info'));
  if (!scripts.has(script) || scripts.get(script)!.name.startsWith('(no name)')) continue;
  let ctx = edgeTo(i, 'context');
  for (let depth = 0; ctx >= 0 && depth < 50; depth++) {
    const prev = edgeTo(ctx, 'previous');
    if (prev < 0 || nameOf(prev) === 'system / NativeContext') break;
    ctx = prev;
  }
  if (ctx >= 0 && nameOf(ctx) === 'system / Context') scopeOf.set(ctx, script);
}
console.log(`\nmodule scopes by what they retain (MB, script)`);
for (const [ctx, script] of [...scopeOf].sort((a, b) => retained[b[0]] - retained[a[0]]).slice(0, TOP)) {
  console.log(`  ${mb(retained[ctx])}  ${scripts.get(script)!.name.replace(/^.*\/(dist|node_modules)\//, '$1/')}`);
}

// The objects retaining most (not roots or containers of roots), with their dominator chains.
console.log(`\nlargest retainers (retained MB, self, what; <- dominated by)`);
const synthetic = (i: number) => typeOf(i) === 'synthetic' || i === 0;
const cands = order.filter((i) => !synthetic(i) && retained[i] > 65536 && !scripts.has(i));
// Leave out a node whose dominator's retained size is within 5 % of its own (the same memory, one level up).
const shown = cands
  .filter((i) => {
    const d = idom[i];
    return synthetic(d) || retained[d] > retained[i] * 1.05;
  })
  .sort((a, b) => retained[b] - retained[a])
  .slice(0, TOP);
for (const i of shown) {
  const chain: string[] = [];
  for (let d = idom[i]; d > 0 && chain.length < 4; d = idom[d]) chain.push(label(d).slice(0, 50));
  // What it is: the names it holds (a context's variables, an object's properties), and how one retainer reaches it.
  const holds = [...out(i)].filter(({ type }) => edgeTypes[type] === 'context' || edgeTypes[type] === 'property').sort((a, b) => retained[b.to] - retained[a.to]).slice(0, 6).map(({ e, to }) => `${edgeName(e)} ${mb(retained[to]).trim()}`);
  let via = '';
  for (const r of preds[i]) for (const { e, to } of out(r)) if (to === i && !via) via = `${label(r).slice(0, 40)} .${edgeName(e)}`;
  console.log(`  ${mb(retained[i])} ${mb(selfOf(i))}  ${label(i)}  <- ${chain.join(' <- ') || '(root)'}\n        via ${via}; holds ${holds.join(', ')}`);
}
