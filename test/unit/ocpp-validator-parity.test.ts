// Our OCPP 1.6 validator (src/ocpp/validator.ts, on the bundled ajv 8.20 + ajv-formats 3)
// must answer every call as ocpp-rpc 2.2.1's own validator (lib/validator.js, on its pinned
// ajv 8.14 + ajv-formats 2.1.1) did before it replaced it: the same CallError code and
// message, or none. Both are run here, the real one beside ours, on the same schemas, over a
// corpus of valid calls, every violation kind, and the timestamps ajv-formats 3 would refuse
// (no zone, as chargers stamping local time send them; a +24:00 zone): refused, a charger's
// StartTransaction/StopTransaction/MeterValues would be dropped (docs/chargers.md).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Ocpp16Validator, ocpp16Schemas, ocpp201Validator } from '../../src/ocpp/validator.js';

const require = createRequire(import.meta.url);
const { createValidator } = require('ocpp-rpc/lib/validator.js') as { createValidator(subprotocol: string, json: unknown): { validate(schemaId: string, params: unknown): boolean } };

const schemas = ocpp16Schemas();
const theirs = createValidator('ocpp1.6', schemas);
const ours = new Ocpp16Validator(schemas);

type Outcome = { valid: true } | { valid: false; code: string; message: string };
const outcome = (v: { validate(schemaId: string, params: unknown): boolean }, schemaId: string, params: unknown): Outcome => {
  try {
    v.validate(schemaId, params);
    return { valid: true };
  } catch (err) {
    return { valid: false, code: String((err as { rpcErrorCode?: unknown }).rpcErrorCode), message: (err as Error).message };
  }
};

const start = (timestamp: string, over: Record<string, unknown> = {}) => ({ connectorId: 1, idTag: 'TAG-1', meterStart: 0, timestamp, ...over });
const meterValues = (timestamp: string) => ({ connectorId: 1, transactionId: 7, meterValue: [{ timestamp, sampledValue: [{ value: '1.5', measurand: 'Current.Import', unit: 'A' }] }] });
const stop = (timestamp: string) => ({ transactionId: 7, meterStop: 500, timestamp });

const TIMESTAMPS = [
  '2026-11-27T10:00:00Z',
  '2026-11-27T10:00:00.123+01:00',
  '2026-11-27T10:00:00', // no zone: local time
  '2026-11-27T10:00:00.5',
  '2026-11-27T10:00:00+24:00',
  '2026-11-27T10:00:00+0100',
  '2026-11-27T10:00:00+01',
  '2026-11-27 10:00:00Z',
  '2026-11-27t10:00:00z',
  '2026-11-27T23:59:60Z',
  '2026-11-27T12:59:60+01:00',
  '2026-11-27T24:00:00Z',
  '2026-02-29T10:00:00Z',
  '2028-02-29T10:00:00',
  '2026-13-01T10:00:00Z',
  '2026-11-27',
  'yesterday',
  '',
];

