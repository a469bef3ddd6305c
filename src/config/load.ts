import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { ErrorObject } from 'ajv/dist/2020.js';
import { parseYaml } from './yaml-syntax.js';
import { meterSourceTypes } from '../sources/index.js';
import type { Config, MeterConfig } from './types.js';
import { httpExposureProblems } from './http-exposure.js';
import { pointerToPath } from '../json-path.js';
import { applyEnvOverrides, envSettings, type EnvLayer, type EnvSetting, type SchemaNode } from './env.js';
import { likelyMeant } from './nearest.js';
import { missingConfigFix, NO_SUCH_FILE } from './missing-file.js';
import { readConfigFile } from './files.js';
import { configDocumentErrors, configSchema } from './config-schema.js';
import { authorizationKeyProblem } from '../ocpp/authorization-key.js';
import { marketByCode, MARKETS } from '../prices/markets.js';
import { meterKeyProblem } from '../signed-meter/ocmf-signature.js';

/** sysexits.h EX_CONFIG: what systemd and installers see when the config is wrong. */
export const EX_CONFIG = 78;


/** Every problem with a config, each as `path: message`. */
export class ConfigError extends Error {
  readonly exitCode = EX_CONFIG;
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    const missing = problems[0]?.startsWith(NO_SUCH_FILE) === true;
    super(`${source}: ${missing ? 'no config file there' : 'invalid configuration'}\n${problems.map((p) => `  ${p}`).join('\n')}${missing ? `\n  hint: ${missingConfigFix(source)}` : ''}`);
    this.name = 'ConfigError';
  }
}

/** Meter source types: each checks its own meters and fills their defaults. */
const sources = meterSourceTypes();

