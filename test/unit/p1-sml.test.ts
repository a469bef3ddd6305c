// The SML decoder on files recorded from real meters (test/data/sml, sources in its README):
// transport framing with its CRC, TL decoding of the value list, the mapping to the metric
// names the DSMR and Modbus sources publish, identity, and that no damaged file gives a value.
import { describe, expect, it } from 'vitest';
import { diagnoseP1, powerAbsent } from '../../src/p1/diagnosis.js';
import { telegramReader, type ReaderEvent } from '../../src/p1/reader.js';
import { smlCrc16 } from '../../src/p1/sml/crc.js';
import { interpretSmlFile, meterIdText, scaled } from '../../src/p1/sml/interpret.js';
import { SmlTransport } from '../../src/p1/sml/transport.js';
import { smlFiles, smlRecording } from '../helpers/sml-recordings.js';

type Metrics = Record<string, [number, string]>;

function read(bytes: Buffer, chunk = bytes.length): ReaderEvent[] {
  const reader = telegramReader('9600 8N1');
  const events: ReaderEvent[] = [];
  for (let i = 0; i < bytes.length; i += chunk) events.push(...reader.push(bytes.subarray(i, i + chunk).toString('latin1')));
  return events;
}

function wholes(events: ReaderEvent[]) {
  return events.flatMap((e) => (e.kind === 'whole' ? [e.outcome] : []));
}

function metricsOf(bytes: Buffer): Metrics {
  const [outcome] = wholes(read(bytes));
  if (!outcome || !('reading' in outcome)) throw new Error(`no reading: ${JSON.stringify(outcome)}`);
  return Object.fromEntries(outcome.reading.metrics.map((m) => [m.name, [m.value, m.unit]]));
}

/** What each recording's first file says, read by hand from its bytes (value × 10^scaler, DLMS unit). */
const EXPECTED: Record<string, { metrics: Metrics; vendor: string; meterId: string; files: number }> = {
  // 1-0:1.8.0 = 153385557 × 10^-1 Wh (unit 30), 1.8.1 the same, 1.8.2 = 0, 16.7.0 = 5635 × 10^-1 W (unit 27)
  'emh.hex': { metrics: { total_active_power: [563.5, 'W'], active_energy_import: [15338555.7, 'Wh'] }, vendor: 'EMH metering', meterId: '1EMH0004321349', files: 1 },
  // a feed-in meter: 2.8.0 = 2.8.1 = 43730 × 10^-1 Wh, 2.8.2 = 0; power only as 15.7.0 (absolute, no direction): not published
  'dnt.hex': { metrics: { active_energy_export: [4373, 'Wh'] }, vendor: 'Dr Neuhaus Telekommunikation', meterId: '1DNT0100008240', files: 3 },
  // 1.8.0 = 791393 × 10^-1 Wh, 2.8.0 = 0, 16.7.0 = 2144 W (int16, scaler 0)
  'iskra_mt631.hex': { metrics: { total_active_power: [2144, 'W'], active_energy_import: [79139.3, 'Wh'], active_energy_export: [0, 'Wh'] }, vendor: 'Iskraemeco', meterId: '1ISK0075126084', files: 1 },
  // the same meter without its PIN: 1.8.0 = 2043 × 10^3 Wh (whole kWh), 2.8.0 = 0, no power
  'iskra_mt631_without_pin.hex': { metrics: { active_energy_import: [2043000, 'Wh'], active_energy_export: [0, 'Wh'] }, vendor: 'Iskraemeco', meterId: '1ISK0075126084', files: 5 },
};

