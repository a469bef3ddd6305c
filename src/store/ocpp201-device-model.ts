// An OCPP 2.0.1 station's device model and the reports it came in (migration 267): written
// by the NotifyReport handler (ocpp/v201/device-model.ts) inside its unit of writes, read by
// GET /api/v1/chargers/:id/device-model, the status page and the operation forms.
import type { Db } from './db.js';

/** Rows kept per station: a real FullInventory has a few hundred variables with 1-4 attributes each. */
export const MAX_DEVICE_MODEL_ROWS = 4_000;
/** Reports kept per station (the newest). */
export const MAX_REPORTS_PER_STATION = 10;
/** NotifyReport parts counted per report; a station sending more is not followed further. */
export const MAX_PARTS_PER_REPORT = 1_000;

export type ReportBase = 'ConfigurationInventory' | 'FullInventory' | 'SummaryInventory';

export interface DeviceModelRow {
  readonly component: string;
  readonly componentInstance: string;
  readonly evseId: number;
  readonly connectorId: number;
  readonly variable: string;
  readonly variableInstance: string;
  readonly attributeType: string;
  readonly value: string | null;
  readonly mutability: string | null;
  readonly persistent: boolean | null;
  readonly constant: boolean | null;
  readonly characteristicsJson: string | null;
  readonly requestId: number;
  readonly reportedAtMs: number;
}

export interface ReportRecord {
  readonly requestId: number;
  readonly reportBase: ReportBase | null;
  readonly requestedAtMs: number | null;
  readonly status: string | null;
  readonly parts: number;
  readonly finalSeqNo: number | null;
  readonly rowsStored: number;
  readonly rowsDropped: number;
  readonly lastPartAtMs: number | null;
  readonly completedAtMs: number | null;
}

interface ReportSql {
  request_id: number;
  report_base: ReportBase | null;
  requested_at_ms: number | null;
  status: string | null;
  parts: number;
  final_seq_no: number | null;
  rows_stored: number;
  rows_dropped: number;
  last_part_at_ms: number | null;
  completed_at_ms: number | null;
}

interface RowSql {
  component: string;
  component_instance: string;
  evse_id: number;
  connector_id: number;
  variable: string;
  variable_instance: string;
  attribute_type: string;
  value: string | null;
  mutability: string | null;
  persistent: number | null;
  constant: number | null;
  characteristics_json: string | null;
  request_id: number;
  reported_at_ms: number;
}

const bool = (v: number | null) => (v === null ? null : v === 1);
const bit = (v: boolean | null) => (v === null ? null : v ? 1 : 0);

const reportOf = (r: ReportSql): ReportRecord => ({
  requestId: r.request_id,
  reportBase: r.report_base,
  requestedAtMs: r.requested_at_ms,
  status: r.status,
  parts: r.parts,
  finalSeqNo: r.final_seq_no,
  rowsStored: r.rows_stored,
  rowsDropped: r.rows_dropped,
  lastPartAtMs: r.last_part_at_ms,
  completedAtMs: r.completed_at_ms,
});

const rowOf = (r: RowSql): DeviceModelRow => ({
  component: r.component,
  componentInstance: r.component_instance,
  evseId: r.evse_id,
  connectorId: r.connector_id,
  variable: r.variable,
  variableInstance: r.variable_instance,
  attributeType: r.attribute_type,
  value: r.value,
  mutability: r.mutability,
  persistent: bool(r.persistent),
  constant: bool(r.constant),
  characteristicsJson: r.characteristics_json,
  requestId: r.request_id,
  reportedAtMs: r.reported_at_ms,
});

export class DeviceModelStore {
  private readonly stmts;