/** The schema node a JSON pointer such as an ajv schemaPath (`#/properties/mqtt`) leads to. */
function schemaAt(root: Record<string, unknown>, pointer: string): SchemaNode | undefined {
  let node: unknown = root;
  for (const raw of pointer.replace(/^#/, '').split('/').slice(1)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return typeof node === 'object' && node !== null ? (node as SchemaNode) : undefined;
}

/**
 * One ajv error as `path: message`. With the schema it was checked against, an unknown key
 * names the known key it is likely a typo of, or the keys known at that place.
 */
export function formatAjvError(e: ErrorObject, schema?: Record<string, unknown>): string {
  let path = pointerToPath(e.instancePath);
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    path = path ? `${path}.${extra}` : extra;
    message = 'is not a known setting';
    const known = Object.keys(schema ? (schemaAt(schema, e.schemaPath.replace(/\/additionalProperties$/, ''))?.properties ?? {}) : {});
    if (known.length > 0) {
      const meant = likelyMeant(extra, known);
      message += meant ? `; did you mean ${meant}?` : ` (known here: ${known.join(', ')})`;
    }
  } else if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    path = path ? `${path}.${missing}` : missing;
    message = 'is required';
  } else if (e.keyword === 'enum') {
    message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (e.keyword === 'pattern' && /^mqtt\.urls?\b/.test(path)) {
    message = 'must start with mqtts:// (TLS is mandatory; plain mqtt:// is refused)';
  }
  return `${path || '(root)'}: ${message}`;
}

/**
 * Environment overrides derived from the schema: every scalar setting reachable through
 * objects only has a variable, `METERGATE_` + the path in upper case joined by `__`
 * (e.g. `METERGATE_MQTT__PASSWORD`, `METERGATE_HTTP__PORT`). Lists are file-only.
 */
export function envOverrideNames(): EnvSetting[] {
  return envSettings(configSchema as SchemaNode);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Says so when a problem comes from the environment: the setting it names (or another it
 * mentions) was set by a variable, or its section exists only because a variable made it.
 */
function attributeToEnv(problem: string, env: EnvLayer): string {
  const sep = problem.indexOf(': ');
  const path = sep >= 0 ? problem.slice(0, sep) : '';
  const text = sep >= 0 ? problem.slice(sep + 2) : problem;
  const vars = [...env.setBy].filter(([setting]) => setting === path || new RegExp(`(^|[^\\w.])${escapeRegExp(setting)}(?![\\w.])`).test(text)).map(([, name]) => name);
  if (vars.length > 0) return `${problem} (from the environment: ${[...new Set(vars)].join(', ')})`;
  const created = [...env.createdBy].find(([section]) => path.startsWith(`${section}.`));
  return created ? `${problem} (${created[0]} is there only because of ${created[1].join(', ')} in the environment)` : problem;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The mapping entries of a list with their index; other entries are the schema's to report. */
const entries = <T>(list: unknown): Array<[T, number]> => (Array.isArray(list) ? list.flatMap((v, i) => (isMapping(v) ? [[v as T, i] as [T, number]] : [])) : []);

/**
 * Checks that span several settings, which a JSON Schema cannot express. Runs also when
 * the schema found problems (every problem at once), so it reads the config defensively.
 */
/**
 * site.limit_a is a ceiling only where every car's draw is counted (docs/planning.md "The fuse
 * controller"): a site meter that measures the chargers sees them all; without one, a car on a
 * connector that is not listed under its charger's connectors has no maximum to count it at.
 */
export function uncountedChargers(config: Config): string[] {
  const site = config.site as Partial<Config['site']> | undefined;
  if (typeof site?.limit_a !== 'number' || site.uncounted_chargers === 'allow') return [];
  if (typeof site.meter === 'string' && site.meter_includes_chargers !== false) return [];
  const unlisted = entries<Config['chargers'][number]>(config.chargers).filter(([c]) => !Array.isArray(c.connectors) || c.connectors.length === 0);
  const why = typeof site.meter === 'string' ? 'the site meter does not measure the chargers (site.meter_includes_chargers: false)' : 'there is no site meter (site.meter)';
  return unlisted.map(
    ([c, i]) =>
      `chargers[${i}].connectors: charger ${String(c.id)} lists no connectors, and ${why}: a car on it would draw past site.limit_a unseen. List each connector with its max_current_a, or set a site meter that measures the chargers, or set site.uncounted_chargers: allow to accept the risk`,
  );
}

/** grid_control (docs/grid-limits.md): its patterns fit its inputs, its Modbus input is on a Modbus bus no meter process holds, and there are chargers to dim. */
function gridControlProblems(config: Config): string[] {
  const g = config.grid_control;
  if (!g) return [];
  const problems: string[] = [];
  const inputs = g.input.type === 'gpio' ? g.input.lines.length : g.input.addresses.length;
  for (const [p, i] of g.patterns.map((p, i) => [p, i] as const)) {
    if (p.contacts.length !== inputs) problems.push(`grid_control.patterns[${i}].contacts: has ${p.contacts.length} contact(s), the input reads ${inputs}`);
  }
  if (g.input.type === 'modbus') {
    const { bus: name } = g.input;
    const bus = config.buses.find((b) => b.name === name);
    if (!bus) problems.push(`grid_control.input.bus: no bus named "${name}" (known: ${config.buses.map((b) => b.name).join(', ') || 'none'})`);
    else if (bus.type !== 'rtu' && bus.type !== 'tcp' && bus.type !== 'rtu-over-tcp') problems.push(`grid_control.input.bus: "${name}" is a ${bus.type} bus, not Modbus`);
    else if (bus.type === 'rtu' && config.meters.some((m) => m.bus === name)) problems.push(`grid_control.input.bus: the serial bus "${name}" also carries meters; one serial line has one reader: put the I/O module on a bus of its own (or behind a Modbus TCP gateway)`);
  }
  if (!config.chargers.some((c) => (c.connectors?.length ?? 0) > 0)) problems.push('grid_control: needs chargers with their connectors listed (chargers[].connectors): those are what it dims');
  // Every car must be dimmable: the fuse controller controls the connectors that hold a plan,
  // so each connector needs a default target (a car without a client's target then gets one),
  // whichever OCPP version its charger speaks (a 2.0.1 station's EVSEs are controlled as 1.6 connectors).
  for (const [c, i] of config.chargers.map((c, i) => [c, i] as const)) {
    if ((c.connectors?.length ?? 0) === 0) problems.push(`chargers[${i}].connectors: charger ${c.id} lists no connectors: with grid_control every charger must be dimmable; list each connector with its limits and a default_target`);
    for (const [k, j] of (c.connectors ?? []).map((k, j) => [k, j] as const)) {
      if (!k.default_target) problems.push(`chargers[${i}].connectors[${j}].default_target: with grid_control every car must get a plan (only a connector with a plan is lowered when dimmed); set a default target (departure_local_time, energy_wh) for connector ${k.connector_id} of ${c.id}`);
    }
  }
  return problems;
}

function crossChecks(config: Config): string[] {
  const problems: string[] = [];
  const busNames = new Set<string>();
  for (const [bus, i] of entries<Config['buses'][number]>(config.buses)) {
    if (typeof bus.name !== 'string') continue;
    if (busNames.has(bus.name)) problems.push(`buses[${i}].name: "${bus.name}" is used by another bus`);
    busNames.add(bus.name);
  }
  problems.push(...gridControlProblems(config));
  const resourceIds = new Set<string>();
  const addresses = new Set<string>();
  const busTypes = new Map(entries<Config['buses'][number]>(config.buses).map(([bus]) => [bus.name, bus.type]));
  const modbus = sources.forBusType('rtu')!;
  for (const [meter, i] of entries<Config['meters'][number]>(config.meters)) {
    if (typeof meter.bus === 'string' && !busNames.has(meter.bus)) problems.push(`meters[${i}].bus: no bus named "${meter.bus}" (known: ${[...busNames].join(', ') || 'none'})`);
    if (typeof meter.resource_id === 'string') {
      if (resourceIds.has(meter.resource_id)) problems.push(`meters[${i}].resource_id: ${meter.resource_id} is used by another meter`);
      resourceIds.add(meter.resource_id);
    }
    const address = `${meter.bus}/${meter.unit_id}`;
    if (addresses.has(address)) problems.push(`meters[${i}].unit_id: unit ${meter.unit_id} on bus "${meter.bus}" is used by another meter`);
    addresses.add(address);
    // The meter's source checks the rest (a meter on an unknown bus is checked as a Modbus one).
    const source = sources.forBusType(String(busTypes.get(meter.bus))) ?? modbus;
    problems.push(...source.meterProblems(meter, i, config));
  }
  const mqtt = isMapping(config.mqtt) ? config.mqtt : undefined;
  if (mqtt && mqtt.password && mqtt.password_file) problems.push('mqtt.password_file: set either mqtt.password or mqtt.password_file, not both');
  // Without a password the broker sees a username alone: refused, or worse, accepted as anonymous.
  // A client certificate is a credential of its own (brokers that map it to the username).
  if (mqtt && mqtt.username && !mqtt.password && !mqtt.password_file && !mqtt.cert_file) {
    problems.push('mqtt.username: has no password: set mqtt.password_file (or mqtt.password, or METERGATE_MQTT__PASSWORD in the environment)');
  }
  if (mqtt && mqtt.url === undefined && mqtt.urls === undefined) problems.push('mqtt.url: is required'); // or mqtt.urls (the schema says so)
  if (mqtt && mqtt.url !== undefined && mqtt.urls !== undefined) problems.push('mqtt.urls: set either mqtt.url or mqtt.urls, not both (put every node in mqtt.urls)');
  if (mqtt && mqtt.reconnect_max_ms < mqtt.reconnect_min_ms) problems.push('mqtt.reconnect_max_ms: must be >= mqtt.reconnect_min_ms');
  problems.push(...httpExposureProblems(config.http));
  const chargerIds = new Set<string>();
  for (const [charger, i] of entries<Config['chargers'][number]>(config.chargers)) {
    if (typeof charger.id === 'string') {
      if (chargerIds.has(charger.id)) problems.push(`chargers[${i}].id: "${charger.id}" is used by another charger`);
      chargerIds.add(charger.id);
    }
    if (charger.password && charger.password_file) problems.push(`chargers[${i}].password_file: set either password or password_file, not both`);
    // A parent for a tag that is not listed would never be told to anyone: a typo, said at start.
    const auth = charger.auth as unknown;
    if (isMapping(auth) && isMapping(auth.parent_id_tags) && Array.isArray(auth.id_tags)) {
      const listed = new Set(auth.id_tags.map((t) => String(t).toLowerCase()));
      for (const tag of Object.keys(auth.parent_id_tags)) {
        if (!listed.has(tag.toLowerCase())) problems.push(`chargers[${i}].auth.parent_id_tags.${tag}: is not one of auth.id_tags`);
      }
    }
    for (const [connector, resourceId] of Object.entries(isMapping(charger.connector_meters) ? charger.connector_meters : {})) {
      if (typeof resourceId === 'string' && !resourceIds.has(resourceId)) problems.push(`chargers[${i}].connector_meters.${connector}: ${resourceId} is not a configured meter (meters[].resource_id)`);
    }
    // A meter key that is no EC key would make every signed session key_unknown: said at start instead.
    const keys: Array<[string, unknown]> = [['meter_public_key', charger.meter_public_key], ...Object.entries(isMapping(charger.meter_public_keys) ? charger.meter_public_keys : {}).map(([c, k]): [string, unknown] => [`meter_public_keys.${c}`, k])];
    for (const [path, key] of keys) {
      const problem = typeof key === 'string' ? meterKeyProblem(key) : null;
      if (problem !== null) problems.push(`chargers[${i}].${path}: ${problem}`);
    }
    // Security profile 3: the client certificate is the credential (no basic auth).
    if (!charger.password && !charger.password_file && charger.security_profile !== 3) {
      problems.push(`chargers[${i}].password: a charge point needs a password (password or password_file): chargers connect with HTTP basic auth (or security_profile: 3 with a client certificate)`);
    }
    if ((charger.security_profile === 2 || charger.security_profile === 3) && !(isMapping(config.ocpp) && config.ocpp.tls_port !== undefined)) {
      problems.push(`chargers[${i}].security_profile: ${charger.security_profile} needs wss://: set ocpp.tls_port (and http.tls)`);
    }
    if (charger.security_profile === 3 && !(isMapping(config.ocpp) && typeof config.ocpp.client_ca_file === 'string')) {
      problems.push(`chargers[${i}].security_profile: 3 needs ocpp.client_ca_file: the CA that signed the chargers' client certificates`);
    }
    const connectorIds = new Set<number>();
    for (const [connector, j] of entries<NonNullable<Config['chargers'][number]['connectors']>[number]>(charger.connectors)) {
      const path = `chargers[${i}].connectors[${j}]`;
      if (typeof connector.connector_id === 'number') {
        if (connectorIds.has(connector.connector_id)) problems.push(`${path}.connector_id: connector ${connector.connector_id} is listed twice`);
        connectorIds.add(connector.connector_id);
      }
      if (typeof connector.min_current_a === 'number' && typeof connector.max_current_a === 'number' && connector.min_current_a > connector.max_current_a) {
        problems.push(`${path}.min_current_a: ${connector.min_current_a} A is above max_current_a (${connector.max_current_a} A)`);
      }
    }
  }
  const site = isMapping(config.site) ? config.site : undefined;
  if (typeof site?.meter === 'string' && !resourceIds.has(site.meter)) problems.push(`site.meter: ${site.meter} is not a configured meter (meters[].resource_id)`);
  problems.push(...uncountedChargers(config));
  problems.push(...capacityMeterProblems(config));
  const ocpp = isMapping(config.ocpp) ? config.ocpp : undefined;
  if (ocpp?.tls_port !== undefined && !isMapping(config.http?.tls)) problems.push('ocpp.tls_port: wss needs the gateway certificate: set http.tls (cert_file, key_file)');
  if (ocpp?.port === false && ocpp.tls_port === undefined) problems.push('ocpp.port: false turns ws:// off, and without ocpp.tls_port no charger could connect: set ocpp.tls_port (wss://)');
  if (typeof ocpp?.client_ca_file === 'string') {
    if (ocpp.tls_port === undefined) problems.push('ocpp.client_ca_file: client certificates are checked on wss:// only: set ocpp.tls_port');
    const pem = readConfigFile(ocpp.client_ca_file, 'ocpp.client_ca_file', problems);
    if (pem !== undefined) {
      try {
        new X509Certificate(pem);
      } catch (err) {
        problems.push(`ocpp.client_ca_file: ${ocpp.client_ca_file} is not a PEM certificate (${(err as Error).message})`);
      }
    }
  }
  for (const [code, list] of Object.entries(isMapping(config.tariffs) ? config.tariffs : {})) {
    if (!marketByCode(code)) problems.push(`tariffs.${code}: not a known market area (known: ${MARKETS.map((m) => m.code).join(', ')})`);
    const versions = entries<{ valid_from?: unknown }>(list);
    for (let k = 1; k < versions.length; k++) {
      const [prev] = versions[k - 1];
      const [cur, i] = versions[k];
      if (typeof prev.valid_from === 'string' && typeof cur.valid_from === 'string' && !(cur.valid_from > prev.valid_from)) {
        problems.push(`tariffs.${code}[${i}].valid_from: ${cur.valid_from} must be after the tariff before it (${prev.valid_from}): list the tariffs oldest first`);
      }
    }
  }
  return problems;
}

function readSecretFile(path: string, setting: string, problems: string[], hint: string): string | undefined {
  return readConfigFile(path, setting, problems, hint)?.trim();
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

/** A valid config and where its settings came from. */
export interface LoadedConfig {
  readonly config: Config;
  /** What the environment set (setting path → variable) and which file settings it replaced. */
  readonly env: EnvLayer;
}

/** Validates a parsed document; returns the frozen config or throws ConfigError with every problem. */
export function validateConfig(raw: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env): Config {
  return validateConfigWithSources(raw, source, env).config;
}

/**
 * Every layer is checked and every problem reported at once, in layer order: variables
 * with the METERGATE_ prefix that name no setting, the schema, checks across settings,
 * secret files. A problem a variable caused says which.
 */
export function validateConfigWithSources(raw: unknown, source = 'config', env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const doc = (raw ?? {}) as Record<string, unknown>;
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(source, ['(root): must be a mapping of settings', ...applyEnvOverrides({}, env, configSchema as SchemaNode).problems]);
  }
  const copy = structuredClone(doc);
  dropNulls(copy);
  const envLayer = applyEnvOverrides(copy, env, configSchema as SchemaNode);
  const problems: string[] = [...envLayer.problems];
  const schemaErrors = configDocumentErrors(copy);
  const schemaOk = schemaErrors.length === 0;
  problems.push(...schemaErrors.filter((e) => e.keyword !== 'if').map((e) => formatAjvError(e, configSchema)));
  const config = copy as unknown as Config;
  try {
    problems.push(...crossChecks(config));
  } catch (err) {
    // A shape the schema already refused can trip a check written for valid configs;
    // the schema's problems say what to fix. On a valid config it is a bug: rethrow.
    if (schemaOk) throw err;
  }
  const mutable = config as unknown as {
    gateway_id?: string;
    mqtt?: { password?: string; password_file?: string };
    prices?: { source?: unknown; entsoe?: { security_token?: string; security_token_file?: string } };
  };
  const mqtt = isMapping(mutable.mqtt) ? mutable.mqtt : undefined;
  if (typeof mqtt?.password_file === 'string' && !mqtt.password) {
    mqtt.password = readSecretFile(mqtt.password_file, 'mqtt.password_file', problems, 'write the broker password the operator gave you into it');
  }
  const entsoe = isMapping(mutable.prices) && isMapping(mutable.prices.entsoe) ? mutable.prices.entsoe : undefined;
  // The token is only needed when ENTSO-E is the source: `source: none` must not fail on it.
  if (mutable.prices?.source === 'entsoe' && entsoe && typeof entsoe.security_token_file === 'string' && !entsoe.security_token) {
    entsoe.security_token = readSecretFile(
      entsoe.security_token_file,
      'prices.entsoe.security_token_file',
      problems,
      'write your ENTSO-E Transparency Platform API token into it, or set prices.source: none',
    );
  }
  for (const [charger, i] of entries<{ password?: string; password_file?: string }>((mutable as { chargers?: unknown }).chargers)) {
    if (typeof charger.password_file === 'string' && !charger.password) {
      const password = readSecretFile(charger.password_file, `chargers[${i}].password_file`, problems, 'write the charge point\'s AuthorizationKey into it');
      const problem = password === undefined ? null : authorizationKeyProblem(password);
      if (problem) problems.push(`chargers[${i}].password_file: ${problem}`);
      charger.password = password;
    }
  }
  if (problems.length > 0) throw new ConfigError(source, [...new Set(problems.map((p) => attributeToEnv(p, envLayer)))]);
  mutable.gateway_id ??= hostname();
  // One list of nodes from here on; `url` stays the first of them.
  const mq = mutable.mqtt as { url?: string; urls?: string[] } | undefined;
  if (mq) {
    mq.urls ??= [mq.url!];
    mq.url ??= mq.urls[0];
  }
  applyMeterDefaults(config);
  expandChannels(config);
  return { config: deepFreeze(config), env: envLayer };
}

/**
 * A P1 meter's M-Bus channels are resources of their own (docs/p1.md): each becomes a meters
 * entry of its own (channel set, unit_id the channel number, profile dsmr-mbus) on the meter's
 * bus, so boot_notification, heartbeats, network_scan and the status page see it like any meter.
 */
function expandChannels(config: Config): void {
  const meters = config.meters as MeterConfig[];
  for (const meter of [...meters]) {
    for (const [number, resourceId] of Object.entries(meter.channels ?? {})) {
      meters.push({ resource_id: resourceId, bus: meter.bus, unit_id: Number(number), profile: 'dsmr-mbus', extra_metrics: [], channel: { of: meter.resource_id, number: Number(number) } });
    }
  }
}

/** What a meter's source lets it leave out (a P1 meter's unit_id and profile). */
function applyMeterDefaults(config: Config): void {
  const busTypes = new Map(config.buses.map((b) => [b.name, b.type]));
  for (const meter of config.meters) {
    const defaults = sources.forBusType(busTypes.get(meter.bus) ?? '')?.meterDefaults ?? {};
    for (const [key, value] of Object.entries(defaults)) (meter as unknown as Record<string, unknown>)[key] ??= value;
  }
}

/** Reads, parses and validates a YAML config file. */
export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfigWithSources(path, env).config;
}

export function loadConfigWithSources(path: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  // Variables that name no setting are wrong whatever the file says: listed with the file's problems.
  const envProblems = () => applyEnvOverrides({}, env, configSchema as SchemaNode).problems;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(path, [code === 'ENOENT' ? `${NO_SUCH_FILE} (ENOENT)` : `(file): cannot read (${code ?? String(err)})`, ...envProblems()]);
  }
  const { doc, problems } = parseYaml(text);
  if (problems.length > 0) throw new ConfigError(path, [...problems, ...envProblems()]);
  return validateConfigWithSources(doc.toJS(), path, env);
}

/**
 * site.capacity reads the quarter-hour demand and the month's peak from the site meter's
 * telegrams (1-0:1.4.0, 1-0:1.6.0): the site meter must be a P1 meter (docs/grid-limits.md).
 */
function capacityMeterProblems(config: Config): string[] {
  const site = config.site as Partial<Config['site']> | undefined;
  if (!site || !isMapping(site.capacity)) return [];
  if (typeof site.meter !== 'string') return ['site.capacity: needs site.meter, the Belgian P1 meter whose 1-0:1.4.0 and 1-0:1.6.0 it follows'];
  if (typeof site.limit_a !== 'number') return ['site.capacity: needs site.limit_a (the main fuse): the cap is shared as a headroom under it'];
  const meter = entries<Config['meters'][number]>(config.meters).map(([m]) => m).find((m) => isMapping(m) && m.resource_id === site.meter);
  if (!meter) return [];
  const bus = entries<Config['buses'][number]>(config.buses).map(([b]) => b).find((b) => isMapping(b) && b.name === meter.bus);
  if (bus && bus.type !== 'p1' && bus.type !== 'p1-tcp') return [`site.capacity: the site meter ${site.meter} is on bus ${String(bus.name)} (${String(bus.type)}), not a P1 bus: the quarter-hour demand and the month's peak come from a Belgian P1 meter's 1-0:1.4.0 and 1-0:1.6.0`];
  return [];
}
