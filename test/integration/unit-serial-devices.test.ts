// The serial devices metergate.service admits (DevicePolicy=closed plus DeviceAllow=), for
// every class of RS-485 adapter a Raspberry Pi gateway uses, read from the unit's own
// policy: systemd turns `char-NAME` into the majors that /proc/devices lists under NAME
// (the tty driver's name), so each class is checked by its driver name. Where this host runs
// systemd as PID 1 and has a device of a class, it is also opened under that policy through
// systemd-run (device cgroups are not enforced in containers, nor without systemd).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isRoot } from '../helpers/peers.js';
import { unitSettings } from '../helpers/unit-file.js';

const UNIT = readFileSync('systemd/metergate.service', 'utf8');

// driver: the name in /proc/devices (the kernel's uart/tty driver dev_name).
const CLASSES = [
  { what: 'USB RS-485 adapters (FTDI, CH340, CP210x: usb-serial)', driver: 'ttyUSB', device: '/dev/ttyUSB0' },
  { what: 'USB CDC-ACM adapters and meters (CH9102 in ACM mode, some P1 cables)', driver: 'ttyACM', device: '/dev/ttyACM0' },
  { what: "the Pi's PL011 UARTs (GPIO 14/15 RS-485 HATs, Pi 5 ttyAMA0..4)", driver: 'ttyAMA', device: '/dev/ttyAMA0' },
  { what: "8250/16550 UARTs (the Pi's mini UART ttyS0, PCs)", driver: 'ttyS', device: '/dev/ttyS0' },
  { what: 'SPI HATs with an SC16IS752/SC16IS762 (Waveshare 2-CH RS485 HAT: sc16is7xx)', driver: 'ttySC', device: '/dev/ttySC0' },
] as const;

/** systemd's match of a DeviceAllow= `char-NAME` glob against a driver name (fnmatch). */
function globMatches(glob: string, name: string): boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(name);
}

/** The DeviceAllow= entries that admit the char driver `driver` for reading and writing. */
function admitting(driver: string): string[] {
  return unitSettings(UNIT, 'DeviceAllow').filter((entry) => {
    const [spec, access = 'rwm'] = entry.split(/\s+/);
    return spec.startsWith('char-') && globMatches(spec.slice('char-'.length), driver) && access.includes('r') && access.includes('w');
  });
}

describe('the serial devices metergate.service admits', () => {
  it('is a closed policy: only what DeviceAllow= names', () => {
    expect(unitSettings(UNIT, 'DevicePolicy')).toEqual(['closed']);
  });

  for (const c of CLASSES) {
    it(`admits ${c.driver} read-write: ${c.what}`, () => {
      expect(admitting(c.driver), `${c.driver} among ${unitSettings(UNIT, 'DeviceAllow').join('; ')}`).not.toEqual([]);
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
    for (const c of CLASSES) if (listed.has(c.driver)) expect(admitting(c.driver), c.driver).not.toEqual([]);
  });

  const systemdHere = existsSync('/run/systemd/system') && isRoot && spawnSync('systemd-run', ['--version']).status === 0;
  const present = CLASSES.filter((c) => existsSync(c.device));
  describe.skipIf(!systemdHere || present.length === 0)('opened under the unit\'s policy (systemd-run)', () => {
    const open = (device: string, allow: string[]) =>
      spawnSync(
        'systemd-run',
        ['--wait', '--pipe', '--quiet', '-p', 'DevicePolicy=closed', ...allow.flatMap((a) => ['-p', `DeviceAllow=${a}`]), 'python3', '-c', `import os; os.close(os.open(${JSON.stringify(device)}, os.O_RDWR | os.O_NONBLOCK | os.O_NOCTTY))`],
        { encoding: 'utf8', timeout: 60_000 },
      );
    for (const c of present) {
      it(`${c.device} opens with the unit's DeviceAllow= and not without its entry`, () => {
        const all = unitSettings(UNIT, 'DeviceAllow');
        const opened = open(c.device, all);
        expect(opened.status, opened.stderr).toBe(0);
        const denied = open(c.device, all.filter((a) => !admitting(c.driver).includes(a)));
        expect(denied.status).not.toBe(0);
      });
    }
  });
});
