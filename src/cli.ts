#!/usr/bin/env node
// metergate command line. First the Node: a release this version does not support is
// refused with a clear message before anything that might fail on it obscurely is loaded
// (the commands are imported only after the check: static imports would load first).
import { supportedNodeRange, unsupportedNode } from './node-support.js';

const refusal = unsupportedNode(process.versions.node, supportedNodeRange());
if (refusal !== undefined) {
  process.stderr.write(
    `${refusal} (${process.execPath}).\n` +
      'fix: run it with the Node the package brings, /opt/metergate/node/bin/node (as /usr/bin/metergate and the ' +
      'systemd units do), or install a supported Node (docs/install.md).\n',
  );
  // 78 (EX_CONFIG): systemd does not restart it (RestartPreventExitStatus=78); another
  // start on the same Node would fail the same way.
  process.exit(78);
}
await import('./cli/program.js');
