// The calls a charger sends (docs/chargers.md "What each message does"): BootNotification,
// Heartbeat, StatusNotification, Authorize, Start/StopTransaction, MeterValues, and the
// check of the charger's clock against the timestamps it sends (charger-clock.ts). Each
// handler commits its effect to SQLite (charger-sessions.ts, store/ocpp.ts) before it returns, so the answer follows the commit; what
// is sent to the charger after an answer (plans, configuration reads) is the profile
// dispatcher's (profile-dispatcher.ts).
//
// Error policy: a handler that throws answers the call with a CallError (counted, logged);
// the connection and the process carry on. A handler's reads and writes run as one unit in
// the store's write queue (store/write-queue.ts), and that unit is one SQLite transaction:
// refused half-way (a full disk at its third write), none of it is kept, so that running it
// again is running it the first time (not a repeat of itself). What it tells others (events,
// the sends after an answer) is collected while it runs and done once it committed: never
// for a unit that did not commit, never twice for one run again. While the database refuses writes
// (locked, full, I/O error) the unit waits in memory and is run again every second; the
// answer waits for it up to ocpp.storage_wait_s, then a call the charger must send again
// (Boot, Start/StopTransaction, transaction MeterValues) gets an InternalError CallError
// and the others their usual answer. Either way the unit stays queued until it is written
// (docs/chargers.md "When the store refuses writes").
import { Counter, type Registry } from 'prom-client';
import { createRPCError } from './rpc.js';
import type { Logger } from 'pino';
import type { AppContext } from '../context.js';
import type { ChargerConfig } from '../config/types.js';
import type { OcppStore, TransactionRecord } from '../store/ocpp.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { ChargerClient, ChargerState } from './charger-client.js';
import { judgeChargerClock } from './charger-clock.js';
import { chargerSessionId } from './charger-session-id.js';
import { dataTransferAnswer, type DataTransferRequest } from './data-transfer.js';
import type { ChargerSessions } from './charger-sessions.js';
import { authorizeIdTag, idTagInfo } from './id-tags.js';
import type { ReportedSecurityEvent, SecurityEventLog } from './security-events.js';
import { ENERGY_REGISTER } from './register-readings.js';
import { sampledValueRows, signedValueRows, type MeterValue } from './sampled-values.js';

/** What is sent to a charger after a call is answered (profile-dispatcher.ts). */
export interface AfterAnswer {
  booted(client: ChargerClient): void;
  transactionStarted(client: ChargerClient, connectorId: number): void;
}

/** What a reservation learns from the charger's messages (reservations.ts), inside the handler's store unit. */
export interface ReservationEvents {
  transactionStarted(chargePointId: string, t: { connectorId: number; idTag: string; reservationId: number | null; transactionId: number }, atMs: number): void;
  /** `previous`: the connector's status before this one (and when the gateway received it), when this one is not older than it. */
  /** `reservedNow`: the charger's connectors whose stored status is Reserved now (asked only when a Reserved ends). */
  connectorStatus(chargePointId: string, connectorId: number, status: string, previous: { status: string; receivedAtMs: number } | null, atMs: number, reservedNow: () => readonly number[]): void;
  /** OCPP 2.0.1 ReservationStatusUpdate: the station ended a reservation on its own (Expired, Removed). */
  stationEnded(chargePointId: string, reservationId: number, status: 'Expired' | 'Removed', atMs: number): void;
}

/** Keeps what a unit does once it committed (an event, a send after the answer). */
export type Later = (effect: () => void) => void;

/** How a handler is registered (ChargerMessageHandlers.connection). */
/**
 * `whileQueued`: the answer while the store still refuses the unit after the wait; `store:
 * false`: no unit; `durable: false`: a unit at synchronous=NORMAL; `refuse`: throws a
 * CallError to refuse the call before anything is queued (2.0.1: a station not registered).
 */
export type OnCall = <P>(action: string, handler: (params: P, later: Later) => unknown, opts?: { whileQueued?: (params: P) => unknown; store?: false; durable?: false; refuse?: () => void }) => void;

/** What every handler of one connection shares (ChargerMessageHandlers.connection). */
export interface ConnectionTools {
  readonly on: OnCall;
  readonly nowIso: () => string;
  /** Judges the charger's clock by a stamp of a message (flags its transactions while off). */
  readonly checkClock: (stampedMs: number, what: string, transactionId?: number | null) => void;
  readonly flagTransactions: (transactionId: number | null) => void;
  /** Logs the transactions the gateway closed and emits their stop once the unit committed. */
  readonly closed: (list: readonly TransactionRecord[], why: string, later: Later) => void;
  readonly log: Logger;
  readonly id: string;
  readonly sessions: ChargerSessions;
  readonly store: OcppStore;
}

