// Signed meter values end to end (issue 32 items 1-3, 5): an independent charge point
// (ocpp-ws-io in strict mode, every frame of the gateway checked against the official OCPP
// 1.6 schemas, test/helpers/octt-charger.ts) sends OCMF documents signed in the test in
// MeterValues (Transaction.Begin, Sample.Periodic) and StopTransaction's transactionData
// (Transaction.End) to `metergate run` in its own process, on real NL prices. Each cdr
// names its outcome (verified, and the tampered sessions each with theirs); signed_data
// has OCPI 2.2.1's SignedData shape and its documents verify with @road-labs/ocmf; the
// transparency XML parses back to them; /metrics counts the outcomes and the status page
// shows the last one.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Verifier } from '@road-labs/ocmf';
import { Crypto } from '@road-labs/ocmf-crypto-noble';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { databasePath, openDaemonDatabase } from '../../src/store/db.js';
import { TokenStore } from '../../src/store/tokens.js';
import { centralSystemConfigHead } from '../helpers/central-system-config.js';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { meterKey, payload, signOcmf, type MeterKey } from '../helpers/ocmf.js';
import { connectOcttCharger, type OcttCharger } from '../helpers/octt-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { seriesValue } from '../helpers/prom-text.js';
import { loadNl2025Prices } from '../helpers/real-prices.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';

type Json = Record<string, any>;
const PASSWORD = 'signed-meter-key-0123456789';
const CP = 'CP-EICH-1';
const CDR = '/api/v1/cdrs/{cpo_transaction_id}';
const at = (iso: string) => Date.parse(iso);

