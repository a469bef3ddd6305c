import { describe, expect, it } from 'vitest';
import { crc16, hasValidCrc, withCrc } from '../../src/modbus/crc.js';
import { decodeValue } from '../../src/modbus/decode.js';
import { builtInProfiles } from '../../src/modbus/profiles/index.js';
import { MeterModel } from '../../src/sim/meter-model.js';
import { RtuFrameReader } from '../../src/sim/rtu-frames.js';
import { SimulatedMeter } from '../../src/sim/simulated-meter.js';

function fakeClock(start = Date.UTC(2026, 0, 1)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('simulator', () => {
  it('computes the Modbus CRC (spec example: 01 03 00 00 00 0A -> C5 CD)', () => {
    const frame = Buffer.from([0x01, 0x03, 0x00, 0x00, 0x00, 0x0a]);
    expect(crc16(frame)).toBe(0xcdc5);
    expect([...withCrc(frame).subarray(6)]).toEqual([0xc5, 0xcd]);
    expect(hasValidCrc(withCrc(frame))).toBe(true);
  });

  it('grows the import counter by exactly the energy of the power it reports', () => {
    const clock = fakeClock();
    const model = new MeterModel({ seed: 42, clock, initialImportWh: 1_000_000 });
    let expected = 1_000_000;
    let power = model.values().total_active_power;
    const powers: number[] = [];
    for (let i = 0; i < 360; i++) {
      clock.advance(10_000);
      expected += (power * 10_000) / 3_600_000;
      const v = model.values();
      expect(v.active_energy_import).toBeCloseTo(expected, 6);
      power = v.total_active_power;
      powers.push(power);
      expect(v.voltage_l1).toBeGreaterThan(225);
      expect(v.voltage_l1).toBeLessThan(235);
      expect(Math.abs(v.frequency - 50)).toBeLessThan(0.05);
    }
    // an hour of plausible, varying household/EV load
    expect(Math.min(...powers)).toBeGreaterThan(0);
    expect(Math.max(...powers)).toBeLessThan(20_000);
    expect(Math.max(...powers) - Math.min(...powers)).toBeGreaterThan(100);
  });

  it('answers like the meter: data, model code, and exceptions 01/02/03', () => {
    const clock = fakeClock();
    const meter = new SimulatedMeter(1, 'sdm630', builtInProfiles.sdm630, new MeterModel({ seed: 1, clock }));
    const ok = meter.handle(Buffer.from([4, 0x00, 0x34, 0x00, 24]));
    expect(ok[0]).toBe(4);
    expect(ok[1]).toBe(48);
    const words = Array.from({ length: 24 }, (_, i) => ok.readUInt16BE(2 + i * 2));
    expect(decodeValue(words, 0, builtInProfiles.sdm630.registers.find((r) => r.metric === 'total_active_power')!)).toBeGreaterThan(0);
    expect([...meter.handle(Buffer.from([3, 0xfc, 0x02, 0, 2]))]).toEqual([3, 4, 0, 112, 0, 0]);
    expect([...meter.handle(Buffer.from([6, 0, 0, 0, 1]))]).toEqual([0x86, 1]);
    expect([...meter.handle(Buffer.from([4, 0x40, 0x00, 0, 2]))]).toEqual([0x84, 2]);
    expect([...meter.handle(Buffer.from([4, 0, 0, 0, 81]))]).toEqual([0x84, 3]); // SDM630: at most 80 registers
  });

  it('finds request frames in a byte stream with garbage and split chunks', () => {
    const reader = new RtuFrameReader();
    const req = withCrc(Buffer.from([1, 4, 0, 0x34, 0, 2]));
    const t = 1000;
    expect(reader.push(Buffer.concat([Buffer.from([0x13, 0x01, 0x04, 0xff]), req.subarray(0, 5)]), t)).toEqual([]);
    expect(reader.push(req.subarray(5), t + 1)).toEqual([req]);
    const bad = Buffer.from(req);
    bad[3] ^= 1;
    expect(reader.push(Buffer.concat([bad, req]), t + 2)).toEqual([req]);
    // a partial frame left alone goes stale and is discarded
    reader.push(req.subarray(0, 4), t + 3);
    expect(reader.push(req, t + 500)).toEqual([req]);
  });
});
