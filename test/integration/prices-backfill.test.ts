// Backfill and sync against a local stand-in for the ENTSO-E platform: resumable after
// kill -9 with no completed chunk fetched twice; progress lines when not on a terminal;
// the daemon's PriceSync module storing prices in the background and telling listeners.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { EventBus } from '../../src/events.js';
import { createLogger } from '../../src/log.js';
import { PriceSync } from '../../src/prices/sync.js';
import type { PricesUpdated } from '../../src/prices/updates.js';
import { openDatabase } from '../../src/store/db.js';
import { PriceStore } from '../../src/store/prices.js';
import { buildAcknowledgement } from '../helpers/a44.js';
import { FakePlatform } from '../helpers/entsoe-server.js';
import { hasSharedData, sharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';
import { peer } from '../helpers/peers.js';

const TOKEN = 'backfill-token-1c2d';
const hasScript = peer('script (util-linux)', spawnSync('script', ['--version']).status === 0);
const ORG = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';


describe.skipIf(!hasSharedData)(`price backfill and sync${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let dir: string;
  let platform: FakePlatform;
  let baseUrl: string;
  let holdAt = Number.POSITIVE_INFINITY;
  let holdAll = false;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-prices-backfill-'));
    const recorded = readFileSync(sharedData('entsoe/a44-de-lu-2021-01-01.xml'), 'utf8');
    platform = new FakePlatform((req) => {
      if (holdAll || platform.requests.length === holdAt) return { kind: 'hold' };
      // The recording answers the January 2021 chunk; the platform has "no data" elsewhere here.
      if (req.params.documentType === 'A44' && req.params.in_Domain === '10Y1001A1001A82H' && req.params.periodStart === '202012312300') return { kind: 'xml', body: recorded };
      return { kind: 'xml', body: buildAcknowledgement() };
    });
    baseUrl = await platform.start();
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await platform?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function configFile(dataDir: string): string {
    const file = join(dir, `config-${children.length}.yaml`);
    writeFileSync(
      file,
      [
        `organization_id: ${ORG}`,
        `data_dir: ${dataDir}`,
        'prices:',
        '  regions: [DE-LU]',
        "  backfill_from: '2020-11-01'",
        '  entsoe:',
        `    base_url: ${baseUrl}`,
        `    security_token: ${TOKEN}`,
        '',
      ].join('\n'),
    );
    return file;
  }

  function backfillCli(config: string): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'prices', 'backfill', '-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let err = '';
    child.stderr!.on('data', (d) => (err += String(d)));
    // 'close': stderr read to its end (the summary line is written just before the exit).
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, stderr: () => err, exited };
  }

  it('resumes after kill -9 without fetching a completed month again', async () => {
    const dataDir = join(dir, 'cli');
    const config = configFile(dataDir);
    holdAt = 5; // the 5th request (March 2021) never answers: the process dies waiting for it
    const first = backfillCli(config);
    await until(() => platform.requests.length >= 5, 'the fifth request');
    const db = openDatabase(join(dataDir, 'metergate.db'));
    try {
      // Nov, Dec and Feb get "no matching data", Jan two days of prices: none is complete, so
      // all four are recorded pending (retried later), none done.
      await until(() => (db.prepare('SELECT count(*) FROM price_fetch_pending').pluck().get() as number) === 4, 'four chunks recorded pending');
      expect(db.prepare('SELECT count(*) FROM price_fetch_chunks').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.stderr()).toMatch(/"msg":"backfill DE-LU from 2020-11-01: 4\/\d+"/); // log lines, not a bar: stderr is a pipe

    holdAt = Number.POSITIVE_INFINITY;
    const second = backfillCli(config);
    expect(await second.exited).toBe(0);
    // Prices (A44); the exogenous series that follow (A65, A69) are exogenous-sync.test.ts's.
    const starts = platform.requests.filter((r) => r.params.documentType === 'A44').map((r) => r.params.periodStart);
    const counts = new Map<string, number>();
    for (const s of starts) counts.set(s, (counts.get(s) ?? 0) + 1);
    // Nov, Dec, Jan, Feb were handled before the kill and their retry is not due yet: asked
    // once. March was in flight: asked twice.
    expect(['202010312300', '202011302300', '202012312300', '202101312300'].map((s) => counts.get(s))).toEqual([1, 1, 1, 1]);
    expect(counts.get('202102282300')).toBe(2);
    expect([...counts].filter(([s, n]) => n > 1 && s !== '202102282300')).toEqual([]);
    expect(second.stderr()).toMatch(/backfill: \d+ chunk\(s\) fetched, 0 already complete, 4 waiting for their retry/);
    expect(starts.join()).not.toContain('undefined');

    const db2 = openDatabase(join(dataDir, 'metergate.db'));
    try {
      const jan = new PriceStore(db2).native('DE-LU', Date.UTC(2020, 11, 31, 23), Date.UTC(2021, 0, 2, 23));
      expect(jan).toHaveLength(48);
      expect(jan[0].pricePerMwh).toBe(50.87);
    } finally {
      db2.close();
    }
  });

  it.skipIf(!hasScript)('draws a progress bar when stderr is a terminal (a real pty from script(1))', async () => {
    const config = configFile(join(dir, 'tty'));
    const command = [process.execPath, '--import', 'tsx', 'src/cli.ts', 'prices', 'backfill', '-c', config, '--from', '2026-08-01'].join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c))); // the output read to its end
    expect(code, out).toBe(0);
    // Redrawn in place: carriage return + erase line, then the bar.
    expect(out).toMatch(/\r\x1b\[2Kbackfill DE-LU from 2026-08-01 \[[#-]{30}\] \d+\/\d+ \d+%/);
    expect(out).toMatch(/\[#{30}\] (\d+)\/\1 100%/);
    expect(out).not.toContain('"msg":"backfill DE-LU'); // no JSON progress lines on a terminal
  });

  it('the daemon serves HTTP while a price request is in flight, and stops at once on SIGTERM', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as { port: number };
        s.close(() => resolve(p));
      });
    });
    const config = join(dir, 'daemon.yaml');
    writeFileSync(
      config,
      [`organization_id: ${ORG}`, `data_dir: ${join(dir, 'daemon')}`, 'log_level: warn', 'http:', `  port: ${port}`, 'forecast:', '  enabled: false', 'prices:', '  regions: [NL]', '  entsoe:', `    base_url: ${baseUrl}`, `    security_token: ${TOKEN}`, ''].join('\n'),
    );
    holdAll = true;
    const before = platform.requests.length;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'run', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stderr!.on('data', (d) => (output += String(d)));
    child.stdout!.on('data', (d) => (output += String(d)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => platform.requests.length > before, 'the backfill to ask the platform', 60_000);
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect([200, 503], output).toContain(res.status);
      expect(platform.requests.length - before).toBe(1); // still waiting on its first request
      child.kill('SIGTERM');
      expect(await exited, output).toBe(0);
    } finally {
      holdAll = false;
    }
  });

  it('PriceSync (daemon module) backfills in the background and emits prices.updated', async () => {
    const config = validateConfig({
      organization_id: ORG,
      data_dir: join(dir, 'sync'),
      prices: { regions: ['DE-LU'], backfill_from: '2020-12-15', entsoe: { base_url: baseUrl, security_token: TOKEN } },
    }, 'test', {});
    const db = openDatabase(join(dir, 'sync', 'metergate.db'));
    const logger = createLogger('silent' as 'info');
    const bus = new EventBus(logger);
    const sync = new PriceSync({ config, logger, db, clock: { now: () => Date.now() }, events: bus });
    const events: PricesUpdated[] = [];
    bus.on('prices.updated', (e) => {
      events.push(e);
    });
    await sync.start(); // returns at once; the backfill runs in the background
    // Schedule, in Brussels time: every 15 minutes 13:00-17:45 (after the midday auction), repair at 03:30.
    const brussels = (d: Date | null) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Brussels', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d!);
    const { sync: nextSync, repair: nextRepair } = sync.nextRuns();
    const [h, m] = brussels(nextSync).split(':').map(Number);
    expect(h >= 13 && h <= 17 && m % 15 === 0).toBe(true);
    expect(brussels(nextRepair)).toBe('03:30');
    await sync.idle();
    await sync.stop();
    expect(events.map((e) => [e.marketArea, e.periods])).toEqual([['DE-LU', 48]]);
    expect(new PriceStore(db).coverage('DE-LU').periods).toBe(48);
    db.close();
  });
});
