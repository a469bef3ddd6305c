// OCPP 2.0.1 security (Part 2, block A) as far as a station's own calls go:
// - SecurityEventNotification (A04): stored with the charger's other records, counted and
//   shown (ocpp/security-events.ts: one log for both versions), answered `{}`.
// - SignCertificate (A02/A03: the station asks the CSMS to have a CSR signed, then waits for
//   CertificateSigned): answered Rejected with the reason. The gateway is no certificate
//   authority and holds no CA key: security profile 3's client certificates are issued by the
//   operator's own CA and installed on the station by the installer (docs/chargers.md
//   "Security profiles"); a gateway on a site's edge that signed CSRs would have to keep a CA
//   key on the same box the station talks to, which is what profile 3 is meant to avoid.
//   Rejected (a valid answer, not a CallError) lets the station keep its certificate and say so
//   in its own log; the gateway never sends CertificateSigned.
import { registeredOnly, type Connection201 } from './connection.js';
import type { ReportedSecurityEvent } from '../security-events.js';

/** Why SignCertificate is Rejected (2.0.1 StatusInfoType: reasonCode up to 20, additionalInfo up to 512 characters). */
export const SIGN_CERTIFICATE_REFUSAL = {
  reasonCode: 'NotSupported',
  additionalInfo: 'metergate signs no certificates: install a client certificate from the operator\'s CA (security profile 3, docs/chargers.md "Who may connect, and how"); keep the one installed',
} as const;

export function registerSecurity(c: Connection201): void {
  const { log, id } = c.tools;
  const on = registeredOnly(c);
  on(
    'SecurityEventNotification',
    (p: ReportedSecurityEvent, later) => {
      later(c.securityEvents.record(id, '2.0.1', p, c.ctx.clock.now(), log));
      return {};
    },
    { whileQueued: () => ({}) },
  );
  on(
    'SignCertificate',
    (p: { csr: string; certificateType?: string }) => {
      log.warn({ certificate_type: p.certificateType ?? 'ChargingStationCertificate', csr_chars: p.csr.length }, 'SignCertificate answered Rejected: the gateway signs no certificates (docs/chargers.md "Who may connect, and how")');
      return { status: 'Rejected', statusInfo: SIGN_CERTIFICATE_REFUSAL };
    },
    { store: false },
  );
}
