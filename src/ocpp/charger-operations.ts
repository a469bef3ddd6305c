// The operator's calls to a charger (docs/chargers.md "Operator operations"): one OCPP 1.6
// call to one configured charger, its outcome as a typed value the HTTP API and the CLI
// (through the HTTP API) turn into an answer. The OCPP requests themselves are built by the
// callers from validated input; they are checked here once more against the official
// schema (validator.ts), so a request the charger would have to refuse is never sent.
//
// Safety first (docs/chargers.md "Safety first on the wire"): an operator's call asked for
// while a fuse-protecting call to the charger is in flight or waiting for its lane
// (call-lanes.ts) is not sent: 'fuse-call-in-flight' (HTTP 409, try again in a few seconds).
// The gateway's own calls through here (the local list after a boot, a ClearCache owed) wait
// in the ordinary lane instead; the remote-start-stop strategy's RemoteStart/Stop take the
// safety lane themselves (profile-dispatcher.ts), so they are neither refused nor kept waiting.
//
// Error policy: call() never throws and never hangs. A charger that is not configured or not
// connected is said at once; one that does not answer within ocpp.operation_timeout_s
// (waiting behind another call of ours in its lane included) is 'timeout'; its CallError is returned as
// it came, an answer that fails the schema is 'invalid-answer'; anything else (the socket
// closed mid-call) is 'failed'. Each outcome is counted
// (metergate_ocpp_operations_total) and logged without the request's values.
import { Counter, type Registry } from 'prom-client';
import type { AppContext } from '../context.js';
import type { ChargerConfig } from '../config/types.js';
import type { LanedChargerClient } from './call-lanes.js';
import type { CallLane } from './charger-client.js';
import { ocpp16Validator } from './validator.js';
import { operationForm201, type FormContext, type OperationForm201 } from './v201/operation-forms.js';
import './v201/operations/index.js';

/** The OCPP 1.6 actions an operator may send. */
export const OPERATOR_ACTIONS = [
  'RemoteStartTransaction',
  'RemoteStopTransaction',
  'Reset',
  'UnlockConnector',
  'ChangeAvailability',
  'TriggerMessage',
  'ChangeConfiguration',
  'GetConfiguration',
  'ClearCache',
  'GetCompositeSchedule',
  'ClearChargingProfile',
  'DataTransfer',
  'SendLocalList',
  'GetLocalListVersion',
  'ReserveNow',
  'CancelReservation',
] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

export type OperationOutcome =
  | { readonly kind: 'answered'; readonly answer: Record<string, unknown> }
  /** The charger answered with a CallError (OCPP-J 4.2.3): its code, description and details as sent. */
  | { readonly kind: 'call-error'; readonly code: string; readonly description: string; readonly details: unknown }
  | { readonly kind: 'unknown-charger' }
  | { readonly kind: 'not-connected'; readonly lastMessageAtMs: number | null }
  | { readonly kind: 'timeout'; readonly timeoutMs: number }
  /** The charger answered, but its answer fails the schema of the version it speaks (ocpp-rpc strict mode refused it): the action sent, in that version. */
  | { readonly kind: 'invalid-answer'; readonly message: string; readonly ocppVersion: '1.6' | '2.0.1'; readonly action: string }
  /** The request fails the OCPP 1.6 schema: not sent. */
  | { readonly kind: 'invalid-request'; readonly message: string }
  /** The exchange broke off (connection closed mid-call). */
  | { readonly kind: 'failed'; readonly message: string }
  /** An operator's call asked for while a fuse-protecting call (`action`) to the charger is in flight: not sent. */
  | { readonly kind: 'fuse-call-in-flight'; readonly action: string }
  /**
   * The charger speaks OCPP 2.0.1, and this operation has no 2.0.1 form in the gateway (docs/chargers.md
   * "OCPP 2.0.1"), or this request has no 2.0.1 equivalent (`reason`, from its form in v201/operations/): not sent.
   */
  | { readonly kind: 'not-in-protocol'; readonly ocppVersion: '2.0.1'; readonly reason?: string };