const CORPUS: Array<[string, unknown]> = [
  ...TIMESTAMPS.flatMap((ts): Array<[string, unknown]> => [
    ['urn:StartTransaction.req', start(ts)],
    ['urn:StopTransaction.req', stop(ts)],
    ['urn:MeterValues.req', meterValues(ts)],
    ['urn:BootNotification.conf', { status: 'Accepted', currentTime: ts, interval: 300 }],
  ]),
  // Each kind of violation ocpp-rpc maps to a CallError code.
  ['urn:StartTransaction.req', { connectorId: 1, idTag: 'TAG-1', meterStart: 0 }],
  ['urn:StartTransaction.req', start('2026-11-27T10:00:00Z', { extra: 1 })],
  ['urn:StartTransaction.req', start('2026-11-27T10:00:00Z', { connectorId: '1' })],
  ['urn:StartTransaction.req', start('2026-11-27T10:00:00Z', { idTag: 'X'.repeat(21) })],
  ['urn:StartTransaction.req', start('2026-11-27T10:00:00Z', { idTag: '' })],
  ['urn:StartTransaction.req', start('2026-11-27T10:00:00Z', { connectorId: -1 })],
  ['urn:StartTransaction.req', start('2026-11-27T10:00:00Z', { meterStart: 2 ** 40 })],
  ['urn:StatusNotification.req', { connectorId: 1, errorCode: 'NoError', status: 'Sleeping' }],
  ['urn:StatusNotification.req', { connectorId: 1, errorCode: 'NoError', status: 'Available', timestamp: '2026-11-27T10:00:00' }],
  ['urn:MeterValues.req', { connectorId: 1, meterValue: [] }],
  ['urn:Heartbeat.req', {}],
  ['urn:Heartbeat.req', null],
  ['urn:Authorize.req', { idTag: 'TAG-1' }],
  ['urn:Authorize.req', []],
  ['urn:SetChargingProfile.req', { connectorId: 1, csChargingProfiles: { chargingProfileId: 1, stackLevel: 0, chargingProfilePurpose: 'TxDefaultProfile', chargingProfileKind: 'Absolute', chargingSchedule: { chargingRateUnit: 'A', startSchedule: '2026-11-27T10:00:00', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10.1 }] } } }],
  ['urn:SetChargingProfile.req', { connectorId: 1, csChargingProfiles: { chargingProfileId: 1, stackLevel: 0, chargingProfilePurpose: 'TxDefaultProfile', chargingProfileKind: 'Absolute', chargingSchedule: { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 10.05 }] } } }],
  ['urn:UpdateFirmware.req', { location: 'https://example.org/fw.bin', retrieveDate: '2026-11-27T10:00:00' }],
  ['urn:UpdateFirmware.req', { location: 'not a uri', retrieveDate: '2026-11-27T10:00:00Z' }],
  ['urn:GetDiagnostics.req', { location: 'ftp://diag.example.org/up', startTime: '2026-11-27T10:00:00', stopTime: '2026-11-27T11:00:00Z' }],
  ['urn:NoSuchAction.req', {}],
];

describe('our OCPP 1.6 validator answers as ocpp-rpc 2.2.1\'s own', () => {
  it('the same outcome, CallError code and message for every call of the corpus', () => {
    const differing = CORPUS.map(([schemaId, params]) => ({ schemaId, params, theirs: outcome(theirs, schemaId, params), ours: outcome(ours, schemaId, params) })).filter((c) => JSON.stringify(c.theirs) !== JSON.stringify(c.ours));
    expect(differing).toEqual([]);
  });

  it('the corpus covers valid calls, every violation kind and the timestamps ajv-formats 3 refuses', () => {
    const codes = new Set(CORPUS.map(([schemaId, params]) => outcome(theirs, schemaId, params)).map((o) => (o.valid ? 'valid' : o.code)));
    expect([...codes].sort()).toEqual(['FormatViolation', 'OccurenceConstraintViolation', 'PropertyConstraintViolation', 'ProtocolError', 'TypeConstraintViolation', 'valid']);
    // A charger stamping local time is taken: its StartTransaction, StopTransaction and MeterValues.
    expect(outcome(ours, 'urn:StartTransaction.req', start('2026-11-27T10:00:00'))).toEqual({ valid: true });
    expect(outcome(ours, 'urn:StopTransaction.req', stop('2026-11-27T10:00:00'))).toEqual({ valid: true });
    expect(outcome(ours, 'urn:MeterValues.req', meterValues('2026-11-27T10:00:00'))).toEqual({ valid: true });
    expect(outcome(ours, 'urn:StartTransaction.req', start('2026-11-27T10:00:00+24:00'))).toEqual({ valid: true });
    expect(outcome(ours, 'urn:StartTransaction.req', start('yesterday'))).toMatchObject({ valid: false, code: 'FormatViolation' });
  });
});

