// Prometheus metrics that are read from the modules' live views at scrape time (so they
// cost nothing between scrapes), plus Node's process metrics. Modules register their own
// counters (polls, failures, latency per meter in modbus; publishes in the uplink; HTTP
// requests in the http layer); a name a module already registered is left to it.
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';
import { VERSION } from '../../version.js';
import type { Liveness } from '../systemd/liveness.js';
import type { Probes } from './probes.js';

export interface OpsMetricsDeps {
  readonly metrics: Registry;
  readonly probes: Probes;
  readonly liveness: Liveness;
  readonly clock: { now(): number };
}

const BROKER_STATES = ['connected', 'connecting', 'disconnected', 'disabled'] as const;

export function registerOpsMetrics(deps: OpsMetricsDeps): void {
  const { metrics: registry, probes } = deps;
  const registers = [registry];
  const absent = (name: string) => registry.getSingleMetric(name) === undefined;

  if (absent('metergate_process_cpu_seconds_total')) collectDefaultMetrics({ register: registry, prefix: 'metergate_' });

  if (absent('metergate_build_info')) {
    new Gauge({ name: 'metergate_build_info', help: 'Software version (value is always 1)', labelNames: ['version', 'node'], registers }).set({ version: VERSION, node: process.versions.node }, 1);
  }
  if (absent('metergate_loop_silence_seconds')) {
    new Gauge({
      name: 'metergate_loop_silence_seconds',
      help: 'Seconds since each long-running loop last completed a cycle (the watchdog is withheld past its limit)',
      labelNames: ['loop'],
      registers,
      collect() {
        this.reset();
        for (const l of deps.liveness.check().loops) this.set({ loop: l.loop }, l.silentForMs / 1000);
      },
    });
  }
  if (absent('metergate_meters')) {
    new Gauge({
      name: 'metergate_meters',
      help: 'Configured meters by state (unknown, online, offline)',
      labelNames: ['state'],
      registers,
      collect() {
        this.reset();
        const list = probes.meters?.() ?? [];
        for (const state of ['unknown', 'online', 'offline'] as const) this.set({ state }, list.filter((m) => m.state === state).length);
      },
    });
  }
  if (absent('metergate_broker_state')) {
    new Gauge({
      name: 'metergate_broker_state',
      help: 'MQTT broker connection state: 1 for the current state, 0 for the others',
      labelNames: ['state'],
      registers,
      collect() {
        const state = probes.uplink?.().state ?? 'disabled';
        for (const s of BROKER_STATES) this.set({ state: s }, s === state ? 1 : 0);
      },
    });
  }
  if (absent('metergate_broker_node_current')) {
    new Gauge({
      name: 'metergate_broker_node_current',
      help: 'Per broker node (mqtt.urls; a host name with several addresses once per address): 1 for the node in use, 0 for the others',
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const n of probes.uplink?.().nodes ?? []) this.set({ node: n.node }, n.state === 'current' ? 1 : 0);
      },
    });
  }
  if (absent('metergate_broker_node_failures')) {
    new Gauge({
      name: 'metergate_broker_node_failures',
      help: 'Per broker node: failed connect attempts and lost connections since the start (the reason is on /healthz, the status page and in doctor)',
      labelNames: ['node'],
      registers,
      collect() {
        this.reset();
        for (const n of probes.uplink?.().nodes ?? []) this.set({ node: n.node }, n.failures);
      },
    });
  }
  if (absent('metergate_outbox_depth')) {
    new Gauge({
      name: 'metergate_outbox_depth',
      help: 'Messages stored and waiting for the broker\'s PUBACK',
      registers,
      collect() {
        this.set(probes.uplink?.().outboxDepth ?? 0);
      },
    });
  }
  if (absent('metergate_outbox_oldest_age_seconds')) {
    new Gauge({
      name: 'metergate_outbox_oldest_age_seconds',
      help: 'Age of the oldest message in the outbox (0 when empty)',
      registers,
      collect() {
        this.set((probes.uplink?.().oldestAgeMs ?? 0) / 1000);
      },
    });
  }
  if (absent('metergate_price_coverage_end_timestamp_seconds')) {
    new Gauge({
      name: 'metergate_price_coverage_end_timestamp_seconds',
      help: 'End of the last stored day-ahead price period per region (Unix time)',
      labelNames: ['region'],
      registers,
      collect() {
        this.reset();
        for (const p of probes.prices?.() ?? []) if (p.lastEndMs !== null) this.set({ region: p.region }, p.lastEndMs / 1000);
      },
    });
  }
  if (absent('metergate_price_ahead_seconds')) {
    new Gauge({
      name: 'metergate_price_ahead_seconds',
      help: 'How far ahead of now prices are stored per region (negative: the current period has no price)',
      labelNames: ['region'],
      registers,
      collect() {
        this.reset();
        const now = deps.clock.now();
        for (const p of probes.prices?.() ?? []) this.set({ region: p.region }, p.lastEndMs === null ? -1 : (p.lastEndMs - now) / 1000);
      },
    });
  }
}
