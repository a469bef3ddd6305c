// The pure parts of OCPP 2.0.1 on the central system: which subprotocol a charger's
// connection speaks (handshake-guard.ts chooseSubprotocol), 2.0.1 meter values as the rows
// 1.6 values are stored as (v201/meter-values.ts), and an idToken against the id tags.
import { describe, expect, it } from 'vitest';
import { chooseSubprotocol, offersOurs } from '../../src/ocpp/handshake-guard.js';
import { authorizeIdToken } from '../../src/ocpp/v201/authorization.js';
import { registerWh, sampledValueRows201, signedDocumentText, signedValueRows201 } from '../../src/ocpp/v201/meter-values.js';

describe('chooseSubprotocol', () => {
  it('auto takes the charger\'s first choice of the two; a pin takes its version when offered, else a refusal', () => {
    expect(chooseSubprotocol(['ocpp2.0.1', 'ocpp1.6'], 'auto')).toEqual({ subprotocol: 'ocpp2.0.1' });
    expect(chooseSubprotocol(['ocpp1.6', 'ocpp2.0.1'], 'auto')).toEqual({ subprotocol: 'ocpp1.6' });
    expect(chooseSubprotocol(['ocpp2.1', 'ocpp1.6'], 'auto')).toEqual({ subprotocol: 'ocpp1.6' });
    expect(chooseSubprotocol(['ocpp2.0.1', 'ocpp1.6'], '1.6')).toEqual({ subprotocol: 'ocpp1.6' });
    expect(chooseSubprotocol(['ocpp2.0.1'], '1.6')).toHaveProperty('refusal');
    expect(chooseSubprotocol(['ocpp1.6'], '2.0.1')).toHaveProperty('refusal');
    expect(chooseSubprotocol(['ocpp2.1'], 'auto')).toHaveProperty('refusal');
    expect(chooseSubprotocol([], 'auto')).toHaveProperty('refusal');
  });

  it('offersOurs reads the header as ws does (comma lists, several headers, exact names)', () => {
    expect(offersOurs('ocpp1.5, ocpp2.0.1')).toBe(true);
    expect(offersOurs(['ocpp2.1', 'ocpp1.6'])).toBe(true);
    expect(offersOurs('OCPP1.6, ocpp2.0')).toBe(false);
    expect(offersOurs(undefined)).toBe(false);
  });
});

describe('2.0.1 meter values', () => {
  const at = '2025-10-01T10:00:00Z';
  it('a number with unitOfMeasure: value × 10^multiplier in its unit; energy defaults to Wh, power to W; measurand defaults to the import register', () => {
    const rows = sampledValueRows201(
      [{ timestamp: at, sampledValue: [{ value: 12.345, unitOfMeasure: { unit: 'Wh', multiplier: 3 } }, { value: 7400, measurand: 'Power.Active.Import' }, { value: 16.1, measurand: 'Current.Import', phase: 'L1', unitOfMeasure: { unit: 'A' } }, { value: 5, unitOfMeasure: { unit: 'kWh', multiplier: -1 }, context: 'Transaction.Begin' }] }],
      'meterValue',
    );
    expect(rows.map((r) => [r.measurand, r.phase, r.context, r.value, r.unit])).toEqual([
      ['Energy.Active.Import.Register', '', '', 12_345, 'Wh'],
      ['Power.Active.Import', '', '', 7400, 'W'],
      ['Current.Import', 'L1', '', 16.1, 'A'],
      ['Energy.Active.Import.Register', '', 'Transaction.Begin', 0.5, 'kWh'],
    ]);
    expect(rows.every((r) => r.sampledAtMs === Date.parse(at))).toBe(true);
  });

  it('a value that is not finite after its multiplier makes the whole call a CallError', () => {
    expect(() => sampledValueRows201([{ timestamp: at, sampledValue: [{ value: 1e300, unitOfMeasure: { multiplier: 20 } }] }], 'meterValue')).toThrow(/not a finite number/);
    expect(() => sampledValueRows201([{ timestamp: at, sampledValue: [{ value: 1, unitOfMeasure: { multiplier: 400 } }] }], 'meterValue')).toThrow(/not a finite number/);
  });

  it('registerWh: the register at the last instant with one, by the session rule (total first, else the phases summed; not the EV side)', () => {
    const rows = sampledValueRows201(
      [
        { timestamp: '2025-10-01T10:00:00Z', sampledValue: [{ value: 1000 }] },
        { timestamp: '2025-10-01T11:00:00Z', sampledValue: [{ value: 600, phase: 'L1' }, { value: 700, phase: 'L2' }, { value: 9999, location: 'EV' }] },
        { timestamp: '2025-10-01T12:00:00Z', sampledValue: [{ value: 5, measurand: 'Current.Import', unitOfMeasure: { unit: 'A' } }] },
      ],
      'meterValue',
    );
    expect(registerWh(rows)).toEqual({ wh: 1300, atMs: Date.parse('2025-10-01T11:00:00Z') });
    expect(registerWh(rows, 'first')).toEqual({ wh: 1000, atMs: Date.parse('2025-10-01T10:00:00Z') });
    expect(registerWh(rows.filter((r) => r.measurand !== 'Energy.Active.Import.Register'))).toBeNull();
  });
});

