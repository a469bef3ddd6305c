// A 2.0.1 station's connection as the profile dispatcher (the fuse controller's LimitSender,
// limit-attempts.ts) sees a charger: its 1.6-shaped limit calls go on the wire in their 2.0.1
// form, in the same lanes (the safety lane stays the safety lane, call-lanes.ts), and the
// answers come back in the 1.6 shape. A call that is also an operator operation takes that
// operation's form (operation-forms.ts: RemoteStopTransaction -> RequestStopTransaction,
// ClearChargingProfile, ChangeAvailability), so one translation serves both; SetChargingProfile,
// which no operator sends, takes the gateway's own (charging-profiles.ts). So the
// dispatcher's strategy ladder, the fuse controller's escalation ladder and their stored
// answers are the same code for both versions: Accepted binds as in 1.6, Rejected or a
// CallError is a refusal, no answer within the limit call's timeout is unanswered.
//
// A call with no 2.0.1 form, or one that cannot be made (a TxProfile for a transaction whose
// station id the gateway does not know), is not sent and rejects with a plain error: 'error'
// to the dispatcher, i.e. unanswered, never remembered as the station's refusal.
import type { LanedChargerClient } from '../call-lanes.js';
import type { CallOptions } from '../charger-client.js';
import { OPERATOR_ACTIONS, type OperatorAction } from '../charger-operations.js';
import { limitCall201 } from './charging-profiles.js';
import { operationForm201, type FormContext } from './operation-forms.js';

const isOperatorAction = (action: string): action is OperatorAction => (OPERATOR_ACTIONS as readonly string[]).includes(action);

export function limitClient201(client: LanedChargerClient, transactions: FormContext['transactions']): LanedChargerClient {
  const ctx: FormContext = { chargePointId: client.identity, transactions };
  return {
    identity: client.identity,
    protocol: client.protocol,
    handle: (method, handler) => client.handle(method, handler),
    on: (event, listener) => client.on(event, listener),
    close: (opts) => client.close(opts),
    safetyCallPending: () => client.safetyCallPending(),
    safetyCallSettled: (waitMs) => client.safetyCallSettled(waitMs),
    async call(method: string, params: unknown, opts?: CallOptions): Promise<unknown> {
      const form = isOperatorAction(method) ? operationForm201(method) : undefined;
      const call = form ? form.toCall(params as Record<string, unknown>, ctx) : limitCall201(method, params, transactions);
      if ('refused' in call) throw new Error(`not sent to the OCPP 2.0.1 station: ${call.refused}`);
      const answer = (await client.call(call.action, call.request, opts)) as Record<string, unknown>;
      return form ? form.toAnswer(answer ?? {}, ctx, call.request) : answer;
    },
  };
}
