import { describe, expect, it } from 'vitest';
import { securityEventSeverity } from '../../src/ocpp/security-event-severity.js';

describe('securityEventSeverity (the specification\'s critical flag, security-event-types.json)', () => {
  it('a critical event is critical in both versions; one only for the station\'s own log is routine', () => {
    expect(securityEventSeverity('2.0.1', 'TamperDetectionActivated')).toBe('critical');
    expect(securityEventSeverity('1.6', 'TamperDetectionActivated')).toBe('critical');
    expect(securityEventSeverity('2.0.1', 'AttemptedReplayAttacks')).toBe('routine');
    expect(securityEventSeverity('1.6', 'InvalidMessages')).toBe('routine');
  });

  it('goes by the version the station spoke: a firmware signature failure is critical in 2.0.1, not in the 1.6 whitepaper; each version\'s own names', () => {
    expect(securityEventSeverity('2.0.1', 'InvalidFirmwareSignature')).toBe('critical');
    expect(securityEventSeverity('1.6', 'InvalidFirmwareSignature')).toBe('routine');
    expect(securityEventSeverity('1.6', 'InvalidCentralSystemCertificate')).toBe('routine');
    expect(securityEventSeverity('2.0.1', 'InvalidCentralSystemCertificate')).toBe('unknown');
  });

  it('a type not listed (a vendor\'s own, another spelling, an object\'s own key) is unknown, never critical', () => {
    expect(securityEventSeverity('2.0.1', 'AcmeCableLockForced')).toBe('unknown');
    expect(securityEventSeverity('2.0.1', 'tamperdetectionactivated')).toBe('unknown');
    expect(securityEventSeverity('2.0.1', 'constructor')).toBe('unknown');
    expect(securityEventSeverity('1.6', '__proto__')).toBe('unknown');
  });
});
