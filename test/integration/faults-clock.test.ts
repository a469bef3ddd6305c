// Fault campaign row about the clock (scripts/faults): the wall clock stepped back and
// forward by an hour while trusted (libfaketime); nothing taken is lost.
import { describe } from 'vitest';
import { LIBFAKETIME } from '../helpers/fault-rig.js';
import { faultTest } from '../helpers/fault-test.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat, peer } from '../helpers/peers.js';

const hasFaketime = peer('libfaketime', LIBFAKETIME !== undefined);

describe.skipIf(!hasMosquitto || !hasSocat || !hasFaketime)('faults: clock', () => {
  faultTest('clock steps');
});
