// Fault campaign rows about delivery (scripts/faults): the broker away, kill -9 while a
// backlog drains. Real mosquitto with TLS and ACL, simulated meters on socat ptys.
import { describe } from 'vitest';
import { faultTest } from '../helpers/fault-test.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';

describe.skipIf(!hasMosquitto || !hasSocat)('faults: delivery', () => {
  faultTest('broker down');
  faultTest('kill -9 during drain');
});