/** Who asks for a call, and in which lane it goes (call-lanes.ts). */
export interface OperationOptions {
  /**
   * 'operator' (the default: HTTP API, CLI, status page): refused with 'fuse-call-in-flight'
   * while a safety call to the charger is pending. 'gateway': the gateway's own call, which
   * waits for its lane instead.
   */
  readonly by?: 'operator' | 'gateway';
  /** 'safety' only for the gateway's calls that put a limit in force (never refused for a safety call: it waits for the previous one). */
  readonly lane?: CallLane;
  /** How long to wait for the answer (default ocpp.operation_timeout_s): the gateway's safety calls are bounded as its other limit calls are. */
  readonly timeoutMs?: number;
  /** Fields only a 2.0.1 station's form uses (v201/operation-forms.ts FormContext.only201); the caller refuses them for a 1.6 charger. */
  readonly only201?: Readonly<Record<string, unknown>>;
}

/** What the HTTP routes use (a port, so that a daemon without chargers has none). */
export interface ChargerOperationsPort {
  call(chargePointId: string, action: OperatorAction, request: Record<string, unknown>, opts?: OperationOptions): Promise<OperationOutcome>;
  /** Whether the charger is configured. */
  configured(chargePointId: string): boolean;
  charger(chargePointId: string): ChargerConfig | undefined;
  /**
   * The OCPP version the charger speaks: the one its ocpp_version pins, else its current
   * connection's, else its last connection's (stored), else null (never connected on auto).
   */
  ocppVersion(chargePointId: string): '1.6' | '2.0.1' | null;
  /** A 2.0.1 call with no 1.6 operation behind it (GetBaseReport, GetChargingProfiles): see ChargerOperations.call201. */
  call201(chargePointId: string, action: string, request: Record<string, unknown>, opts?: OperationOptions): Promise<OperationOutcome>;
}

export const DEFAULT_OPERATION_TIMEOUT_S = 30;

/** How long an operator's call waits for a fuse-protecting call in flight before it is refused with 409. */
export const FUSE_CALL_WAIT_MS = 2000;

interface RpcErrorLike {
  readonly rpcErrorCode: string;
  readonly message?: string;
  readonly details?: unknown;
}

const isRpcError = (err: unknown): err is RpcErrorLike => err instanceof Error && typeof (err as Partial<RpcErrorLike>).rpcErrorCode === 'string';

export class ChargerOperations implements ChargerOperationsPort {
  private readonly validator = ocpp16Validator();
  private readonly outcomes: Counter<'action' | 'outcome'>;
  /** The errors ocpp-rpc rejected a call with because the charger's answer failed the schema (strictValidationFailure): not the charger's CallError. */
  private readonly invalidAnswers = new WeakSet<object>();

  constructor(
    private readonly ctx: Pick<AppContext, 'logger'>,
    metrics: Registry,
    private readonly chargers: ReadonlyMap<string, ChargerConfig>,
    /** The charger's current connection, or null while it is not connected; with when it was last heard. */
    private readonly connection: (chargePointId: string) => { client: LanedChargerClient | null; lastMessageAtMs: number | null; storedVersion: () => '1.6' | '2.0.1' | null },
    private readonly timeoutMs: number,
    /** A 2.0.1 station's transaction ids, for the operations' 2.0.1 forms (v201/operation-forms.ts). */
    private readonly transactions201: FormContext['transactions'],
    /** A 2.0.1 station's device model as last reported (v201/device-model.ts), for the forms that read it. */
    private readonly deviceModel?: FormContext['deviceModel'],
  ) {
    this.outcomes = new Counter({
      name: 'metergate_ocpp_operations_total',
      help: 'Operator operations sent to chargers (HTTP API, CLI, status page), by OCPP action and outcome (answered, call-error, invalid-answer, not-connected, timeout, invalid-request, failed, fuse-call-in-flight: refused while a fuse-protecting call to the charger was in flight, not-in-protocol: the charger speaks OCPP 2.0.1 and the operation has no 2.0.1 form yet)',
      labelNames: ['action', 'outcome'] as const,
      registers: [metrics],
    });
  }

