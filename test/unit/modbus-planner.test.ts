import { describe, expect, it } from 'vitest';
import type { MeterProfile, RegisterSpec } from '../../src/config/types.js';
import { decodeValue, encodeValue, registerCount } from '../../src/modbus/decode.js';
import { planOnePerValue, planReads, selectRegisters } from '../../src/modbus/planner.js';
import { builtInProfiles } from '../../src/modbus/profiles/index.js';

const reg = (metric: string, address: number, type: RegisterSpec['type'] = 'float32', function_code?: 3 | 4): RegisterSpec => ({
  metric, address, type, word_order: 'big', scale: 1, unit: 'x', default: true, ...(function_code ? { function_code } : {}),
});
const limits = { function_code: 4 as const, max_registers_per_request: 80, max_gap_registers: 10 };

describe('read planner', () => {
  it('reads the SDM630 default metric set in at most 3 requests, all metrics in 2', () => {
    const p = builtInProfiles.sdm630;
    const defaults = selectRegisters(p);
    expect(defaults.map((r) => r.metric).sort()).toEqual(['active_energy_import', 'total_active_power']);
    // power 0x0034 and import 0x0048 are 18 registers apart, more than the gap read through: two requests
    expect(planReads(defaults, p).map((r) => [r.functionCode, r.address, r.count])).toEqual([[4, 0x0034, 2], [4, 0x0048, 2]]);
    const all = selectRegisters(p, p.registers.map((r) => r.metric));
    const plan = planReads(all, p);
    expect(plan).toHaveLength(2);
    expect(plan.map((r) => [r.address, r.count])).toEqual([[0x0000, 18], [0x0034, 24]]);
    expect(planOnePerValue(all, p).length).toBeGreaterThanOrEqual(10);
  });

  it('reads small gaps through and splits at larger ones', () => {
    const plan = planReads([reg('a', 0), reg('b', 12), reg('c', 30)], limits);
    // gap 0..2 -> 12 is 10 registers: read through; 14 -> 30 is 16: split
    expect(plan.map((r) => [r.address, r.count])).toEqual([[0, 14], [30, 2]]);
    expect(plan[0].values.map((v) => [v.spec.metric, v.offset])).toEqual([['a', 0], ['b', 12]]);
    expect(planReads([reg('a', 0), reg('b', 12)], { ...limits, max_gap_registers: 9 })).toHaveLength(2);
    expect(planReads([reg('a', 0), reg('b', 2)], { ...limits, max_gap_registers: 0 })).toHaveLength(1);
  });

  it('honours the per-model register limit (SDM72D 60, SDM630 80)', () => {
    const regs = Array.from({ length: 40 }, (_, i) => reg(`m${i}`, i * 2));
    const at80 = planReads(regs, limits);
    expect(at80.map((r) => r.count)).toEqual([80]);
    const at60 = planReads(regs, { ...limits, max_registers_per_request: 60 });
    expect(at60.map((r) => r.count)).toEqual([60, 20]);
    for (const r of at60) expect(r.count).toBeLessThanOrEqual(60);
    // never more than 125 registers, whatever the profile says
    const many = Array.from({ length: 100 }, (_, i) => reg(`m${i}`, i * 2));
    expect(Math.max(...planReads(many, { ...limits, max_registers_per_request: 500 }).map((r) => r.count))).toBeLessThanOrEqual(125);
  });

  it('keeps function codes apart and orders values by address', () => {
    const plan = planReads([reg('h', 10, 'uint16', 3), reg('b', 4), reg('a', 0), reg('h2', 11, 'uint16', 3)], limits);
    expect(plan.map((r) => [r.functionCode, r.address, r.count])).toEqual([[3, 10, 2], [4, 0, 6]]);
  });

  it('covers every wanted register exactly where it decodes (all built-in profiles)', () => {
    for (const [name, profile] of Object.entries(builtInProfiles)) {
      const all = selectRegisters(profile, profile.registers.map((r) => r.metric));
      const plan = planReads(all, profile);
      const seen = plan.flatMap((r) => r.values.map((v) => v.spec.metric)).sort();
      expect(seen, name).toEqual(all.map((r) => r.metric).sort());
      for (const read of plan) {
        expect(read.count, name).toBeLessThanOrEqual(profile.max_registers_per_request);
        // build the answer a meter would give and decode each value from it
        const words = new Array<number>(read.count).fill(0);
        read.values.forEach(({ spec, offset }, i) => {
          encodeValue((100 + i) * spec.scale, spec).forEach((w, k) => (words[offset + k] = w));
          expect(offset + registerCount(spec.type)).toBeLessThanOrEqual(read.count);
        });
        read.values.forEach(({ spec, offset }, i) => expect(decodeValue(words, offset, spec)! / spec.scale).toBeCloseTo(100 + i, 2));
      }
    }
  });

  it('every built-in profile has the two contract metrics in its default set, in W and Wh', () => {
    for (const [name, p] of Object.entries(builtInProfiles) as Array<[string, MeterProfile]>) {
      const d = selectRegisters(p);
      expect(d.find((r) => r.metric === 'total_active_power')?.unit, name).toBe('W');
      expect(d.find((r) => r.metric === 'active_energy_import')?.unit, name).toBe('Wh');
    }
  });
});
