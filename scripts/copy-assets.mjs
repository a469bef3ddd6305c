// Copies the data files that live beside the sources (JSON schemas, SQL migrations,
// static pages) into dist/, so the compiled daemon finds them at the same relative paths.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, dirname, extname } from 'node:path';

const ASSET_EXTENSIONS = new Set(['.json', '.yaml', '.sql', '.html', '.css', '.js', '.svg']);

function copyAssets(fromDir, toDir) {
  for (const entry of readdirSync(fromDir)) {
    const from = join(fromDir, entry);
    const to = join(toDir, entry);
    if (statSync(from).isDirectory()) copyAssets(from, to);
    else if (ASSET_EXTENSIONS.has(extname(entry)) && !entry.endsWith('.d.ts')) {
      mkdirSync(dirname(to), { recursive: true });
      cpSync(from, to);
    }
  }
}
copyAssets('src', 'dist');