  constructor(db: Db) {
    const REPORT_COLUMNS = 'request_id, report_base, requested_at_ms, status, parts, final_seq_no, rows_stored, rows_dropped, last_part_at_ms, completed_at_ms';
    this.stmts = {
      // Ours only: a station's own request ids (a report the gateway did not ask for) could be anything up to 2^31-1.
      nextRequestId: db.prepare<[string], { next: number }>('SELECT COALESCE(MAX(request_id), 0) + 1 AS next FROM ocpp201_reports WHERE charge_point_id = ? AND requested_at_ms IS NOT NULL'),
      requested: db.prepare(
        `INSERT INTO ocpp201_reports (charge_point_id, request_id, report_base, requested_at_ms) VALUES (?, ?, ?, ?)
         ON CONFLICT (charge_point_id, request_id) DO UPDATE SET report_base = excluded.report_base, requested_at_ms = excluded.requested_at_ms`,
      ),
      answered: db.prepare('UPDATE ocpp201_reports SET status = ? WHERE charge_point_id = ? AND request_id = ?'),
      trim: db.prepare(
        `DELETE FROM ocpp201_reports WHERE charge_point_id = ? AND request_id NOT IN
           (SELECT request_id FROM ocpp201_reports WHERE charge_point_id = ? ORDER BY request_id DESC LIMIT ${MAX_REPORTS_PER_STATION})`,
      ),
      trimBut: db.prepare(
        `DELETE FROM ocpp201_reports WHERE charge_point_id = @chargePointId AND request_id <> @requestId AND request_id NOT IN
           (SELECT request_id FROM ocpp201_reports WHERE charge_point_id = @chargePointId AND request_id <> @requestId ORDER BY request_id DESC LIMIT ${MAX_REPORTS_PER_STATION - 1})`,
      ),
      report: db.prepare<[string, number], ReportSql>(`SELECT ${REPORT_COLUMNS} FROM ocpp201_reports WHERE charge_point_id = ? AND request_id = ?`),
      reports: db.prepare<[string], ReportSql>(`SELECT ${REPORT_COLUMNS} FROM ocpp201_reports WHERE charge_point_id = ? ORDER BY request_id DESC`),
      ensureReport: db.prepare('INSERT OR IGNORE INTO ocpp201_reports (charge_point_id, request_id) VALUES (?, ?)'),
      part: db.prepare('INSERT OR IGNORE INTO ocpp201_report_parts (charge_point_id, request_id, seq_no) VALUES (?, ?, ?)'),
      partCount: db.prepare<[string, number], { n: number }>('SELECT COUNT(*) AS n FROM ocpp201_report_parts WHERE charge_point_id = ? AND request_id = ?'),
      partsUpdate: db.prepare(
        `UPDATE ocpp201_reports SET parts = @parts, final_seq_no = COALESCE(@finalSeqNo, final_seq_no), rows_stored = rows_stored + @stored, rows_dropped = rows_dropped + @dropped,
           last_part_at_ms = @atMs, completed_at_ms = CASE WHEN completed_at_ms IS NULL AND COALESCE(@finalSeqNo, final_seq_no) IS NOT NULL AND @parts >= COALESCE(@finalSeqNo, final_seq_no) + 1 THEN @atMs ELSE completed_at_ms END
         WHERE charge_point_id = @chargePointId AND request_id = @requestId`,
      ),
      rowCount: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM ocpp201_device_model WHERE charge_point_id = ?'),
      rowExists: db.prepare<[string, string, string, number, number, string, string, string], { one: number }>(
        `SELECT 1 AS one FROM ocpp201_device_model WHERE charge_point_id = ? AND component = ? AND component_instance = ? AND evse_id = ? AND connector_id = ? AND variable = ? AND variable_instance = ? AND attribute_type = ?`,
      ),
      upsert: db.prepare(
        `INSERT OR REPLACE INTO ocpp201_device_model (charge_point_id, component, component_instance, evse_id, connector_id, variable, variable_instance, attribute_type,
           value, mutability, persistent, constant, characteristics_json, request_id, reported_at_ms)
         VALUES (@chargePointId, @component, @componentInstance, @evseId, @connectorId, @variable, @variableInstance, @attributeType,
           @value, @mutability, @persistent, @constant, @characteristicsJson, @requestId, @reportedAtMs)`,
      ),
      rows: db.prepare<[string], RowSql>(
        'SELECT * FROM ocpp201_device_model WHERE charge_point_id = ? ORDER BY component, component_instance, evse_id, connector_id, variable, variable_instance, attribute_type',
      ),
      value: db.prepare<[string, string, string, string], { value: string | null }>(
        `SELECT value FROM ocpp201_device_model WHERE charge_point_id = ? AND component = ? COLLATE NOCASE AND variable = ? COLLATE NOCASE AND variable_instance = ? COLLATE NOCASE AND attribute_type = 'Actual' AND evse_id = 0 AND connector_id = 0 AND component_instance = ''`,
      ),
      mutability: db.prepare<[string, string, string, string], { mutability: string | null }>(
        `SELECT mutability FROM ocpp201_device_model WHERE charge_point_id = ? AND component = ? COLLATE NOCASE AND variable = ? COLLATE NOCASE AND variable_instance = ? COLLATE NOCASE AND attribute_type = 'Actual' AND evse_id = 0 AND connector_id = 0 AND component_instance = ''`,
      ),
      forgetAllBut: db.prepare<[string], unknown>("DELETE FROM ocpp201_device_model WHERE charge_point_id NOT IN (SELECT value FROM json_each(?))"),
      forgetReportsAllBut: db.prepare<[string], unknown>("DELETE FROM ocpp201_reports WHERE charge_point_id NOT IN (SELECT value FROM json_each(?))"),
    };
  }