describe.skipIf(!hasSharedData)(`signed meter values against metergate run${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'metergate-signed-'));
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'config.yaml');
  // Connector 1: a P-256 meter; 2: a brainpool meter; 3 and 4: no key.
  const key1 = meterKey('ECDSA-secp256r1-SHA256');
  const key2 = meterKey('ECDSA-brainpool256r1-SHA256');
  const key3 = meterKey('ECDSA-secp256k1-SHA256');
  let daemon: DaemonProcess | undefined;
  let cp: OcttCharger | undefined;
  let cdrs = '';
  let cpo = '';
  let httpPort = 0;

  const get = async (path: string, template: string | null = CDR, token = cdrs) => {
    const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, { headers: { authorization: `Token ${token}` } });
    const text = await res.text();
    const body = (res.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as Json) : text;
    if (template) expectDocumented('GET', template, res, body);
    return { status: res.status, body, type: res.headers.get('content-type') ?? '' };
  };

  beforeAll(async () => {
    mkdirSync(dataDir);
    const db = openDaemonDatabase(databasePath(dataDir));
    expect(loadNl2025Prices(db)).toBeGreaterThan(10_000);
    cdrs = new TokenStore(db).create({ name: 'billing', type: 'cdrs', nowMs: Date.now() }).token;
    cpo = new TokenStore(db).create({ name: 'operator', type: 'cpo', nowMs: Date.now() }).token;
    db.close();
    const ocppPort = await freePort();
    httpPort = await freePort();
    // Labels print keys with spaces: the config takes them so.
    const spaced = (hex: string) => hex.match(/.{1,4}/g)!.join(' ');
    writeFileSync(
      configPath,
      [
        ...centralSystemConfigHead({ dataDir, httpPort, ocppPort }),
        'chargers:',
        `  - id: ${CP}`,
        `    password: ${PASSWORD}`,
        '    auth: accept_all',
        `    meter_public_keys: { "1": "${spaced(key1.publicKeyHex)}", "2": "${key2.publicKeyHex}" }`,
        '',
      ].join('\n'),
    );
    daemon = await startDaemon(configPath, { startTimeoutMs: 120_000 });
    cp = await connectOcttCharger({
      endpoint: `ws://127.0.0.1:${ocppPort}`,
      identity: CP,
      password: PASSWORD,
      answers: {
        GetConfiguration: () => ({ configurationKey: [{ key: 'SupportedFeatureProfiles', readonly: true, value: 'Core' }] }),
        SetChargingProfile: () => ({ status: 'Accepted' }),
        ClearChargingProfile: () => ({ status: 'Accepted' }),
      },
    });
    await cp.call('BootNotification', { chargePointVendor: 'Eich', chargePointModel: 'E1', firmwareVersion: '1.0' });
  }, 180_000);

  afterAll(async () => {
    await cp?.close();
    await daemon?.kill9();
    rmSync(dir, { recursive: true, force: true });
  });

  let pagination = 100;
  interface Session {
    connectorId: number;
    key: MeterKey;
    startIso: string;
    stopIso: string;
    startWh: number;
    stopWh: number;
    /** What the charger sends as meterStop (default: the signed stop). */
    meterStopWh?: number;
    /** Changes the signed end document before it is sent (tampering). */
    tamperEnd?: (doc: string) => string;
    sendBegin?: boolean;
    sendPeriodic?: boolean;
    sendEnd?: boolean;
    signed?: boolean;
  }

  /** One session as an Eichrecht charger runs it; its cdr id. */
  async function session(s: Session): Promise<string> {
    const started = await cp!.call<{ transactionId: number }>('StartTransaction', { connectorId: s.connectorId, idTag: 'RFID-1', meterStart: s.startWh, timestamp: s.startIso });
    const transactionId = started.transactionId;
    const sign = (atIso: string, tx: 'B' | 'C' | 'E', wh: number) => signOcmf(payload('MTR-' + s.connectorId, pagination++, [{ atMs: at(atIso), tx, wh }]), s.key);
    const midIso = new Date((at(s.startIso) + at(s.stopIso)) / 2).toISOString();
    const midWh = Math.round((s.startWh + s.stopWh) / 2);
    const signed = s.signed !== false;
    const sampled = (iso: string, wh: number, context: string, tx: 'B' | 'C' | 'E') => ({
      timestamp: iso,
      sampledValue: [
        { value: String(wh), context, measurand: 'Energy.Active.Import.Register', unit: 'Wh' },
        ...(signed && (tx === 'B' ? s.sendBegin !== false : s.sendPeriodic !== false) ? [{ value: sign(iso, tx, wh), context, format: 'SignedData', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] : []),
      ],
    });
    await cp!.call('MeterValues', { connectorId: s.connectorId, transactionId, meterValue: [sampled(s.startIso, s.startWh, 'Transaction.Begin', 'B'), sampled(midIso, midWh, 'Sample.Periodic', 'C')] });
    const endDoc = sign(s.stopIso, 'E', s.stopWh);
    const transactionData = [
      {
        timestamp: s.stopIso,
        sampledValue: [
          { value: String(s.stopWh), context: 'Transaction.End' },
          ...(signed && s.sendEnd !== false ? [{ value: (s.tamperEnd ?? ((d: string) => d))(endDoc), context: 'Transaction.End', format: 'SignedData' }] : []),
        ],
      },
    ];
    await cp!.call('StopTransaction', { transactionId, meterStop: s.meterStopWh ?? s.stopWh, timestamp: s.stopIso, reason: 'EVDisconnected', transactionData });
    return `ocpp:${CP}:${transactionId}`;
  }

  const noble = new Crypto();
  const roadLabs = new Verifier(noble);
  const verifies = async (doc: string, publicKeyBase64: string) => (await roadLabs.parseAndVerify(doc, await noble.decodeEcPublicKey(Buffer.from(publicKeyBase64, 'base64'), 'spki-der'))).verified;

  it('a signed session: the cdr keeps its contract fields, carries OCPI signed_data that verifies, and names it verified', { timeout: 60_000 }, async () => {
    const id = await session({ connectorId: 1, key: key1, startIso: '2025-09-30T21:30:00Z', stopIso: '2025-09-30T22:30:00Z', startWh: 1_000, stopWh: 12_000 });
    // Not asked for: exactly the contract's fields.
    const plainCdr = await get(`/api/v1/cdrs/${id}`);
    expect(Object.keys(plainCdr.body as Json).sort()).toEqual(['currency', 'end_date_time', 'id', 'last_updated', 'start_date_time', 'total_cost']);
    const cdr = await get(`/api/v1/cdrs/${id}?include=signed_data`);
    expect(cdr.status).toBe(200);
    const body = cdr.body as Json;
    expect({ ...body, signed_data: undefined, signed_data_verification: undefined }).toEqual({ ...(plainCdr.body as Json), signed_data: undefined, signed_data_verification: undefined });
    // Parts combine; an unknown one is a 400.
    expect(((await get(`/api/v1/cdrs/${id}?include=cost_components,signed_data`)).body as Json).signed_data_verification.outcome).toBe('verified');
    expect((await get(`/api/v1/cdrs/${id}?include=signed_datum`)).status).toBe(400);
    // The operator's transaction view says it without being asked.
    const view = await get(`/api/v1/chargers/${CP}/transactions/${id.split(':')[2]}`, '/api/v1/chargers/{charge_point_id}/transactions/{transaction_id}', cpo);
    expect((view.body as Json).signed_data_verification).toEqual(body.signed_data_verification);
    // Priced as before on real prices (ocpp-central-system: the same register values over the same hour cost 1.0307).
    expect(body.total_cost.excl_vat).toBeGreaterThan(0);
    expect(Object.keys(body).sort()).toEqual(['currency', 'end_date_time', 'id', 'last_updated', 'signed_data', 'signed_data_verification', 'start_date_time', 'total_cost']);
    expect(body.signed_data_verification).toMatchObject({ outcome: 'verified', format: 'OCMF', meter_serial: 'MTR-1', signed_start_wh: 1_000, signed_stop_wh: 12_000 });
    const sd = body.signed_data as Json;
    expect(sd.encoding_method).toBe('OCMF');
    expect(Buffer.from(sd.public_key, 'base64').toString('hex').toUpperCase()).toBe(key1.publicKeyHex);
    expect(sd.signed_values.map((v: Json) => v.nature)).toEqual(['Start', 'Intermediate', 'End']);
    for (const v of sd.signed_values as Json[]) {
      const doc = Buffer.from(v.signed_data, 'base64').toString('utf8');
      expect(doc.startsWith('OCMF|')).toBe(true);
      expect(v.plain_data).toBe(doc.slice(5, doc.lastIndexOf('|')));
      expect(await verifies(doc, sd.public_key)).toBe(true);
    }

    // The transparency XML: the same documents and key, parsed back, and they verify.
    const xml = await get(`/api/v1/cdrs/${id}/signed`, null);
    expect(xml.status).toBe(200);
    expect(xml.type).toContain('application/xml');
    const parsed = new XMLParser({ ignoreAttributes: false, parseTagValue: false, attributeNamePrefix: '' }).parse(xml.body as string) as Json;
    const list = parsed.values.value as Json[];
    expect(list.map((v) => v.context)).toEqual(['Transaction.Begin', 'Sample.Periodic', 'Transaction.End']);
    expect(list.map((v) => v.signedData['#text'])).toEqual(sd.signed_values.map((v: Json) => Buffer.from(v.signed_data, 'base64').toString('utf8')));
    for (const v of list) {
      expect(v.transactionId).toBe(id.split(':')[2]);
      expect(v.signedData.format).toBe('OCMF');
      expect(v.publicKey['#text']).toBe(key1.publicKeyHex);
      expect(await verifies(v.signedData['#text'], Buffer.from(v.publicKey['#text'], 'hex').toString('base64'))).toBe(true);
    }
  });

  it('tampered and incomplete sessions each name their outcome in the cdr, which is still priced', { timeout: 90_000 }, async () => {
    const day = (h: number) => `2025-10-01T${String(h).padStart(2, '0')}:00:00Z`;
    const cases: Array<[string, Session, string]> = [
      ['one byte changed', { connectorId: 2, key: key2, startIso: day(1), stopIso: day(2), startWh: 0, stopWh: 7_000, meterStopWh: 7_100, tamperEnd: (d) => d.replace('"RV":7', '"RV":7.1') }, 'signature_invalid'],
      ['register priced differs from the signed one', { connectorId: 1, key: key1, startIso: day(3), stopIso: day(4), startWh: 20_000, stopWh: 27_000, meterStopWh: 27_005 }, 'register_mismatch'],
      ['missing end', { connectorId: 1, key: key1, startIso: day(5), stopIso: day(6), startWh: 30_000, stopWh: 33_000, sendEnd: false }, 'incomplete'],
      ['signed by the wrong key', { connectorId: 2, key: key3, startIso: day(7), stopIso: day(8), startWh: 10_000, stopWh: 12_000 }, 'signature_invalid'],
      ['no key configured for the connector', { connectorId: 3, key: key3, startIso: day(9), stopIso: day(10), startWh: 0, stopWh: 2_000 }, 'key_unknown'],
      ['an unknown format', { connectorId: 3, key: key3, startIso: day(11), stopIso: day(12), startWh: 5_000, stopWh: 6_000, sendBegin: false, sendPeriodic: false, tamperEnd: () => 'XYZ1;opaque vendor blob' }, 'signature_invalid'],
      ['a key configured, nothing signed', { connectorId: 1, key: key1, startIso: day(13), stopIso: day(14), startWh: 40_000, stopWh: 41_000, signed: false }, 'unsigned'],
    ];
    // A session on a connector without a key and without signed values answers exactly the contract's fields.
    const plain = await session({ connectorId: 4, key: key3, startIso: day(0), stopIso: day(1), startWh: 0, stopWh: 1_000, signed: false });
    expect(Object.keys((await get(`/api/v1/cdrs/${plain}?include=signed_data`)).body as Json).sort()).toEqual(['currency', 'end_date_time', 'id', 'last_updated', 'start_date_time', 'total_cost']);
    for (const [what, s, outcome] of cases) {
      const id = await session(s);
      const cdr = await get(`/api/v1/cdrs/${id}?include=signed_data`);
      expect(cdr.status, what).toBe(200);
      expect((cdr.body as Json).signed_data_verification.outcome, `${what}: ${(cdr.body as Json).signed_data_verification.reason}`).toBe(outcome);
      expect((cdr.body as Json).total_cost.excl_vat, what).toEqual(expect.any(Number));
      if (outcome === 'unsigned') {
        expect((cdr.body as Json).signed_data, what).toBeUndefined();
        expect((await get(`/api/v1/cdrs/${id}/signed`, `${CDR}/signed`)).status).toBe(404);
      }
    }
  });

  it('/metrics counts the outcomes; the status page shows the last one', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const count = (outcome: string) => seriesValue(metrics, 'metergate_signed_meter_sessions_total', { outcome });
    expect([count('verified'), count('signature_invalid'), count('register_mismatch'), count('incomplete'), count('key_unknown'), count('unsigned')]).toEqual([1, 3, 1, 1, 1, 1]);
    const status = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as Json;
    const charger = (status.chargers as Json[]).find((c) => c.charge_point_id === CP)!;
    // The last stopped session: connector 1's, with a key but nothing signed.
    expect(charger.last_signed_meter).toMatchObject({ outcome: 'unsigned', reason: expect.stringContaining('although a meter key is configured') });
    // Every frame the gateway sent passed the official OCPP 1.6 schemas.
    expect(cp!.violations).toEqual([]);
  });
});
