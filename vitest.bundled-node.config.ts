import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The suite on the Node the amd64/arm64 packages bundle (CI: scripts/on-bundled-node bash
// scripts/test --config vitest.bundled-node.config.ts). The whole suite runs on this machine's
// Node (the README's command); on the bundled Node run the unit tests and one integration test
// per edge where the runtime itself is what is proven: its native module build (better-sqlite3
// for its ABI), serial ports, TLS, websockets, HTTP server and client, child processes and
// signals, timers under libfaketime, the datagram socket of sd_notify. The long fault campaigns
// prove our own rules, which do not change with the Node release: they run once (docs/ci.md).
// The packages' own tests run the daemon on the bundled Node too (test/package, booted Debian).
const ON_BUNDLED_NODE = [
  'test/unit/**/*.test.ts',
  'test/integration/node-support.test.ts', // engines admits it; another Node refused
  'test/integration/bundle-modules.test.ts', // the bundle the package ships, loaded by it
  'test/integration/pipeline-e2e.test.ts', // pty serial port -> SQLite -> TLS MQTT (mosquitto)
  'test/integration/pipeline-crash.test.ts', // kill -9 with SQLite's WAL: nothing lost
  'test/integration/readings-upgrade-crash.test.ts', // migrations on its better-sqlite3 build
  'test/integration/db-upgrade-log.test.ts',
  'test/integration/http-daemon.test.ts', // its HTTP server
  'test/integration/http-basics.test.ts',
  'test/integration/http-tls.test.ts', // its TLS server
  'test/integration/prices-entsoe.test.ts', // its fetch (undici) against a real HTTP server
  'test/integration/ocpp-central-system.test.ts', // websockets, OCPP 1.6
  'test/integration/ocpp-octt.test.ts',
  'test/integration/ocpp201-octt.test.ts', // OCPP 2.0.1
  'test/integration/ocpp-security.test.ts', // TLS client certificates (security profile 3)
  'test/integration/ocpp-daemon-crash.test.ts',
  'test/integration/clock-faketime-daemon.test.ts', // its clocks under libfaketime's LD_PRELOAD
  'test/integration/uplink-publish.test.ts',
  'test/integration/process-faults.test.ts', // signals, exit codes
  'test/integration/run-single-instance.test.ts', // the data directory's lock
  'test/integration/systemd.test.ts', // sd_notify's datagram socket
  'test/integration/watchdog-stall.test.ts',
];

// A file renamed or removed must not drop out of this run silently.
const missing = ON_BUNDLED_NODE.filter((p) => !p.includes('*') && !existsSync(p));
if (missing.length > 0) throw new Error(`vitest.bundled-node.config.ts lists test files that do not exist: ${missing.join(', ')}`);

// The same settings as the whole suite's, with its file list replaced (mergeConfig would append to it).
export default defineConfig({ test: { ...base.test, include: ON_BUNDLED_NODE } });
