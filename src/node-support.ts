// Which Node releases this release runs on: package.json `engines.node`, the versions the
// suite runs on in CI (this repository's development Node and the Node the amd64/arm64
// packages bundle). Read at start by src/cli.ts, which refuses any other Node before it
// loads anything that might not work on it (a native module of another ABI, an API
// missing from an older Node).
import { readFileSync } from 'node:fs';
import semver from 'semver';

/** `engines.node` from package.json (one level above src/ and dist/). */
export function supportedNodeRange(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines?: { node?: unknown } };
  if (typeof pkg.engines?.node !== 'string') throw new Error('package.json has no engines.node');
  return pkg.engines.node;
}

/** Why `nodeVersion` may not run metergate, or undefined when it may. */
export function unsupportedNode(nodeVersion: string, range: string): string | undefined {
  if (semver.satisfies(nodeVersion, range)) return undefined;
  return `metergate runs on Node ${range} (package.json engines), not on Node ${nodeVersion}`;
}
