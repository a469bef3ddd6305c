// How an operator operation (charger-operations.ts OPERATOR_ACTIONS: the HTTP API's, the CLI's
// and the status page's requests, written in their OCPP 1.6 shape) reaches an OCPP 2.0.1
// station: one form per operation, registered from its own file in v201/operations/ (each
// imported once by operations/index.ts). A form turns the 1.6 request into its 2.0.1 call and
// the station's answer back into the 1.6 answer shape the HTTP routes read, so everything
// above the protocol stays one. An operation with no form, or a request a form cannot carry
// (refused, with the reason), is 'not-in-protocol': HTTP 409 naming it, nothing sent.
import type { OperatorAction } from '../charger-operations.js';
import type { Ocpp201TransactionStore } from '../../store/ocpp201-transactions.js';
import type { DeviceModelStore } from '../../store/ocpp201-device-model.js';
import type { ChargerConfig } from '../../config/types.js';

/** What a form may look up: the station, its transactions' ids (integer, ours <-> string, the station's), its device model as last reported. */
export interface FormContext {
  readonly chargePointId: string;
  readonly transactions: Pick<Ocpp201TransactionStore, 'chargerTransactionId' | 'chargerTransaction' | 'get'>;
  /**
   * Fields of the operator's request that only 2.0.1 has a place for (ReserveNow's
   * connectorType): the 1.6 request is checked against the 1.6 schema, which has none.
   */
  readonly only201?: Readonly<Record<string, unknown>>;
  readonly deviceModel?: Pick<DeviceModelStore, 'actualValue' | 'mutability'>;
  /** The station's configured id tags as in force (SIGHUP): the type its idTokens are sent with, and their groups. */
  readonly charger?: Pick<ChargerConfig, 'auth' | 'id_token_type'>;
}

/** The 2.0.1 call to send, or why this request has no 2.0.1 equivalent. */
export type FormCall = { readonly action: string; readonly request: Record<string, unknown> } | { readonly refused: string };

export interface OperationForm201 {
  toCall(request16: Record<string, unknown>, ctx: FormContext): FormCall;
  /**
   * The station's (schema-checked) answer in the 1.6 answer's shape, keeping the 2.0.1 fields a
   * client may want beside it; `sent` is the 2.0.1 request that was sent (an id the form chose).
   */
  toAnswer(answer201: Record<string, unknown>, ctx: FormContext, sent: Readonly<Record<string, unknown>>): Record<string, unknown>;
}

const forms = new Map<OperatorAction, OperationForm201>();

/** Called once per operation from its own file in v201/operations/. */
export function registerOperationForm201(action: OperatorAction, form: OperationForm201): void {
  if (forms.has(action)) throw new Error(`OCPP 2.0.1 form of ${action} registered twice`);
  forms.set(action, form);
}

export function operationForm201(action: OperatorAction): OperationForm201 | undefined {
  return forms.get(action);
}

/** The operations that have a 2.0.1 form (docs, doctor, the status page's buttons). */
export function actionsWith201Form(): readonly OperatorAction[] {
  return [...forms.keys()];
}
