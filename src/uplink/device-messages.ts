// The messages about the device rather than its readings:
// - heartbeat: every heartbeat_interval_ms per resource whose meter is online and answered
//   in the last minute (the first as soon as it answers), QoS 1, not retained, only while connected
//   (a stale heartbeat is never queued);
// - boot_notification: retained, once per resource after start, through the outbox;
// - network_scan: retained, through the outbox, at start and whenever the content changes
//   (src/ops/network/network-scan.ts watches interfaces and what answers on each bus; the
//   daemon hands its network.changed events to networkScan()).
// Timestamps come from the clock gate: nothing is stamped while the clock is not trusted.
import { randomUUID } from 'node:crypto';
import { hostname, platform, release } from 'node:os';
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { MeterStatus } from '../domain.js';
import type { Module } from '../lifecycle.js';
import type { Logger } from '../log.js';
import { resolveProfile } from '../modbus/profiles/index.js';
import { VERSION } from '../version.js';
import type { MeterIdentity } from '../sources/source.js';
import type { ClockGate } from './clock-gate.js';
import { PublishRefusedError, type MqttConnection } from './connection.js';
import {
  buildBootNotification,
  buildHeartbeat,
  buildNetworkScan,
  type GatewayInfo,
  type MeterInfo,
  type NetworkScanContent,
} from './messages.js';
import type { MeasurementRecorder } from './recorder.js';
import { refusalKind } from './refusals.js';
import { topicFor } from './topics.js';
import { messageProblems } from './validate.js';

const CHECK_MS = 1_000;
const SCAN_SETTLE_MS = 1_500;
const FIRST_SCAN_GRACE_MS = 30_000;
const ANSWERED_WITHIN_MS = 60_000;
/** Heartbeats of a resource the broker refused pause this long (see refusedUntil). */
const HEARTBEAT_REFUSED_PAUSE_MS = 10 * 60_000;

export interface DeviceMessagesDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly connection: MqttConnection;
  readonly recorder: Pick<MeasurementRecorder, 'enqueue'>;
  readonly clockGate: ClockGate;
  /** Live meter states (the poller's statuses()); null when no poller runs. */
  readonly meters: () => readonly MeterStatus[] | null;
  /**
   * What a meter said about itself (a P1 identification line): undefined when its source
   * does not tell (the profile names vendor and model), null while it has not said it yet.
   */
  readonly meterIdentity?: (resourceId: string) => MeterIdentity | null | undefined;
}

export class DeviceMessages implements Module {
  readonly name = 'uplink-device-messages';
  private timer: NodeJS.Timeout | null = null;
  /** Monotonic time of each resource's last heartbeat on the current connection. */
  private readonly lastHeartbeat = new Map<string, number>();
  /**
   * Monotonic time until which a resource's heartbeats are not sent, after the broker refused
   * one for good (0x87 ...): mosquitto 2.0 closes the connection after a refusal, and one
   * heartbeat per connection would make that a reconnect loop that holds up every resource.
   */
  private readonly refusedUntil = new Map<string, number>();
  private bootedAtMs: number | null = null;
  private readonly bootPending = new Set<string>();
  private pendingScan: NetworkScanContent | null = null;
  private settleTimer: NodeJS.Timeout | null = null;
  private startedAtMono = 0;
  private readonly counters: { heartbeats: Counter };

  constructor(private readonly deps: DeviceMessagesDeps) {
    this.counters = {
      heartbeats: new Counter({ name: 'metergate_uplink_heartbeats_total', help: 'Heartbeats acknowledged by the broker', registers: [deps.metrics] }),
    };
  }

  async start(): Promise<void> {
    this.bootedAtMs = this.deps.clockGate.trustedNow();
    this.startedAtMono = performance.now();
    for (const m of this.deps.config.meters) this.bootPending.add(m.resource_id);
    this.deps.connection.on('connected', this.onConnected);
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.check();
  }

  async stop(): Promise<void> {
    this.deps.connection.off('connected', this.onConnected);
    if (this.timer) clearInterval(this.timer);
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.timer = this.settleTimer = null;
  }

