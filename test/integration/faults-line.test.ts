// Fault campaign rows about the meter line (scripts/faults): a serial adapter unplugged and
// plugged back, corrupted bytes on RTU between the gateway and the meter.
import { describe } from 'vitest';
import { faultTest } from '../helpers/fault-test.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';

describe.skipIf(!hasMosquitto || !hasSocat)('faults: meter line', () => {
  faultTest('serial unplug');
  faultTest('noisy line');
});
