// What the operator sees of signed meter values (issue 32 item 2): each stopped charger
// session's outcome is counted on /metrics and logged (a warning when it is not verified:
// such a session is never billed silently), and the status page shows each charger's last.
import { Counter, type Registry } from 'prom-client';
import type { ChargerConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { OcppStore } from '../store/ocpp.js';
import type { SignedValueStore } from '../store/signed-values.js';
import { SIGNED_OUTCOMES, type SignedOutcome } from './session-verification.js';
import { carriesSignedData, transactionSignedData, type TransactionSignedData } from './transaction-signed-data.js';

export interface LastSignedOutcome {
  readonly transactionId: number;
  readonly outcome: SignedOutcome;
  readonly reason: string;
}

export class SignedMeterMonitor {
  private readonly sessions: Counter<'outcome'>;
  private readonly dropped: Counter<'charge_point_id'>;
  /** Each charger's last result, taken again while its inputs stay the same (the status page polls). */
  private readonly last = new Map<string, TransactionSignedData>();

  constructor(
    metrics: Registry,
    private readonly ocpp: OcppStore,
    private readonly signed: SignedValueStore,
    private readonly chargers: () => readonly ChargerConfig[],
    private readonly logger: Logger,
  ) {
    this.sessions = new Counter({
      name: 'metergate_signed_meter_sessions_total',
      help: 'Stopped charger sessions with signed meter values (or a meter key configured), by verification outcome: verified, signature_invalid, key_unknown, register_mismatch, incomplete, unsigned (docs/chargers.md "Signed meter values")',
      labelNames: ['outcome'] as const,
      registers: [metrics],
    });
    for (const outcome of SIGNED_OUTCOMES) this.sessions.inc({ outcome }, 0);
    this.dropped = new Counter({
      name: 'metergate_signed_meter_values_dropped_total',
      help: 'Signed meter values not kept because their transaction already holds the most kept per transaction (periodic ones; the begin and end always are)',
      labelNames: ['charge_point_id'] as const,
      registers: [metrics],
    });
  }

  /** After a stop was committed (charger.transaction-stopped). */
  transactionStopped(transactionId: number): void {
    const d = transactionSignedData(this.ocpp, this.signed, this.chargers(), transactionId);
    if (!d || !carriesSignedData(d)) return;
    const { outcome, reason, format } = d.verification;
    this.sessions.inc({ outcome });
    const fields = { charge_point_id: d.chargePointId, connector_id: d.connectorId, transaction_id: transactionId, outcome, reason, format };
    if (outcome === 'verified') this.logger.info(fields, 'signed meter values verified');
    else this.logger.warn(fields, 'signed meter values not verified: the cdr names the outcome, do not bill it as calibration-law conform');
  }

  signedDropped(chargePointId: string, transactionId: number, count: number): void {
    this.dropped.inc({ charge_point_id: chargePointId }, count);
    this.logger.warn({ charge_point_id: chargePointId, transaction_id: transactionId, dropped: count }, 'signed meter values not kept: the transaction holds the most kept per transaction');
  }

  /** The charger's most recently stopped session's outcome, when it carries signed data. */
  lastOfCharger(chargePointId: string): LastSignedOutcome | null {
    const txId = this.signed.lastStoppedTransaction(chargePointId);
    if (txId === null) return null;
    const d = transactionSignedData(this.ocpp, this.signed, this.chargers(), txId, this.last.get(chargePointId));
    if (d) this.last.set(chargePointId, d);
    return d && carriesSignedData(d) ? { transactionId: txId, outcome: d.verification.outcome, reason: d.verification.reason } : null;
  }
}
