// `metergate demo`: the daemon on embedded defaults, no hardware, no cloud. It starts a
// simulated SDM630 bus (Modbus TCP), an embedded TLS MQTT broker with a CA made on the
// spot, the daemon with a temporary data directory holding real recorded prices moved onto
// today (demo-prices.ts) and three API tokens, a subscriber that prints every message as it
// arrives (checked against its JSON Schema), and a simulated OCPP charger with two cars
// (charging-scene.ts): a forecast, a charging plan and a priced session, read over HTTP.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { parseDocument } from 'yaml';
import { validateConfig } from '../config/load.js';
import { createContext, Daemon } from '../daemon.js';
import { createLogger } from '../log.js';
import { Simulator } from '../sim/simulator.js';
import { messageProblems, MESSAGE_TYPES, type MessageType } from '../uplink/validate.js';
import { makeDemoCertificates } from './certs.js';
import { startEmbeddedBroker } from './broker.js';
import { freePort } from '../free-port.js';
import { TokenStore } from '../store/tokens.js';
import { storeDemoPrices } from './demo-prices.js';
import { ChargingScene } from './charging-scene.js';
import { messageLines } from './message-line.js';

export const DEMO_CONFIG_URL = new URL('../../config/demo.yaml', import.meta.url);

export interface DemoOptions {
  /** Where the live messages go (stdout). */
  readonly out: NodeJS.WritableStream;
  /** Stop by itself after this long (tests); default: run until SIGINT/SIGTERM. */
  readonly durationMs?: number;
  /** Print each message in full (pretty-printed JSON) under its line; default one line per message (message-line.ts). */
  readonly fullJson?: boolean;
  /** How long the top-up car on connector 2 charges before it leaves and its session is priced (default 60 s). */
  readonly topUpMs?: number;
}


const TYPE_BY_SUFFIX: Record<string, MessageType> = {
  measurements: 'measurement',
  heartbeats: 'heartbeat',
  boot_notifications: 'boot_notification',
  network_scans: 'network_scan',
  grid_dimming_events: 'grid_dimming_event',
};

