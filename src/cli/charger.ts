// `metergate charger <operation> <charge_point_id> ...`: the operator operations against the
// RUNNING daemon, over its local HTTP API (routes/charger-operations.ts) with a cpo token,
// so that the CLI, the HTTP API and the status page go one way, through the one central
// system that holds the chargers' connections (docs/chargers.md "Operator operations").
// The URL comes from the config (http.port on loopback), or --url; over https the gateway's
// certificate is verified as gateway-tls.ts says (--ca-file / system roots with the host
// name checked, or --pin-sha256 for a self-signed one). The token comes from MG_TOKEN (not
// METERGATE_…: those name config settings, config/env.ts) or --token-file, never from the
// command line (it would show in `ps`).
//
// Exit codes: 0 the charger answered (its answer printed as JSON on stdout, even a
// Rejected); 1 a problem from the gateway (its detail on stderr, the problem JSON on
// stdout); 64 bad usage; 69 the daemon could not be reached (or its certificate not
// verified: nothing was sent).
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Command, Option } from 'commander';
import { DEFAULT_CONFIG_PATH, loadConfigOrExit } from './config.js';
import { certificateAdvice, isLoopbackHost, tlsOptions, trustFrom, type GatewayTrust } from './gateway-tls.js';

interface CommonOptions {
  config: string;
  url?: string;
  tokenFile?: string;
  caFile?: string;
  pinSha256?: string;
  serverName?: string;
}

interface Target {
  readonly url: URL;
  readonly trust: GatewayTrust;
}

function usage(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(64);
}

function intArg(name: string, min: number) {
  return (v: string): number => {
    if (!/^[0-9]+$/.test(v) || Number(v) < min) usage(`${name} must be an integer >= ${min}`);
    return Number(v);
  };
}

function target(opts: CommonOptions): Target {
  if (opts.url) {
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      usage(`--url is not a URL: ${opts.url}`);
    }
    // The cpo token goes in the Authorization header: never in clear text across a network.
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) usage(`--url ${url.origin}: plain http beyond this machine would send the token in clear text; use https:// or run the command on the gateway`);
    return { url, trust: trustFrom(opts, usage) };
  }
  const config = loadConfigOrExit(opts.config);
  if (!config.http.enabled) usage('http.enabled is false in the config: the daemon has no HTTP API to reach (give --url if it runs elsewhere)');
  const loopback = ['0.0.0.0', '::', ''].includes(config.http.host) ? '127.0.0.1' : config.http.host;
  const host = loopback.includes(':') ? `[${loopback}]` : loopback;
  return { url: new URL(`${config.http.tls ? 'https' : 'http'}://${host}:${config.http.port}`), trust: trustFrom(opts, usage) };
}

function token(opts: CommonOptions): string {
  const fromFile = opts.tokenFile ? readFileSync(opts.tokenFile, 'utf8').trim() : undefined;
  const value = fromFile ?? process.env.MG_TOKEN?.trim();
  if (!value) usage('a cpo token is needed: set MG_TOKEN or give --token-file (create one with: metergate token create --type cpo --name NAME)');
  return value;
}

async function send(t: Target, path: string, tokenValue: string, body: Record<string, unknown> | null): Promise<{ status: number; text: string }> {
  const payload = body === null ? '' : JSON.stringify(body);
  const url = new URL(path, t.url);
  const https = url.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  // Verified before the request (and its token) goes out: a refused certificate rejects here or in the handshake.
  const tls = https ? await tlsOptions(url, t.trust) : {};
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: body === null ? 'GET' : 'POST',
        headers: { authorization: `Token ${tokenValue}`, ...(body === null ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
        ...tls,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === null ? undefined : payload);
  });
}

/** POSTs the operation with `body`; null: GETs the resource of that name. */
async function run(operation: string, chargePointId: string, body: Record<string, unknown> | null, opts: CommonOptions): Promise<void> {
  const t = target(opts);
  const tok = token(opts);
  let res: { status: number; text: string };
  try {
    res = await send(t, `/api/v1/chargers/${encodeURIComponent(chargePointId)}/${operation}`, tok, body);
  } catch (err) {
    const advice = certificateAdvice(err);
    process.stderr.write(advice ? `${t.url.origin}: ${advice}\n` : `the daemon could not be reached at ${t.url.origin}: ${(err as Error).message} (is \`metergate run\` running? --url to point elsewhere)\n`);
    process.exit(69);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    parsed = res.text;
  }
  process.stdout.write(`${JSON.stringify(parsed, null, 2)}\n`);
  if (res.status !== 200) {
    const detail = typeof parsed === 'object' && parsed !== null && 'detail' in parsed ? String((parsed as { detail: unknown }).detail) : `HTTP ${res.status}`;
    process.stderr.write(`${operation} refused (${res.status}): ${detail}\n`);
    process.exit(1);
  }
}

