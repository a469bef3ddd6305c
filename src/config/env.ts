// The environment layer of the configuration: `METERGATE_` + the setting's path in upper
// case joined by `__` overrides that scalar setting of the file (METERGATE_MQTT__PASSWORD,
// METERGATE_HTTP__PORT). Derived from the schema; lists and sections are file-only. A
// variable with the prefix that names no setting is a problem, with the nearest name.
import { nearest } from './nearest.js';

export interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  /** Alternatives of a scalar (e.g. ocpp.port: a port number or false). */
  oneOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: unknown;
}

export const ENV_PREFIX = 'METERGATE_';

/**
 * Variables with the prefix that are not settings: the project's build and test scripts read
 * them (scripts/debian-root, scripts/package, scripts/on-bundled-node; docs/ci.md). Set in a
 * shell or by .ci/run, they reach every daemon and CLI started from there, which must not
 * refuse them as misspelt settings.
 */
export const TOOL_VARIABLES: ReadonlySet<string> = new Set(['METERGATE_DEBIAN_ROOTS', 'METERGATE_PACKAGE_CACHE', 'METERGATE_DEB_MAINTAINER']);

/**
 * Settings that give the same thing two ways. The file may hold only one of each pair;
 * a variable for one member replaces the other member from the file, so an installer's
 * METERGATE_MQTT__PASSWORD works next to the shipped `password_file` line.
 */
export const ALTERNATIVE_SETTINGS: ReadonlyArray<readonly [string, string]> = [
  ['mqtt.password', 'mqtt.password_file'],
  ['prices.entsoe.security_token', 'prices.entsoe.security_token_file'],
];

export interface EnvSetting {
  readonly name: string;
  readonly path: readonly string[];
  readonly node: SchemaNode;
}

/** Every scalar setting reachable through objects only, with its variable name. */
export function envSettings(schema: SchemaNode, prefix: readonly string[] = []): EnvSetting[] {
  const out: EnvSetting[] = [];
  for (const [key, node] of Object.entries(schema.properties ?? {})) {
    const path = [...prefix, key];
    if (node.properties) out.push(...envSettings(node, path));
    else if (node.type !== 'array' && node.type !== 'object' && !node.additionalProperties) {
      out.push({ name: `${ENV_PREFIX}${path.join('__').toUpperCase()}`, path, node });
    }
  }
  return out;
}

export interface EnvLayer {
  /** Dotted setting path → the variable that set it. */
  readonly setBy: ReadonlyMap<string, string>;
  /** Dotted section path that exists only because variables created it → those variables. */
  readonly createdBy: ReadonlyMap<string, readonly string[]>;
  /** File settings a variable replaced (ALTERNATIVE_SETTINGS). */
  readonly replaced: ReadonlyArray<{ readonly path: string; readonly by: string }>;
  /** Variables with the prefix that name no setting, as `NAME: message`. */
  readonly problems: readonly string[];
}

/** The JSON types a scalar setting takes (its type, its enum's values', each alternative's). */
function scalarTypes(node: SchemaNode): unknown[] {
  if (node.oneOf) return node.oneOf.flatMap(scalarTypes);
  if (node.enum) return [...new Set(node.enum.map((v) => typeof v))];
  if ('const' in node) return [typeof node.const];
  return [node.type].flat();
}

function coerceEnvValue(raw: string, node: SchemaNode): unknown {
  const types = scalarTypes(node);
  if ((types.includes('integer') || types.includes('number')) && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  if (types.includes('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

type Mapping = Record<string, unknown>;
const isMapping = (v: unknown): v is Mapping => typeof v === 'object' && v !== null && !Array.isArray(v);

function parentOf(raw: Mapping, path: readonly string[]): Mapping | null {
  let target: unknown = raw;
  for (const key of path.slice(0, -1)) {
    if (!isMapping(target)) return null;
    target = target[key];
  }
  return isMapping(target) ? target : null;
}

/** Why a prefixed variable that is not a setting is wrong, with the nearest setting name. */
function unknownVariable(name: string, settings: readonly EnvSetting[], schema: SchemaNode): string {
  const upper = name.toUpperCase();
  if (upper !== name && settings.some((s) => s.name === upper)) return `${name}: names no setting (variable names are upper case): did you mean ${upper}?`;
  // A list or a section named by its path: say that it is file-only rather than guess.
  let node: SchemaNode | undefined = schema;
  const path = upper.slice(ENV_PREFIX.length).toLowerCase().split('__');
  for (const key of path) {
    const child: SchemaNode | undefined = node?.properties?.[key];
    if (!child) {
      if (node && node !== schema && node.additionalProperties) return `${name}: ${path.join('.')} is inside a map of named entries, which is set in the config file only`;
      node = undefined;
      break;
    }
    node = child;
  }
  if (node?.type === 'array') return `${name}: ${path.join('.')} is a list; lists are set in the config file only`;
  if (node && node !== schema && (node.properties || node.additionalProperties)) {
    const example = settings.find((s) => s.path.join('.').startsWith(`${path.join('.')}.`));
    return `${name}: ${path.join('.')} is a section; set its settings one by one${example ? `, e.g. ${example.name}` : ''}`;
  }
  const best = nearest(upper.slice(ENV_PREFIX.length), settings.map((s) => s.name.slice(ENV_PREFIX.length)));
  return `${name}: names no setting${best ? `; did you mean ${ENV_PREFIX}${best.candidate}?` : ''}`;
}

/** Applies the environment to the parsed file (in place) and reports what it did and what is wrong. */
export function applyEnvOverrides(raw: Mapping, env: NodeJS.ProcessEnv, schema: SchemaNode): EnvLayer {
  const settings = envSettings(schema);
  const known = new Set(settings.map((s) => s.name));
  const setBy = new Map<string, string>();
  const createdBy = new Map<string, string[]>();
  const replaced: Array<{ path: string; by: string }> = [];
  const problems: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (env[name] === undefined || known.has(name) || TOOL_VARIABLES.has(name) || !name.toUpperCase().startsWith(ENV_PREFIX)) continue;
    problems.push(unknownVariable(name, settings, schema));
  }
  for (const { name, path, node } of settings) {
    const value = env[name];
    if (value === undefined) continue;
    let target: Mapping | null = raw;
    for (let i = 0; i < path.length - 1 && target; i++) {
      const key = path[i];
      const section = path.slice(0, i + 1).join('.');
      if (target[key] === undefined) {
        createdBy.set(section, []);
        target[key] = {};
      }
      createdBy.get(section)?.push(name);
      // A section that is not a mapping in the file stays as it is, for the schema to report.
      target = isMapping(target[key]) ? (target[key] as Mapping) : null;
    }
    if (!target) continue;
    target[path[path.length - 1]] = coerceEnvValue(value, node);
    setBy.set(path.join('.'), name);
  }
  for (const pair of ALTERNATIVE_SETTINGS) {
    for (const [mine, other] of [pair, [pair[1], pair[0]] as const]) {
      const by = setBy.get(mine);
      if (!by || setBy.has(other)) continue;
      const key = other.split('.');
      const parent = parentOf(raw, key);
      if (parent && parent[key[key.length - 1]] !== undefined) {
        delete parent[key[key.length - 1]];
        replaced.push({ path: other, by });
      }
    }
  }
  return { setBy, createdBy, replaced, problems };
}
