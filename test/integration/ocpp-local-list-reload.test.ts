// The local authorization list follows the config file without a restart: `metergate run`
// as its own process, its config file edited and SIGHUP sent; an independent strict charge
// point (ocpp-ws-io, test/helpers/octt-charger.ts, every frame checked against the official
// OCPP 1.6 schemas) receives the differential SendLocalList, and Authorize answers by the new
// tags. A broken file is refused (the tags in force stay); a charger that connects later
// gets the new list on its boot.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

type Json = Record<string, any>;
const PASSWORD = 'reload-key-0123456789abc';

/** A charger that keeps its local list as a real one does, booted. */
async function connectListKeeper(ocppPort: number, identity: string, clearCacheStatus: 'Accepted' | 'Rejected' = 'Accepted') {
  const list = { version: 0, tags: new Map<string, string>() };
  const cp = await connectOcttCharger({
    endpoint: `ws://127.0.0.1:${ocppPort}`,
    identity,
    password: PASSWORD,
    answers: {
      GetConfiguration: () => ({ configurationKey: [] }),
      SendLocalList: (p) => {
        if (p.updateType === 'Full') list.tags.clear();
        for (const e of (p.localAuthorizationList as Json[]) ?? []) {
          if (e.idTagInfo) list.tags.set(e.idTag, e.idTagInfo.status);
          else list.tags.delete(e.idTag);
        }
        list.version = p.listVersion as number;
        return { status: 'Accepted' };
      },
      ClearCache: () => ({ status: clearCacheStatus }),
    },
  });
  await cp.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'L1' });
  return { cp, list };
}

describe('local authorization list: id tags reloaded on SIGHUP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-reload-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  let daemon: DaemonProcess | undefined;
  const chargers: OcttCharger[] = [];
  let httpPort = 0;
  let ocppPort = 0;

  const writeConfig = (tags: string[], later = 'CP-LATER', extra = '') =>
    writeFileSync(
      configPath,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort }),
        'chargers:',
        '  - id: CP-RELOAD-1',
        `    password: ${PASSWORD}`,
        `    auth: { id_tags: [${tags.join(', ')}] }`,
        `  - id: ${later}`,
        `    password: ${PASSWORD}`,
        `    auth: { id_tags: [${tags.join(', ')}] }`,
        extra,
      ].join('\n'),
    );

  const connect = async (identity: string) => {
    const c = await connectListKeeper(ocppPort, identity);
    chargers.push(c.cp);
    return c;
  };
  const sighupAndWait = async (logLine: string) => {
    const before = daemon!.output().split(logLine).length;
    daemon!.process.kill('SIGHUP');
    await until(() => daemon!.output().split(logLine).length > before, `daemon logs "${logLine}" after SIGHUP`, 60_000);
  };
  const authorize = async (cp: OcttCharger, idTag: string) => (await cp.call<Json>('Authorize', { idTag })).idTagInfo.status as string;

  beforeAll(async () => {
    mkdirSync(dataDir);
    [ocppPort, httpPort] = [await freePort(), await freePort()];
    writeConfig(['TAG-A', 'TAG-B']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
  }, 180_000);

  afterAll(async () => {
    for (const c of chargers) await c.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends connected chargers the difference, refuses a broken file, and gives a later charger the new list', { timeout: 120_000 }, async () => {
    const { cp, list } = await connect('CP-RELOAD-1');
    await cp.calls('SendLocalList', 1);
    expect([...list.tags.keys()].sort()).toEqual(['TAG-A', 'TAG-B']);
    expect(await authorize(cp, 'TAG-C')).toBe('Invalid');

    writeConfig(['TAG-A', 'TAG-C']);
    await sighupAndWait("id tags reloaded");
    const [, second] = await cp.calls('SendLocalList', 2);
    expect(second.params).toEqual({ listVersion: 2, updateType: 'Differential', localAuthorizationList: [{ idTag: 'TAG-C', idTagInfo: { status: 'Accepted' } }, { idTag: 'TAG-B' }] });
    expect([...list.tags.keys()].sort()).toEqual(['TAG-A', 'TAG-C']);
    expect(await authorize(cp, 'TAG-C')).toBe('Accepted');
    expect(await authorize(cp, 'TAG-B')).toBe('Invalid');
    // TAG-B removed: its authorization cache could still accept it offline: ClearCache, after the list.
    await cp.calls('ClearCache', 1);
    const order = cp.received.map((c) => c.action).filter((a) => a === 'SendLocalList' || a === 'ClearCache');
    expect(order).toEqual(['SendLocalList', 'SendLocalList', 'ClearCache']);

    // A file the schema refuses: logged, nothing sent, the tags in force stay.
    writeFileSync(configPath, `${[...centralSystemConfigHead({ dataDir, httpPort, ocppPort }), 'chargers:', '  - id: CP-RELOAD-1', `    password: ${PASSWORD}`, '    auth: { id_tags: TAG-D }'].join('\n')}\n`);
    await sighupAndWait('config file refused');
    expect(daemon!.output().split('\n').find((l) => l.includes('config file refused'))).toContain('chargers[0].auth');
    expect(await authorize(cp, 'TAG-C')).toBe('Accepted');
    expect(await authorize(cp, 'TAG-D')).toBe('Invalid');
    // Same tags again (and a charger added): nothing to send; the addition waits for a restart.
    writeConfig(['TAG-A', 'TAG-C'], 'CP-LATER', ['  - id: CP-NEW', `    password: ${PASSWORD}`, '    auth: accept_all'].join('\n'));
    await sighupAndWait('take effect at the next restart');
    expect(cp.received.filter((c) => c.action === 'SendLocalList')).toHaveLength(2);
    expect(cp.received.filter((c) => c.action === 'ClearCache')).toHaveLength(1);

    // A charger that connects after the reload gets the new tags, in full.
    const later = await connect('CP-LATER');
    const [first] = await later.cp.calls('SendLocalList', 1);
    expect(first.params).toMatchObject({ listVersion: 1, updateType: 'Full' });
    expect([...later.list.tags.keys()].sort()).toEqual(['TAG-A', 'TAG-C']);
    // Its tags lost TAG-B while it was away: ClearCache after its list.
    await later.cp.calls('ClearCache', 1);
    expect([...cp.violations, ...later.cp.violations]).toEqual([]);
    // Still the same process: SIGHUP never ended it.
    expect(daemon!.process.exitCode).toBeNull();
  });
});

