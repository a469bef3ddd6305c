// Fault campaign rows about storage (scripts/faults): the data directory's file system full
// to the last byte (a real tmpfs), the database locked by another process.
import { describe } from 'vitest';
import { faultTest } from '../helpers/fault-test.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat, isRoot } from '../helpers/peers.js';

describe.skipIf(!hasMosquitto || !hasSocat || !isRoot)('faults: storage', () => {
  faultTest('disk full');
  faultTest('database locked');
});
