import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtInProfiles, loadBuiltInProfiles } from '../../src/modbus/profiles/index.js';

describe('built-in meter profiles are data files', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('loads one profile per YAML file, named for the file, with registers at their hex addresses', () => {
    expect(Object.keys(builtInProfiles).sort()).toEqual(['abb-b23', 'em24', 'em24-e1', 'em340', 'sdm120', 'sdm630', 'sdm72d']);
    const power = builtInProfiles['sdm630']!.registers.find((r) => r.metric === 'total_active_power');
    expect(power).toMatchObject({ address: 0x34, type: 'float32', unit: 'W' });
  });

  it('fills the schema defaults a file leaves out and refuses a file the schema refuses, naming it', () => {
    dir = mkdtempSync(join(tmpdir(), 'mg-profiles-'));
    writeFileSync(join(dir, 'minimal.yaml'), 'vendor: V\nmodel: M\nregisters:\n  - { metric: total_active_power, address: 0x10, type: float32, unit: W }\n');
    const [minimal] = Object.values(loadBuiltInProfiles(dir));
    expect(minimal).toMatchObject({ function_code: 3, max_registers_per_request: 100, max_gap_registers: 10, max_power_w: 100000 });
    expect(minimal!.registers[0]).toMatchObject({ word_order: 'big', scale: 1, default: false });

    writeFileSync(join(dir, 'broken.yaml'), 'vendor: V\nmodel: M\nfunction_code: 6\nregisters: []\n');
    expect(() => loadBuiltInProfiles(dir!)).toThrow(/broken\.yaml: .*function_code/);
  });
});