describe('a ClearCache owed to a charger that was away outlives a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-owed-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  let daemon: DaemonProcess | undefined;
  const chargers: OcttCharger[] = [];

  afterAll(async () => {
    for (const c of chargers) await c.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends it after the restart, after the list, and keeps it no longer than its answer; tags removed from the file while the daemon was stopped owe one too', { timeout: 300_000 }, async () => {
    mkdirSync(dataDir);
    const [ocppPort, httpPort] = [await freePort(), await freePort()];
    const writeConfig = (tags: string[]) =>
      writeFileSync(configPath, [...centralSystemConfigHead({ dataDir, httpPort, ocppPort }), 'chargers:', '  - id: CP-AWAY', `    password: ${PASSWORD}`, `    auth: { id_tags: [${tags.join(', ')}] }`, ''].join('\n'));
    const owed = () => {
      const db = new Database(join(dataDir, 'metergate.db'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare('SELECT charge_point_id FROM ocpp_clear_cache_owed').pluck().all();
      } finally {
        db.close();
      }
    };
    writeConfig(['TAG-A', 'TAG-B']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    const first = await connectListKeeper(ocppPort, 'CP-AWAY');
    chargers.push(first.cp);
    await first.cp.calls('SendLocalList', 1);
    await first.cp.close();
    await until(() => daemon!.output().includes('charger disconnected'), 'the gateway sees CP-AWAY go');

    // TAG-B removed while the charger is away, then the gateway restarts before it comes back.
    writeConfig(['TAG-A']);
    daemon.process.kill('SIGHUP');
    await until(() => daemon!.output().includes('id tags reloaded'), 'SIGHUP taken');
    await until(() => owed().length === 1, 'the owed ClearCache stored');
    expect(await daemon.stop()).toBe(0);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });

    const back = await connectListKeeper(ocppPort, 'CP-AWAY');
    chargers.push(back.cp);
    const [list] = await back.cp.calls('SendLocalList', 1);
    expect(list.params).toEqual({ listVersion: 2, updateType: 'Differential', localAuthorizationList: [{ idTag: 'TAG-B' }] });
    await back.cp.calls('ClearCache', 1);
    expect(back.cp.received.map((c) => c.action).filter((a) => a === 'SendLocalList' || a === 'ClearCache')).toEqual(['SendLocalList', 'ClearCache']);
    // Answered: paid, in the store too (a next restart owes nothing).
    await until(() => owed().length === 0, 'the owed ClearCache paid in the store');
    await back.cp.close();
    await until(() => daemon!.output().split('charger disconnected').length === 2, 'the gateway sees CP-AWAY go again');

    // The file edited while the daemon is stopped (no SIGHUP): TAG-A is in the list the charger holds, not in the file.
    expect(await daemon.stop()).toBe(0);
    writeConfig(['TAG-C']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    const edited = await connectListKeeper(ocppPort, 'CP-AWAY');
    chargers.push(edited.cp);
    const [list3] = await edited.cp.calls('SendLocalList', 1);
    expect(list3.params).toEqual({ listVersion: 3, updateType: 'Differential', localAuthorizationList: [{ idTag: 'TAG-C', idTagInfo: { status: 'Accepted' } }, { idTag: 'TAG-A' }] });
    await edited.cp.calls('ClearCache', 1);
    expect(edited.cp.received.map((c) => c.action).filter((a) => a === 'SendLocalList' || a === 'ClearCache')).toEqual(['SendLocalList', 'ClearCache']);
    await until(() => owed().length === 0, 'that ClearCache paid too');
    expect([...first.cp.violations, ...back.cp.violations, ...edited.cp.violations]).toEqual([]);
  });
});