  /** A connection's strictValidationFailure of an answer to one of our calls (central-system.ts wires every connection). */
  answerFailedSchema(error: unknown): void {
    if (typeof error === 'object' && error !== null) this.invalidAnswers.add(error);
  }

  configured(chargePointId: string): boolean {
    return this.chargers.has(chargePointId);
  }

  charger(chargePointId: string): ChargerConfig | undefined {
    return this.chargers.get(chargePointId);
  }

  ocppVersion(chargePointId: string): '1.6' | '2.0.1' | null {
    const pinned = this.chargers.get(chargePointId)?.ocpp_version;
    if (pinned === '1.6' || pinned === '2.0.1') return pinned;
    const { client, storedVersion } = this.connection(chargePointId);
    if (client) return client.protocol === 'ocpp2.0.1' ? '2.0.1' : '1.6';
    return storedVersion();
  }

  async call(chargePointId: string, action: OperatorAction, request: Record<string, unknown>, opts: OperationOptions = {}): Promise<OperationOutcome> {
    return this.counted(chargePointId, action, await this.exchange(chargePointId, action, request, opts));
  }

  /**
   * A 2.0.1 call of the gateway's own with no 1.6 operation behind it (GetBaseReport,
   * v201/device-model.ts): the same lanes, waits, timeout and typed outcomes as call(); a
   * charger connected with 1.6 is 'not-in-protocol'. Checked by the 2.0.1 schema on the way out (ocpp-rpc strict mode).
   */
  async call201(chargePointId: string, action: string, request: Record<string, unknown>, opts: OperationOptions = {}): Promise<OperationOutcome> {
    if (!this.chargers.has(chargePointId)) return this.counted(chargePointId, action, { kind: 'unknown-charger' });
    const { client, lastMessageAtMs } = this.connection(chargePointId);
    if (client && client.protocol !== 'ocpp2.0.1') return this.counted(chargePointId, action, { kind: 'not-in-protocol', ocppVersion: '2.0.1', reason: `${action} is an OCPP 2.0.1 call and the charger is connected with OCPP 1.6` });
    if (!client) return this.counted(chargePointId, action, { kind: 'not-connected', lastMessageAtMs });
    return this.counted(chargePointId, action, await this.send(chargePointId, client, { action, request, form: null }, opts));
  }

  private formContext(chargePointId: string): FormContext {
    const charger = this.chargers.get(chargePointId);
    return { chargePointId, transactions: this.transactions201, ...(this.deviceModel ? { deviceModel: this.deviceModel } : {}), ...(charger ? { charger } : {}) };
  }

  private counted(chargePointId: string, action: string, outcome: OperationOutcome): OperationOutcome {
    if (outcome.kind !== 'unknown-charger') this.outcomes.inc({ action, outcome: outcome.kind });
    const log = { charge_point_id: chargePointId, action, outcome: outcome.kind };
    if (outcome.kind === 'answered') this.ctx.logger.info({ ...log, status: typeof outcome.answer.status === 'string' ? outcome.answer.status : undefined }, 'operator operation answered');
    else if (outcome.kind === 'call-error') this.ctx.logger.warn({ ...log, code: outcome.code }, 'operator operation answered with a CallError');
    else if (outcome.kind === 'not-in-protocol') this.ctx.logger.warn({ ...log, reason: outcome.reason }, 'operator operation not sent: the charger speaks OCPP 2.0.1, and this operation has no 2.0.1 form in the gateway');
    else if (outcome.kind === 'fuse-call-in-flight') this.ctx.logger.warn({ ...log, fuse_call: outcome.action }, 'operator operation not sent: a fuse-protecting call to the charger is in flight');
    else this.ctx.logger.warn(log, 'operator operation not answered');
    return outcome;
  }

