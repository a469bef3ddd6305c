// An OCPP 2.0.1 station's device model (Part 2 B07 Get Base Report, B08 NotifyReport): what a
// 1.6 charger's GetConfiguration keys are, a 2.0.1 station reports as components and
// variables. The gateway asks for it (GetBaseReport FullInventory) once the station's boot is
// Accepted, as it reads a 1.6 charger's configuration after its boot
// (charger-configuration.ts), and again on a reconnect when none is stored; the operator asks
// for any base (ConfigurationInventory, FullInventory, SummaryInventory) over HTTP. The
// station answers the request, then sends the report in NotifyReport parts (seqNo 0.., tbc
// true until the last), each stored in its unit of writes (store/ocpp201-device-model.ts,
// bounded per station). A station whose boot is Pending may be sent GetBaseReport by a CSMS
// (B02), so its NotifyReport is taken while Pending too; the gateway itself asks only after
// Accepted (a Pending boot is asked again when the station boots again and is Accepted).
import type { Logger } from '../../log.js';
import type { DeviceModelRow, DeviceModelStore, ReportBase } from '../../store/ocpp201-device-model.js';
import type { StoreWriteQueue } from '../../store/write-queue.js';
import type { ChargerOperations, OperationOutcome } from '../charger-operations.js';
import { boundedId, type Connection201 } from './connection.js';

export const REPORT_BASES: readonly ReportBase[] = ['ConfigurationInventory', 'FullInventory', 'SummaryInventory'];

/** The report asked for after an accepted boot: everything, as the gateway does not know yet what it will need. */
export const BOOT_REPORT_BASE: ReportBase = 'FullInventory';

interface NotifyReport201 {
  readonly requestId: number;
  readonly generatedAt: string;
  readonly tbc?: boolean;
  readonly seqNo: number;
  readonly reportData?: ReadonlyArray<{
    readonly component: { readonly name: string; readonly instance?: string; readonly evse?: { readonly id: number; readonly connectorId?: number } };
    readonly variable: { readonly name: string; readonly instance?: string };
    readonly variableAttribute: ReadonlyArray<{ readonly type?: string; readonly value?: string; readonly mutability?: string; readonly persistent?: boolean; readonly constant?: boolean }>;
    readonly variableCharacteristics?: Record<string, unknown>;
  }>;
}

/** A NotifyReport part's rows, one per variable attribute (type Actual when the station leaves it out, as 2.0.1 says). Pure. */
export function reportRows(p: NotifyReport201): Omit<DeviceModelRow, 'requestId' | 'reportedAtMs'>[] {
  return (p.reportData ?? []).flatMap((d) =>
    d.variableAttribute.map((a) => ({
      component: d.component.name,
      componentInstance: d.component.instance ?? '',
      evseId: d.component.evse ? boundedId(d.component.evse.id, 'reportData.component.evse.id') : 0,
      connectorId: d.component.evse?.connectorId === undefined ? 0 : boundedId(d.component.evse.connectorId, 'reportData.component.evse.connectorId'),
      variable: d.variable.name,
      variableInstance: d.variable.instance ?? '',
      attributeType: a.type ?? 'Actual',
      value: a.value ?? null,
      mutability: a.mutability ?? null,
      persistent: a.persistent ?? null,
      constant: a.constant ?? null,
      characteristicsJson: d.variableCharacteristics ? JSON.stringify(d.variableCharacteristics) : null,
    })),
  );
}

/** The device models of the 2.0.1 stations: their NotifyReport handler and the GetBaseReport asks. */
export class DeviceModels {
  /** The last request id used per station in this process (the store's may still wait in the write queue). */
  private readonly lastRequestId = new Map<string, number>();

  constructor(
    readonly store: DeviceModelStore,
    private readonly writes: StoreWriteQueue,
    private readonly operations: () => Pick<ChargerOperations, 'call201'> | null,
    private readonly nowMs: () => number,
    private readonly logger: Logger,
  ) {}