/**
 * Runs `work` as one SQLite transaction (`inTransaction`), then what it kept for after the
 * commit, in order. A unit that throws (refused half-way, or wrong) rolls back and does none
 * of it: run again, it keeps it again.
 */
function unitOfWrites<T>(inTransaction: (work: () => T) => T, work: (later: Later) => T): T {
  const effects: Array<() => void> = [];
  const result = inTransaction(() => work((effect) => effects.push(effect)));
  for (const effect of effects) effect();
  return result;
}

/** What the answer got while the store still refused the handler's unit. */
const STILL_QUEUED = Symbol('still queued');

/** The unit's result, or STILL_QUEUED once waitMs passed first. */
function within<T>(done: Promise<T>, waitMs: number): Promise<T | typeof STILL_QUEUED> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<typeof STILL_QUEUED>((resolve) => (timer = setTimeout(() => resolve(STILL_QUEUED), waitMs)));
  return Promise.race([done, waited]).finally(() => clearTimeout(timer));
}

function timestampMs(value: string, path: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw createRPCError('PropertyConstraintViolation', `${path} is not a date-time`, { path });
  return ms;
}

export class ChargerMessageHandlers {
  private readonly messages: Counter<'action' | 'outcome'>;

  constructor(
    private readonly ctx: Pick<AppContext, 'config' | 'logger' | 'clock' | 'events'>,
    metrics: Registry,
    private readonly sessions: ChargerSessions,
    private readonly after: AfterAnswer,
    /** The central system's store write queue: every handler's reads and writes run in it. */
    private readonly writes: StoreWriteQueue,
    private readonly reservations: ReservationEvents,
  ) {
    this.messages = new Counter({ name: 'metergate_ocpp_messages_total', help: 'OCPP calls from chargers answered, by action and outcome (ok, error)', labelNames: ['action', 'outcome'] as const, registers: [metrics] });
  }

