// How much a reported security event matters, from the specification's own list
// (security-event-types.json: the OCPP 2.0.1 Appendices' and the 1.6 Security Whitepaper's
// "critical" flag), so the status page and the log warn about what the station was meant to
// push, and show the rest as information. Pure: no I/O beyond reading the data once.
import { readFileSync } from 'node:fs';

/** critical: the specification marks it critical; routine: listed, not critical; unknown: not listed (a vendor's own). */
export const SECURITY_EVENT_SEVERITIES = ['critical', 'routine', 'unknown'] as const;
export type SecurityEventSeverity = (typeof SECURITY_EVENT_SEVERITIES)[number];

type CriticalByType = Readonly<Record<string, boolean>>;

const listed = JSON.parse(readFileSync(new URL('./security-event-types.json', import.meta.url), 'utf8')) as Readonly<Record<'1.6' | '2.0.1', CriticalByType>>;

/** The event type's severity under the version the station spoke (types are case-sensitive, as the specification writes them). */
export function securityEventSeverity(ocppVersion: '1.6' | '2.0.1', type: string): SecurityEventSeverity {
  const critical = Object.hasOwn(listed[ocppVersion], type) ? listed[ocppVersion][type] : undefined;
  if (critical === undefined) return 'unknown';
  return critical ? 'critical' : 'routine';
}
