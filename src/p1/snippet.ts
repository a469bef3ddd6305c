// What `metergate scan` prints for a P1 port it recognised (pure): a summary line and the
// buses:/meters: entries to paste.
import { diagnoseP1 } from './diagnosis.js';
import type { ListenResult } from './listen.js';
import type { MbusChannel } from './mbus.js';

export interface P1Target {
  readonly type: 'p1' | 'p1-tcp';
  readonly port?: string;
  readonly host?: string;
  readonly tcpPort?: number;
}

/** One line: `DSMR 5.0 smart meter K8EG004046395507 (Iskraemeco MT382-1000) at 115200 8N1, CRC checked`. */
export function p1Summary(result: ListenResult): string {
  const t = result.telegram;
  if (!t) return `no whole P1 telegram at ${result.line}`;
  if (result.modeC) return `${t.identity.layout} meter ${t.identity.meterId ?? '(no meter id)'} (${t.identity.vendor} ${t.identity.model}), asked with the sign-on request, BCC checked`;
  const modeD = t.identity.layout !== 'DSMR';
  const version = modeD ? t.identity.layout : t.identity.dsmrVersion ? `DSMR ${t.identity.dsmrVersion}` : result.line === '9600 7E1' ? 'DSMR 2.2/3.0' : 'DSMR';
  const crc = t.crcChecked ? 'CRC checked' : modeD ? 'no CRC (mode D has none)' : 'no CRC (DSMR 2.2/3.0)';
  return `${version} ${modeD ? 'meter' : 'smart meter'} ${t.identity.meterId ?? '(no meter id)'} (${t.identity.vendor} ${t.identity.model}) at ${result.line}, ${crc}`;
}

/** What came instead of a whole telegram: `812 bytes; dropped: 2 crc, 1 truncated`, and why in one line with the fix. */
export function p1LineReport(result: ListenResult, busRef?: string): string {
  const dropped = Object.entries(result.drops).map(([reason, n]) => `${n} ${reason}`).join(', ');
  const why = busRef === undefined ? undefined : diagnoseP1(result, busRef)?.text;
  return `${result.bytes} bytes${dropped ? `; dropped: ${dropped}` : ''}${why ? `; ${why}` : ''}`;
}

/**
 * The buses:/meters: entries for the meter found. `newResourceId` gives each resource its
 * placeholder id: the meter, and each M-Bus channel (gas, water, heat), which is a resource
 * of its own and published only when it is listed under the meter's `channels:` (docs/p1.md).
 */
export function p1ConfigSnippet(result: ListenResult, target: P1Target, newResourceId: () => string, name = 'p1-1'): string {
  const t = result.telegram;
  if (!t) return '# no P1 meter found\n';
  const lines = [
    '# Add these to the buses: and meters: sections of /etc/metergate/config.yaml, set the',
    `# resource_id${t.channels.length > 0 ? ' and the channels\' ids' : ''} to the ids the operator issued, then run \`metergate config check\`.`,
    'buses:',
    `  - name: ${name}`,
    `    type: ${target.type}`,
    ...(target.type === 'p1' ? [`    port: ${target.port}`] : [`    host: ${target.host}`, `    tcp_port: ${target.tcpPort}`]),
    ...(result.modeC ? ['    mode: C'] : result.line === '115200 8N1' ? [] : [`    line: ${result.line}`]),
    'meters:',
    `  - resource_id: ${newResourceId()}  # replace with this meter's resource id; ${t.identity.vendor} ${t.identity.model}${t.identity.meterId ? `, meter ${t.identity.meterId}` : ''}`,
    `    bus: ${name}`,
    ...channelLines(t.channels, newResourceId),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * `channels:` with one line per M-Bus device that sent a reading; a channel without one (an
 * empty slot, a device whose clock is unset) commented out with why, to uncomment once it
 * sends. With no reading at all the whole block is commented: an empty `channels:` is no list.
 */
function channelLines(channels: readonly MbusChannel[], newResourceId: () => string): string[] {
  if (channels.length === 0) return [];
  const reading = channels.filter((c) => c.reading !== null);
  const what = (c: MbusChannel) => `${c.medium}${c.deviceType !== null && !c.medium.startsWith('device type') ? ` (device type ${c.deviceType})` : ''}${c.equipmentId ? `, id ${c.equipmentId}` : ''}`;
  const lines = channels.map((c) =>
    c.reading !== null
      ? `      ${c.number}: ${newResourceId()}  # replace with this channel's resource id; ${what(c)}, reads ${c.reading.metrics.map((m) => `${m.name} ${m.value} ${m.unit}`).join(', ')}`
      : `      # ${c.number}: ${newResourceId()}  # ${what(c)}: ${c.skipped ?? 'no reading'}; uncomment once it sends one`,
  );
  const header = '    channels:  # the M-Bus devices this meter relays, each a resource of its own (docs/p1.md)';
  return reading.length > 0 ? [header, ...lines] : [`    # ${header.slice(4)}`, ...lines.map((l) => l.replace(/^ {6}# /, '    #   '))];
}