describe('SML files recorded from real meters', () => {
  it.each(Object.keys(EXPECTED))('%s: every whole file passes its CRC-16/X-25 and decodes to the published metrics', (name) => {
    const recording = smlRecording(name);
    const files = smlFiles(recording);
    expect(files).toHaveLength(EXPECTED[name]!.files);
    for (const file of files) {
      // The CRC the meter sent (low byte first) is the X.25 CRC of everything before it.
      expect(smlCrc16(file, 0, file.length - 2)).toBe(file.readUInt16LE(file.length - 2));
    }
    const events = read(recording);
    expect(events.filter((e) => e.kind === 'dropped')).toEqual([]);
    expect(wholes(events)).toHaveLength(files.length);
    for (const outcome of wholes(events)) {
      expect(outcome.kind).toBe('ok');
      if (!('identity' in outcome)) continue;
      expect(outcome.identity).toMatchObject({ vendor: EXPECTED[name]!.vendor, meterId: EXPECTED[name]!.meterId, layout: 'SML' });
    }
    expect(metricsOf(files[0]!)).toEqual(EXPECTED[name]!.metrics);
  });

  it('the same files arriving a byte at a time give the same readings', () => {
    for (const name of Object.keys(EXPECTED)) {
      const recording = smlRecording(name);
      expect(wholes(read(recording, 1))).toEqual(wholes(read(recording)));
    }
  });

  it('a meter without its PIN (reduced data set) publishes its energy and says why power is absent', () => {
    const [outcome] = wholes(read(smlRecording('iskra_mt631_without_pin.hex')));
    if (!outcome || !('reading' in outcome)) throw new Error('no reading');
    expect(outcome.reading.metrics.map((m) => m.name)).toEqual(['active_energy_import', 'active_energy_export']);
    expect(powerAbsent(outcome.identity, outcome.reading)).toMatch(/no power in the meter's data, only active_energy_import, active_energy_export: .*no PIN entered.*InF on/);
    const [withPin] = wholes(read(smlRecording('iskra_mt631.hex')));
    if (!withPin || !('reading' in withPin)) throw new Error('no reading');
    expect(powerAbsent(withPin.identity, withPin.reading)).toBeNull();
  });

  it('every single-bit error anywhere in a real file is refused: no value gets through', () => {
    for (const name of ['emh.hex', 'iskra_mt631.hex']) {
      const file = smlFiles(smlRecording(name))[0]!;
      for (let bit = 0; bit < file.length * 8; bit++) {
        const damaged = Buffer.from(file);
        damaged[bit >> 3]! ^= 1 << (bit & 7);
        // Between intact files (the line is synced), so a damaged start or end cannot hide.
        const events = read(Buffer.concat([file, damaged, file]));
        expect(wholes(events), `bit ${bit}`).toEqual(wholes(read(Buffer.concat([file, file]))));
        expect(events.some((e) => e.kind === 'dropped'), `bit ${bit}`).toBe(true);
      }
    }
  });

  it('a file cut short (bytes lost, reading head moved) is dropped as truncated; the next whole one is used', () => {
    const [first, second] = smlFiles(smlRecording('dnt.hex'));
    for (const cutAt of [8, 40, 200, first!.length - 12, first!.length - 3]) {
      const events = read(Buffer.concat([first!.subarray(0, cutAt), second!]));
      const dropped = events.filter((e) => e.kind === 'dropped').map((e) => (e.kind === 'dropped' ? e.reason : ''));
      expect(dropped, `cut at ${cutAt}`).toHaveLength(1);
      expect(['truncated', 'crc']).toContain(dropped[0]);
      expect(wholes(events)).toEqual(wholes(read(second!)));
    }
  });

  // Off the 4-byte grid: the next start is 1-3 bytes past a grid position and only a search finds it.
  it('a file cut off the 4-byte grid is dropped as truncated and the next file is decoded at once', () => {
    const [first, second] = smlFiles(smlRecording('dnt.hex'));
    for (const cutAt of [41, 42, 43, 201]) {
      const events = read(Buffer.concat([first!.subarray(0, cutAt), second!]));
      expect(events.filter((e) => e.kind === 'dropped'), `cut at ${cutAt}`).toEqual([{ kind: 'dropped', reason: 'truncated', bytes: cutAt }]);
      expect(wholes(events), `cut at ${cutAt}`).toEqual(wholes(read(second!)));
    }
  });

  it('a byte lost or added in the middle of a real file drops that file only; the next ones are decoded', () => {
    const files = smlFiles(smlRecording('iskra_mt631_without_pin.hex'));
    const [first, ...rest] = files;
    const middle = first!.length >> 1;
    const lost = Buffer.concat([first!.subarray(0, middle), first!.subarray(middle + 1)]);
    const added = Buffer.concat([first!.subarray(0, middle), Buffer.from([0x5a]), first!.subarray(middle)]);
    for (const [what, damaged] of [['lost', lost], ['added', added]] as const) {
      const events = read(Buffer.concat([damaged, ...rest]));
      const dropped = events.flatMap((e) => (e.kind === 'dropped' ? [e.reason] : []));
      expect(dropped, what).toHaveLength(1);
      expect(['truncated', 'crc'], what).toContain(dropped[0]);
      expect(wholes(events), what).toEqual(wholes(read(Buffer.concat(rest))));
    }
  });

  it('a file whose CRC does not match is counted as crc, and the diagnosis names bit errors at the reading head', () => {
    const file = Buffer.from(smlFiles(smlRecording('emh.hex'))[0]!);
    file[100]! ^= 0x10;
    const events = read(Buffer.concat([file, file]));
    expect(events).toEqual([{ kind: 'dropped', reason: 'crc', bytes: file.length }, { kind: 'dropped', reason: 'crc', bytes: file.length }]);
    expect(diagnoseP1({ line: '9600 8N1', bytes: 2 * file.length, drops: { crc: 2 } })?.text).toMatch(/CRC.*reading head/);
  });

  it('bytes between files are garbled (zero padding is not), and noise before the first start is a tail', () => {
    const [a, b] = smlFiles(smlRecording('dnt.hex'));
    expect(read(Buffer.concat([Buffer.from('ffee'), a!, Buffer.alloc(4), b!])).filter((e) => e.kind === 'dropped')).toEqual([]);
    expect(read(Buffer.concat([a!, Buffer.from('noise'), b!])).filter((e) => e.kind === 'dropped')).toEqual([{ kind: 'dropped', reason: 'garbled', bytes: 5 }]);
  });

  it('a stream that never ends a file is dropped as overlong', () => {
    const start = Buffer.from('1b1b1b1b01010101', 'hex');
    const events = new SmlTransport(1024).push(Buffer.concat([start, Buffer.alloc(2048, 0x42)]));
    expect(events).toEqual([{ kind: 'dropped', reason: 'overlong', bytes: 2056 }]);
  });

  // Not a recording (none of the public ones has 1b1b1b1b in its data): the escape rule itself.
  it('data 1b1b1b1b is sent twice and read once', () => {
    const body = Buffer.from('1b1b1b1b1b1b1b1b12345678', 'hex');
    const head = Buffer.concat([Buffer.from('1b1b1b1b01010101', 'hex'), body, Buffer.from('1b1b1b1b1a00', 'hex')]);
    const crc = smlCrc16(head);
    const file = Buffer.concat([head, Buffer.from([crc & 0xff, crc >> 8])]);
    expect(new SmlTransport().push(file)).toEqual([{ kind: 'file', data: Buffer.from('1b1b1b1b12345678', 'hex') }]);
  });

  it('a file whose value list is not SML is an unknown layout, and a garbled unit is invalid', () => {
    expect(interpretSmlFile(Buffer.from('7201', 'hex')).kind).toBe('unknown_layout');
    // The EMH list with 16.7.0's unit (27, W) changed to 28 (VA): never published as power.
    const data = Buffer.from(smlFiles(smlRecording('emh.hex'))[0]!.subarray(8, -8));
    const at = data.indexOf(Buffer.from('0100100700ff0101621b', 'hex'));
    data[at + 9] = 28;
    expect(interpretSmlFile(data)).toMatchObject({ kind: 'invalid', error: expect.stringContaining('16.7.0') });
  });

  it('scales exactly and names meters as printed on them', () => {
    expect(scaled(153385557n, -1)).toBe('15338555.7');
    expect(scaled(-5n, -3)).toBe('-0.005');
    expect(scaled(2043n, 3)).toBe('2043000');
    expect(meterIdText(Buffer.from('0a0149534b00047a5544', 'hex'))).toBe('1ISK0075126084');
    expect(meterIdText(Buffer.from('31455359313136323233323939', 'hex'))).toBe('1ESY116223299');
    expect(meterIdText(Buffer.from('00ff10', 'hex'))).toBe('00FF10');
  });

  // Not a recording (the public per-phase recordings carry no licence, test/data/sml/README.md):
  // a value list written by hand in SML's encoding, to show the per-phase OBIS codes and the
  // DLMS units 33 (A) and 35 (V) reach the same names as a text telegram's.
  it('per-phase power, voltages and currents map to the DSMR/Modbus names (hand-encoded list)', () => {
    const tl = (type: number, payload: Buffer) => Buffer.concat([Buffer.from([type | (payload.length + 1)]), payload]);
    const octets = (hex: string) => tl(0x00, Buffer.from(hex, 'hex'));
    const int = (v: number, size: number) => { const b = Buffer.alloc(size); b.writeIntBE(v, 0, size); return tl(0x50, b); };
    const uint = (v: number, size: number) => { const b = Buffer.alloc(size); b.writeUIntBE(v, 0, size); return tl(0x60, b); };
    const list = (...items: Buffer[]) => Buffer.concat([Buffer.from([0x70 | items.length]), ...items]);
    const absent = Buffer.from([0x01]);
    const entry = (obis: string, unit: number, scaler: number, value: number) => list(octets(obis), absent, absent, uint(unit, 1), int(scaler, 1), int(value, 4), absent);
    const values = list(
      entry('0100100700ff', 27, -1, -12345), // 16.7.0 −1234.5 W (feeding in)
      entry('0100240700ff', 27, 0, 100), // 36.7.0
      entry('0100380700ff', 27, 0, -1400), // 56.7.0
      entry('01004c0700ff', 27, 0, 65), // 76.7.0
      entry('0100200700ff', 35, -1, 2301), // 32.7.0 230.1 V
      entry('0100340700ff', 35, -1, 2299),
      entry('0100480700ff', 35, -1, 2310),
      entry('01001f0700ff', 33, -2, 123), // 31.7.0 1.23 A
      entry('0100330700ff', 33, -2, 612),
      entry('0100470700ff', 33, -2, 45),
      entry('0100010800ff', 30, -1, 10000), // 1.8.0 1000 Wh
    );
    const body = list(absent, octets('0a01454d48000041f045'), absent, absent, values, absent, absent);
    const message = list(octets('01'), uint(0, 1), uint(0, 1), list(uint(0x0701, 2), body), uint(0, 2), Buffer.from([0x00]));
    const outcome = interpretSmlFile(message);
    if (!('reading' in outcome)) throw new Error(JSON.stringify(outcome));
    expect(Object.fromEntries(outcome.reading.metrics.map((m) => [m.name, [m.value, m.unit]]))).toEqual({
      total_active_power: [-1234.5, 'W'],
      active_power_l1: [100, 'W'],
      active_power_l2: [-1400, 'W'],
      active_power_l3: [65, 'W'],
      active_energy_import: [1000, 'Wh'],
      voltage_l1: [230.1, 'V'],
      voltage_l2: [229.9, 'V'],
      voltage_l3: [231, 'V'],
      current_l1: [1.23, 'A'],
      current_l2: [6.12, 'A'],
      current_l3: [0.45, 'A'],
    });
    expect(outcome.identity).toMatchObject({ vendor: 'EMH metering', meterId: '1EMH0004321349' });
  });

  it('the diagnosis names an SML meter on a text line, and a text meter on the SML line, each with the line to set', () => {
    expect(diagnoseP1({ line: '9600 7E1', bytes: 900, drops: { garbled: 2 }, smlSeen: true }, 'buses[0]')).toEqual({ problem: 'line_settings', text: 'SML (binary) on a text line (9600 7E1): an SML meter, set line: 9600 8N1 on buses[0]' });
    expect(diagnoseP1({ line: '9600 8N1', bytes: 900, drops: {} }, 'buses[0]')?.text).toMatch(/^bytes but no SML file at 9600 8N1: .*set line: 9600 7E1/);
    expect(diagnoseP1({ line: '9600 8N1', bytes: 0, drops: {} })?.text).toMatch(/optical interface/);
  });
});
