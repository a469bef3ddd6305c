// The P1 parser on telegrams captured from real meters (../shared/data/dsmr, read in place):
// framing, CRC, strict parsing, and the mapping to the contract's metric names and units.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dsmrCrcHex } from '../../src/p1/crc.js';
import { diagnoseP1 } from '../../src/p1/diagnosis.js';
import { TelegramFramer, type FramerEvent } from '../../src/p1/framer.js';
import { interpretTelegram } from '../../src/p1/interpret.js';
import { framerOptions } from '../../src/p1/line-settings.js';
import { mbusChannels } from '../../src/p1/mbus.js';
import { p1Identity, p1Reading } from '../../src/p1/measurements.js';
import { parseDutchLocalTime, parseMeterTime } from '../../src/p1/meter-time.js';
import { parseTelegram, TelegramParseError } from '../../src/p1/telegram.js';
import { vendorOfFlag } from '../../src/p1/vendors.js';
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
      active_power_l1: [170, 'W'],
      active_power_l2: [1247, 'W'],
      active_power_l3: [209, 'W'],
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
    expect(id('v5.txt')).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1000', meterId: 'K8EG004046395507', dsmrVersion: '5.0', firmware: 'DSMR 5.0', layout: 'DSMR' });
    expect(id('v4_2.txt')).toEqual({ vendor: 'Kaifa', model: 'KAIFA-METER', meterId: '3960221976967177082151037881335713', dsmrVersion: '4.2', firmware: 'DSMR 4.2', layout: 'DSMR' });
    expect(id('fluvius_v171.txt')).toMatchObject({ vendor: 'Fluvius', model: '53769484_A', meterId: '1SAG3101021605', dsmrVersion: 'BE 50217' });
    expect(id('v2_2.txt')).toEqual({ vendor: 'Iskraemeco', model: 'MT382-1004', meterId: '00000000000000', dsmrVersion: null, firmware: null, layout: 'DSMR' });
    // The Sagemcom T210-D-r's EST flag is not in the FLAG registry: shown as it is.
    expect(id('sagemcom_t210_d_r.txt')).toMatchObject({ vendor: 'EST', meterId: null });
  });

  it('meter id from every layout: 0-0:96.1.0 where 96.1.1 is absent, hex or plain, control bytes dropped; a control byte before the model', () => {
    const v5 = read('v5.txt').replace(/!.*$/s, '!');
    // E.ON Hungary style: the id in 0-0:96.1.0, plain text.
    const hungary = v5.replace('0-0:96.1.1(4B384547303034303436333935353037)', '0-0:96.1.0(1SAG1100042819)');
    expect(p1Identity(parseTelegram(hungary)).meterId).toBe('1SAG1100042819');
    // Hex-encoded in 0-0:96.1.0, with a NUL padding byte at the end.
    const hex = v5.replace('0-0:96.1.1(4B384547303034303436333935353037)', '0-0:96.1.0(4B38454730303430343633393535303700)');
    expect(p1Identity(parseTelegram(hex)).meterId).toBe('K8EG004046395507');
    // Iskra MIE5T: a control byte starts the model part of the identification line.
    const mie = v5.replace('/ISk5\\2MT382-1000', '/ISk5\\2\x02MIE5T-1000\x00');
    expect(p1Identity(parseTelegram(mie))).toMatchObject({ vendor: 'Iskraemeco', model: 'MIE5T-1000' });
    // A control byte inside a value is a bit error: the value, so the telegram, is refused.
    expect(interpretTelegram(v5.replace('1-0:1.8.1(000004.426*kWh)', '1-0:1.8.1(0000\x0104.426*kWh)')).kind).toBe('invalid');
  });

  it('vendor names from the FLAG registry (flag-ids.json), case-insensitive; unknown flags as they are', () => {
    expect(vendorOfFlag('ESY')).toBe('EasyMeter');
    expect(vendorOfFlag('EBZ')).toBe('eBZ');
    expect(vendorOfFlag('LOG')).toBe('LOGAREX Smart Metering');
    expect(vendorOfFlag('ISk')).toBe('Iskraemeco');
    expect(vendorOfFlag('QQQ')).toBe('QQQ');
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

// IEC 62056-21 mode D (D0) telegrams of real German meters, stored in test/data/iec62056-21 with their sources.
const modeD = (name: string) => readFileSync(new URL(`../data/iec62056-21/${name}`, import.meta.url), 'latin1');

function modeDMetrics(text: string): Record<string, [number, string]> {
  const events = new TelegramFramer(framerOptions('9600 7E1')).push(text);
  expect(events.map((e) => e.kind)).toEqual(['telegram']);
  const event = events[0];
  if (event.kind !== 'telegram') throw new Error('dropped');
  return Object.fromEntries(p1Reading(parseTelegram(event.text)).metrics.map((m) => [m.name, [m.value, m.unit]]));
}

describe('IEC 62056-21 mode D telegrams from real meters', () => {
  it('EasyMeter Q3D V3.03: *255 objects, per-phase .7.255 power, two registers', () => {
    expect(modeDMetrics(modeD('easymeter_q3d_v3.03.txt'))).toEqual({
      total_active_power: [247.37, 'W'],
      active_power_l1: [46.04, 'W'],
      active_power_l2: [122.3, 'W'],
      active_power_l3: [79.03, 'W'],
      active_energy_import: [1013036.809, 'Wh'],
      active_energy_export: [376012.851, 'Wh'],
    });
    const t = parseTelegram(modeD('easymeter_q3d_v3.03.txt').replace(/\r\n$/, ''));
    expect(t.layout).toBe('iec62056-21');
    expect(p1Identity(t)).toEqual({ vendor: 'EasyMeter', model: 'Q3DA1024 V3.03', meterId: '1ESY1233002534', dsmrVersion: null, firmware: null, layout: 'IEC 62056-21 mode D' });
  });

  it('EasyMeter Q3D V3.04 feeding in: signed power, negative total', () => {
    expect(modeDMetrics(modeD('easymeter_q3d_v3.04.txt'))).toEqual({
      total_active_power: [-2.41, 'W'],
      active_power_l1: [-2.41, 'W'],
      active_power_l2: [0, 'W'],
      active_power_l3: [0, 'W'],
      active_energy_import: [68364028.017, 'Wh'],
    });
  });

  it('eBZ DD3: total 16.7.0, phases 36/56/76.7.0, voltages; id from 1-0:96.1.0', () => {
    expect(modeDMetrics(modeD('ebz_dd3.txt'))).toEqual({
      total_active_power: [259.2, 'W'],
      active_power_l1: [75.18, 'W'],
      active_power_l2: [92.34, 'W'],
      active_power_l3: [91.68, 'W'],
      active_energy_import: [125256.886, 'Wh'],
      voltage_l1: [232.4, 'V'],
      voltage_l2: [231.7, 'V'],
      voltage_l3: [233.7, 'V'],
    });
    expect(p1Identity(parseTelegram(modeD('ebz_dd3.txt').replace(/\r\n$/, '')))).toMatchObject({ vendor: 'eBZ', model: 'DD3BZ06ETA_107', meterId: '1EBZ0100507409' });
  });

  it('what a reading head or gateway adds between telegrams (STX, ETX + BCC, a short line) is a trailer, not a lost telegram; a DSMR 4+ line still counts it', () => {
    const q3d = modeD('easymeter_q3d_v3.04.txt');
    const withHead = q3d.replace('\r\n\r\n', '\r\n\r\n\x02') + '\x03\x19' + q3d + 'EOM\r\n' + q3d;
    const framer = new TelegramFramer(framerOptions('9600 7E1'));
    const events: FramerEvent[] = [];
    for (let i = 0; i < withHead.length; i += 5) events.push(...framer.push(withHead.slice(i, i + 5)));
    expect(events.map((e) => e.kind)).toEqual(['telegram', 'telegram', 'telegram']);
    expect(p1Reading(parseTelegram((events[0] as { text: string }).text)).metrics[0]).toEqual({ name: 'total_active_power', value: -2.41, unit: 'W' });
    // Many bytes between telegrams are still a lost telegram, whatever the line.
    expect(new TelegramFramer(framerOptions('9600 7E1')).push(q3d + 'x'.repeat(200) + q3d).map((e) => (e.kind === 'telegram' ? 'telegram' : e.reason))).toEqual(['telegram', 'garbled', 'telegram']);
  });

  it('a billing-period value (*01) is history, not the current reading; letter groups (C.1.0) are objects', () => {
    const text = '/ISk5MT174-0002\r\n\r\n1-0:1.8.0*255(0000502.853*kWh)\r\n1-0:1.8.0*01(0000400.000*kWh)\r\n0-0:C.1.0*255(62807889)\r\n!';
    const t = parseTelegram(text);
    expect(p1Reading(t).metrics).toEqual([{ name: 'active_energy_import', value: 502853, unit: 'Wh' }]);
    expect(p1Identity(t)).toMatchObject({ vendor: 'Iskraemeco', model: 'MT174-0002', meterId: '62807889' });
  });
});

describe('why telegrams are dropped, in one line with the fix', () => {
  it('names the dominant reason', () => {
    const d = (line: Parameters<typeof diagnoseP1>[0]['line'], bytes: number, drops: Parameters<typeof diagnoseP1>[0]['drops']) => diagnoseP1({ line, bytes, drops }, 'buses[0]')?.problem ?? null;
    expect(d('115200 8N1', 900, { missing_crc: 3 })).toBe('missing_crc');
    expect(d('9600 7E1', 900, { missing_crc: 3 })).toBeNull();
    expect(d('115200 8N1', 4000, { garbled: 5 })).toBe('line_settings');
    expect(d('115200 8N1', 4000, { truncated: 23 })).toBe('line_settings');
    expect(d('115200 8N1', 4000, { crc: 5, garbled: 1 })).toBe('bit_errors');
    expect(d('9600 7E1', 900, { no_electricity: 2 })).toBe('no_electricity');
    expect(d('9600 7E1', 900, { unknown_layout: 2 })).toBe('unknown_layout');
    expect(d('115200 8N1', 0, {})).toBe('silent');
    expect(diagnoseP1({ line: '115200 8N1', bytes: 900, drops: { missing_crc: 1 } }, 'buses[0] (p1)')?.text).toMatch(/^telegrams without CRC on a DSMR 4\+ line .*set line: 9600 7E1 .*on buses\[0\] \(p1\)/);
  });

  it('a telegram without electricity objects (heat interface unit) is whole, not invalid', () => {
    const hiu = '/ISk5\\2MT382-1000\r\n\r\n1-3:0.2.8(50)\r\n0-1:24.1.0(004)\r\n0-1:96.1.0(3232323241424344313233343536373839)\r\n0-1:24.2.1(170102161005W)(00012.345*GJ)\r\n!';
    expect(interpretTelegram(hiu).kind).toBe('no_electricity');
    expect(interpretTelegram(read('v5.txt').replace(/!.*$/s, '!')).kind).toBe('ok');
    expect(interpretTelegram('/ISk5\\2MT382-1000\r\n\r\nhello\r\n!').kind).toBe('unknown_layout');
  });
});

describe.skipIf(!hasSharedData)('M-Bus channels (gas, water, heat) from real telegrams', () => {
  const channelsOf = (name: string) => mbusChannels(parseTelegram(read(name).replace(/!.*$/s, '!')));

  it('DSMR 5 (two M-Bus devices): gas on channel 2 with its capture time and id; channel 1 without a unit is skipped, with why', () => {
    const [one, two] = channelsOf('v5_two_mbus.txt');
    expect(one).toMatchObject({ number: 1, deviceType: 3, medium: 'gas', equipmentId: null, reading: null });
    expect(one.skipped).toMatch(/unit null/);
    expect(two).toEqual({
      number: 2,
      deviceType: 3,
      medium: 'gas',
      equipmentId: 'G0039001936990619',
      reading: { capturedAtMs: Date.parse('2020-04-26T20:30:01Z'), metrics: [{ name: 'gas_volume', value: 246.138, unit: 'm3' }] },
      skipped: null,
    });
  });

  it('Belgian e-MUCS: gas in 0-1:24.2.3, water (device type 7) in 0-2:24.2.1; DSMR 4.2 hourly gas', () => {
    const [gas, water] = channelsOf('fluvius_v171.txt');
    expect(gas.reading).toEqual({ capturedAtMs: Date.parse('2020-05-12T11:45:58Z'), metrics: [{ name: 'gas_volume', value: 112.384, unit: 'm3' }] });
    expect(gas.equipmentId).toBe('7FLO2119033733');
    expect(water).toMatchObject({ medium: 'water', equipmentId: '8SAG1234567890', reading: { metrics: [{ name: 'water_volume', value: 872.234, unit: 'm3' }] } });
    expect(channelsOf('v4_2.txt')[0].reading).toEqual({ capturedAtMs: Date.parse('2016-11-29T19:00:00Z'), metrics: [{ name: 'gas_volume', value: 981.443, unit: 'm3' }] });
  });

  it('heat in GJ is published in Wh', () => {
    const heat = '/ISk5\\2MT382-1000\r\n\r\n0-1:24.1.0(004)\r\n0-1:96.1.0(3232323241424344313233343536373839)\r\n0-1:24.2.1(170102161005W)(00012.345*GJ)\r\n!';
    expect(mbusChannels(parseTelegram(heat))[0]).toMatchObject({ medium: 'heat', reading: { metrics: [{ name: 'heat_energy', value: 3429166.667, unit: 'Wh' }] } });
  });

  it('DSMR 2.2 and 3.0 gas: the 0-1:24.3.0 header with the value on the next line, its time in Dutch local time without S/W', () => {
    // v2_2: 0-1:24.3.0(161107190000)(00)(60)(1)(0-1:24.2.1)(m3) / (00001.001): 19:00 CET = 18:00 UTC.
    expect(channelsOf('v2_2.txt')).toEqual([
      { number: 1, deviceType: 3, medium: 'gas', equipmentId: '000000000000', reading: { capturedAtMs: Date.parse('2016-11-07T18:00:00Z'), metrics: [{ name: 'gas_volume', value: 1.001, unit: 'm3' }] }, skipped: null },
    ]);
    // v3: 0-1:24.3.0(090212160000)..., the id hex-encoded.
    expect(channelsOf('v3.txt')).toEqual([
      { number: 1, deviceType: 3, medium: 'gas', equipmentId: '2222ABCD123456789', reading: { capturedAtMs: Date.parse('2009-02-12T15:00:00Z'), metrics: [{ name: 'gas_volume', value: 1.001, unit: 'm3' }] }, skipped: null },
    ]);
    // A header whose value line is missing (or whose reference is not the channel's) is not read.
    const cut = read('v2_2.txt').replace(/!.*$/s, '!').replace('(00001.001)\r\n', '');
    expect(mbusChannels(parseTelegram(cut))[0]).toMatchObject({ reading: null, skipped: expect.stringMatching(/^no reading/) });
    const wrongRef = read('v2_2.txt').replace(/!.*$/s, '!').replace('(0-1:24.2.1)', '(0-2:24.2.1)');
    expect(mbusChannels(parseTelegram(wrongRef))[0]!.reading).toBeNull();
  });

  it('Dutch local time without S/W: CET in winter, CEST in summer, the repeated October hour by when it was heard (else summer time), the skipped March hour none', () => {
    expect(parseDutchLocalTime('200115120000')).toBe(Date.parse('2020-01-15T11:00:00Z'));
    expect(parseDutchLocalTime('200626120000')).toBe(Date.parse('2020-06-26T10:00:00Z'));
    expect(parseDutchLocalTime('201025023000')).toBe(Date.parse('2020-10-25T00:30:00Z'));
    expect(parseDutchLocalTime('200329023000')).toBeNull();
    // October's 02:xx comes twice (CEST, then CET): the pass nearest to when the telegram was heard.
    expect(parseDutchLocalTime('261025020000', Date.parse('2026-10-25T01:05:00Z'))).toBe(Date.parse('2026-10-25T01:00:00Z'));
    expect(parseDutchLocalTime('261025020000', Date.parse('2026-10-25T00:05:00Z'))).toBe(Date.parse('2026-10-25T00:00:00Z'));
    expect(parseDutchLocalTime('201325000000')).toBeNull();
  });
});
