// The head of the config a central-system test runs `metergate run` with: loopback HTTP and
// OCPP ports, no price fetching, no forecaster. Tests append their chargers (and site).

export interface CentralSystemConfigHead {
  readonly dataDir: string;
  readonly httpPort: number;
  readonly ocppPort: number;
  /** More `ocpp:` settings, e.g. `heartbeat_interval_s: 30`. */
  readonly ocppSettings?: string;
}

export function centralSystemConfigHead(o: CentralSystemConfigHead): string[] {
  return [
    'organization_id: 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    `data_dir: ${o.dataDir}`,
    'log_level: info',
    `http: { host: 127.0.0.1, port: ${o.httpPort} }`,
    'prices: { regions: [NL], source: none }',
    'forecast: { enabled: false }',
    `ocpp: { host: 127.0.0.1, port: ${o.ocppPort}${o.ocppSettings ? `, ${o.ocppSettings}` : ''} }`,
  ];
}
