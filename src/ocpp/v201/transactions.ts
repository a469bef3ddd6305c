// OCPP 2.0.1 transactions (Part 2, block E: E01-E08 start and stop points, E12 offline
// queued events): TransactionEvent Started/Updated/Ended onto the same transactions and
// sessions as 1.6 StartTransaction/MeterValues/StopTransaction (charger-sessions.ts), so a
// 2.0.1 session is stored, thinned, priced (GET /api/v1/cdrs) and counted by the planner
// exactly as a 1.6 one.
// - The station names its transaction (a string up to 36 characters); the gateway keeps its
//   own integer id for it (store/ocpp201-transactions.ts, migration 260): the session is
//   `ocpp:<cp>:<integer>`, as 1.6's.
// - The EVSE is the stored connector (provisioning.ts). `evse` comes with the first event
//   of a transaction (E01.FR?: only then); the first event the gateway sees creates the
//   transaction (normally Started; an offline queue sends them in seqNo order).
// - The register at the edges: 2.0.1 has no meterStart/meterStop; the energy register in the
//   Started event's meterValue is the start (without one, the first value that comes is:
//   charger-sessions.ts meterStartFound), the one in the Ended event the stop (without one,
//   the last value stored, as a stop the gateway infers).
// - A repeated event (a lost answer, the station sends it again) changes nothing: values are
//   stored by their own timestamps, a repeated start or stop is recognised. seqNo is kept.
// - offline: true (queued while the station was offline) is stored the same; its stamps are
//   old on purpose, so they are not taken as the station's clock being behind.
// - A transaction that starts (its first event, not Ended, its token not Invalid) is
//   charger.transaction-started as a 1.6 StartTransaction is: the EVSE's default target, the
//   fuse controller's sharing, and after the answer the plan as a TxProfile for it
//   (profile-dispatcher.ts through limit-client.ts, the station's transactionId in it).
import { createRPCError } from '../rpc.js';
import { chargerSessionId } from '../charger-session-id.js';
import { ENERGY_REGISTER, registerAtInstant } from '../register-readings.js';
import { idTokenInfo, type IdToken201 } from './authorization.js';
import { boundedId, registeredOnly, type Connection201 } from './connection.js';
import { registerWh, sampledValueRows201, signedValueRows201, type MeterValue201 } from './meter-values.js';

/** OCPP 2.0.1 IdentifierStringType of transactionId: at most 36 characters (the schema says so). */
interface TransactionEvent201 {
  readonly eventType: 'Started' | 'Updated' | 'Ended';
  readonly timestamp: string;
  readonly triggerReason: string;
  readonly seqNo: number;
  readonly offline?: boolean;
  readonly reservationId?: number;
  readonly transactionInfo: { readonly transactionId: string; readonly chargingState?: string; readonly stoppedReason?: string };
  readonly idToken?: IdToken201;
  readonly evse?: { readonly id: number; readonly connectorId?: number };
  readonly meterValue?: readonly MeterValue201[];
}

