// The classes of RS-485 adapter a Raspberry Pi gateway uses, by the tty driver name systemd
// matches a DeviceAllow= `char-NAME` against (/proc/devices), and which of the unit's
// DeviceAllow= entries admit each. Shared by the unit file's check
// (test/integration/unit-serial-devices.test.ts) and the devices opened under that policy
// by a booted systemd (test/package/boot-serial-devices.test.ts).
import { unitSettings } from './unit-file.js';

// driver: the name in /proc/devices (the kernel's uart/tty driver dev_name).
export const SERIAL_CLASSES = [
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

/** The DeviceAllow= entries of `unitText` that admit the char driver `driver` for reading and writing. */
export function admitting(unitText: string, driver: string): string[] {
  return unitSettings(unitText, 'DeviceAllow').filter((entry) => {
    const [spec, access = 'rwm'] = entry.split(/\s+/);
    return spec.startsWith('char-') && globMatches(spec.slice('char-'.length), driver) && access.includes('r') && access.includes('w');
  });
}
