// One minified bundle for what the daemon runs (docs/architecture.md, Memory): dist/cli.js,
// compiled by tsc, is bundled with the npm packages it imports into dist/cli.js and its
// lazily imported chunks (dist/chunk-*.js), so Node parses, compiles and keeps the source
// of a few files instead of hundreds. Runs after tsc and copy-assets (npm run build).
// The other compiled modules stay in dist/ (tests and benchmarks import them one by one).
//
// Each bundled file of dist/ keeps its own location for what it reads beside itself
// (schemas, migrations, markets.json, createRequire): its `import.meta.url` becomes the
// URL of where it was compiled to, relative to the chunk (which lies in dist/ too).
// Native modules and what is loaded through createRequire stay in node_modules.
import { build } from 'esbuild';
import { chmod, readFile, rm, readdir } from 'node:fs/promises';
import { relative, resolve } from 'node:path';

const DIST = resolve('dist');
// iconv-lite and mime-db: big data in a bundle's source text, which V8 keeps for as long as the
// chunk is loaded (docs/architecture.md, Memory). From node_modules, iconv-lite's encodings
// and their tables (~490 kB) are read only when a body in that charset is decoded, and
// mime-db's JSON is parsed without its text staying in the heap.
const EXTERNAL = ['better-sqlite3', 'serialport', '@serialport/*', 'aedes', 'selfsigned', 'iconv-lite', 'mime-db'];

// A chunk of an earlier run (its name is its content's hash) would otherwise stay.
for (const f of await readdir(DIST)) if (f.startsWith('chunk-')) await rm(resolve(DIST, f));

const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(DIST + '/')) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const rel = relative(DIST, args.path);
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify('./' + rel)}, import.meta.url).href`), loader: 'js' };
    });
  },
};

// node:http through require, never as an ES module import. On Node 22+ node:http's exports
// have getters for WebSocket, CloseEvent and MessageEvent that load undici (fetch's
// implementation, with node:http2 and the web streams); importing node:http as an ES module
// builds its namespace by reading every export, getters included, so undici's code, data
// and objects were loaded at start for good: 13 MB of RSS in a bare Node 24 process
// (https://github.com/nodejs/node/issues/59686). A CommonJS module in the bundle reads
// only the properties the code uses. (A dynamic import keeps its namespace: `metergate
// doctor`'s, which undici does not weigh on.)
const httpThroughRequire = {
  name: 'http-through-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) => (args.kind === 'import-statement' ? { path: 'node:http', namespace: 'http-through-require' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'http-through-require' }, () => ({ contents: "module.exports = require('node:http');", loader: 'js' }));
  },
};

await build({
  entryPoints: { cli: resolve(DIST, 'cli.js') },
  outdir: DIST,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Whitespace and syntax only: identifiers keep their names, so a logged stack trace still
  // names its functions; the linked maps (from tsc's, so back to src/*.ts) give the lines
  // when Node runs with --enable-source-maps. Node reads a map only with that flag.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'none',
  external: EXTERNAL,
  chunkNames: 'chunk-[hash]',
  plugins: [ownImportMetaUrl, httpThroughRequire],
  // CommonJS packages in an ES module bundle: their require() of Node's modules needs a real require.
  banner: { js: "import{createRequire as __mgCreateRequire}from'node:module';const require=__mgCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

// The package's bin (package.json "bin"): npm makes a dependency's bin executable when it
// installs it, never the project's own, and `npx metergate` in a clone runs this file directly
// (a fresh clone's build left it 0644: "metergate: Permission denied").
await chmod(resolve(DIST, 'cli.js'), 0o755);
