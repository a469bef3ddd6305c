// Every uplink message is checked against its JSON Schema (draft 2020-12, files in
// ./schemas) before it is stored or sent; a message that fails is a bug, never sent.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { formatAjvError } from '../config/load.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// The contract's four, and the grid operator's dimming events (grid/grid-control.ts, a topic of its own: the four stay as they are).
export const MESSAGE_TYPES = ['measurement', 'heartbeat', 'boot_notification', 'network_scan', 'grid_dimming_event'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export function loadMessageSchema(type: MessageType): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`./schemas/${type}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
}

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
const validators = Object.fromEntries(MESSAGE_TYPES.map((t) => [t, ajv.compile(loadMessageSchema(t))])) as Record<MessageType, ValidateFunction>;

export class InvalidMessageError extends Error {
  constructor(
    readonly messageType: MessageType,
    readonly problems: readonly string[],
  ) {
    super(`${messageType} message does not match its schema: ${problems.join('; ')}`);
    this.name = 'InvalidMessageError';
  }
}

/** The problems of a message as `path: message`, empty when it is valid. */
export function messageProblems(type: MessageType, message: unknown): string[] {
  const validate = validators[type];
  return validate(message) ? [] : (validate.errors ?? []).map((e) => formatAjvError(e));
}

/** Throws InvalidMessageError unless the message matches its schema. */
export function assertValidMessage(type: MessageType, message: unknown): void {
  const problems = messageProblems(type, message);
  if (problems.length > 0) throw new InvalidMessageError(type, problems);
}