  /** NotifyReport on one connection: each part stored in its unit (taken while Pending too, see above). */
  register(c: Connection201): void {
    const { on, id, log } = c.tools;
    on('NotifyReport', (p: NotifyReport201) => {
      boundedId(p.requestId, 'requestId');
      boundedId(p.seqNo, 'seqNo');
      const last = p.tbc !== true;
      const { stored, dropped, report } = this.store.storePart(id, { requestId: p.requestId, seqNo: p.seqNo, last, rows: reportRows(p) }, this.nowMs());
      if (dropped > 0) log.warn({ request_id: p.requestId, seq_no: p.seqNo, dropped, stored }, 'device model full: variables of the report not stored (bounded per station)');
      if (report.completedAtMs !== null && last) log.info({ request_id: p.requestId, report_base: report.reportBase, parts: report.parts, rows_stored: report.rowsStored, rows_dropped: report.rowsDropped }, 'device model report received');
      else if (last) log.warn({ request_id: p.requestId, parts: report.parts, final_seq_no: report.finalSeqNo }, 'device model report ended with parts missing');
      return {};
    });
  }

  /** After a station's boot was Accepted (or it reconnects with no device model stored): asks for its report, in the background. */
  afterAccepted(chargePointId: string, why: 'boot' | 'reconnect'): void {
    if (why === 'reconnect' && this.store.reports(chargePointId).some((r) => r.completedAtMs !== null)) return;
    setImmediate(() =>
      void this.ask(chargePointId, BOOT_REPORT_BASE, 'gateway')
        .then((o) => {
          if (o.kind !== 'answered' || o.answer.status !== 'Accepted') this.logger.warn({ charge_point_id: chargePointId, after: why, outcome: o.kind, status: o.kind === 'answered' ? o.answer.status : undefined }, 'device model report not taken by the station');
        })
        .catch((err: unknown) => this.logger.error({ err, charge_point_id: chargePointId }, 'device model report not asked for')),
    );
  }

  /**
   * Sends GetBaseReport (a fresh requestId) and stores the ask and the station's answer
   * (Accepted, Rejected, NotSupported, EmptyResultSet); the outcome as an operation's, with
   * `request_id` in the answer. Never throws.
   */
  async ask(chargePointId: string, reportBase: ReportBase, by: 'operator' | 'gateway'): Promise<OperationOutcome> {
    const operations = this.operations();
    if (!operations) return { kind: 'failed', message: 'the OCPP central system is not running' };
    const requestId = Math.max(this.store.nextRequestId(chargePointId), (this.lastRequestId.get(chargePointId) ?? 0) + 1);
    this.lastRequestId.set(chargePointId, requestId);
    // Queued before the call: the station's NotifyReport parts are stored after it (the write queue keeps order).
    const requestedAtMs = this.nowMs();
    this.writes.run(`GetBaseReport of ${chargePointId}`, () => this.store.requested(chargePointId, requestId, reportBase, requestedAtMs)).catch((err: unknown) => this.logger.warn({ err, charge_point_id: chargePointId }, 'device model report request not stored'));
    const outcome = await operations.call201(chargePointId, 'GetBaseReport', { requestId, reportBase }, { by });
    if (outcome.kind === 'answered' && typeof outcome.answer.status === 'string') {
      const status = outcome.answer.status;
      this.writes.run(`GetBaseReport answer of ${chargePointId}`, () => this.store.answered(chargePointId, requestId, status)).catch((err: unknown) => this.logger.warn({ err, charge_point_id: chargePointId }, 'device model report answer not stored'));
      this.logger.info({ charge_point_id: chargePointId, request_id: requestId, report_base: reportBase, status, by }, 'device model report asked for');
      return { kind: 'answered', answer: { ...outcome.answer, requestId } };
    }
    return outcome;
  }
}