  /**
   * New network scan content (from the NetworkScanWatcher: at start and on every change).
   * Published once it has settled for a moment, and at start not before every meter was
   * polled once (or a grace period passed): one retained message, not one per meter state.
   */
  networkScan(content: NetworkScanContent): void {
    this.pendingScan = content;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      this.scan();
    }, SCAN_SETTLE_MS);
  }

  private readonly onConnected = (): void => {
    this.lastHeartbeat.clear();
    this.heartbeats();
  };

  private check(): void {
    this.boot();
    this.scan();
    this.heartbeats();
  }

  private gateway(): GatewayInfo {
    return {
      id: this.deps.config.gateway_id ?? hostname(),
      hostname: hostname(),
      software_version: VERSION,
      os: `${platform()} ${release()}`,
      node_version: process.versions.node,
    };
  }

  private meterInfo(resourceId: string): MeterInfo | null {
    const meter = this.deps.config.meters.find((m) => m.resource_id === resourceId);
    if (!meter) return null;
    const identity = this.deps.meterIdentity?.(resourceId);
    if (identity === null && this.waitsForIdentity(resourceId)) return null;
    const profile = resolveProfile(meter.profile, this.deps.config.profiles);
    return {
      profile: meter.profile,
      vendor: identity?.vendor ?? profile?.vendor ?? 'unknown',
      model: identity?.model ?? profile?.model ?? meter.profile,
      unit_id: meter.unit_id,
      bus: meter.bus,
      serial_number: identity?.serialNumber ?? null,
      firmware: identity?.firmware ?? null,
    };
  }

  /** A meter that names itself is waited for while its source has not heard it yet (at most the first-scan grace). */
  private waitsForIdentity(resourceId: string): boolean {
    const state = (this.deps.meters() ?? []).find((m) => m.resourceId === resourceId)?.state;
    return (state === undefined || state === 'unknown') && performance.now() - this.startedAtMono < FIRST_SCAN_GRACE_MS;
  }

  private boot(): void {
    if (this.bootPending.size === 0) return;
    const now = this.deps.clockGate.trustedNow();
    if (now === null) return;
    // The start time if the clock was trusted then, else the moment it became so.
    this.bootedAtMs ??= now;
    const gateway = this.gateway();
    for (const resourceId of [...this.bootPending]) {
      const meter = this.meterInfo(resourceId);
      if (!meter) continue;
      const message = buildBootNotification({ organizationId: this.deps.config.organization_id, resourceId, bootedAtMs: this.bootedAtMs, gateway, meter });
      if (this.deps.recorder.enqueue('boot_notification', resourceId, message, { retain: true, stampedAtMs: this.bootedAtMs })) this.bootPending.delete(resourceId);
    }
  }

  private scan(): void {
    const content = this.pendingScan;
    if (content === null || this.settleTimer) return;
    const now = this.deps.clockGate.trustedNow();
    if (now === null) return;
    const polling = (this.deps.meters() ?? []).some((m) => m.state === 'unknown');
    if (polling && performance.now() - this.startedAtMono < FIRST_SCAN_GRACE_MS) return;
    let all = true;
    for (const meter of this.deps.config.meters) {
      const message = buildNetworkScan(this.deps.config.organization_id, meter.resource_id, now, content);
      all = this.deps.recorder.enqueue('network_scan', meter.resource_id, message, { retain: true, stampedAtMs: now }) && all;
    }
    // An invalid scan is a bug, logged by the recorder; retrying the same content would not help.
    this.pendingScan = null;
    if (all) this.deps.logger.debug({ resources: this.deps.config.meters.length }, 'network scan stored for publishing');
  }

  private heartbeats(): void {
    const { connection, config } = this.deps;
    if (connection.state !== 'connected') return;
    const now = this.deps.clockGate.trustedNow();
    if (now === null) return;
    const wallNow = this.deps.clock.now();
    const mono = performance.now();
    const interval = config.mqtt!.heartbeat_interval_ms;
    const window = Math.max(ANSWERED_WITHIN_MS, interval);
    for (const status of this.deps.meters() ?? []) {
      // Online now (an offline meter stops at once, not a minute later) and answered within the minute.
      if (status.state !== 'online' || status.lastAnsweredAtMs === null || wallNow - status.lastAnsweredAtMs > window) continue;
      // Each resource on its own beat: the first as soon as its meter answers, then every interval.
      const last = this.lastHeartbeat.get(status.resourceId);
      if (last !== undefined && mono - last < interval - CHECK_MS / 2) continue;
      if (mono < (this.refusedUntil.get(status.resourceId) ?? 0)) continue;
      this.lastHeartbeat.set(status.resourceId, mono);
      const message = buildHeartbeat(config.organization_id, status.resourceId, now);
      const problems = messageProblems('heartbeat', message);
      if (problems.length > 0) {
        this.deps.logger.error({ resource_id: status.resourceId, problems }, 'heartbeat does not match its schema: not sent');
        continue;
      }
      connection.publish(
        { topic: topicFor(config.mqtt!.topic_prefix, status.resourceId, 'heartbeat'), payload: JSON.stringify(message), qos: 1, retain: false, messageId: randomUUID() },
        (err) => {
          if (!err) this.counters.heartbeats.inc();
          else if (err instanceof PublishRefusedError && refusalKind(err.reasonCode) === 'permanent') {
            this.refusedUntil.set(status.resourceId, performance.now() + HEARTBEAT_REFUSED_PAUSE_MS);
            this.deps.logger.warn({ resource_id: status.resourceId, reasonCode: err.reasonCode }, 'broker refused a heartbeat: heartbeats of this resource pause for 10 min (`metergate doctor` says what to fix)');
          }
        },
      );
    }
  }
}
