import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parseDocument } from 'yaml';
import { builtInProfiles } from '../modbus/profiles/index.js';
import type { Config } from './types.js';
import { pointerToPath } from '../json-path.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** sysexits.h EX_CONFIG: what systemd and installers see when the config is wrong. */
export const EX_CONFIG = 78;

export const configSchema = JSON.parse(
  readFileSync(new URL('./schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

/** Every problem with a config, each as `path: message`. */
export class ConfigError extends Error {
  readonly exitCode = EX_CONFIG;
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}: invalid configuration\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true });
addFormats(ajv);
const validateSchema = ajv.compile(configSchema);

export function formatAjvError(e: ErrorObject): string {
  let path = pointerToPath(e.instancePath);
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    path = path ? `${path}.${extra}` : extra;
    message = 'is not a known setting';
  } else if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    path = path ? `${path}.${missing}` : missing;
    message = 'is required';
  } else if (e.keyword === 'enum') {
    message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (e.keyword === 'pattern' && path.endsWith('url') && path.startsWith('mqtt')) {
    message = 'must start with mqtts:// (TLS is mandatory; plain mqtt:// is refused)';
  }
  return `${path || '(root)'}: ${message}`;
}

interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
}

/**
 * Environment overrides derived from the schema: every scalar setting reachable through
 * objects only has a variable, `METERGATE_` + the path in upper case joined by `__`
 * (e.g. `METERGATE_MQTT__PASSWORD`, `METERGATE_HTTP__PORT`). Lists are file-only.
 */
export function envOverrideNames(schema: SchemaNode = configSchema as SchemaNode, prefix: string[] = []): Array<{ name: string; path: string[]; node: SchemaNode }> {
  const out: Array<{ name: string; path: string[]; node: SchemaNode }> = [];
  for (const [key, node] of Object.entries(schema.properties ?? {})) {
    const path = [...prefix, key];
    if (node.properties) out.push(...envOverrideNames(node, path));
    else if (node.type !== 'array' && node.type !== 'object' && !(node as { additionalProperties?: unknown }).additionalProperties) {
      out.push({ name: `METERGATE_${path.join('__').toUpperCase()}`, path, node });
    }
  }
  return out;
}

function coerceEnvValue(raw: string, node: SchemaNode): unknown {
  const types = node.enum ? [...new Set(node.enum.map((v) => typeof v))] : [node.type].flat();
  if ((types.includes('integer') || types.includes('number')) && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  if (types.includes('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  for (const { name, path, node } of envOverrideNames()) {
    const value = env[name];
    if (value === undefined) continue;
    let target = raw;
    for (const key of path.slice(0, -1)) {
      if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
      target = target[key] as Record<string, unknown>;
    }
    target[path[path.length - 1]] = coerceEnvValue(value, node);
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Checks that span several settings, which a JSON Schema cannot express. */
function crossChecks(config: Config): string[] {
  const problems: string[] = [];
  const busNames = new Set<string>();
  config.buses.forEach((bus, i) => {
    if (busNames.has(bus.name)) problems.push(`buses[${i}].name: "${bus.name}" is used by another bus`);
    busNames.add(bus.name);
  });
  const resourceIds = new Set<string>();
  const addresses = new Set<string>();
  config.meters.forEach((meter, i) => {
    if (!busNames.has(meter.bus)) problems.push(`meters[${i}].bus: no bus named "${meter.bus}" (known: ${[...busNames].join(', ') || 'none'})`);
    if (resourceIds.has(meter.resource_id)) problems.push(`meters[${i}].resource_id: ${meter.resource_id} is used by another meter`);
    resourceIds.add(meter.resource_id);
    const address = `${meter.bus}/${meter.unit_id}`;
    if (addresses.has(address)) problems.push(`meters[${i}].unit_id: unit ${meter.unit_id} on bus "${meter.bus}" is used by another meter`);
    addresses.add(address);
    const profile = config.profiles[meter.profile] ?? builtInProfiles[meter.profile];
    if (!profile) {
      problems.push(`meters[${i}].profile: unknown profile "${meter.profile}" (built in: ${Object.keys(builtInProfiles).join(', ')}; or define it under profiles)`);
    } else {
      const known = new Set(profile.registers.map((r) => r.metric));
      meter.extra_metrics.forEach((metric, j) => {
        if (!known.has(metric)) problems.push(`meters[${i}].extra_metrics[${j}]: profile "${meter.profile}" has no metric "${metric}" (has: ${[...known].join(', ')})`);
      });
    }
  });
  if (config.mqtt && config.mqtt.password && config.mqtt.password_file) problems.push('mqtt.password_file: set either password or password_file, not both');
  if (config.mqtt && config.mqtt.reconnect_max_ms < config.mqtt.reconnect_min_ms) problems.push('mqtt.reconnect_max_ms: must be >= mqtt.reconnect_min_ms');
  return problems;
}

function readSecretFile(path: string, setting: string, problems: string[], hint: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `does not exist (${hint})`
        : code === 'EACCES'
          ? 'is not readable by this user (make it root:metergate 0640; run checks with sudo)'
          : `cannot be read (${code ?? 'error'})`;
    problems.push(`${setting}: ${path} ${why}`);
    return undefined;
  }
}

/**
 * `key:` with nothing after it is YAML null. In this file it means "not set" (no setting
 * takes null), so an installer who comments out the last line under a section does not
 * get "must be object" but the section's defaults.
 */
function dropNulls(value: unknown): void {
  if (Array.isArray(value)) value.forEach(dropNulls);
  else if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(obj)) {
      if (v === null) delete obj[k];
      else dropNulls(v);
    }
  }
}

/** Validates a parsed document; returns the frozen config or throws ConfigError with every problem. */
export function validateConfig(raw: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env): Config {
  const doc = (raw ?? {}) as Record<string, unknown>;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(source, ['(root): must be a mapping of settings']);
  const copy = structuredClone(doc);
  dropNulls(copy);
  applyEnvOverrides(copy, env);
  if (!validateSchema(copy)) {
    throw new ConfigError(source, [...new Set((validateSchema.errors ?? []).filter((e) => e.keyword !== 'if').map(formatAjvError))]);
  }
  const config = copy as unknown as Config & { mqtt?: { password?: string }; prices: { entsoe: { security_token?: string } } };
  const problems = crossChecks(config);
  const mutable = config as unknown as {
    gateway_id?: string;
    mqtt?: { password?: string; password_file?: string };
    prices: { entsoe: { security_token?: string; security_token_file?: string } };
  };
  if (mutable.mqtt?.password_file && !mutable.mqtt.password) {
    mutable.mqtt.password = readSecretFile(mutable.mqtt.password_file, 'mqtt.password_file', problems, 'write the broker password the operator gave you into it');
  }
  const entsoe = mutable.prices.entsoe;
  // The token is only needed when ENTSO-E is the source: `source: none` must not fail on it.
  if (config.prices.source === 'entsoe' && entsoe.security_token_file && !entsoe.security_token) {
    entsoe.security_token = readSecretFile(
      entsoe.security_token_file,
      'prices.entsoe.security_token_file',
      problems,
      'write your ENTSO-E Transparency Platform API token into it, or set prices.source: none',
    );
  }
  if (problems.length > 0) throw new ConfigError(source, problems);
  mutable.gateway_id ??= hostname();
  return deepFreeze(config);
}

/** Reads, parses and validates a YAML config file. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(path, [`(file): cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(path, doc.errors.map((e) => `(yaml) line ${e.linePos?.[0].line ?? '?'}: ${e.message.split('\n')[0]}`));
  }
  return validateConfig(doc.toJS(), path, env);
}
