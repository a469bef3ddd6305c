// Reservations (ReserveNow/CancelReservation) against `metergate run` as its own process:
// real HTTP with a cpo token (every answer checked against openapi.json), the CLI as a
// process, and an independent strict charge point (ocpp-ws-io, test/helpers/octt-charger.ts)
// that checks every frame the gateway sends, its StartTransaction answer on a reservation
// included, against the official OCPP 1.6 schemas, and keeps reservations as a charger does.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

type Json = Record<string, any>;
const PASSWORD = 'reservation-key-0123456789';
const CP = 'CP-RES-1';
const root = fileURLToPath(new URL('../..', import.meta.url));

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: root, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('reservations: ReserveNow / CancelReservation against metergate run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-ocpp-res-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  let daemon: DaemonProcess | undefined;
  let cp: OcttCharger | undefined;
  let cpo = '';
  let httpPort = 0;
  let ocppPort = 0;
  /** The reservations the charger holds, as a charger keeps them: reservationId -> connector. */
  const held = new Map<number, number>();

  const request = async (method: string, path: string, template: string, body?: unknown, token = cpo) => {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Token ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Json;
    expectDocumented(method, template, res, json);
    return { status: res.status, body: json };
  };
  const api = (op: string, body: unknown, chargePointId = CP, token?: string) => request('POST', `/api/v1/chargers/${chargePointId}/${op}`, `/api/v1/chargers/{charge_point_id}/${op}`, body, token);
  const inForce = async () => (await request('GET', `/api/v1/chargers/${CP}/reservations`, '/api/v1/chargers/{charge_point_id}/reservations')).body.reservations as Json[];
  const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
  const status = (connectorId: number, s: string) => cp!.call('StatusNotification', { connectorId, status: s, errorCode: 'NoError', timestamp: new Date().toISOString() });

  beforeAll(async () => {
    mkdirSync(dataDir);
    const db = openDaemonDatabase(databasePath(dataDir));
    cpo = new TokenStore(db).create({ name: 'operator', type: 'cpo', nowMs: Date.now() }).token;
    db.close();
    [ocppPort, httpPort] = [await freePort(), await freePort()];
    writeFileSync(
      configPath,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort, ocppSettings: 'operation_timeout_s: 8' }),
        'chargers:',
        `  - id: ${CP}`,
        `    password: ${PASSWORD}`,
        '    auth: { id_tags: [TAG-ANNA, TAG-BOB], }',
        '  - id: CP-RES-OFF',
        `    password: ${PASSWORD}`,
        '    auth: accept_all',
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    cp = await connectOcttCharger({
      endpoint: `ws://127.0.0.1:${ocppPort}`,
      identity: CP,
      password: PASSWORD,
      answers: {
        GetConfiguration: () => ({ configurationKey: [{ key: 'SupportedFeatureProfiles', readonly: true, value: 'Core,Reservation,LocalAuthListManagement,SmartCharging' }] }),
        SetChargingProfile: () => ({ status: 'Accepted' }),
        ClearChargingProfile: () => ({ status: 'Accepted' }),
        SendLocalList: () => ({ status: 'Accepted' }),
        // As a charger: connector 2 is charging; connector 0 not supported; else held.
        ReserveNow: (p) => {
          if (p.connectorId === 2) return { status: 'Occupied' };
          if (p.connectorId === 0) return { status: 'Rejected' };
          held.set(p.reservationId as number, p.connectorId as number);
          return { status: 'Accepted' };
        },
        CancelReservation: (p) => ({ status: held.delete(p.reservationId as number) ? 'Accepted' : 'Rejected' }),
      },
    });
    await cp.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'R1', firmwareVersion: '1.0' });
    await cp.calls('GetConfiguration');
  }, 180_000);

  afterAll(async () => {
    await cp?.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses what it cannot reserve before anything is sent', { timeout: 60_000 }, async () => {
    expect((await api('reserve-now', { connector_id: 1, id_tag: 'TAG-ANNA', expiry_date: inMinutes(10) }, 'CP-NOPE')).status).toBe(404);
    const offline = await api('reserve-now', { connector_id: 1, id_tag: 'ANY', expiry_date: inMinutes(10) }, 'CP-RES-OFF');
    expect(offline.status).toBe(409);
    expect(offline.body.detail).toContain('not connected');
    expect((await api('reserve-now', { connector_id: 1, id_tag: 'TAG-ANNA', expiry_date: inMinutes(10) }, CP, '')).status).toBe(401);
    const past = await api('reserve-now', { connector_id: 1, id_tag: 'TAG-ANNA', expiry_date: inMinutes(-1) });
    expect(past.status).toBe(422);
    expect(past.body.errors[0].path).toBe('expiry_date');
    const stranger = await api('reserve-now', { connector_id: 1, id_tag: 'TAG-EVE', expiry_date: inMinutes(10) });
    expect(stranger.status).toBe(422);
    expect(stranger.body.errors[0].path).toBe('id_tag');
    expect((await api('reserve-now', { connector_id: 1, id_tag: 'TAG-ANNA' })).status).toBe(422);
    expect((await api('cancel-reservation', { reservation_id: 999 })).status).toBe(404);
    expect(cp!.received.filter((c) => c.action === 'ReserveNow')).toEqual([]);
  });

  it('reserves with an id of its own, shows it, and a transaction on it ends it with a schema-valid StartTransaction answer', { timeout: 60_000 }, async () => {
    const expiry = inMinutes(30);
    const made = await api('reserve-now', { connector_id: 1, id_tag: 'TAG-ANNA', parent_id_tag: 'FLEET-7', expiry_date: expiry });
    expect(made.status).toBe(200);
    const id = made.body.reservation.reservation_id as number;
    expect(made.body).toMatchObject({ action: 'ReserveNow', answer: { status: 'Accepted' }, reservation: { connector_id: 1, id_tag: 'TAG-ANNA', parent_id_tag: 'FLEET-7', state: 'active', charger_status: 'Accepted', end_reason: null } });
    const sent = cp!.received.filter((c) => c.action === 'ReserveNow').at(-1)!.params;
    expect(sent).toEqual({ connectorId: 1, expiryDate: new Date(expiry).toISOString(), idTag: 'TAG-ANNA', parentIdTag: 'FLEET-7', reservationId: id });
    await status(1, 'Reserved');
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([id]);
    const report = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as Json;
    const charger = report.chargers.find((c: Json) => c.charge_point_id === CP);
    expect(charger.connectors.find((k: Json) => k.connector_id === 1)).toMatchObject({ status: 'Reserved', reservation: { reservation_id: id, confirmed: true } });
    expect(await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text()).toMatch(/metergate_ocpp_reservations\{charge_point_id="CP-RES-1"\} 1/);

    // Another id tag on the reserved connector is the charger's business: the gateway answers as usual, the reservation stays.
    const other = await cp!.call<Json>('StartTransaction', { connectorId: 1, idTag: 'TAG-BOB', meterStart: 100, timestamp: new Date().toISOString() });
    expect(Number.isInteger(other.transactionId)).toBe(true);
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([id]);
    await cp!.call('StopTransaction', { transactionId: other.transactionId, meterStop: 100, timestamp: new Date().toISOString() });

    const started = await cp!.call<Json>('StartTransaction', { connectorId: 1, idTag: 'TAG-ANNA', meterStart: 200, timestamp: new Date().toISOString(), reservationId: id });
    expect(started.idTagInfo.status).toBe('Accepted');
    expect(await inForce()).toEqual([]);
    // The charger's own view: every frame the gateway sent it matched the official schemas.
    expect(cp!.violations).toEqual([]);
  });

  it('returns the charger\'s refusal, cancels, and drops reservations that expire or whose connector faults', { timeout: 90_000 }, async () => {
    const occupied = await api('reserve-now', { connector_id: 2, id_tag: 'TAG-ANNA', expiry_date: inMinutes(30) });
    expect(occupied.status).toBe(200);
    expect(occupied.body).toMatchObject({ answer: { status: 'Occupied' }, reservation: { state: 'ended', charger_status: 'Occupied', end_reason: 'refused' } });
    expect((await api('reserve-now', { connector_id: 0, id_tag: 'TAG-ANNA', expiry_date: inMinutes(30) })).body.answer).toEqual({ status: 'Rejected' });
    expect(await inForce()).toEqual([]);

    const made = await api('reserve-now', { connector_id: 3, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) });
    const id = made.body.reservation.reservation_id as number;
    const cancelled = await api('cancel-reservation', { reservation_id: id });
    expect(cancelled.body).toMatchObject({ action: 'CancelReservation', request: { reservationId: id }, answer: { status: 'Accepted' }, reservation: { state: 'ended', end_reason: 'cancelled' } });
    expect(held.has(id)).toBe(false);
    expect((await api('cancel-reservation', { reservation_id: id })).status).toBe(404);

    const faulting = (await api('reserve-now', { connector_id: 3, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) })).body.reservation.reservation_id as number;
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([faulting]);
    await cp!.call('StatusNotification', { connectorId: 3, status: 'Faulted', errorCode: 'GroundFailure', timestamp: new Date().toISOString() });
    expect(await inForce()).toEqual([]);

    // A short one: gone from the list once its expiry passed (waited on, not slept).
    const soon = await api('reserve-now', { connector_id: 1, id_tag: 'TAG-BOB', expiry_date: new Date(Date.now() + 3_000).toISOString() });
    expect(soon.body.reservation.state).toBe('active');
    await until(async () => (await inForce()).length === 0, 'the short reservation dropped after its expiry', 60_000);
    expect(cp!.violations).toEqual([]);
  });

  it('metergate charger reserve-now / reservations / cancel-reservation against the running daemon', { timeout: 120_000 }, async () => {
    const env = { MG_TOKEN: cpo };
    const made = await cli(['charger', 'reserve-now', CP, '--connector', '1', '--id-tag', 'TAG-ANNA', '--minutes', '20', '--config', configPath], env);
    expect(made.code, made.stderr).toBe(0);
    const id = JSON.parse(made.stdout).reservation.reservation_id as number;
    const listed = await cli(['charger', 'reservations', CP, '--config', configPath], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).reservations.map((r: Json) => r.reservation_id)).toEqual([id]);
    const cancelled = await cli(['charger', 'cancel-reservation', CP, '--reservation', String(id), '--config', configPath], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout).answer).toEqual({ status: 'Accepted' });
    const both = await cli(['charger', 'reserve-now', CP, '--connector', '1', '--id-tag', 'TAG-ANNA', '--config', configPath], env);
    expect(both.code).toBe(64);
    expect(daemon!.output()).not.toContain(cpo);
  });
});
