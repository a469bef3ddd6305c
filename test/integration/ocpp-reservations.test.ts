// Reservations (ReserveNow/CancelReservation) against `metergate run` as its own process:
// real HTTP with a cpo token (every answer checked against openapi.json), the CLI as a
// process, and an independent strict charge point (ocpp-ws-io, test/helpers/octt-charger.ts)
// that checks every frame the gateway sends, its StartTransaction answer on a reservation
// included, against the official OCPP 1.6 schemas, and keeps reservations as a charger does.
// The cases carry the ids of the OCA's OCPP 1.6 Compliancy Testing Tool Test Case Document
// (Trial 2025-06) reservation cases for a central system, as transcribed at
// https://www.ocpplab.com/docs/protocols/ocpp-1-6/test-cases/ (tc-046-csms, tc-047-csms,
// tc-048-1-csms, tc-048-2-csms, tc-048-3-csms, tc-049-csms, tc-052-csms; read 2026-11-27);
// docs/chargers.md "OCTT-style suite" has their table.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { runCli } from '../helpers/cli-process.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { until } from '../helpers/wait.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';

type Json = Record<string, any>;
const PASSWORD = 'reservation-key-0123456789';
const CP = 'CP-RES-1';

/** `metergate <args>` from the build (scripts/test builds first): faster than through tsx on a loaded machine. */
const cli = (args: string[], env: NodeJS.ProcessEnv) => runCli(args, env);

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
  const inoperative = new Set<number>();

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
        '  - id: CP-RES-CORE',
        `    password: ${PASSWORD}`,
        '    auth: accept_all',
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
        // As a charger: connector 2 is charging, 5 faulted, 7 will not; an inoperative one is Unavailable; else held (0: any connector).
        ReserveNow: (p) => {
          const c = p.connectorId as number;
          if (c === 2) return { status: 'Occupied' };
          if (c === 5) return { status: 'Faulted' };
          if (c === 7) return { status: 'Rejected' };
          if (inoperative.has(c)) return { status: 'Unavailable' };
          held.set(p.reservationId as number, c);
          return { status: 'Accepted' };
        },
        ChangeAvailability: (p) => {
          if (p.type === 'Inoperative') inoperative.add(p.connectorId as number);
          else inoperative.delete(p.connectorId as number);
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
    // An accepted parent does not make an unknown id tag one the charger would start with.
    const underParent = await api('reserve-now', { connector_id: 1, id_tag: 'TAG-EVE', parent_id_tag: 'TAG-ANNA', expiry_date: inMinutes(10) });
    expect(underParent.status).toBe(422);
    expect(underParent.body.errors[0].path).toBe('id_tag');
    expect((await api('reserve-now', { connector_id: 1, id_tag: 'TAG-ANNA' })).status).toBe(422);
    expect((await api('cancel-reservation', { reservation_id: 999 })).status).toBe(404);
    // A charger whose SupportedFeatureProfiles leave out Reservation: 409, nothing sent.
    const core = await connectOcttCharger({
      endpoint: `ws://127.0.0.1:${ocppPort}`,
      identity: 'CP-RES-CORE',
      password: PASSWORD,
      answers: { GetConfiguration: () => ({ configurationKey: [{ key: 'SupportedFeatureProfiles', readonly: true, value: 'Core,SmartCharging' }] }) },
    });
    try {
      await core.call('BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'C1' });
      await until(async () => (await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text()).includes('metergate_ocpp_charger_supported_profile{charge_point_id="CP-RES-CORE",profile="Core"} 1'), 'the feature profiles read', 60_000);
      const noProfile = await api('reserve-now', { connector_id: 1, id_tag: 'ANY', expiry_date: inMinutes(10) }, 'CP-RES-CORE');
      expect(noProfile.status).toBe(409);
      expect(noProfile.body.detail).toContain('does not declare the Reservation profile');
      expect(core.received.filter((c) => c.action === 'ReserveNow')).toEqual([]);
    } finally {
      await core.close();
    }
    expect(cp!.received.filter((c) => c.action === 'ReserveNow')).toEqual([]);
  });

  it('TC_046_CSMS Reservation of a Connector – Transaction: an id of its own, shown, ended by the transaction that carries it', { timeout: 60_000 }, async () => {
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
    // A StartTransaction naming a reservation that is not open ends none, not even one of its id tag on its connector.
    const stray = await cp!.call<Json>('StartTransaction', { connectorId: 1, idTag: 'TAG-ANNA', meterStart: 100, timestamp: new Date().toISOString(), reservationId: id + 1000 });
    expect(Number.isInteger(stray.transactionId)).toBe(true);
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([id]);
    await cp!.call('StopTransaction', { transactionId: stray.transactionId, meterStop: 100, timestamp: new Date().toISOString() });

    // Reusable state Charging with the reservationId.
    await cp!.call('Authorize', { idTag: 'TAG-ANNA' });
    await status(1, 'Preparing');
    const started = await cp!.call<Json>('StartTransaction', { connectorId: 1, idTag: 'TAG-ANNA', meterStart: 200, timestamp: new Date().toISOString(), reservationId: id });
    expect(started.idTagInfo.status).toBe('Accepted');
    await status(1, 'Charging');
    expect(await inForce()).toEqual([]);
    await cp!.call('StopTransaction', { transactionId: started.transactionId, meterStop: 300, timestamp: new Date().toISOString() });
    await status(1, 'Available');
    // The charger's own view: every frame the gateway sent it matched the official schemas.
    expect(cp!.violations).toEqual([]);
  });

  it('TC_047_CSMS Reservation of a Connector – Expire: dropped once its expiry passed', { timeout: 90_000 }, async () => {
    const soon = await api('reserve-now', { connector_id: 1, id_tag: 'TAG-BOB', expiry_date: new Date(Date.now() + 6_000).toISOString() });
    expect(soon.body.reservation.state).toBe('active');
    await status(1, 'Reserved');
    // Waited on, not slept: gone from the list once its expiry passed (the read filter: the 30 s
    // sweep that stores end_reason 'expired' is test/unit/ocpp-reservations-sweep.test.ts); the charger says Available.
    await until(async () => (await inForce()).length === 0, 'the short reservation dropped after its expiry', 60_000);
    await status(1, 'Available');
    expect(cp!.violations).toEqual([]);
  });

  it('TC_048_1/2/3_CSMS Reservation of a Connector – Faulted, Occupied, Unavailable (and Rejected): the charger\'s answer handed back, nothing kept', { timeout: 90_000 }, async () => {
    const answerFor = async (connectorId: number) => {
      const r = await api('reserve-now', { connector_id: connectorId, id_tag: 'TAG-ANNA', expiry_date: inMinutes(30) });
      expect(r.status).toBe(200);
      expect(r.body.reservation).toMatchObject({ state: 'ended', end_reason: 'refused', charger_status: r.body.answer.status });
      return r.body.answer.status as string;
    };
    expect(await answerFor(5)).toBe('Faulted');
    await status(2, 'Preparing');
    expect(await answerFor(2)).toBe('Occupied');
    expect((await api('change-availability', { connector_id: 6, type: 'Inoperative' })).body.answer).toEqual({ status: 'Accepted' });
    await status(6, 'Unavailable');
    expect(await answerFor(6)).toBe('Unavailable');
    expect(await answerFor(7)).toBe('Rejected');
    expect(await inForce()).toEqual([]);
    expect(cp!.violations).toEqual([]);
  });

  it('TC_049_CSMS Reservation of a Charge Point – Transaction: connector 0, ended by a transaction on any connector', { timeout: 60_000 }, async () => {
    const made = await api('reserve-now', { connector_id: 0, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) });
    expect(made.body).toMatchObject({ request: { connectorId: 0 }, answer: { status: 'Accepted' }, reservation: { connector_id: 0, state: 'active' } });
    const id = made.body.reservation.reservation_id as number;
    // OCPP 1.6 allows connector 0 only Available, Unavailable, Faulted: the charger shows the reservation on the connector it holds for it.
    await status(3, 'Reserved');
    const started = await cp!.call<Json>('StartTransaction', { connectorId: 3, idTag: 'TAG-BOB', meterStart: 0, timestamp: new Date().toISOString(), reservationId: id });
    expect(started.idTagInfo.status).toBe('Accepted');
    expect(await inForce()).toEqual([]);
    await cp!.call('StopTransaction', { transactionId: started.transactionId, meterStop: 10, timestamp: new Date().toISOString() });
    await status(3, 'Available');
    expect(cp!.violations).toEqual([]);
  });

  it('cancels, TC_052_CSMS Cancel Reservation – Rejected, and a connector released by the charger or faulted ends its reservation', { timeout: 90_000 }, async () => {
    const made = await api('reserve-now', { connector_id: 3, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) });
    const id = made.body.reservation.reservation_id as number;
    const cancelled = await api('cancel-reservation', { reservation_id: id });
    expect(cancelled.body).toMatchObject({ action: 'CancelReservation', request: { reservationId: id }, answer: { status: 'Accepted' }, reservation: { state: 'ended', end_reason: 'cancelled' } });
    expect(held.has(id)).toBe(false);
    expect((await api('cancel-reservation', { reservation_id: id })).status).toBe(404);

    // The reservation cancelled on the charge point itself: its Rejected handed back, the reservation no longer in force.
    const dropped = (await api('reserve-now', { connector_id: 3, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) })).body.reservation.reservation_id as number;
    await status(3, 'Reserved');
    held.delete(dropped);
    const rejected = await api('cancel-reservation', { reservation_id: dropped });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ answer: { status: 'Rejected' }, reservation: { state: 'ended', end_reason: 'cancel-rejected' } });
    expect(await inForce()).toEqual([]);

    // Reserved -> Available without a transaction: the charger ended it on its own.
    const released = (await api('reserve-now', { connector_id: 4, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) })).body.reservation.reservation_id as number;
    await status(4, 'Reserved');
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([released]);
    held.delete(released);
    await status(4, 'Available');
    expect(await inForce()).toEqual([]);
    // Ended on the gateway's view, still cancellable (the charger could hold it): its Rejected keeps the end.
    const afterRelease = await api('cancel-reservation', { reservation_id: released });
    expect(afterRelease.status).toBe(200);
    expect(afterRelease.body).toMatchObject({ answer: { status: 'Rejected' }, reservation: { state: 'ended', end_reason: 'released-by-charger' } });

    const faulting = (await api('reserve-now', { connector_id: 3, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) })).body.reservation.reservation_id as number;
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([faulting]);
    await cp!.call('StatusNotification', { connectorId: 3, status: 'Faulted', errorCode: 'GroundFailure', timestamp: new Date().toISOString() });
    expect(await inForce()).toEqual([]);
    expect(cp!.violations).toEqual([]);
  });

  it('a connector-0 reservation the charger ends on its own: ended by the Reserved -> Available of the last real connector that showed it (OCPP 1.6 5.13)', { timeout: 90_000 }, async () => {
    const reserveWholeCharger = async () => {
      const made = await api('reserve-now', { connector_id: 0, id_tag: 'TAG-ANNA', expiry_date: inMinutes(30) });
      expect(made.body).toMatchObject({ answer: { status: 'Accepted' }, reservation: { connector_id: 0, state: 'active' } });
      return made.body.reservation.reservation_id as number;
    };
    // Shown on the one connector the charger holds for it, then released there (cancelled at the charger, or lapsed on its clock).
    const shownOnOne = await reserveWholeCharger();
    await status(9, 'Reserved');
    held.delete(shownOnOne);
    await status(9, 'Available');
    expect(await inForce()).toEqual([]);
    // Ended on the gateway's view: a cancel gets the charger's Rejected and keeps that end.
    expect((await api('cancel-reservation', { reservation_id: shownOnOne })).body).toMatchObject({ answer: { status: 'Rejected' }, reservation: { state: 'ended', end_reason: 'released-by-charger' } });

    // Shown on every free connector: in force while one still shows it, ended with the last.
    const shownOnAll = await reserveWholeCharger();
    await status(9, 'Reserved');
    await status(10, 'Reserved');
    held.delete(shownOnAll);
    await status(9, 'Available');
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([shownOnAll]);
    await status(10, 'Available');
    expect(await inForce()).toEqual([]);

    // A connector's own reservation released there leaves the connector-0 one in force.
    const whole = await reserveWholeCharger();
    const own = (await api('reserve-now', { connector_id: 10, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) })).body.reservation.reservation_id as number;
    await status(9, 'Reserved');
    await status(10, 'Reserved');
    held.delete(own);
    await status(10, 'Available');
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([whole]);
    held.delete(whole);
    await status(9, 'Available');
    expect(await inForce()).toEqual([]);
    expect(cp!.violations).toEqual([]);
  });

  it('a connector-0 reservation shown on two connectors: the driver takes one, the charger frees the other, the transaction names it: ended by the transaction', { timeout: 90_000 }, async () => {
    const made = await api('reserve-now', { connector_id: 0, id_tag: 'TAG-ANNA', expiry_date: inMinutes(30) });
    expect(made.body).toMatchObject({ answer: { status: 'Accepted' }, reservation: { connector_id: 0, state: 'active' } });
    const id = made.body.reservation.reservation_id as number;
    await status(13, 'Reserved');
    await status(14, 'Reserved');
    // The driver plugs in at 13; the charger no longer needs 14 for the reservation.
    await status(13, 'Preparing');
    await status(14, 'Available');
    const started = await cp!.call<Json>('StartTransaction', { connectorId: 13, idTag: 'TAG-ANNA', meterStart: 0, timestamp: new Date().toISOString(), reservationId: id });
    expect(started.idTagInfo.status).toBe('Accepted');
    const db = new Database(databasePath(dataDir), { readonly: true, fileMustExist: true });
    try {
      expect(db.prepare('SELECT end_reason, transaction_id FROM ocpp_reservations WHERE reservation_id = ?').get(id)).toEqual({ end_reason: 'transaction', transaction_id: started.transactionId });
    } finally {
      db.close();
    }
    expect(await inForce()).toEqual([]);
    await cp!.call('StopTransaction', { transactionId: started.transactionId, meterStop: 10, timestamp: new Date().toISOString() });
    await status(13, 'Available');
    expect(cp!.violations).toEqual([]);
  });

  it('reserve, cancel, reserve again: the Available the cancel caused, crossing the new ReserveNow, leaves the new reservation in force and cancellable', { timeout: 90_000 }, async () => {
    const first = (await api('reserve-now', { connector_id: 8, id_tag: 'TAG-ANNA', expiry_date: inMinutes(30) })).body.reservation.reservation_id as number;
    await status(8, 'Reserved');
    expect((await api('cancel-reservation', { reservation_id: first })).body.answer).toEqual({ status: 'Accepted' });
    // The charger's Available for the cancelled one arrives only after the next ReserveNow was answered.
    const second = await api('reserve-now', { connector_id: 8, id_tag: 'TAG-BOB', expiry_date: inMinutes(30) });
    expect(second.body.answer).toEqual({ status: 'Accepted' });
    const id = second.body.reservation.reservation_id as number;
    await status(8, 'Available');
    expect((await inForce()).map((r) => r.reservation_id)).toEqual([id]);
    await status(8, 'Reserved');
    const cancelled = await api('cancel-reservation', { reservation_id: id });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ answer: { status: 'Accepted' }, reservation: { state: 'ended', end_reason: 'cancelled' } });
    expect(held.has(id)).toBe(false);
    await status(8, 'Available');
    expect(await inForce()).toEqual([]);
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