  private async exchange(chargePointId: string, action: OperatorAction, request: Record<string, unknown>, opts: OperationOptions): Promise<OperationOutcome> {
    if (!this.chargers.has(chargePointId)) return { kind: 'unknown-charger' };
    try {
      this.validator.validate(`urn:${action}.req`, request);
    } catch (err) {
      return { kind: 'invalid-request', message: (err as Error).message.slice(0, 300) };
    }
    const { client, lastMessageAtMs } = this.connection(chargePointId);
    // A 2.0.1 station gets the operation's 2.0.1 form (v201/operations/), its answer read back in the 1.6 shape.
    let sent: { action: string; request: Record<string, unknown>; form: OperationForm201 | null } = { action, request, form: null };
    if (this.chargers.get(chargePointId)?.ocpp_version === '2.0.1' || client?.protocol === 'ocpp2.0.1') {
      const form = operationForm201(action);
      if (!form) return { kind: 'not-in-protocol', ocppVersion: '2.0.1' };
      const call = form.toCall(request, { ...this.formContext(chargePointId), only201: opts.only201 });
      if ('refused' in call) return { kind: 'not-in-protocol', ocppVersion: '2.0.1', reason: call.refused };
      sent = { ...call, form };
    }
    if (!client) return { kind: 'not-connected', lastMessageAtMs };
    return this.send(chargePointId, client, sent, opts);
  }

  private async send(chargePointId: string, client: LanedChargerClient, sent: { action: string; request: Record<string, unknown>; form: OperationForm201 | null }, opts: OperationOptions): Promise<OperationOutcome> {
    const lane = opts.lane ?? 'ordinary';
    // An operator's call waits a moment for a fuse-protecting call (most are answered within
    // it: a plan's profile, the clears after a target is deleted); one still in flight then is
    // the charger being slow to confirm a limit, and the operator is told so.
    const fuseCall = (opts.by ?? 'operator') === 'operator' && lane === 'ordinary' ? await client.safetyCallSettled(FUSE_CALL_WAIT_MS) : null;
    if (fuseCall !== null) return { kind: 'fuse-call-in-flight', action: fuseCall };
    // A call waits in its lane behind the one in flight (call-lanes.ts) and ocpp-rpc's own
    // timeout starts when it is sent, so it is bounded here, from now; aborted while it
    // still waits, it is dropped, never sent.
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<OperationOutcome>((resolve) => {
      timer = setTimeout(() => {
        abort.abort('operation timeout');
        resolve({ kind: 'timeout', timeoutMs });
      }, timeoutMs);
    });
    const answered = client.call(sent.action, sent.request, { callTimeoutMs: timeoutMs, signal: abort.signal, lane }).then(
      (answer): OperationOutcome => {
        const raw = (answer ?? {}) as Record<string, unknown>;
        if (!sent.form) return { kind: 'answered', answer: raw };
        // A 2.0.1 form reads its answer back (some read the store): a throw there is this call's
        // 'failed', never a rejection out of call(), which promises a typed outcome.
        try {
          return { kind: 'answered', answer: sent.form.toAnswer(raw, this.formContext(chargePointId), sent.request) };
        } catch (err) {
          return { kind: 'failed', message: err instanceof Error ? err.message.slice(0, 300) : String(err) };
        }
      },
      (err: unknown): OperationOutcome => {
        if (isRpcError(err) && this.invalidAnswers.has(err)) return { kind: 'invalid-answer', message: String(err.message ?? '').slice(0, 300), ocppVersion: client.protocol === 'ocpp2.0.1' ? '2.0.1' : '1.6', action: sent.action };
        if (isRpcError(err)) return { kind: 'call-error', code: err.rpcErrorCode, description: String(err.message ?? ''), details: err.details ?? {} };
        if (err instanceof Error && err.name === 'TimeoutError') return { kind: 'timeout', timeoutMs };
        return { kind: 'failed', message: err instanceof Error ? err.message.slice(0, 300) : String(err) };
      },
    );
    try {
      return await Promise.race([answered, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
