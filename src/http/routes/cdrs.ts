// /api/v1/cdrs: the contract's two pricing endpoints.
import type { Request, Response, Router } from 'express';
import { sessionMaxEdgeGapMs } from '../../config/derived.js';
import type { EnergyReading } from '../../pricing/session-cost.js';
import { isChargerSessionId } from '../../ocpp/charger-session-id.js';
import { suspectReadings } from '../../store/clock-steps.js';
import { OcppStore } from '../../store/ocpp.js';
import { SignedValueStore } from '../../store/signed-values.js';
import { ocpiSignedData, verificationOf } from '../../signed-meter/carried.js';
import { carriesSignedData, transactionSignedData, type TransactionSignedData } from '../../signed-meter/transaction-signed-data.js';
import type { RouteDeps } from '../deps.js';
import { requireToken } from '../auth.js';
import { jsonBody } from '../body.js';
import { HttpProblem, methodNotAllowed, type FieldError } from '../errors.js';
import { ProblemList } from '../problem-list.js';
import { assertReadingCap, collectMeterReadings } from '../readings-input.js';
import { assertReadingsUsable, collectMarket, localReadingsInWindow, ownReadingsInWindow, priceReadings, readingsUsableErrors, type RequestPowerMarket } from '../session-pricing.js';
import { formatUtc, subMillisecondNs } from '../timestamps.js';
import { fieldErrors, shellValidator } from '../validate.js';
import { marketTariffs } from '../../pricing/market-tariffs.js';
import { cdrCostFields } from '../cdr-cost.js';
import { cdrIncludeParts } from '../cdr-include.js';

interface MeterReadingsRequest {
  power_market: RequestPowerMarket;
  meter_readings: unknown[];
  cpo_transaction_id?: string;
}

export function registerCdrsRoutes(router: Router, deps: RouteDeps): void {
  const auth = requireToken(deps, { scheme: 'Token', type: 'cdrs' });
  const body = jsonBody(deps.config.http.body_limit_bytes);
  // Items are checked and parsed in one pass by collectMeterReadings (same schema, same messages).
  const validate = shellValidator('MeterReadingsRequest', 'meter_readings');
  const { max_readings: maxReadings } = deps.config.http;
  const tariffOf = marketTariffs(deps.config.tariffs);

  // Registered before /:cpo_transaction_id, so `meter_readings` is never taken for an id.
  const priceMeterReadings = [
    auth,
    ...body,
    (req: Request, res: Response) => {
      const include = cdrIncludeParts(req.query.include);
      assertReadingCap(req.body, maxReadings);
      // Every independent mistake in one 422: the schema, the market, the readings.
      const problems = new ProblemList();
      if (!validate(req.body)) problems.add('the request body does not match the MeterReadingsRequest schema', fieldErrors(validate));
      const input = (typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) ? req.body : {}) as Partial<MeterReadingsRequest>;
      const marketErrors: FieldError[] = [];
      const market = input.power_market && !problems.named('power_market') ? collectMarket(deps.priceAccess, input.power_market, marketErrors) : undefined;
      problems.add('the power market is not one this gateway prices', marketErrors);
      const readingErrors: FieldError[] = [];
      const readings = Array.isArray(input.meter_readings) && !problems.named('meter_readings') ? collectMeterReadings(input.meter_readings, readingErrors) : null;
      problems.add('some meter readings are invalid', readingErrors);
      if (readings) problems.add('the meter readings cannot be priced', readingsUsableErrors(readings));
      problems.throwIfAny('request');
      if (!market || !readings || !input.meter_readings) throw new Error('a request passed every check without a market or readings');
      // The tariff in force when the session started (its first reading).
      const priced = priceReadings(deps.priceAccess, market, readings, tariffOf(market.code, readings[0].timestampMs));
      const last = input.meter_readings[input.meter_readings.length - 1] as { timestamp: string };
      const endDateTime = formatUtc(priced.endMs, subMillisecondNs(last.timestamp));
      res.set('Cache-Control', 'no-store').json({ currency: priced.currency, end_date_time: endDateTime, ...cdrCostFields(priced, market.code, include) });
    },
  ];
  router.get('/api/v1/cdrs/meter_readings', ...priceMeterReadings);
  router.post('/api/v1/cdrs/meter_readings', ...priceMeterReadings);
  router.all('/api/v1/cdrs/meter_readings', methodNotAllowed(['GET', 'POST']));

  const transactions = new OcppStore(deps.db);
  const signedValues = new SignedValueStore(deps.db);
  /** A stopped charger session's signed values and their verification (null: not a charger session, or still open). */
  const signedOf = (sessionId: string): TransactionSignedData | null => {
    const m = /^ocpp:(.+):(\d{1,15})$/.exec(sessionId);
    return m ? transactionSignedData(transactions, signedValues, deps.config.chargers, Number(m[2])) : null;
  };
  // Reads only (GETs change nothing): the price is computed from what is stored, and
  // last_updated is the session's, moved by whatever changed what the price is made of
  // (its content, late charger values before the cut-off, a corrected price: docs/http-api.md).
  router.get('/api/v1/cdrs/:cpo_transaction_id', auth, (req, res) => {
    const asked = req.params.cpo_transaction_id as string;
    const include = cdrIncludeParts(req.query.include);
    // A charger session stored before migration 150 is still found by its old id, unless an operator's session took it since.
    const id = deps.sessions.get(asked) ? asked : (deps.sessions.movedTo(asked) ?? asked);
    const session = deps.sessions.get(id, true);
    if (!session) throw new HttpProblem(404, `no session with cpo_transaction_id "${asked.slice(0, 100)}"`);
    if (session.status !== 'completed' || session.endMs === null) {
      throw new HttpProblem(409, `session "${asked.slice(0, 100)}" is not completed yet; its price is available once it is completed (by a PUT with status completed, or by the charger's StopTransaction for a charger session)`);
    }
    if (isChargerSessionId(id)) assertChargerClockTrusted(transactions, id);
    const market = deps.priceAccess.market(session.marketArea);
    if (!market) throw new HttpProblem(422, `the session's market area ${session.marketArea} is no longer known`);
    // The cost covers exactly start..end: readings beyond are cut at the edges.
    let readings: readonly EnergyReading[];
    if (session.readings !== null) {
      assertReadingsUsable(session.readings);
      readings = ownReadingsInWindow(session.readings, session.startMs, session.endMs);
    } else {
      const stored = deps.sessions.localMeterReadingsAround(session.resourceId!, session.startMs, session.endMs);
      assertReadingsUsable(stored, 'meter_readings', false);
      assertNoClockSuspect(deps, session.resourceId!, stored);
      readings = localReadingsInWindow(stored, session.resourceId!, session.startMs, session.endMs, sessionMaxEdgeGapMs(deps.config), deps.clock.now());
    }
    // The tariff in force at the session's stated start.
    const priced = priceReadings(deps.priceAccess, market, readings, tariffOf(market.code, session.startMs));
    // Asked for (?include=signed_data): a charger session's signed values and what they came to.
    const signed = include.has('signed_data') && isChargerSessionId(id) ? signedOf(id) : null;
    const signedFields = signed && carriesSignedData(signed) ? { ...optional('signed_data', ocpiSignedData(signed.verification)), signed_data_verification: verificationOf(signed.verification) } : {};
    // A session's price can change (corrected prices, late readings): never cache it.
    res.set('Cache-Control', 'no-store').json({
      currency: priced.currency,
      start_date_time: formatUtc(session.startMs, session.startSubMsNs),
      end_date_time: formatUtc(session.endMs, session.endSubMsNs),
      id: session.cdrId,
      last_updated: formatUtc(session.lastUpdatedMs),
      ...cdrCostFields(priced, market.code, include),
      ...signedFields,
    });
  });
  router.all('/api/v1/cdrs/:cpo_transaction_id', methodNotAllowed(['GET']));

  // The session's signed documents in the XML the S.A.F.E. transparency software opens.
  router.get('/api/v1/cdrs/:cpo_transaction_id/signed', auth, async (req, res) => {
    const asked = req.params.cpo_transaction_id as string;
    const id = deps.sessions.get(asked) ? asked : (deps.sessions.movedTo(asked) ?? asked);
    const session = deps.sessions.get(id, true);
    if (!session) throw new HttpProblem(404, `no session with cpo_transaction_id "${asked.slice(0, 100)}"`);
    if (session.status !== 'completed' || session.endMs === null) throw new HttpProblem(409, `session "${asked.slice(0, 100)}" is not completed yet; its signed meter values are served once it is completed`);
    const signed = isChargerSessionId(id) ? signedOf(id) : null;
    if (!signed || signed.verification.values.length === 0) throw new HttpProblem(404, `session "${asked.slice(0, 100)}" has no signed meter values (only charger sessions whose charger sent SignedData values have them)`);
    const { transparencyXml } = await import('../../signed-meter/transparency-xml.js');
    res.set('Cache-Control', 'no-store').type('application/xml').set('Content-Disposition', `attachment; filename="${id.replace(/[^A-Za-z0-9._-]/g, '_')}.xml"`).send(transparencyXml(signed.transactionId, signed.verification));
  });
  router.all('/api/v1/cdrs/:cpo_transaction_id/signed', methodNotAllowed(['GET']));
}