describe('a ClearCache the charger rejects stays owed; owed to a charger removed from the config is forgotten at start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-owed-rej-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  let daemon: DaemonProcess | undefined;
  const chargers: OcttCharger[] = [];

  afterAll(async () => {
    for (const c of chargers) await c.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Rejected: still owed (warned), sent again after the next list; the charger removed from the file: its row deleted at start', { timeout: 300_000 }, async () => {
    mkdirSync(dataDir);
    const [ocppPort, httpPort] = [await freePort(), await freePort()];
    const writeConfig = (chargerIds: string[], tags: string[]) =>
      writeFileSync(configPath, [...centralSystemConfigHead({ dataDir, httpPort, ocppPort }), 'chargers:', ...chargerIds.flatMap((id) => [`  - id: ${id}`, `    password: ${PASSWORD}`, `    auth: { id_tags: [${tags.join(', ')}] }`]), ''].join('\n'));
    const owed = () => {
      const db = new Database(join(dataDir, 'metergate.db'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare('SELECT charge_point_id FROM ocpp_clear_cache_owed').pluck().all();
      } finally {
        db.close();
      }
    };
    writeConfig(['CP-REJ', 'CP-STAYS'], ['TAG-A', 'TAG-B']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    const rej = await connectListKeeper(ocppPort, 'CP-REJ', 'Rejected');
    chargers.push(rej.cp);
    await rej.cp.calls('SendLocalList', 1);

    // TAG-B removed: the list goes, the ClearCache is rejected, it stays owed.
    writeConfig(['CP-REJ', 'CP-STAYS'], ['TAG-A']);
    daemon.process.kill('SIGHUP');
    await rej.cp.calls('ClearCache', 1);
    await until(() => daemon!.output().includes('ClearCache after removed id tags rejected by the charger; still owed'), 'the rejection warned');
    // CP-STAYS (never connected) owes one too: its tags lost TAG-B as well.
    expect(owed()).toEqual(['CP-REJ', 'CP-STAYS']);
    await rej.cp.close();
    await until(() => daemon!.output().includes('charger disconnected'), 'the gateway sees CP-REJ go');

    // Back (still rejecting): its list, then the owed ClearCache again.
    const again = await connectListKeeper(ocppPort, 'CP-REJ', 'Rejected');
    chargers.push(again.cp);
    await again.cp.calls('ClearCache', 1);
    await again.cp.close();
    await until(() => daemon!.output().split('charger disconnected').length === 3, 'the gateway sees CP-REJ go again');
    expect(owed()).toEqual(['CP-REJ', 'CP-STAYS']);

    // CP-REJ removed from the file while the daemon is stopped: nothing would ever send it; its row goes at start.
    expect(await daemon.stop()).toBe(0);
    writeConfig(['CP-STAYS'], ['TAG-A']);
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    await until(() => !owed().includes('CP-REJ'), 'the row of the removed charger deleted');
    expect(owed()).toEqual(['CP-STAYS']);
    expect([...rej.cp.violations, ...again.cp.violations]).toEqual([]);
  });
});