  /**
   * What every handler of one connection shares, whichever its OCPP version (v201/handlers.ts
   * uses it too): `on` (the unit of writes, the wait while the store refuses writes, the
   * count and the CallError policy), the charger clock check, flagging and closing transactions.
   */
  connection(client: ChargerClient, st: ChargerState): ConnectionTools {
    const { logger, clock } = this.ctx;
    const id = client.identity;
    const sessions = this.sessions;
    const store: OcppStore = sessions.store;
    const log = logger.child({ charge_point_id: id });
    // A new connection starts with what the charger queued: no run of stamps to compare with yet.
    st.clockAnchor = null;
    st.bootedAtMs = null;
    client.on('strictValidationFailure', ({ messageId, method, error }: { messageId?: string; method?: string; error: Error }) => {
      this.messages.inc({ action: method ?? 'unknown', outcome: 'invalid' });
      log.warn({ message_id: messageId, action: method, err: { message: error.message } }, 'OCPP call failed schema validation; answered with CallError');
    });

    // ocpp-rpc has checked params against the action's OCPP 1.6 schema before this runs (strict mode).
    // `whileQueued`: the answer to a call the charger will not send again (undefined: a
    // CallError, so that it does), given when the store still refuses its unit after the wait.
    // `store: false`: the handler neither reads nor writes the store (not queued behind it).
    // `durable: false`: its unit commits at synchronous=NORMAL (a heartbeat lost to a power
    // cut costs nothing); the others commit durably, as transactions must (store/ocpp.ts).
    // `later`: what the handler does once its unit committed (events, sends after the answer).
    const waitMs = this.ctx.config.ocpp.storage_wait_s * 1000;
    const on = <P>(action: string, handler: (params: P, later: Later) => unknown, opts: { whileQueued?: (params: P) => unknown; store?: false; durable?: false; refuse?: () => void } = {}) => {
      const { whileQueued } = opts;
      const inTransaction = opts.durable === false ? <T>(work: () => T) => store.atomically(work) : <T>(work: () => T) => store.durable(work);
      client.handle(action, async ({ params }) => {
        st.lastMessageAtMs = clock.now();
        try {
          opts.refuse?.();
        } catch (err) {
          this.messages.inc({ action, outcome: 'error' });
          log.warn({ action, err: { message: (err as Error).message } }, 'OCPP call answered with CallError');
          throw err;
        }
        const done =
          opts.store === false
            ? Promise.resolve().then(() => handler(params as P, (effect) => effect()))
            : this.writes.run(`${action} of ${id}`, () => unitOfWrites(inTransaction, (later) => handler(params as P, later)));
        let result: unknown;
        try {
          result = await within(done, waitMs);
        } catch (err) {
          this.messages.inc({ action, outcome: 'error' });
          log.warn({ action, err: { message: (err as Error).message } }, 'OCPP call answered with CallError');
          throw err;
        }
        if (result !== STILL_QUEUED) {
          this.messages.inc({ action, outcome: 'ok' });
          return result;
        }
        // Still refused: the unit stays queued and runs when the store takes writes again.
        done.then(
          () => log.info({ action }, 'OCPP call written now that the store takes writes again'),
          (err: unknown) => log.warn({ action, err: { message: (err as Error).message } }, 'OCPP call kept while the store refused writes could not be written'),
        );
        const answer = whileQueued?.(params as P);
        this.messages.inc({ action, outcome: 'store_refused' });
        if (answer !== undefined) {
          log.warn({ action, waited_s: waitMs / 1000 }, 'store refuses writes: call answered, its write waits in memory');
          return answer;
        }
        log.warn({ action, waited_s: waitMs / 1000 }, 'store refuses writes: call answered with CallError for the charger to send it again; its write waits in memory');
        throw createRPCError('InternalError', 'the central system cannot store this now (database busy or full); it is kept, send it again');
      });
    };

    const nowIso = () => new Date(clock.now()).toISOString();
    // A charger stamps what it measured with its own clock, and its sessions are priced by
    // those stamps. A clock off by more than clock.step_tolerance_s (ahead: any message;
    // behind: messages sent live, charger-clock.ts) is said once per change, shown on the
    // status page and /metrics, and flags the charger's transactions (their cdrs answer 422).
    // The answers to Heartbeat and BootNotification carry the gateway's time to set it by.
    const toleranceMs = (this.ctx.config.clock?.step_tolerance_s ?? 60) * 1000;
    const checkClock = (stampedMs: number, what: string, transactionId: number | null = null) => {
      const nowMs = clock.now();
      const judged = judgeChargerClock(st.clockAnchor ?? null, { receivedAtMs: nowMs, stampedAtMs: stampedMs }, toleranceMs);
      st.clockAnchor = judged.anchor;
      const { verdict } = judged;
      if (verdict.kind === 'off') {
        if (st.clockProblem !== verdict.problem) log.warn({ offset_s: Math.round(verdict.offsetMs / 1000), message: what, problem: verdict.problem }, `charger clock ${verdict.offsetMs > 0 ? 'ahead of' : 'behind'} the gateway clock: its transactions are flagged and their cdrs not priced until it sets its clock`);
        st.clockOffsetMs = verdict.offsetMs;
        st.clockProblem = verdict.problem;
        st.clockAheadMs = verdict.offsetMs > 0 ? verdict.offsetMs : null;
        flagTransactions(transactionId);
      } else if (verdict.kind === 'in-step' && st.clockProblem) {
        log.info({ message: what }, 'charger clock back in step with the gateway clock');
        st.clockOffsetMs = null;
        st.clockProblem = null;
        st.clockAheadMs = null;
      }
    };
    /** While its clock is off: the charger's open transactions and the one the message is about. */
    const flagTransactions = (transactionId: number | null) => {
      const problem = st.clockProblem;
      if (!problem) return;
      const ids = new Set(store.chargePointView(id).openTransactions.map((t) => t.transactionId));
      if (transactionId !== null) ids.add(transactionId);
      for (const txId of ids) {
        const tx = store.transaction(txId);
        if (tx && tx.chargePointId === id && store.flagClock(txId, problem)) log.warn({ transaction_id: txId, problem }, 'transaction flagged: stamped by a clock known to be wrong');
      }
    };
    const closed = (list: readonly TransactionRecord[], why: string, later: Later) => {
      for (const tx of list) {
        log.warn({ transaction_id: tx.transactionId, connector_id: tx.connectorId, meter_stop_wh: tx.meterStopWh, stopped_at: new Date(tx.stoppedAtMs!).toISOString(), reason: tx.stopInferred }, why);
        later(() => this.ctx.events.emit('charger.transaction-stopped', { chargePointId: id, connectorId: tx.connectorId, transactionId: tx.transactionId, stoppedAtMs: tx.stoppedAtMs! }));
      }
    };
    return { on, nowIso, checkClock, flagTransactions, closed, log, id, sessions, store };
  }

