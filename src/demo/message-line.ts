// How the demo prints a message it received from the broker (pure, no I/O). By default one
// line per message: the topic (what a cloud subscriber subscribes to), its schema verdict,
// and the fields a person watching looks for, rounded for reading. A measurement pretty-
// printed was ~23 lines, so a few seconds of the demo filled the screen and the charger's
// lines scrolled away; `metergate demo --json` still prints each message in full.
import type { BootNotificationMessage, HeartbeatMessage, MeasurementMessage, NetworkScanMessage } from '../uplink/messages.js';
import type { MessageType } from '../uplink/validate.js';

export interface ReceivedMessage {
  readonly topic: string;
  readonly type: MessageType;
  /** The payload as parsed JSON. */
  readonly json: unknown;
  readonly retained: boolean;
  /** Its JSON Schema problems (messageProblems), empty when valid. */
  readonly problems: readonly string[];
}

/** The lines printed for one message: one, or with `full` that line and the pretty-printed JSON. */
export function messageLines(m: ReceivedMessage, full: boolean): string[] {
  const verdict = m.problems.length === 0 ? 'schema-valid' : `SCHEMA PROBLEMS: ${m.problems.join('; ')}`;
  const head = `<- ${m.topic}  [${m.retained ? 'retained, ' : ''}${verdict}]`;
  if (full) return [head, ...JSON.stringify(m.json, null, 2).split('\n')];
  // A message that does not match its schema is shown as it came: its fields cannot be trusted to be there.
  return [`${head}  ${m.problems.length === 0 ? SUMMARY[m.type](m.json) : JSON.stringify(m.json)}`];
}

/** A reading rounded for the eye: whole numbers from 1000 on, else at most two decimals (--json has the exact value). */
export function readable(value: number): string {
  return String(Math.abs(value) >= 1000 ? Math.round(value) : Math.round(value * 100) / 100);
}

/** The time of day of an RFC 3339 UTC timestamp (the demo runs today). */
const timeOf = (iso: string) => iso.slice(11);

/** The main fields of each message type, one line's worth. */
const SUMMARY: Record<MessageType, (json: unknown) => string> = {
  measurement: (json) => {
    const m = json as MeasurementMessage;
    return `sampled ${timeOf(m.data.sampled_at)}: ${m.data.metrics.map((x) => `${x.name} ${readable(x.value)} ${x.unit}`).join(', ')}`;
  },
  heartbeat: (json) => `published ${timeOf((json as HeartbeatMessage).published_at)}`,
  boot_notification: (json) => {
    const b = json as BootNotificationMessage;
    return (
      `booted ${timeOf(b.booted_at)}: ${b.meter.vendor} ${b.meter.model} unit ${b.meter.unit_id} on bus ${b.meter.bus}, ` +
      `gateway ${b.gateway.id} (metergate ${b.gateway.software_version}, Node ${b.gateway.node_version})`
    );
  },
  network_scan: (json) => {
    const s = json as NetworkScanMessage;
    // IPv4 where an interface has it: its IPv6 addresses would take the line.
    const interfaces = s.interfaces.map((i) => `${i.name} ${(i.ipv4.length > 0 ? i.ipv4 : i.ipv6).join(' ') || 'no address'}`);
    const buses = s.modbus.map((b) => `bus ${b.bus} (${b.port}): ${b.devices.map((d) => `unit ${d.unit_id} ${d.profile ?? 'unknown'}`).join(', ') || 'no units'}`);
    return `scanned ${timeOf(s.scanned_at)}: ${[...interfaces, ...buses].join('; ')}`;
  },
  grid_dimming_event: (json) => {
    const e = json as GridDimmingEventLine;
    return `event ${e.event_id} ${e.phase} ${timeOf(e.published_at)}: limit ${e.limit_w} W (${e.cause}), ${e.connectors.length} connector(s)${e.late ? ', late' : ''}`;
  },
};

/** The fields of a grid_dimming_event the line shows (schemas/grid_dimming_event.json). */
interface GridDimmingEventLine {
  readonly event_id: number;
  readonly phase: string;
  readonly published_at: string;
  readonly limit_w: number;
  readonly cause: string;
  readonly late: boolean;
  readonly connectors: readonly unknown[];
}
