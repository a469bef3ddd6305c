// The serial devices metergate.service admits (DevicePolicy=closed plus DeviceAllow=), for
// every class of RS-485 adapter a Raspberry Pi gateway uses, read from the unit's own
// policy: systemd turns `char-NAME` into the majors that /proc/devices lists under NAME
// (the tty driver's name), so each class is checked by its driver name. That a device really
// opens under this policy, and not without its entry, needs systemd as PID 1 enforcing it,
// which this CI machine (a container) is not: test/package/boot-serial-devices.test.ts does
// it in a Debian booted with systemd-nspawn (the boot tests, vitest.boot.config.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { admitting, SERIAL_CLASSES } from '../helpers/serial-classes.js';
import { unitSettings } from '../helpers/unit-file.js';

const UNIT = readFileSync('systemd/metergate.service', 'utf8');

describe('the serial devices metergate.service admits', () => {
  it('is a closed policy: only what DeviceAllow= names', () => {
    expect(unitSettings(UNIT, 'DevicePolicy')).toEqual(['closed']);
  });

  for (const c of SERIAL_CLASSES) {
    it(`admits ${c.driver} read-write: ${c.what}`, () => {
      expect(admitting(UNIT, c.driver), `${c.driver} among ${unitSettings(UNIT, 'DeviceAllow').join('; ')}`).not.toEqual([]);
    });
  }

  it('names drivers as this host lists them, where it has them', () => {
    const listed = new Set(
      readFileSync('/proc/devices', 'utf8')
        .split('\n\n')[0]
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/)[1]),
    );
    // Every x86 and Pi kernel registers the 8250 driver; the check is that the unit's names
    // are /proc/devices names (not device file names such as ttyS0).
    expect(listed.has('ttyS')).toBe(true);
    for (const c of SERIAL_CLASSES) if (listed.has(c.driver)) expect(admitting(UNIT, c.driver), c.driver).not.toEqual([]);
  });
});
