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
import { readFile, rm, readdir } from 'node:fs/promises';
import { relative, resolve } from 'node:path';

const DIST = resolve('dist');
const EXTERNAL = ['better-sqlite3', 'serialport', '@serialport/*', 'aedes', 'selfsigned'];

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
  plugins: [ownImportMetaUrl],
  // CommonJS packages in an ES module bundle: their require() of Node's modules needs a real require.
  banner: { js: "import{createRequire as __mgCreateRequire}from'node:module';const require=__mgCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