export function registerTransactions(c: Connection201): void {
  const { tools, ctx, transactions } = c;
  const { checkClock, flagTransactions, closed, log, id, sessions, store } = tools;
  const { clock } = ctx;

  registeredOnly(c)(
    'TransactionEvent',
    (p: TransactionEvent201, later) => {
      const nowMs = clock.now();
      const eventAtMs = Date.parse(p.timestamp);
      if (!Number.isFinite(eventAtMs)) throw createRPCError('PropertyConstraintViolation', 'timestamp is not a date-time', { path: 'timestamp' });
      const seqNo = boundedId(p.seqNo, 'seqNo');
      const rows = sampledValueRows201(p.meterValue ?? [], 'meterValue');
      // Signed values (OCMF, ...) kept with the transaction as 1.6's are, for its cdr (signed-meter/).
      const signed = signedValueRows201(p.meterValue ?? []);
      const chargerTxId = p.transactionInfo.transactionId;
      // The token's status, with its group when it has one (C09), as Authorize answers it.
      const info = p.idToken ? idTokenInfo(c.auth(), p.idToken) : null;
      const idTokenStatus = info === null ? null : info.status;
      const answer = info === null ? {} : { idTokenInfo: info };

      let ref = transactions.get(id, chargerTxId);
      let repeatedStart = false;
      if (!ref) {
        if (!p.evse) {
          // Its first event had the EVSE; without it the gateway cannot place the transaction. Answered so the station drops it.
          log.warn({ charger_transaction_id: chargerTxId.slice(0, 36), event_type: p.eventType, seq_no: seqNo }, 'TransactionEvent for a transaction this charger has not started here, without evse; nothing stored');
          return answer;
        }
        const evseId = boundedId(p.evse.id, 'evse.id');
        const start = p.eventType === 'Started' ? registerWh(rows, 'first') : null;
        const { transaction, repeated, closed: before } = sessions.startTransaction(
          {
            chargePointId: id,
            connectorId: evseId,
            idTag: p.idToken?.idToken ?? '',
            meterStartWh: start?.wh ?? 0,
            startedAtMs: eventAtMs,
            reservationId: p.reservationId ?? null,
            idTagStatus: idTokenStatus ?? 'NoAuthorization',
          },
          nowMs,
        );
        repeatedStart = repeated;
        // A start with the same key as a stored 1.6-style one (same EVSE, token, register and instant): the same transaction.
        if (!transactions.chargerTransactionId(transaction.transactionId)) transactions.insert(id, chargerTxId, transaction.transactionId, evseId, seqNo, start === null);
        ref = transactions.get(id, chargerTxId) ?? { transactionId: transaction.transactionId, evseId, lastSeqNo: seqNo, meterStartPending: start === null };
        closed(before, 'transaction closed by the gateway: a new transaction started on its EVSE, and the station never sent its TransactionEvent Ended', later);
        // After the answer (as 1.6 after StartTransaction's): planned, shared and limited as any car.
        if (!repeated && p.eventType !== 'Ended' && idTokenStatus !== 'Invalid') {
          later(() => {
            ctx.events.emit('charger.transaction-started', { chargePointId: id, connectorId: evseId, transactionId: transaction.transactionId, startedAtMs: transaction.startedAtMs });
            c.transactionStarted(evseId);
          });
        }
        log.info({ transaction_id: transaction.transactionId, charger_transaction_id: chargerTxId, evse_id: evseId, event_type: p.eventType, offline: p.offline === true, id_token_status: idTokenStatus, session: chargerSessionId(id, transaction.transactionId) }, 'transaction started');
      } else {
        transactions.seenSeqNo(ref.transactionId, seqNo);
      }
      const transactionId = ref.transactionId;
      // The event naming a reservation (the first one authorized by its idToken, E03.FR.04: not always the Started) ends it, as a 1.6 StartTransaction does.
      if (p.reservationId !== undefined && !repeatedStart) {
        c.reservations.transactionStarted(id, { connectorId: ref.evseId, idTag: p.idToken?.idToken ?? '', reservationId: boundedId(p.reservationId, 'reservationId'), transactionId }, nowMs);
      }
      if (!p.offline) checkClock(eventAtMs, `TransactionEvent ${p.eventType}`, transactionId);
      if (!repeatedStart) flagTransactions(transactionId);

      if (ref.meterStartPending) {
        const first = registerWh(rows, 'first');
        if (first) {
          sessions.meterStartFound(transactionId, first.wh, nowMs);
          transactions.meterStartKnown(transactionId);
        }
      }

      if (p.eventType === 'Ended') {
        const tx = store.transaction(transactionId)!;
        const end = registerWh(rows);
        const outcome = sessions.stopTransaction(
          { chargePointId: id, transactionId, meterStopWh: end?.wh ?? lastRegisterWh(c, transactionId, tx.meterStartWh), stoppedAtMs: eventAtMs, reason: p.transactionInfo.stoppedReason ?? null, idTag: p.idToken?.idToken ?? null },
          rows,
          nowMs,
          signed,
        );
        log.info({ transaction_id: transactionId, charger_transaction_id: chargerTxId, repeated: outcome === 'repeated', offline: p.offline === true, stopped_reason: p.transactionInfo.stoppedReason, session: chargerSessionId(id, transactionId) }, 'transaction stopped');
        if (outcome === 'stopped') {
          const stopped = store.transaction(transactionId)!;
          later(() => ctx.events.emit('charger.transaction-stopped', { chargePointId: id, connectorId: stopped.connectorId, transactionId, stoppedAtMs: stopped.stoppedAtMs! }));
        }
      } else if (rows.length > 0 || signed.length > 0) {
        sessions.addMeterValues(id, ref.evseId, transactionId, rows, nowMs, signed);
      }
      return answer;
    },
  );

  registeredOnly(c)(
    'MeterValues',
    (p: { evseId: number; meterValue: MeterValue201[] }) => {
      // 2.0.1 sends a transaction's values in its TransactionEvents; these belong to none (kept a day, as 1.6's).
      const evseId = boundedId(p.evseId, 'evseId');
      sessions.addMeterValues(id, evseId, null, sampledValueRows201(p.meterValue, 'meterValue'), clock.now(), signedValueRows201(p.meterValue));
      return {};
    },
    { whileQueued: () => ({}) },
  );
}

/** The register at the transaction's last instant with one stored, else its start: the stop of an Ended event without a register value. */
function lastRegisterWh(c: Connection201, transactionId: number, meterStartWh: number): number {
  const { store } = c.tools;
  const at = store.lastInstant(transactionId, ENERGY_REGISTER);
  const kwh = at === null ? null : registerAtInstant(store.valuesAt(transactionId, ENERGY_REGISTER, at));
  return kwh === null ? meterStartWh : Math.max(meterStartWh, Math.round(kwh * 1000));
}
