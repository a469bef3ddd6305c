// The serial devices metergate.service's device policy (DevicePolicy=closed plus DeviceAllow=)
// really admits, enforced by systemd as PID 1: in Debian 12 booted with systemd-nspawn, each
// class of RS-485 adapter whose device node this machine has is bound in and opened
// read-write under the unit's own DeviceAllow= lines (systemd-run), and refused without the
// entry that admits it. test/integration/unit-serial-devices.test.ts checks the lines
// themselves against every class; this is the part that needs a real systemd, which the
// CI machine (a container whose PID 1 is not systemd) only has booted here. No package is
// needed: the policy is the unit file's, the process a plain program.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peer } from '../helpers/peers.js';
import { admitting, SERIAL_CLASSES } from '../helpers/serial-classes.js';
import { unitSettings } from '../helpers/unit-file.js';
import { BootedDebian, canBoot } from './booted-debian.js';

const UNIT = readFileSync('systemd/metergate.service', 'utf8');
const present = SERIAL_CLASSES.filter((c) => existsSync(c.device));
const ready = [
  canBoot(),
  peer(
    `a serial device node of a class metergate.service admits (${SERIAL_CLASSES.map((c) => c.device).join(', ')})`,
    present.length > 0,
    'a machine, or a privileged container, with a serial port: every PC kernel has /dev/ttyS0',
  ),
].every(Boolean);

/** Opens a device read-write as the daemon's serial code does (non-blocking: no wait for carrier). perl-base is in every Debian root. */
const OPEN_DEVICE = '/usr/local/lib/open-device.pl';
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!ready)("serial devices opened under metergate.service's device policy, on Debian 12 booted with systemd", () => {
  let gw: BootedDebian;

  beforeAll(async () => {
    gw = await BootedDebian.create('bookworm', { machine: 'mg-devices', devices: present.map((c) => c.device), enforceDevicePolicy: true });
    mkdirSync(gw.at('usr/local/lib'), { recursive: true });
    writeFileSync(gw.at(OPEN_DEVICE), 'use Fcntl;\nsysopen(my $fh, $ARGV[0], O_RDWR | O_NONBLOCK | O_NOCTTY) or die "open $ARGV[0]: $!\\n";\n');
    await gw.boot();
  });
  afterAll(async () => {
    await gw?.destroy();
  });

  /** systemd-run of the open under DevicePolicy=closed and these DeviceAllow= entries. */
  const openUnder = (device: string, allow: readonly string[]) =>
    gw.sh(['systemd-run', '--wait', '--pipe', '--quiet', '-p', 'DevicePolicy=closed', ...allow.flatMap((a) => ['-p', `DeviceAllow=${a}`]), 'perl', OPEN_DEVICE, device].map(quote).join(' '), 60_000);

  for (const c of present) {
    it(`${c.device} (${c.driver}) opens with the unit's DeviceAllow= and is refused without its entry`, async () => {
      // Outside any policy it opens: a refusal below is the policy's.
      const plain = await gw.sh(`perl ${OPEN_DEVICE} ${c.device}`);
      expect(plain.status, plain.output).toBe(0);
      const all = unitSettings(UNIT, 'DeviceAllow');
      const opened = await openUnder(c.device, all);
      expect(opened.status, opened.output).toBe(0);
      const denied = await openUnder(c.device, all.filter((a) => !admitting(UNIT, c.driver).includes(a)));
      expect(denied.status, denied.output).not.toBe(0);
      expect(denied.output).toMatch(/Operation not permitted/);
    });
  }
});
