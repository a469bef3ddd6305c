// The P1 parser on telegrams captured from real meters (../shared/data/dsmr, read in place):
// framing, CRC, strict parsing, and the mapping to the contract's metric names and units.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dsmrCrcHex } from '../../src/p1/crc.js';
import { TelegramFramer, type FramerEvent } from '../../src/p1/framer.js';
import { p1Identity, p1Reading } from '../../src/p1/measurements.js';
import { parseMeterTime } from '../../src/p1/meter-time.js';
import { parseTelegram, TelegramParseError } from '../../src/p1/telegram.js';
import { DSMR_V5_METRICS } from '../helpers/dsmr-v5.js';
import { hasSharedData, sharedData } from '../helpers/shared-data.js';

const read = (name: string) => readFileSync(sharedData(`dsmr/${name}`), 'latin1');
const FILES = ['v2_2.txt', 'v3.txt', 'v4_2.txt', 'v5.txt', 'v5_two_mbus.txt', 'fluvius_v171.txt', 'sagemcom_t210_d_r.txt'];
const WITH_CRC = FILES.slice(2);

function frameAll(text: string, requireCrc: boolean): FramerEvent[] {
  return new TelegramFramer({ requireCrc }).push(text);
}

function metricsOf(name: string): Record<string, [number, string]> {
  const events = frameAll(read(name), WITH_CRC.includes(name));
  expect(events).toHaveLength(1);
  const event = events[0];
  if (event.kind !== 'telegram') throw new Error(`dropped: ${event.reason}`);
  return Object.fromEntries(p1Reading(parseTelegram(event.text)).metrics.map((m) => [m.name, [m.value, m.unit]]));
}

