// What escapes every handler in a real `metergate run` (src/ops/process-faults.ts): an
// unhandled promise rejection is logged with its stack, counted in /metrics, and the
// daemon keeps serving; an exception thrown to the top of the event loop is logged with
// its stack, the daemon stops cleanly and exits 70 (systemd restarts it). The escapes come
// from test/fixtures/escape-on-trigger.mjs, loaded into the daemon with NODE_OPTIONS.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { until } from '../helpers/wait.js';

const fixture = fileURLToPath(new URL('../fixtures/escape-on-trigger.mjs', import.meta.url));

async function daemonWith(dir: string, escape: 'rejection' | 'exception'): Promise<{ daemon: DaemonProcess; port: number; trigger: string }> {
  const port = await freePort();
  const config = join(dir, `${escape}.yaml`);
  writeFileSync(
    config,
    [
      'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      `data_dir: ${join(dir, `data-${escape}`)}`,
      'log_level: info',
      `http: { host: 127.0.0.1, port: ${port} }`,
      'prices: { regions: [], source: none }',
      'forecast: { enabled: false }',
      '',
    ].join('\n'),
  );
  const trigger = join(dir, `${escape}.trigger`);
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${fixture}`.trim(), ESCAPE_FIXTURE_TRIGGER: trigger, ESCAPE_FIXTURE_KIND: escape };
  return { daemon: await startDaemon(config, { env }), port, trigger };
}

const counter = (metrics: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1] ?? NaN);

describe('errors that escape every handler in metergate run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-process-faults-'));
  const daemons: DaemonProcess[] = [];
  afterAll(async () => {
    for (const d of daemons) await d.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unhandled rejection is logged with its stack, counted, and the daemon keeps serving', { timeout: 90_000 }, async () => {
    const { daemon, port, trigger } = await daemonWith(dir, 'rejection');
    daemons.push(daemon);
    const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(counter(await metrics(), 'metergate_unhandled_rejections_total')).toBe(0);
    for (const n of [1, 2]) {
      writeFileSync(trigger, '');
      await until(async () => counter(await metrics(), 'metergate_unhandled_rejections_total') === n, `rejection ${n} counted`, 30_000);
    }
    expect(daemon.process.exitCode).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/healthz/live`)).status).toBe(200);
    const logged = daemon.output().split('\n').filter((l) => l.includes('unhandled promise rejection'));
    expect(logged).toHaveLength(2);
    const line = JSON.parse(logged[0]!) as { level: string; err: { message: string; stack: string } };
    expect(line.level).toBe('error');
    expect(line.err.message).toBe('fixture rejection nobody handles');
    expect(line.err.stack).toContain('escape-on-trigger.mjs');
    expect(counter(await metrics(), 'metergate_uncaught_exceptions_total')).toBe(0);
  });

  it('an uncaught exception is logged with its stack, the daemon stops cleanly and exits 70', { timeout: 90_000 }, async () => {
    const { daemon, trigger } = await daemonWith(dir, 'exception');
    daemons.push(daemon);
    // 'close': its output read to the end (after 'exit' the last lines can still be in the pipe).
    const exited = new Promise<number | null>((resolve) => daemon.process.once('close', (code) => resolve(code)));
    writeFileSync(trigger, '');
    expect(await exited).toBe(70);
    const lines = daemon.output().split('\n');
    const fatal = lines.find((l) => l.includes('uncaught exception'));
    expect(fatal, daemon.output()).toBeDefined();
    const parsed = JSON.parse(fatal!) as { level: string; err: { message: string; stack: string } };
    expect(parsed.level).toBe('fatal');
    expect(parsed.err.stack).toContain('escape-on-trigger.mjs');
    // Stopped through the modules' own stop (store flushed, database closed), not cut off.
    expect(lines.findIndex((l) => l.includes('metergate stopped'))).toBeGreaterThan(lines.indexOf(fatal!));
  });
});