describe('2.0.1 signed meter values', () => {
  const ocmf = 'OCMF|{"FV":"1.0","RD":[{"TM":"2026-11-29T08:00:00,000+0000 S","TX":"B","RV":1.5,"RI":"1-b:1.8.0","RU":"kWh"}]}|{"SA":"ECDSA-secp256r1-SHA256","SD":"3045"}';
  const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');

  it('decodes an OCMF or Alfen document sent base64 (as 2.0.1 says), keeps a plain one and binary formats as sent', () => {
    expect(signedDocumentText(b64(ocmf))).toBe(ocmf);
    expect(signedDocumentText(ocmf)).toBe(ocmf);
    expect(signedDocumentText(b64('AP;0;3;ALCV3ABBBISHMA2RYNBMAGCD;'))).toBe('AP;0;3;ALCV3ABBBISHMA2RYNBMAGCD;');
    // SML (EDL40) is binary: its base64 stays, as the 1.6 form sends it and formats.ts reads it.
    const sml = Buffer.from([0x1b, 0x1b, 0x1b, 0x1b, 0x01, 0x01, 0x01, 0x01, 0x76, 0x05]).toString('base64');
    expect(signedDocumentText(sml)).toBe(sml);
    // Base64 of something else, and text that is not base64: kept as sent (reported as an unknown format).
    expect(signedDocumentText(b64('hello'))).toBe(b64('hello'));
    expect(signedDocumentText('not base64!')).toBe('not base64!');
  });

  it('one row per signedMeterValue with its context and measurand, beside the number; none without', () => {
    const signedMeterValue = { signedMeterData: b64(ocmf), signingMethod: 'ECDSA-secp256r1-SHA256', encodingMethod: 'OCMF', publicKey: 'MFkw' };
    const rows = signedValueRows201([
      { timestamp: '2026-11-29T08:00:00Z', sampledValue: [{ value: 1500, context: 'Transaction.Begin', signedMeterValue }, { value: 230, measurand: 'Voltage' }] },
      { timestamp: '2026-11-29T08:05:00Z', sampledValue: [{ value: 1600 }] },
    ]);
    expect(rows).toEqual([{ sampledAtMs: Date.parse('2026-11-29T08:00:00Z'), context: 'Transaction.Begin', measurand: 'Energy.Active.Import.Register', value: ocmf, stationPublicKey: 'MFkw' }]);
  });
});

describe('authorizeIdToken', () => {
  const list = { id_tags: ['04A1B2C3D4'] };
  it('a listed identifier of any type is Accepted (case-insensitively), others Invalid; NoAuthorization only under accept_all', () => {
    expect(authorizeIdToken(list, { idToken: '04a1b2c3d4', type: 'ISO14443' })).toBe('Accepted');
    expect(authorizeIdToken(list, { idToken: '04A1B2C3D4', type: 'eMAID' })).toBe('Accepted');
    expect(authorizeIdToken(list, { idToken: 'OTHER', type: 'KeyCode' })).toBe('Invalid');
    expect(authorizeIdToken(list, { idToken: '', type: 'NoAuthorization' })).toBe('Invalid');
    expect(authorizeIdToken('accept_all', { idToken: '', type: 'NoAuthorization' })).toBe('Accepted');
  });
});
