// An OCPP 2.0.1 station's device model (ocpp/v201/device-model.ts), with a cpo token:
//   GET  /api/v1/chargers/:charge_point_id/device-model          what it reported, and its reports
//   POST /api/v1/chargers/:charge_point_id/device-model/report   asks for a report (GetBaseReport)
// A 1.6 charger has none: 409 naming get-configuration, its 1.6 form. The POST's outcomes are
// the operator operations' (charger-operations.ts answered()): 409 not connected, 502 a
// CallError, 504 no answer. The report itself comes after the answer, in NotifyReport parts:
// the GET shows it once its parts are stored (`complete`).
import type { Router } from 'express';
import { BOOT_REPORT_BASE } from '../../ocpp/v201/device-model.js';
import { DeviceModelStore, MAX_DEVICE_MODEL_ROWS, type DeviceModelRow, type ReportBase, type ReportRecord } from '../../store/ocpp201-device-model.js';
import { requireToken } from '../auth.js';
import type { RouteDeps } from '../deps.js';
import { HttpProblem, methodNotAllowed } from '../errors.js';
import { formatUtc } from '../timestamps.js';
import { fieldErrors, schemaValidator } from '../validate.js';
import { answered, configuredChargePointId, OPERATIONS_BASE, optionalJsonBody } from './charger-operations.js';

type Json = Record<string, unknown>;

const at = (ms: number | null) => (ms === null ? null : formatUtc(ms));

export function reportView(r: ReportRecord): Json {
  return {
    request_id: r.requestId,
    report_base: r.reportBase,
    requested_at: at(r.requestedAtMs),
    status: r.status,
    parts: r.parts,
    complete: r.completedAtMs !== null,
    completed_at: at(r.completedAtMs),
    last_part_at: at(r.lastPartAtMs),
    rows_stored: r.rowsStored,
    rows_dropped: r.rowsDropped,
  };
}

/** The rows of one variable (its attributes) as one entry, in the 2.0.1 shape with snake-case names. Pure. */
export function variablesView(rows: readonly DeviceModelRow[]): Json[] {
  const out: Json[] = [];
  let key = '';
  let current: { attributes: Json[] } & Json = { attributes: [] };
  for (const r of rows) {
    const k = JSON.stringify([r.component, r.componentInstance, r.evseId, r.connectorId, r.variable, r.variableInstance]);
    if (k !== key) {
      key = k;
      current = {
        component: { name: r.component, ...(r.componentInstance ? { instance: r.componentInstance } : {}), ...(r.evseId > 0 ? { evse: { id: r.evseId, ...(r.connectorId > 0 ? { connector_id: r.connectorId } : {}) } } : {}) },
        variable: { name: r.variable, ...(r.variableInstance ? { instance: r.variableInstance } : {}) },
        attributes: [],
        characteristics: r.characteristicsJson === null ? null : (JSON.parse(r.characteristicsJson) as Json),
        reported_at: formatUtc(r.reportedAtMs),
      };
      out.push(current);
    }
    current.attributes.push({ type: r.attributeType, value: r.value, mutability: r.mutability, persistent: r.persistent, constant: r.constant });
    if (r.reportedAtMs > Date.parse(String(current.reported_at))) current.reported_at = formatUtc(r.reportedAtMs);
  }
  return out;
}

export function registerDeviceModelRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cpo' });
  const store = new DeviceModelStore(deps.db);
  const base = `${OPERATIONS_BASE}/device-model`;

  const station = (chargePointId: string) => {
    configuredChargePointId(deps, chargePointId);
    const cs = deps.centralSystem?.();
    const version = cs?.operations?.ocppVersion(chargePointId) ?? null;
    if (version === '1.6') throw new HttpProblem(409, `charger ${chargePointId} speaks OCPP 1.6: it has configuration keys, not a device model (POST /api/v1/chargers/${chargePointId}/get-configuration)`);
    return { cs, version };
  };

  router.get(base, auth, (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    const { version } = station(chargePointId);
    const rows = store.rows(chargePointId);
    res.set('Cache-Control', 'no-store').json({
      charge_point_id: chargePointId,
      ocpp_version: version,
      rows: rows.length,
      max_rows: MAX_DEVICE_MODEL_ROWS,
      reports: store.reports(chargePointId).map(reportView),
      variables: variablesView(rows),
    });
  });
  router.all(base, methodNotAllowed(['GET']));

  const reportPath = `${base}/report`;
  router.post(reportPath, auth, ...optionalJsonBody(deps.config.http.body_limit_bytes), async (req, res) => {
    const chargePointId = String(req.params.charge_point_id);
    const validate = schemaValidator('DeviceModelReportRequest');
    const body = (req.body ?? {}) as Json;
    if (!validate(body)) throw new HttpProblem(422, 'the request body does not match the DeviceModelReportRequest schema', { errors: fieldErrors(validate) });
    const { cs } = station(chargePointId);
    const deviceModels = cs?.deviceModels;
    if (!deviceModels) throw new HttpProblem(503, 'the OCPP central system is not running yet; try again', { headers: { 'Retry-After': '1' } });
    const reportBase = (body.report_base as ReportBase | undefined) ?? BOOT_REPORT_BASE;
    const answer = answered(await deviceModels.ask(chargePointId, reportBase, 'operator'), chargePointId, 'GetBaseReport');
    res.set('Cache-Control', 'no-store').json({ charge_point_id: chargePointId, action: 'GetBaseReport', request: { requestId: answer.requestId, reportBase }, answer, device_model: `/api/v1/chargers/${chargePointId}/device-model` });
  });
  router.all(reportPath, methodNotAllowed(['POST']));
}