// OCPP 2.0.1 (issue 33): ocpp-rpc's own validator for ocpp2.0.1 on its schema file, against
// ours (built lazily on the same file, validator.ts ocpp201Validator): the same answers.
const theirs201 = createValidator('ocpp2.0.1', JSON.parse(readFileSync(require.resolve('ocpp-rpc/lib/schemas/ocpp2_0_1.json'), 'utf8')));
const started = (over: Record<string, unknown> = {}) => ({ eventType: 'Started', timestamp: '2026-11-29T10:00:00Z', triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'c0ffee00-0000-4000-8000-000000000001' }, evse: { id: 1, connectorId: 1 }, ...over });
const CORPUS_201: Array<[string, unknown]> = [
  ...TIMESTAMPS.flatMap((ts): Array<[string, unknown]> => [
    ['urn:TransactionEvent.req', started({ timestamp: ts })],
    ['urn:StatusNotification.req', { timestamp: ts, connectorStatus: 'Available', evseId: 1, connectorId: 1 }],
    ['urn:BootNotification.conf', { status: 'Accepted', currentTime: ts, interval: 300 }],
  ]),
  ['urn:BootNotification.req', { reason: 'PowerUp', chargingStation: { model: 'M', vendorName: 'V' } }],
  ['urn:BootNotification.req', { reason: 'Sleeping', chargingStation: { model: 'M', vendorName: 'V' } }],
  ['urn:BootNotification.req', { reason: 'PowerUp', chargingStation: { model: 'M' } }],
  ['urn:BootNotification.req', { reason: 'PowerUp', chargingStation: { model: 'M', vendorName: 'V'.repeat(51) } }],
  ['urn:BootNotification.conf', { status: 'Pending', currentTime: '2026-11-29T10:00:00Z', interval: 30, statusInfo: { reasonCode: 'StorageUnavailable' } }],
  ['urn:StatusNotification.req', { timestamp: '2026-11-29T10:00:00Z', connectorStatus: 'Charging', evseId: 1, connectorId: 1 }],
  ['urn:StatusNotification.req', { timestamp: '2026-11-29T10:00:00Z', connectorStatus: 'Available', evseId: '1', connectorId: 1 }],
  ['urn:StatusNotification.req', { timestamp: '2026-11-29T10:00:00Z', evseId: 1, connectorId: 1 }],
  ['urn:Authorize.req', { idToken: { idToken: 'TAG-1', type: 'ISO14443' } }],
  ['urn:Authorize.req', { idToken: { idToken: 'T'.repeat(37), type: 'ISO14443' } }],
  ['urn:Authorize.req', { idToken: { idToken: 'TAG-1', type: 'Card' } }],
  ['urn:Authorize.conf', { idTokenInfo: { status: 'Accepted' } }],
  ['urn:TransactionEvent.req', started({ transactionInfo: { transactionId: 'x'.repeat(37) } })],
  ['urn:TransactionEvent.req', started({ seqNo: 1.5 })],
  ['urn:TransactionEvent.req', started({ extra: true })],
  ['urn:TransactionEvent.req', started({ meterValue: [] })],
  ['urn:TransactionEvent.req', started({ meterValue: [{ timestamp: '2026-11-29T10:00:00Z', sampledValue: [{ value: 1.5, unitOfMeasure: { unit: 'kWh', multiplier: 3 } }] }] })],
  ['urn:TransactionEvent.req', started({ meterValue: [{ timestamp: '2026-11-29T10:00:00Z', sampledValue: [{ value: '1.5' }] }] })],
  ['urn:TransactionEvent.conf', {}],
  ['urn:TransactionEvent.conf', { idTokenInfo: { status: 'Invalid' } }],
  ['urn:Heartbeat.req', {}],
  ['urn:Heartbeat.req', { extra: 1 }],
  ['urn:StartTransaction.req', { connectorId: 1, idTag: 'T', meterStart: 0, timestamp: '2026-11-29T10:00:00Z' }],
];

describe('our OCPP 2.0.1 validator answers as ocpp-rpc 2.2.1\'s own', () => {
  it('the same outcome, CallError code and message for every call of the corpus', () => {
    const ours201 = ocpp201Validator();
    const differing = CORPUS_201.map(([schemaId, params]) => ({ schemaId, params, theirs: outcome(theirs201, schemaId, params), ours: outcome(ours201, schemaId, params) })).filter((c) => JSON.stringify(c.theirs) !== JSON.stringify(c.ours));
    expect(differing).toEqual([]);
    const codes = new Set(CORPUS_201.map(([schemaId, params]) => outcome(theirs201, schemaId, params)).map((o) => (o.valid ? 'valid' : o.code)));
    expect([...codes].sort()).toEqual(['FormatViolation', 'OccurenceConstraintViolation', 'PropertyConstraintViolation', 'ProtocolError', 'TypeConstraintViolation', 'valid']);
  });
});