/**
 * A session priced from the local meter is not priced from readings whose time a clock
 * step made uncertain (readings.clock_suspect, docs/clock-safety.md): 422 saying which.
 */
function assertNoClockSuspect(deps: RouteDeps, resourceId: string, stored: readonly EnergyReading[]): void {
  if (stored.length === 0) return;
  const s = suspectReadings(deps.db, resourceId, stored[0].timestampMs, stored[stored.length - 1].timestampMs);
  if (s.count === 0) return;
  throw new HttpProblem(
    422,
    `the local meter ${resourceId} has ${s.count} reading(s) between ${formatUtc(s.firstMs!)} and ${formatUtc(s.lastMs!)} flagged clock_suspect: the gateway's trusted clock stepped by more than clock.step_tolerance_s then, so their times cannot be placed for sure; this session is not priced from them (docs/clock-safety.md)`,
  );
}

/**
 * A charger session is not priced while its charger's clock was known to be off (the
 * central system flags its transactions, docs/chargers.md): its times cannot be placed
 * in the right price periods. 422 saying why, as for a meter's clock_suspect readings.
 */
function assertChargerClockTrusted(transactions: OcppStore, sessionId: string): void {
  const m = /^ocpp:(.+):(\d{1,15})$/.exec(sessionId);
  const tx = m ? transactions.transaction(Number(m[2])) : undefined;
  if (!tx?.clockProblem) return;
  throw new HttpProblem(422, `charger ${tx.chargePointId} stamped transaction ${tx.transactionId} by a clock known to be wrong: ${tx.clockProblem}; its times cannot be placed in the right price periods, so this session is not priced (docs/chargers.md)`, {
    errors: [{ path: 'cpo_transaction_id', message: tx.clockProblem }],
  });
}

/** `{ [key]: value }`, or nothing when value is null. */
function optional<K extends string, V>(key: K, value: V | null): Partial<Record<K, V>> {
  return value === null ? {} : ({ [key]: value } as Record<K, V>);
}
