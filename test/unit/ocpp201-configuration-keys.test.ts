// OCPP 1.6 configuration keys as OCPP 2.0.1 component/variable (src/ocpp/v201/configuration-keys.ts):
// the listed keys both ways, the written forms passed through, and what has no 2.0.1 variable.
import { describe, expect, it } from 'vitest';
import { componentVariableOf, keyOf } from '../../src/ocpp/v201/configuration-keys.js';

describe('OCPP 1.6 keys as 2.0.1 variables', () => {
  it('maps a listed key (any case) and reads it back by its 1.6 name', () => {
    expect(componentVariableOf('HeartbeatInterval')).toEqual({ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' });
    expect(componentVariableOf('transactionmessageattempts')).toEqual({ component: 'OCPPCommCtrlr', variable: 'MessageAttempts', instance: 'TransactionEvent' });
    expect(keyOf({ component: { name: 'ocppcommctrlr' }, variable: { name: 'MessageAttempts', instance: 'TransactionEvent' } })).toBe('TransactionMessageAttempts');
    // The same variable without its instance is another one.
    expect(keyOf({ component: { name: 'OCPPCommCtrlr' }, variable: { name: 'MessageAttempts' } })).toBe('OCPPCommCtrlr.MessageAttempts');
  });

  it('passes Component.Variable, Component/Variable and [Instance] through; says why a key has none', () => {
    expect(componentVariableOf('AuthCtrlr/AuthorizeRemoteStart')).toEqual({ component: 'AuthCtrlr', variable: 'AuthorizeRemoteStart' });
    expect(componentVariableOf('DeviceDataCtrlr.BytesPerMessage[GetReport]')).toEqual({ component: 'DeviceDataCtrlr', variable: 'BytesPerMessage', instance: 'GetReport' });
    expect(componentVariableOf('SupportedFeatureProfiles')).toEqual({ none: expect.stringMatching(/device model/) });
    expect(componentVariableOf('NoSuchKey')).toEqual({ unknown: true });
    expect(componentVariableOf('A.B.C')).toEqual({ unknown: true });
  });
});