  /** A request id not used for the station yet (ours; the station echoes it in its NotifyReport parts). */
  nextRequestId(chargePointId: string): number {
    return this.stmts.nextRequestId.get(chargePointId)!.next;
  }

  /** The gateway asked for a report (GetBaseReport); only the newest MAX_REPORTS_PER_STATION are kept. */
  requested(chargePointId: string, requestId: number, reportBase: ReportBase, atMs: number): void {
    this.stmts.requested.run(chargePointId, requestId, reportBase, atMs);
    this.stmts.trim.run(chargePointId, chargePointId);
  }

  /** The station's answer to GetBaseReport. */
  answered(chargePointId: string, requestId: number, status: string): void {
    this.stmts.answered.run(status, chargePointId, requestId);
  }

  /**
   * One NotifyReport part: its rows stored (replacing earlier ones of the same identity) up to
   * MAX_DEVICE_MODEL_ROWS per station, the part counted once (a part sent again after a lost
   * answer changes nothing but the rows it carries). What was stored and what was dropped.
   */
  storePart(chargePointId: string, part: { requestId: number; seqNo: number; last: boolean; rows: readonly Omit<DeviceModelRow, 'requestId' | 'reportedAtMs'>[] }, atMs: number): { stored: number; dropped: number; report: ReportRecord } {
    const { requestId, seqNo } = part;
    // A report the gateway did not ask for is kept too, within the same bound (the newest, and this one).
    if (this.stmts.ensureReport.run(chargePointId, requestId).changes > 0) this.stmts.trimBut.run({ chargePointId, requestId });
    let count = this.stmts.rowCount.get(chargePointId)!.n;
    let stored = 0;
    let dropped = 0;
    for (const r of part.rows) {
      const exists = this.stmts.rowExists.get(chargePointId, r.component, r.componentInstance, r.evseId, r.connectorId, r.variable, r.variableInstance, r.attributeType) !== undefined;
      if (!exists && count >= MAX_DEVICE_MODEL_ROWS) {
        dropped += 1;
        continue;
      }
      this.stmts.upsert.run({ chargePointId, ...r, persistent: bit(r.persistent), constant: bit(r.constant), requestId, reportedAtMs: atMs });
      if (!exists) count += 1;
      stored += 1;
    }
    const counted = this.stmts.partCount.get(chargePointId, requestId)!.n;
    if (counted < MAX_PARTS_PER_REPORT) this.stmts.part.run(chargePointId, requestId, seqNo);
    const parts = this.stmts.partCount.get(chargePointId, requestId)!.n;
    this.stmts.partsUpdate.run({ chargePointId, requestId, parts, finalSeqNo: part.last ? seqNo : null, stored, dropped, atMs });
    return { stored, dropped, report: reportOf(this.stmts.report.get(chargePointId, requestId)!) };
  }

  report(chargePointId: string, requestId: number): ReportRecord | null {
    const r = this.stmts.report.get(chargePointId, requestId);
    return r ? reportOf(r) : null;
  }

  /** The station's reports, newest first. */
  reports(chargePointId: string): ReportRecord[] {
    return this.stmts.reports.all(chargePointId).map(reportOf);
  }

  rows(chargePointId: string): DeviceModelRow[] {
    return this.stmts.rows.all(chargePointId).map(rowOf);
  }

  rowCount(chargePointId: string): number {
    return this.stmts.rowCount.get(chargePointId)!.n;
  }

  /** A station-wide variable's Actual value as last reported (undefined: never reported). */
  actualValue(chargePointId: string, component: string, variable: string, variableInstance = ''): string | null | undefined {
    const r = this.stmts.value.get(chargePointId, component, variable, variableInstance);
    return r === undefined ? undefined : r.value;
  }

  /** A station-wide variable's mutability as last reported (ReadOnly, WriteOnly, ReadWrite; null: not said or never reported). */
  mutability(chargePointId: string, component: string, variable: string, variableInstance = ''): string | null {
    return this.stmts.mutability.get(chargePointId, component, variable, variableInstance)?.mutability ?? null;
  }

  /** Forgets the device models and reports of stations no longer configured. */
  forgetAllBut(chargePointIds: readonly string[]): number {
    const list = JSON.stringify(chargePointIds);
    return Number(this.stmts.forgetAllBut.run(list).changes) + Number(this.stmts.forgetReportsAllBut.run(list).changes);
  }
}