describe.skipIf(!hasSharedData)('P1 telegrams from real meters', () => {
  it.each(WITH_CRC)('%s: the CRC computed over / .. ! is the one the meter sent', (name) => {
    const text = read(name);
    const bang = text.indexOf('!');
    expect(dsmrCrcHex(text.slice(0, bang + 1))).toBe(text.slice(bang + 1, bang + 5));
    const events = frameAll(text, true);
    expect(events).toEqual([{ kind: 'telegram', text: text.slice(0, bang + 1), crcChecked: true }]);
  });

  it('DSMR 5.0 (Iskra): power delivered minus received, both tariffs summed, phases', () => {
    expect(metricsOf('v5.txt')).toEqual(DSMR_V5_METRICS);
  });

  it('DSMR 4.2 (Kaifa): integer currents, no voltages', () => {
    expect(metricsOf('v4_2.txt')).toEqual({
      total_active_power: [2027, 'W'],
      active_energy_import: [3016829, 'Wh'],
      active_energy_export: [0, 'Wh'],
      current_l1: [0, 'A'],
      current_l2: [6, 'A'],
      current_l3: [2, 'A'],
    });
  });

  it('Sagemcom T210-D-r sends W and Wh: no scaling; the tariffs sum to its 1.8.0 total', () => {
    const m = metricsOf('sagemcom_t210_d_r.txt');
    expect(m).toEqual({ total_active_power: [286, 'W'], active_energy_import: [6545766, 'Wh'], active_energy_export: [58, 'Wh'] });
  });

  it('Belgian e-MUCS 1.7.1 (Fluvius)', () => {
    expect(metricsOf('fluvius_v171.txt')).toMatchObject({ total_active_power: [0, 'W'], active_energy_import: [15792, 'Wh'], active_energy_export: [11, 'Wh'], voltage_l1: [234.7, 'V'] });
  });

  it('DSMR 2.2 and 3.0 carry no CRC and no clock; the gas value line belongs to its header', () => {
    expect(metricsOf('v2_2.txt')).toEqual({ total_active_power: [1010, 'W'], active_energy_import: [2002, 'Wh'], active_energy_export: [2002, 'Wh'] });
    expect(metricsOf('v3.txt')).toEqual({ total_active_power: [1190, 'W'], active_energy_import: [24691356, 'Wh'], active_energy_export: [24691356, 'Wh'] });
    const t = parseTelegram(read('v3.txt').replace(/\r\n$/, ''));
    expect(t.objects.get('0-1:24.3.0')?.at(-1)).toEqual({ raw: '00001.001', unit: null });
    expect(p1Reading(t).meterTimeMs).toBeNull();
  });

  it('identification: manufacturer, model, meter id (decoded where it is hex ASCII) and DSMR version', () => {
    const id = (name: string) => p1Identity(parseTelegram(read(name).replace(/!.*$/s, '!')));
    expect(id('v5.txt')).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1000', meterId: 'K8EG004046395507', dsmrVersion: '5.0' });
    expect(id('v4_2.txt')).toEqual({ vendor: 'Kaifa', model: 'KAIFA-METER', meterId: '3960221976967177082151037881335713', dsmrVersion: '4.2' });
    expect(id('fluvius_v171.txt')).toMatchObject({ vendor: 'FLU', model: '53769484_A', meterId: '1SAG3101021605', dsmrVersion: 'BE 50217' });
    expect(id('v2_2.txt')).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1004', meterId: '00000000000000', dsmrVersion: null });
  });

  it("the meter's clock: S is CEST (UTC+2), W is CET (UTC+1)", () => {
    const time = (name: string) => p1Reading(parseTelegram(read(name).replace(/!.*$/s, '!'))).meterTimeMs;
    expect(new Date(time('v5.txt')!).toISOString()).toBe('2017-01-02T18:20:02.000Z');
    expect(new Date(time('fluvius_v171.txt')!).toISOString()).toBe('2020-05-12T11:54:09.000Z');
    expect(parseMeterTime('170230120000X')).toBeNull();
  });

  it('a stream of telegrams in arbitrary chunks yields each whole telegram once', () => {
    const stream = 'tail of an earlier telegram\r\n!1234\r\n' + WITH_CRC.map(read).join('');
    const framer = new TelegramFramer({ requireCrc: true });
    const events: FramerEvent[] = [];
    for (let i = 0; i < stream.length; i += 7) events.push(...framer.push(stream.slice(i, i + 7)));
    expect(events.map((e) => e.kind)).toEqual(WITH_CRC.map(() => 'telegram'));
  });

  it('every single-bit error in a DSMR 5 telegram is dropped (CRC), never handed on', () => {
    const text = read('v5.txt');
    const bang = text.indexOf('!');
    let dropped = 0;
    for (let pos = 0; pos <= bang; pos++) {
      for (let bit = 0; bit < 7; bit++) {
        const mangled = text.slice(0, pos) + String.fromCharCode(text.charCodeAt(pos) ^ (1 << bit)) + text.slice(pos + 1);
        const framer = new TelegramFramer({ requireCrc: true });
        // The next good telegram behind it must come through whole.
        const events = framer.push(mangled + text);
        expect(events.filter((e) => e.kind === 'telegram')).toEqual([{ kind: 'telegram', text: text.slice(0, bang + 1), crcChecked: true }]);
        if (events.some((e) => e.kind === 'dropped')) dropped++;
      }
    }
    // A flip that turns the '/' into another byte leaves only junk before the good one, which an unsynced framer skips silently.
    expect(dropped).toBeGreaterThanOrEqual((bang + 1) * 7 - 7);
  });

  it('a cut telegram is dropped as truncated and the next one is whole', () => {
    const text = read('v4_2.txt');
    const events = frameAll(text.slice(0, 300) + text, true);
    expect(events.map((e) => (e.kind === 'telegram' ? 'telegram' : e.reason))).toEqual(['truncated', 'telegram']);
  });

  it('a DSMR 4+ line drops a telegram without CRC; too long input is dropped', () => {
    const text = read('v5.txt').replace(/!.*$/s, '!\r\n');
    expect(frameAll(text, true)).toEqual([{ kind: 'dropped', reason: 'missing_crc', bytes: text.length }]);
    const long = '/ISK5\\2MT382-1000\r\n\r\n' + '1-0:1.8.1(000004.426*kWh)\r\n'.repeat(1000);
    expect(new TelegramFramer({ requireCrc: true }).push(long).map((e) => e.kind === 'dropped' && e.reason)).toEqual(['overlong']);
  });

  it('without a CRC (DSMR 2.2/3.0) a garbled line or number fails the whole telegram', () => {
    const text = read('v3.txt').replace(/\r\n$/, '');
    expect(() => parseTelegram(text.replace('1-0:1.7.0(001.19*kW)', '1-0:1.7.0(001.19*kW'))).toThrow(TelegramParseError);
    expect(() => p1Reading(parseTelegram(text.replace('1-0:1.7.0(001.19*kW)', '1-0:1.7.0(0a1.19*kW)')))).toThrow(TelegramParseError);
    expect(() => p1Reading(parseTelegram(text.replace('1-0:1.7.0(001.19*kW)', '1-0:1.7.0(001.19*kV)')))).toThrow(TelegramParseError);
  });
});
