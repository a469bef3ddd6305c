// What `metergate scan` prints for a P1 port it recognised (pure): a summary line and the
// buses:/meters: entries to paste.
import { diagnoseP1 } from './diagnosis.js';
import type { ListenResult } from './listen.js';

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

export function p1ConfigSnippet(result: ListenResult, target: P1Target, resourceId: string, name = 'p1-1'): string {
  const t = result.telegram;
  if (!t) return '# no P1 meter found\n';
  const lines = [
    '# Add these to the buses: and meters: sections of /etc/metergate/config.yaml, set the',
    "# resource_id to the id the operator issued for this meter, then run `metergate config check`.",
    'buses:',
    `  - name: ${name}`,
    `    type: ${target.type}`,
    ...(target.type === 'p1' ? [`    port: ${target.port}`] : [`    host: ${target.host}`, `    tcp_port: ${target.tcpPort}`]),
    ...(result.modeC ? ['    mode: C'] : result.line === '115200 8N1' ? [] : [`    line: ${result.line}`]),
    'meters:',
    `  - resource_id: ${resourceId}  # replace with this meter's resource id; ${t.identity.vendor} ${t.identity.model}${t.identity.meterId ? `, meter ${t.identity.meterId}` : ''}`,
    `    bus: ${name}`,
  ];
  return `${lines.join('\n')}\n`;
}
