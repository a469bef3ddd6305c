import { describe, expect, it } from 'vitest';
import { judgeFreeSpace } from '../../src/ops/doctor/disk.js';
import { implausibility } from '../../src/ops/doctor/meters.js';
import { placeholderIds, readObstacle } from '../../src/ops/doctor/files.js';
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

describe('doctor file access rules', () => {
  const metergate = { name: 'metergate', uid: 999, gid: 995, groups: [20] };
  const tree: Record<string, { uid: number; gid: number; mode: number }> = {
    '/': { uid: 0, gid: 0, mode: 0o40755 },
    '/etc': { uid: 0, gid: 0, mode: 0o40755 },
    '/etc/metergate': { uid: 0, gid: 995, mode: 0o40750 },
    '/etc/metergate/config.yaml': { uid: 0, gid: 995, mode: 0o100640 },
    '/etc/metergate/mqtt-password': { uid: 0, gid: 0, mode: 0o100600 },
    '/root': { uid: 0, gid: 0, mode: 0o40700 },
    '/root/ca.pem': { uid: 0, gid: 0, mode: 0o100644 },
  };
  const stat = (p: string) => {
    const st = tree[p];
    if (!st) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    return st;
  };

  it('needs x on every directory above and r on the file, for the service user', () => {
    expect(readObstacle(metergate, '/etc/metergate/config.yaml', stat)).toBeNull();
    expect(readObstacle(metergate, '/etc/metergate/mqtt-password', stat)).toMatchObject({ kind: 'file', text: expect.stringMatching(/^cannot read \/etc\/metergate\/mqtt-password \(mode 600/) });
    expect(readObstacle(metergate, '/root/ca.pem', stat)).toEqual({ path: '/root', kind: 'directory', text: 'cannot enter /root (mode 700)' });
    expect(readObstacle({ ...metergate, gid: 1 }, '/etc/metergate/config.yaml', stat)).toMatchObject({ path: '/etc/metergate', kind: 'directory' });
    expect(readObstacle({ ...metergate, uid: 0 }, '/root/ca.pem', stat)).toBeNull();
    expect(readObstacle(metergate, '/etc/metergate/missing', stat)).toBeNull(); // the config line reports missing files
  });

  it('recognises the example config\'s placeholder ids', () => {
    const config = { organization_id: '00000000-0000-4000-8000-000000000000', meters: [{ resource_id: '3f688e0c-b7d6-4ef4-b1ed-52cd55537204' }, { resource_id: '00000000-0000-4000-8000-000000000001' }] };
    expect(placeholderIds(config as never)).toEqual(['organization_id', 'meters[1].resource_id']);
  });
});
