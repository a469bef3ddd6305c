// Fault campaign rows about the meter line and the clock (scripts/faults): a serial adapter
// unplugged and plugged back, corrupted bytes on RTU, the wall clock stepped while trusted.
import { describe } from 'vitest';
import { LIBFAKETIME } from '../helpers/fault-rig.js';
import { faultTest } from '../helpers/fault-test.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat, peer } from '../helpers/peers.js';

const hasFaketime = peer('libfaketime', LIBFAKETIME !== undefined);

describe.skipIf(!hasMosquitto || !hasSocat)('faults: meter line', () => {
  faultTest('serial unplug');
  faultTest('noisy line');
});

describe.skipIf(!hasMosquitto || !hasSocat || !hasFaketime)('faults: clock', () => {
  faultTest('clock steps');
});