  /** Handles the calls of one connection of a configured charger. */
  /** `auth`: the charger's auth as in force now (its id tags follow the config file on SIGHUP, central-system.ts). */
  /**
   * `securityEvents`: the one log of both versions. A 1.6 charger with the security extension
   * ("Improved security for OCPP 1.6-J") sends SecurityEventNotification; its schema is among
   * the 1.6 schemas ocpp-rpc ships (lib/schemas/ocpp1_6.json, as the whitepaper's), so it is
   * checked strictly as every 1.6 call.
   */
  attach(client: ChargerClient, auth: () => ChargerConfig['auth'], st: ChargerState, securityEvents: SecurityEventLog): void {
    const { on, nowIso, checkClock, flagTransactions, closed, log, id, sessions, store } = this.connection(client, st);
    const { clock } = this.ctx;

    on('BootNotification', (p: { chargePointVendor: string; chargePointModel: string; chargePointSerialNumber?: string; firmwareVersion?: string }, later) => {
      store.recordBoot(id, { vendor: p.chargePointVendor, model: p.chargePointModel, serialNumber: p.chargePointSerialNumber ?? null, firmwareVersion: p.firmwareVersion ?? null }, clock.now());
      st.bootedAtMs = clock.now();
      log.info({ vendor: p.chargePointVendor, model: p.chargePointModel }, 'charger booted');
      // After the answer: a charger that (re)boots gets the plans of its upcoming targets.
      later(() => this.after.booted(client));
      return { status: 'Accepted', currentTime: nowIso(), interval: this.ctx.config.ocpp.heartbeat_interval_s };
    });

    on(
      'Heartbeat',
      () => {
        store.recordHeartbeat(id, clock.now());
        return { currentTime: nowIso() };
      },
      { whileQueued: () => ({ currentTime: nowIso() }), durable: false },
    );

    on('StatusNotification', (p: { connectorId: number; status: string; errorCode: string; info?: string; timestamp?: string }, later) => {
      const nowMs = clock.now();
      const atMs = p.timestamp ? timestampMs(p.timestamp, 'timestamp') : nowMs;
      if (p.timestamp) checkClock(atMs, 'StatusNotification');
      // The status before this one, from the store: a change that spans a gateway restart is seen too.
      const previous = store.connectorStatus(id, p.connectorId);
      store.recordStatus(id, { connectorId: p.connectorId, status: p.status, errorCode: p.errorCode, info: p.info ?? null, atMs }, nowMs);
      // A late status (older than the stored one) says nothing about the reservations now.
      if (!previous || atMs >= previous.atMs) this.reservations.connectorStatus(id, p.connectorId, p.status, previous, nowMs, () => store.connectorsIn(id, 'Reserved'));
      // Available after a reboot: what was open on the connector before it, the charger lost.
      if (p.status === 'Available' && p.connectorId > 0 && st.bootedAtMs) {
        closed(sessions.closeOpen(id, p.connectorId, st.bootedAtMs, 'reboot', nowMs), 'transaction closed by the gateway: the connector is Available after the charger rebooted, and it never sent its StopTransaction', later);
      }
      later(() => this.ctx.events.emit('charger.connector-status', { chargePointId: id, connectorId: p.connectorId, status: p.status, errorCode: p.errorCode, atMs, previous }));
      return {};
    }, { whileQueued: () => ({}) });

    // A vendor's own message (data-transfer.ts): any vendor but ours gets UnknownVendorId.
    on(
      'SecurityEventNotification',
      (p: ReportedSecurityEvent, later) => {
        later(securityEvents.record(id, '1.6', p, clock.now(), log));
        return {};
      },
      { whileQueued: () => ({}) },
    );

    on('DataTransfer', (p: DataTransferRequest) => {
      const answer = dataTransferAnswer(p);
      log.info({ vendor_id: p.vendorId.slice(0, 255), message_id: p.messageId?.slice(0, 50), status: answer.status }, 'DataTransfer from the charger answered');
      return answer;
    }, { store: false });

    on('Authorize', (p: { idTag: string }) => ({ idTagInfo: idTagInfo(auth(), p.idTag) }), { store: false });

    on('StartTransaction', (p: { connectorId: number; idTag: string; meterStart: number; timestamp: string; reservationId?: number }, later) => {
      const status = authorizeIdTag(auth(), p.idTag);
      const startedAtMs = timestampMs(p.timestamp, 'timestamp');
      const { transaction, repeated, closed: before } = sessions.startTransaction(
        { chargePointId: id, connectorId: p.connectorId, idTag: p.idTag, meterStartWh: p.meterStart, startedAtMs, reservationId: p.reservationId ?? null, idTagStatus: status },
        clock.now(),
      );
      checkClock(startedAtMs, 'StartTransaction', transaction.transactionId);
      if (!repeated) flagTransactions(transaction.transactionId);
      // A transaction on a reservation ends it (OCPP 1.6 5.13); the answer stays the usual one.
      if (!repeated) this.reservations.transactionStarted(id, { connectorId: p.connectorId, idTag: p.idTag, reservationId: p.reservationId ?? null, transactionId: transaction.transactionId }, clock.now());
      closed(before, 'transaction closed by the gateway: a new transaction started on its connector, and the charger never sent its StopTransaction', later);
      log.info({ transaction_id: transaction.transactionId, connector_id: p.connectorId, repeated, id_tag_status: transaction.idTagStatus, session: chargerSessionId(id, transaction.transactionId) }, repeated ? 'StartTransaction repeated: same transaction answered again' : 'transaction started');
      // After the answer (the charger needs the transactionId): the plan as a TxProfile for it
      // (the connector's default target is stored first, when it applies).
      if (transaction.idTagStatus === 'Accepted') {
        later(() => {
          this.ctx.events.emit('charger.transaction-started', { chargePointId: id, connectorId: p.connectorId, transactionId: transaction.transactionId, startedAtMs: transaction.startedAtMs });
          this.after.transactionStarted(client, p.connectorId);
        });
      }
      return { transactionId: transaction.transactionId, idTagInfo: idTagInfo(auth(), transaction.idTag, transaction.idTagStatus) };
    });

    // Values of a transaction are sent again by the charger (OCPP 1.6 section 3.7); others are not.
    on('MeterValues', (p: { connectorId: number; transactionId?: number; meterValue: MeterValue[] }, later) => {
      const rows = sampledValueRows(p.meterValue, 'meterValue');
      if (rows.length > 0) checkClock(Math.max(...rows.map((r) => r.sampledAtMs)), 'MeterValues', p.transactionId ?? null);
      // Signed values (OCMF, ...) are kept raw with the transaction for its cdr (signed-meter/).
      const known = sessions.addMeterValues(id, p.connectorId, p.transactionId ?? null, rows, clock.now(), signedValueRows(p.meterValue));
      if (!known) log.warn({ transaction_id: p.transactionId }, 'MeterValues for a transaction this charger does not have; values kept without it');
      else if (p.transactionId !== undefined && rows.some((r) => r.measurand === ENERGY_REGISTER)) {
        const transactionId = p.transactionId;
        later(() => this.ctx.events.emit('charger.energy-measured', { chargePointId: id, connectorId: p.connectorId, transactionId }));
      }
      return {};
    }, { whileQueued: (p) => (p.transactionId === undefined ? {} : undefined) });

    on('StopTransaction', (p: { transactionId: number; meterStop: number; timestamp: string; idTag?: string; reason?: string; transactionData?: MeterValue[] }, later) => {
      const rows = sampledValueRows(p.transactionData ?? [], 'transactionData');
      const stoppedAtMs = timestampMs(p.timestamp, 'timestamp');
      checkClock(stoppedAtMs, 'StopTransaction', p.transactionId);
      const nowMs = clock.now();
      // What the session came to is committed with the stop (ChargerSessions' onStopped, ocpp/session-outcomes.ts).
      const outcome = sessions.stopTransaction(
        { chargePointId: id, transactionId: p.transactionId, meterStopWh: p.meterStop, stoppedAtMs, reason: p.reason ?? null, idTag: p.idTag ?? null },
        rows,
        nowMs,
        signedValueRows(p.transactionData ?? []),
      );
      if (outcome === 'unknown') {
        // Answered so the charger drops it from its queue; nothing is stored.
        log.warn({ transaction_id: p.transactionId }, 'StopTransaction for a transaction this charger does not have; nothing stored');
      } else {
        log.info({ transaction_id: p.transactionId, repeated: outcome === 'repeated', session: chargerSessionId(id, p.transactionId) }, 'transaction stopped');
        const tx = outcome === 'stopped' ? store.transaction(p.transactionId) : undefined;
        if (tx) later(() => this.ctx.events.emit('charger.transaction-stopped', { chargePointId: id, connectorId: tx.connectorId, transactionId: tx.transactionId, stoppedAtMs }));
      }
      return p.idTag === undefined ? {} : { idTagInfo: idTagInfo(auth(), p.idTag) };
    });
  }
}
