// Fault campaign rows about refusals (scripts/faults): mosquitto's ACL refusing one meter's
// topics until it is fixed and reloaded, and a scripted MQTT 5 peer answering a burst of
// PUBACK 0x97 (quota exceeded), which mosquitto cannot be made to send.
import { describe } from 'vitest';
import { faultTest } from '../helpers/fault-test.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { hasSocat } from '../helpers/peers.js';

describe.skipIf(!hasMosquitto || !hasSocat)('faults: refusals', () => {
  faultTest('ACL refusal');
  faultTest('quota exceeded');
});
