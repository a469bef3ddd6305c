// What the bundled daemon (dist/cli.js, as the package runs it) loads: with the HTTP API, the
// OCPP central system and a Modbus TCP bus running, never undici (fetch's implementation) and
// never serialport (modbus/bus.ts loads modbus-serial without it; only a serial bus needs it).
// Importing node:http as an ES module loads it on Node 22+ (the namespace reads http's lazy
// WebSocket getter; scripts/bundle.mjs says why and how the bundle avoids it): ~13 MB of RSS
// on Node 24 for code the gateway never calls. On Node 20 http has no such getter, so this
// can only fail on the Node the package bundles (CI runs the suite there too).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';
import { peer } from '../helpers/peers.js';

const hasBuild = peer('a build in dist/', existsSync(resolve('dist/cli.js')), 'npm run build');

describe.skipIf(!hasBuild)('the bundled daemon', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-bundle-modules-'));
  let sim: ChildProcess | undefined;
  afterAll(() => {
    sim?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the HTTP API, the central system and a Modbus TCP bus without loading undici or serialport', async () => {
    const [httpPort, ocppPort] = [await freePort(), await freePort()];
    sim = spawn(process.execPath, [resolve('dist/cli.js'), 'sim', '--tcp', '0', '--unit', '1', '--exit-with-parent'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const simPort = await new Promise<number>((done, fail) => {
      let text = '';
      sim!.stdout!.on('data', (d: Buffer) => {
        text += d.toString();
        const m = /"tcpPort":(\d+)/.exec(text);
        if (m) done(Number(m[1]));
      });
      sim!.once('exit', (code) => fail(new Error(`simulator exited (${code})`)));
    });
    const db = openDaemonDatabase(databasePath(join(dir, 'data')));
    const token = new TokenStore(db).create({ name: 'test-cpo', type: 'cpo', nowMs: Date.now() }).token;
    db.close();
    const config = join(dir, 'config.yaml');
    writeFileSync(config, [...centralSystemConfigHead({ dataDir: join(dir, 'data'), httpPort, ocppPort }), 'chargers: [{ id: CP-1, password: charger-secret-0123456789, auth: accept_all }]',
      `buses: [{ name: sim, type: tcp, host: 127.0.0.1, tcp_port: ${simPort} }]`,
      `meters: [{ resource_id: ${randomUUID()}, bus: sim, unit_id: 1, profile: sdm630 }]`,
      '',].join('\n'));
    // Writes the built-in modules loaded so far when told (SIGUSR2), from inside the daemon.
    const probe = join(dir, 'probe.mjs');
    const loaded = join(dir, 'loaded.json');
    writeFileSync(probe, `import { renameSync, writeFileSync } from 'node:fs';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nprocess.on('SIGUSR2', () => { writeFileSync(${JSON.stringify(`${loaded}.tmp`)}, JSON.stringify({ builtIn: process.moduleLoadList, required: Object.keys(require.cache) })); renameSync(${JSON.stringify(`${loaded}.tmp`)}, ${JSON.stringify(loaded)}); });\n`);
    const daemon = spawn(process.execPath, ['--import', probe, resolve('dist/cli.js'), 'run', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    daemon.stdout.on('data', (d: Buffer) => (output += d.toString()));
    daemon.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      const until = Date.now() + 90_000;
      while (!output.includes('metergate started')) {
        if (daemon.exitCode !== null) throw new Error(`daemon exited ${daemon.exitCode}: ${output}`);
        if (Date.now() > until) throw new Error(`daemon did not start: ${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Both servers answer: their modules are loaded and running.
      expect((await fetch(`http://127.0.0.1:${httpPort}/healthz/live`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${ocppPort}/CP-1`)).status).toBe(426);
      // A JSON body is decoded (iconv-lite, outside the bundle: scripts/bundle.mjs) and
      // checked against its schema; the problem's media type comes through mime-types (mime-db, outside too).
      const reset = await fetch(`http://127.0.0.1:${httpPort}/api/v1/chargers/CP-1/reset`, {
        method: 'POST',
        headers: { authorization: `Token ${token}`, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ type: 'Sanftü' }),
      });
      expect(reset.status).toBe(422);
      expect(reset.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await reset.text()).toContain('type');
      daemon.kill('SIGUSR2');
      while (!existsSync(loaded)) {
        if (Date.now() > until) throw new Error('the daemon did not write its module list');
        await new Promise((r) => setTimeout(r, 50));
      }
      const { builtIn, required } = JSON.parse(readFileSync(loaded, 'utf8')) as { builtIn: string[]; required: string[] };
      expect(builtIn).toContain('NativeModule http');
      expect(builtIn.filter((m) => m.includes('undici'))).toEqual([]);
      expect(required.some((f) => f.endsWith('/node_modules/modbus-serial/index.js'))).toBe(true);
      expect(required.filter((f) => /\/node_modules\/(@serialport|serialport)\//.test(f))).toEqual([]);
    } finally {
      daemon.kill('SIGTERM');
      if (daemon.exitCode === null) await new Promise((r) => daemon.once('exit', r));
    }
  });
});