export function registerChargerCommands(program: Command): void {
  const charger = program
    .command('charger')
    .description('OCPP operations on a connected charger, through the running daemon\'s HTTP API (token: MG_TOKEN or --token-file, type cpo)');
  const op = (name: string, description: string) =>
    charger
      .command(`${name} <charge_point_id>`)
      .description(description)
      .option('-c, --config <file>', 'config file (gives the daemon\'s HTTP address)', DEFAULT_CONFIG_PATH)
      .option('--url <url>', 'the daemon\'s HTTP API instead of the one in the config, e.g. http://127.0.0.1:8080')
      .option('--token-file <file>', 'file holding a cpo token (default: $MG_TOKEN)')
      // Set once for a shell like MG_TOKEN: $MG_CA_FILE, $MG_SERVER_NAME, $MG_PIN_SHA256.
      .addOption(new Option('--ca-file <file>', 'https: the CA (PEM) that issued the gateway\'s certificate (default: the system\'s and Node\'s roots); the host name is checked').env('MG_CA_FILE'))
      .addOption(new Option('--server-name <name>', 'https: the name the gateway\'s certificate must carry (default: the URL\'s host; give it when connecting by a loopback address)').env('MG_SERVER_NAME'))
      .addOption(new Option('--pin-sha256 <fingerprint>', 'https, self-signed gateway certificate only: trust exactly the certificate with this SHA-256 fingerprint (logged at start as cert_sha256)').env('MG_PIN_SHA256'));
  type Opts<T> = CommonOptions & T;

  op('remote-start', 'RemoteStartTransaction')
    .requiredOption('--id-tag <tag>', 'the id tag to start with')
    .option('--connector <id>', 'connector (the charger chooses when left out)', intArg('--connector', 1))
    .option('--with-plan', 'send the connector\'s charging plan as the transaction\'s TxProfile')
    .action((cp: string, o: Opts<{ idTag: string; connector?: number; withPlan?: boolean }>) =>
      run('remote-start', cp, { id_tag: o.idTag, ...(o.connector === undefined ? {} : { connector_id: o.connector }), ...(o.withPlan ? { charging_profile: 'plan' } : {}) }, o),
    );
  op('remote-stop', 'RemoteStopTransaction')
    .requiredOption('--transaction <id>', 'the transaction id', intArg('--transaction', 1))
    .action((cp: string, o: Opts<{ transaction: number }>) => run('remote-stop', cp, { transaction_id: o.transaction }, o));
  op('reset', 'Reset (soft by default)')
    .addOption(new Option('--type <type>', 'soft or hard').choices(['soft', 'hard']).default('soft'))
    .option('--evse <id>', 'OCPP 2.0.1 stations only: reset this EVSE instead of the whole station', intArg('--evse', 1))
    .action((cp: string, o: Opts<{ type: string; evse?: number }>) => run('reset', cp, { type: o.type === 'hard' ? 'Hard' : 'Soft', ...(o.evse === undefined ? {} : { evse_id: o.evse }) }, o));
  op('unlock-connector', 'UnlockConnector')
    .requiredOption('--connector <id>', 'connector', intArg('--connector', 1))
    .action((cp: string, o: Opts<{ connector: number }>) => run('unlock-connector', cp, { connector_id: o.connector }, o));
  op('change-availability', 'ChangeAvailability of a connector, or of the whole charger (connector 0, the default)')
    .addOption(new Option('--type <type>', 'operative or inoperative').choices(['operative', 'inoperative']).makeOptionMandatory())
    .option('--connector <id>', 'connector; 0: the whole charger', intArg('--connector', 0), 0)
    .action((cp: string, o: Opts<{ type: string; connector: number }>) => run('change-availability', cp, { connector_id: o.connector, type: o.type === 'operative' ? 'Operative' : 'Inoperative' }, o));
  op('trigger-message', 'TriggerMessage')
    .addOption(new Option('--message <name>', 'the message to send now').choices(['BootNotification', 'DiagnosticsStatusNotification', 'FirmwareStatusNotification', 'Heartbeat', 'MeterValues', 'StatusNotification']).makeOptionMandatory())
    .option('--connector <id>', 'connector (MeterValues, StatusNotification)', intArg('--connector', 1))
    .action((cp: string, o: Opts<{ message: string; connector?: number }>) => run('trigger-message', cp, { requested_message: o.message, ...(o.connector === undefined ? {} : { connector_id: o.connector }) }, o));
  op('change-configuration', 'ChangeConfiguration')
    .requiredOption('--key <key>', 'configuration key')
    .requiredOption('--value <value>', 'its new value')
    .action((cp: string, o: Opts<{ key: string; value: string }>) => run('change-configuration', cp, { key: o.key, value: o.value }, o));
  op('get-configuration', 'GetConfiguration (every key, or those given)')
    .option('--key <key...>', 'keys to read')
    .action((cp: string, o: Opts<{ key?: string[] }>) => run('get-configuration', cp, o.key ? { keys: o.key } : {}, o));
  op('clear-cache', 'ClearCache').action((cp: string, o: CommonOptions) => run('clear-cache', cp, {}, o));
  op('get-composite-schedule', 'GetCompositeSchedule, next to the plan the gateway sent')
    .requiredOption('--connector <id>', 'connector; 0: the whole charger', intArg('--connector', 0))
    .requiredOption('--duration <s>', 'seconds from now', intArg('--duration', 1))
    .addOption(new Option('--unit <unit>', 'charging rate unit').choices(['A', 'W']))
    .action((cp: string, o: Opts<{ connector: number; duration: number; unit?: string }>) =>
      run('get-composite-schedule', cp, { connector_id: o.connector, duration_s: o.duration, ...(o.unit ? { charging_rate_unit: o.unit } : {}) }, o),
    );
  op('clear-charging-profile', 'ClearChargingProfile by --id, or by connector/purpose/stack level; none: every profile')
    .option('--id <id>', 'chargingProfileId', intArg('--id', 0))
    .option('--connector <id>', 'connector; 0: the whole charger', intArg('--connector', 0))
    .addOption(new Option('--purpose <purpose>', 'charging profile purpose').choices(['ChargePointMaxProfile', 'TxDefaultProfile', 'TxProfile']))
    .option('--stack-level <n>', 'stack level', intArg('--stack-level', 0))
    .action((cp: string, o: Opts<{ id?: number; connector?: number; purpose?: string; stackLevel?: number }>) =>
      run('clear-charging-profile', cp, { ...(o.id === undefined ? {} : { id: o.id }), ...(o.connector === undefined ? {} : { connector_id: o.connector }), ...(o.purpose === undefined ? {} : { charging_profile_purpose: o.purpose }), ...(o.stackLevel === undefined ? {} : { stack_level: o.stackLevel }) }, o),
    );
  op('data-transfer', 'DataTransfer to the charger')
    .requiredOption('--vendor <id>', 'vendorId')
    .option('--message-id <id>', 'messageId')
    .option('--data <text>', 'data')
    .action((cp: string, o: Opts<{ vendor: string; messageId?: string; data?: string }>) =>
      run('data-transfer', cp, { vendor_id: o.vendor, ...(o.messageId === undefined ? {} : { message_id: o.messageId }), ...(o.data === undefined ? {} : { data: o.data }) }, o),
    );
  op('send-local-list', 'SendLocalList of the configured id tags (the difference to what the charger holds, or --full)')
    .option('--full', 'send the whole list')
    .option('--differential', 'send only the difference')
    .action((cp: string, o: Opts<{ full?: boolean; differential?: boolean }>) => {
      if (o.full && o.differential) usage('--full and --differential exclude each other');
      return run('send-local-list', cp, o.full ? { update_type: 'Full' } : o.differential ? { update_type: 'Differential' } : {}, o);
    });
  op('get-local-list-version', 'GetLocalListVersion').action((cp: string, o: CommonOptions) => run('get-local-list-version', cp, {}, o));
  op('reserve-now', 'ReserveNow: hold a connector (0: any) for an id tag until --expiry or for --minutes (the gateway allocates the reservation id)')
    .requiredOption('--connector <id>', 'connector; 0: any connector of the charger', intArg('--connector', 0))
    .requiredOption('--id-tag <tag>', 'the id tag to hold it for')
    .option('--parent-id-tag <tag>', 'its parent id tag')
    .option('--expiry <date-time>', 'when the reservation ends (ISO 8601, e.g. 2026-11-27T18:00:00Z)')
    .option('--minutes <n>', 'the reservation ends this many minutes from now', intArg('--minutes', 1))
    .option('--connector-type <type>', 'OCPP 2.0.1 stations only: an EVSE with a connector of this type (e.g. cType2, cCCS2)')
    .action((cp: string, o: Opts<{ connector: number; idTag: string; parentIdTag?: string; expiry?: string; minutes?: number; connectorType?: string }>) => {
      if ((o.expiry === undefined) === (o.minutes === undefined)) usage('give one of --expiry and --minutes');
      const expiry = o.expiry ?? new Date(Date.now() + o.minutes! * 60_000).toISOString();
      const optional = { ...(o.parentIdTag === undefined ? {} : { parent_id_tag: o.parentIdTag }), ...(o.connectorType === undefined ? {} : { connector_type: o.connectorType }) };
      return run('reserve-now', cp, { connector_id: o.connector, id_tag: o.idTag, ...optional, expiry_date: expiry }, o);
    });
  op('cancel-reservation', 'CancelReservation of one of the charger\'s reservations')
    .requiredOption('--reservation <id>', 'the reservation id (see: metergate charger reservations)', intArg('--reservation', 1))
    .action((cp: string, o: Opts<{ reservation: number }>) => run('cancel-reservation', cp, { reservation_id: o.reservation }, o));
  op('reservations', 'The charger\'s reservations in force (read from the gateway, also while the charger is away)').action((cp: string, o: CommonOptions) => run('reservations', cp, null, o));
  // The charging profiles an OCPP 2.0.1 station holds (routes/station-charging-profiles.ts).
  op('get-charging-profiles', 'OCPP 2.0.1 stations: GetChargingProfiles by --id, or by purpose/stack level/source (at least one), optionally of one --evse; the reports: see charging-profiles')
    .option('--evse <id>', 'EVSE; 0: the station\'s own', intArg('--evse', 0))
    .option('--id <id...>', 'chargingProfileIds')
    .addOption(new Option('--purpose <purpose>', 'charging profile purpose').choices(['ChargePointMaxProfile', 'TxDefaultProfile', 'TxProfile', 'ChargingStationExternalConstraints']))
    .option('--stack-level <n>', 'stack level', intArg('--stack-level', 0))
    .option('--source <source...>', 'charging limit sources (EMS, Other, SO, CSO)')
    .action((cp: string, o: Opts<{ evse?: number; id?: string[]; purpose?: string; stackLevel?: number; source?: string[] }>) => {
      const ids = o.id?.map((v) => Number(v));
      if (ids?.some((n) => !Number.isInteger(n) || n < 0)) usage('--id takes whole numbers');
      if (ids === undefined && o.purpose === undefined && o.stackLevel === undefined && o.source === undefined) usage('give --id, --purpose, --stack-level or --source (OCPP 2.0.1 K09.FR.03)');
      return run('get-charging-profiles', cp, { ...(o.evse === undefined ? {} : { evse_id: o.evse }), ...(ids === undefined ? {} : { charging_profile_ids: ids }), ...(o.purpose === undefined ? {} : { charging_profile_purpose: o.purpose }), ...(o.stackLevel === undefined ? {} : { stack_level: o.stackLevel }), ...(o.source === undefined ? {} : { charging_limit_sources: o.source }) }, o);
    });
  op('charging-profiles', 'OCPP 2.0.1 stations: the profiles a station reported for one get-charging-profiles (its requestId)')
    .requiredOption('--request <id>', 'the requestId get-charging-profiles printed', intArg('--request', 0))
    .action((cp: string, o: Opts<{ request: number }>) => run(`charging-profiles/${o.request}`, cp, null, o));
  // A transaction's state at an OCPP 2.0.1 station (routes/station-transaction-status.ts).
  op('get-transaction-status', 'OCPP 2.0.1 stations: GetTransactionStatus of one --transaction (still ongoing there, events not yet delivered), or without: whether it holds queued transaction events')
    .option('--transaction <id>', 'the transaction id (as in GET .../transactions and the cdrs)', intArg('--transaction', 1))
    .action((cp: string, o: Opts<{ transaction?: number }>) => run('get-transaction-status', cp, o.transaction === undefined ? {} : { transaction_id: o.transaction }, o));
  // An OCPP 2.0.1 station's device model (routes/device-model.ts).
  op('device-model', 'An OCPP 2.0.1 station\'s device model as it reported it, and its reports (read from the gateway, also while the station is away)').action((cp: string, o: CommonOptions) => run('device-model', cp, null, o));
  op('device-model-report', 'Ask an OCPP 2.0.1 station for a device model report (GetBaseReport); it comes in NotifyReport parts: see device-model')
    .addOption(new Option('--base <base>', 'the report base').choices(['full', 'configuration', 'summary']).default('full'))
    .action((cp: string, o: Opts<{ base: string }>) => run('device-model/report', cp, { report_base: { full: 'FullInventory', configuration: 'ConfigurationInventory', summary: 'SummaryInventory' }[o.base] }, o));
}
