// The node flags the daemon ships with: read from the ExecStart line of
// systemd/metergate.service, so a benchmark measures the daemon launched as installed
// (on the Node running the benchmark: the package for that Node).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const UNIT = fileURLToPath(new URL('../../systemd/metergate.service', import.meta.url));

/** E.g. ['--max-semi-space-size=1'] from `ExecStart=/usr/bin/node --max-semi-space-size=1 /opt/metergate/dist/cli.js run ...`. */
export function shippedNodeFlags(unitText = readFileSync(UNIT, 'utf8')): string[] {
  const line = /^ExecStart=(.*)$/m.exec(unitText)?.[1];
  if (!line) throw new Error(`${UNIT}: no ExecStart line`);
  const words = line.trim().split(/\s+/);
  const script = words.findIndex((w) => w.endsWith('/dist/cli.js'));
  if (script < 1) throw new Error(`${UNIT}: ExecStart does not run node .../dist/cli.js: ${line}`);
  const flags = words.slice(1, script);
  // As the armhf package and scripts/install.sh install the unit for a Node before 22 (no Maglev there).
  return Number(process.versions.node.split('.')[0]) >= 22 ? flags : flags.filter((f) => f !== '--max-opt=2');
}
