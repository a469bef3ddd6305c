import { describe, expect, it } from 'vitest';
import { judgeFreeSpace } from '../../src/ops/doctor/disk.js';
import { implausibility } from '../../src/ops/doctor/meters.js';
import { exitCodeOf, formatResult } from '../../src/ops/doctor/run.js';
import { mayReadWrite } from '../../src/ops/doctor/serial.js';
import { fail, pass, warn } from '../../src/ops/doctor/types.js';

const MiB = 1024 * 1024;

describe('doctor rules', () => {
  it('judges serial permissions like the kernel: owner, then group (incl. supplementary), then others', () => {
    const metergate = { name: 'metergate', uid: 999, gid: 995, groups: [20] };
    const ttyUSB = { uid: 0, gid: 20, mode: 0o20660 };
    expect(mayReadWrite(metergate, ttyUSB)).toBe(true);
    expect(mayReadWrite({ ...metergate, groups: [] }, ttyUSB)).toBe(false);
    expect(mayReadWrite(metergate, { ...ttyUSB, mode: 0o20640 })).toBe(false);
    expect(mayReadWrite({ ...metergate, groups: [] }, { ...ttyUSB, mode: 0o20666 })).toBe(true);
  });

  it('fails below 100 MiB or 2 % free, warns below 1 GiB or 10 %', () => {
    expect(judgeFreeSpace(50 * MiB, 32_000 * MiB)).toBe('fail');
    expect(judgeFreeSpace(800 * MiB, 32_000 * MiB)).toBe('warn');
    expect(judgeFreeSpace(2000 * MiB, 32_000 * MiB)).toBe('warn');
    expect(judgeFreeSpace(8000 * MiB, 32_000 * MiB)).toBe('pass');
  });

  it('recognises values that are not from a meter on a mains grid', () => {
    expect(implausibility({ voltage_l1: 231.2, frequency: 50.01, total_active_power: 1200, active_energy_import: 1e6 }, 100_000)).toBeNull();
    expect(implausibility({ voltage_l1: 0, total_active_power: 0 }, 100_000)).toMatch(/voltage_l1/);
    expect(implausibility({ frequency: 0, total_active_power: 0 }, 100_000)).toMatch(/frequency/);
    expect(implausibility({ total_active_power: 3.4e38 }, 100_000)).toMatch(/total_active_power/);
    expect(implausibility({ voltage_l1: 230 }, 100_000)).toMatch(/neither/);
  });

  it('prints one line per check with the fix, and exits 1 only on a failure', () => {
    expect(formatResult(fail('serial rs485-1', '/dev/ttyUSB0 does not exist', 'plug it in'))).toBe('FAIL  serial rs485-1     /dev/ttyUSB0 does not exist  -> fix: plug it in');
    expect(exitCodeOf([pass('a', 'ok'), warn('b', 'meh')])).toBe(0);
    expect(exitCodeOf([pass('a', 'ok'), fail('b', 'bad', 'fix')])).toBe(1);
  });
});