export async function runDemo(opts: DemoOptions): Promise<void> {
  const out = (line = '') => opts.out.write(`${line}\n`);
  // Seconds since the process started (the command), for the first-of-each lines.
  const since = () => `${process.uptime().toFixed(1)} s after start`;
  const firsts = new Set<string>();
  const first = (what: string) => {
    if (firsts.has(what)) return;
    firsts.add(what);
    out(`** first ${what}: ${since()}`);
  };
  const dir = mkdtempSync(join(tmpdir(), 'metergate-demo-'));
  const logger = createLogger(process.env.METERGATE_LOG_LEVEL ?? 'error', process.stderr as never);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    while (stops.length > 0) {
      try {
        await stops.pop()!();
      } catch {
        /* best effort on the way out */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    out('metergate demo: simulated meters -> SQLite outbox -> TLS MQTT (embedded broker). Ctrl-C stops it.');
    const certs = await makeDemoCertificates();
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, certs.caCert);

    const raw = parseDocument(readFileSync(DEMO_CONFIG_URL, 'utf8')).toJS() as Record<string, any>;
    const broker = await startEmbeddedBroker({ cert: certs.serverCert, key: certs.serverKey, username: raw.mqtt.username, password: raw.mqtt.password });
    stops.push(() => broker.stop());

    const sim = new Simulator({ units: (raw.meters as Array<{ unit_id: number; profile: string }>).map((m) => ({ unitId: m.unit_id, profile: m.profile })), logger, tcpPort: 0, host: '127.0.0.1' });
    const endpoints = await sim.start();
    stops.push(() => sim.stop());

    raw.data_dir = join(dir, 'data');
    raw.buses[0].tcp_port = endpoints.tcpPort;
    raw.mqtt.url = `mqtts://localhost:${broker.port}`;
    raw.mqtt.ca_file = caFile;
    raw.http.port = await freePort();
    raw.ocpp.port = await freePort();
    const config = validateConfig(raw, 'config/demo.yaml', {});
    const ctx = createContext(config, { logger });
    const prices = storeDemoPrices(ctx.db, Date.now());
    const tokens = new TokenStore(ctx.db);
    const made = (type: 'cdrs' | 'price_forecast' | 'cpo') => tokens.create({ name: `demo-${type}`, type, nowMs: Date.now() }).token;
    const token = { cdrs: made('cdrs'), priceForecast: made('price_forecast'), cpo: made('cpo') };
    const charger = config.chargers[0]!;
    const http = `http://127.0.0.1:${config.http.port}`;

    out(`  simulator      Modbus TCP 127.0.0.1:${endpoints.tcpPort}, unit ids ${config.meters.map((m) => m.unit_id).join(', ')} (SDM630)`);
    out(`  broker         ${config.mqtt!.url} (TLS, CA generated just now: ${caFile})`);
    out(`  data dir       ${config.data_dir} (SQLite: readings + outbox)`);
    out(`  HTTP           ${http}/status  /healthz  /metrics`);
    out(`  OCPP           ws://127.0.0.1:${config.ocpp.port}/${charger.id} (simulated charger, connectors 1 and 2)`);
    out(`  prices         ${prices.periods} real ${prices.marketArea} day-ahead prices of ${prices.recorded.from}..${prices.recorded.to} moved onto ${prices.movedTo.from}..${prices.movedTo.to} (config/demo-prices/${prices.file}); tomorrow is forecast`);
    out('');
    out('  API tokens made for this run (printed once, as `metergate token create` does):');
    out(`    cdrs            ${token.cdrs}`);
    out(`    price_forecast  ${token.priceForecast}`);
    out(`    cpo             ${token.cpo}`);
    out('  try, while it runs:');
    out(`    curl -H "Authorization: Bearer ${token.priceForecast}" '${http}/api/v1/market_price_forecast?region=NL'`);
    out(`    curl -H "Authorization: Token ${token.cpo}" ${http}/api/v1/chargers/${charger.id}/connectors/1/plan`);
    out(`    curl -H "Authorization: Token ${token.cdrs}" ${http}/api/v1/cdrs/ocpp:${charger.id}:<transaction id printed below>`);
    out(`    curl ${http}/healthz`);
    out('');

    // Subscribe first, as a cloud consumer would; print each message as it arrives.
    const sub = mqtt.connect(config.mqtt!.url, { ca: certs.caCert, username: raw.mqtt.username, password: raw.mqtt.password, protocolVersion: 4, reconnectPeriod: 500 });
    stops.push(() => sub.endAsync(true));
    await new Promise<void>((resolve, reject) => {
      sub.once('connect', () => resolve());
      sub.once('error', reject);
    });
    await sub.subscribeAsync(`${config.mqtt!.topic_prefix}/resources/+/+`, { qos: 1 });
    const counts = Object.fromEntries(MESSAGE_TYPES.map((t) => [t, 0])) as Record<MessageType, number>;
    sub.on('message', (topic, payload, packet) => {
      const type = TYPE_BY_SUFFIX[topic.split('/').pop() ?? ''];
      if (!type) return;
      counts[type] += 1;
      if (type === 'measurement') first(`measurement on the broker`);
      let json: unknown;
      try {
        json = JSON.parse(payload.toString());
      } catch {
        out(`${topic}: not JSON!`);
        return;
      }
      for (const line of messageLines({ topic, type, json, retained: packet.retain, problems: messageProblems(type, json) }, opts.fullJson ?? false)) out(line);
    });

    const daemon = new Daemon(ctx);
    await daemon.start();
    stops.push(() => daemon.stop());
    out(`daemon started; first measurements within ${Math.round(config.poll.interval_ms / 1000)} s, heartbeats every ${Math.round(config.mqtt!.heartbeat_interval_ms / 1000)} s`);
    out(
      opts.fullJson
        ? 'each message: its topic and schema verdict, then its JSON as a subscriber receives it'
        : 'each message on one line: its topic, schema verdict and main fields, readings rounded (--json: each message in full)',
    );
    out('');

    const scene = new ChargingScene({
      ocppEndpoint: `ws://127.0.0.1:${config.ocpp.port}`,
      httpBase: http,
      chargePointId: charger.id,
      chargerPassword: raw.chargers[0].password,
      tokens: token,
      region: prices.marketArea,
      // Leaves this time tomorrow: tonight's prices and tomorrow's forecast both count.
      departureAfterMs: 24 * 3_600_000,
      energyWh: 30_000,
      topUpMs: opts.topUpMs ?? 60_000,
      meterValueIntervalMs: 10_000,
      say: (line) => out(`-- ${line}`),
      onForecast: () => first('forecast (with its band) over HTTP'),
      onPlan: () => first('charging plan'),
      onCdr: () => first('priced cdr over HTTP'),
    });
    stops.push(() => scene.stop());
    void scene.run();

    await new Promise<void>((resolve) => {
      const done = () => resolve();
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
      if (opts.durationMs !== undefined) setTimeout(done, opts.durationMs).unref();
    });
    out('');
    out(`stopping; received ${Object.entries(counts).map(([t, n]) => `${n} ${t}`).join(', ')}`);
  } finally {
    await stopAll();
  }
}
