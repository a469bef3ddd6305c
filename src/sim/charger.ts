// A simulated OCPP 1.6J charge point: a real OCPP-J client (ocpp-rpc, strict: every call
// both ways is checked against the OCPP 1.6 schemas) that connects to a central system,
// boots, reports its connectors and runs transactions for simulated cars. A car draws what
// the charging profiles it was sent allow (charge-limit.ts), up to its own and the
// connector's maximum; the energy register counts that, and MeterValues report it.
// Used by `metergate demo`; the tests drive their own strict chargers (test/helpers).
import { RPCClient } from '../ocpp/rpc.js';
import { allowedCurrentA, clearProfiles, receivedProfile, type Connector, type ProfilePurpose, type ReceivedProfile } from './charge-limit.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];

export interface SimulatedChargerOptions {
  /** ws://host:port of the central system (the identity is appended). */
  readonly endpoint: string;
  readonly identity: string;
  readonly password: string;
  readonly connectors: readonly Connector[];
  /** How often a charging connector sends MeterValues. */
  readonly meterValueIntervalMs: number;
  /** The energy register at start, Wh. */
  readonly registerStartWh?: number;
  /** What happens, one line each (the demo prints them). */
  readonly onEvent?: (line: string) => void;
  readonly now?: () => number;
}

interface Session {
  readonly transactionId: number;
  readonly idTag: string;
  readonly carMaxCurrentA: number;
  lastTickMs: number;
  currentA: number;
  timer: NodeJS.Timeout;
}

/** What the charger reports of one connector. */
export interface ConnectorState {
  readonly connectorId: number;
  readonly transactionId: number | null;
  readonly registerWh: number;
  readonly currentA: number;
}

export class SimulatedCharger {
  private client: InstanceType<typeof RPCClient> | null = null;
  private profiles: ReceivedProfile[] = [];
  private readonly sessions = new Map<number, Session>();
  private readonly registerWh = new Map<number, number>();
  private heartbeat?: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(private readonly opts: SimulatedChargerOptions) {
    this.now = opts.now ?? Date.now;
    for (const c of opts.connectors) this.registerWh.set(c.connectorId, opts.registerStartWh ?? 1_000_000);
  }

  /** Connects, boots and reports every connector Available. */
  async start(): Promise<void> {
    const client = new RPCClient({ endpoint: this.opts.endpoint, identity: this.opts.identity, password: this.opts.password, protocols: ['ocpp1.6'], strictMode: true, reconnect: true } as ClientOptions);
    this.client = client;
    this.handleCalls(client);
    await client.connect();
    const boot = (await client.call('BootNotification', { chargePointVendor: 'metergate', chargePointModel: 'simulated charger', firmwareVersion: 'sim-1' })) as { status: string; interval: number };
    this.event(`BootNotification -> ${boot.status}, heartbeat every ${boot.interval} s`);
    this.heartbeat = setInterval(() => void client.call('Heartbeat', {}).catch(() => undefined), Math.max(10, boot.interval) * 1000);
    this.heartbeat.unref();
    for (const c of this.opts.connectors) await this.status(c.connectorId, 'Available');
  }

  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const s of this.sessions.values()) clearInterval(s.timer);
    this.sessions.clear();
    await this.client?.close({ force: true }).catch(() => undefined);
    this.client = null;
  }

  /** A car plugs in and is authorised with `idTag`: StartTransaction, then it charges as allowed. Returns the transaction id. */
  async plugIn(connectorId: number, idTag: string, carMaxCurrentA: number): Promise<number> {
    const client = this.connected();
    await this.status(connectorId, 'Preparing');
    const startedAtMs = this.now();
    const answer = (await client.call('StartTransaction', { connectorId, idTag, meterStart: Math.round(this.register(connectorId)), timestamp: new Date(startedAtMs).toISOString() })) as { transactionId: number; idTagInfo: { status: string } };
    if (answer.idTagInfo.status !== 'Accepted') {
      await this.status(connectorId, 'Available');
      throw new Error(`StartTransaction on connector ${connectorId}: id tag ${answer.idTagInfo.status}`);
    }
    const session: Session = { transactionId: answer.transactionId, idTag, carMaxCurrentA, lastTickMs: startedAtMs, currentA: 0, timer: setInterval(() => void this.meterValues(connectorId), this.opts.meterValueIntervalMs) };
    this.sessions.set(connectorId, session);
    this.event(`connector ${connectorId}: car plugged in, transaction ${answer.transactionId} started`);
    await this.status(connectorId, 'Charging');
    this.advance(connectorId);
    return answer.transactionId;
  }

  /** The car leaves: the register is brought up to now, StopTransaction, then the connector is Available again. */
  async unplug(connectorId: number): Promise<{ transactionId: number; energyWh: number }> {
    const client = this.connected();
    const session = this.sessions.get(connectorId);
    if (!session) throw new Error(`connector ${connectorId} has no transaction`);
    clearInterval(session.timer);
    this.advance(connectorId);
    this.sessions.delete(connectorId);
    const meterStop = Math.round(this.register(connectorId));
    await client.call('StopTransaction', { transactionId: session.transactionId, idTag: session.idTag, meterStop, timestamp: new Date(this.now()).toISOString(), reason: 'EVDisconnected' });
    await this.status(connectorId, 'Finishing');
    await this.status(connectorId, 'Available');
    this.profiles = this.profiles.filter((p) => !(p.purpose === 'TxProfile' && p.connectorId === connectorId));
    return { transactionId: session.transactionId, energyWh: meterStop };
  }

  connector(connectorId: number): ConnectorState {
    const s = this.sessions.get(connectorId);
    return { connectorId, transactionId: s?.transactionId ?? null, registerWh: this.register(connectorId), currentA: s?.currentA ?? 0 };
  }

  private register(connectorId: number): number {
    return this.registerWh.get(connectorId) ?? 0;
  }

  private connectorConfig(connectorId: number): Connector {
    const c = this.opts.connectors.find((k) => k.connectorId === connectorId);
    if (!c) throw new Error(`connector ${connectorId} is not one of this charger's`);
    return c;
  }

  /** Counts the energy drawn since the last tick at the current then allowed, and takes the current allowed now. */
  private advance(connectorId: number): void {
    const s = this.sessions.get(connectorId);
    if (!s) return;
    const c = this.connectorConfig(connectorId);
    const nowMs = this.now();
    this.registerWh.set(connectorId, this.register(connectorId) + (s.currentA * c.phases * c.voltageV * (nowMs - s.lastTickMs)) / 3_600_000);
    s.lastTickMs = nowMs;
    const allowed = Math.min(s.carMaxCurrentA, allowedCurrentA(this.profiles, c, nowMs, s.transactionId));
    if (allowed !== s.currentA) this.event(`connector ${connectorId}: car draws ${allowed.toFixed(1)} A per phase (${((allowed * c.phases * c.voltageV) / 1000).toFixed(1)} kW)`);
    s.currentA = allowed;
  }

  private async meterValues(connectorId: number): Promise<void> {
    const s = this.sessions.get(connectorId);
    if (!s || !this.client) return;
    this.advance(connectorId);
    const c = this.connectorConfig(connectorId);
    const sampledValue = [
      { value: this.register(connectorId).toFixed(0), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Periodic' },
      { value: s.currentA.toFixed(1), measurand: 'Current.Import', unit: 'A', context: 'Sample.Periodic' },
      { value: (s.currentA * c.phases * c.voltageV).toFixed(0), measurand: 'Power.Active.Import', unit: 'W', context: 'Sample.Periodic' },
    ];
    await this.client.call('MeterValues', { connectorId, transactionId: s.transactionId, meterValue: [{ timestamp: new Date(this.now()).toISOString(), sampledValue }] }).catch((err: Error) => this.event(`MeterValues failed: ${err.message}`));
  }

  private async status(connectorId: number, status: string): Promise<void> {
    await this.connected().call('StatusNotification', { connectorId, status, errorCode: 'NoError', timestamp: new Date(this.now()).toISOString() });
  }

  private connected(): InstanceType<typeof RPCClient> {
    if (!this.client) throw new Error('the simulated charger is not started');
    return this.client;
  }

  private event(line: string): void {
    this.opts.onEvent?.(line);
  }

  /** The central system's calls: smart charging as a charger that takes A and W schedules, the rest accepted or declined plainly. */
  private handleCalls(client: InstanceType<typeof RPCClient>): void {
    const configuration: Record<string, string> = {
      SupportedFeatureProfiles: 'Core,SmartCharging,RemoteTrigger',
      ChargeProfileMaxStackLevel: '8',
      ChargingScheduleAllowedChargingRateUnit: 'Current,Power',
      ChargingScheduleMaxPeriods: '96',
      MeterValueSampleInterval: String(Math.round(this.opts.meterValueIntervalMs / 1000)),
    };
    client.handle('SetChargingProfile', async ({ params }) => {
      const p = receivedProfile(params as Parameters<typeof receivedProfile>[0], this.now());
      // A profile replaces the one of the same id, and the one of the same purpose and stack level on the connector.
      this.profiles = this.profiles.filter((q) => q.chargingProfileId !== p.chargingProfileId && !(q.connectorId === p.connectorId && q.purpose === p.purpose && q.stackLevel === p.stackLevel));
      this.profiles.push(p);
      this.event(`connector ${p.connectorId}: ${p.purpose} received (${p.periods.length} period(s), in ${p.rateUnit})`);
      if (p.connectorId === 0) for (const id of this.sessions.keys()) this.advance(id);
      else this.advance(p.connectorId);
      return { status: 'Accepted' };
    });
    client.handle('ClearChargingProfile', async ({ params }) => {
      const before = this.profiles.length;
      this.profiles = clearProfiles(this.profiles, (params ?? {}) as { id?: number; connectorId?: number; chargingProfilePurpose?: ProfilePurpose; stackLevel?: number });
      for (const id of this.sessions.keys()) this.advance(id);
      return { status: this.profiles.length < before ? 'Accepted' : 'Unknown' };
    });
    client.handle('GetConfiguration', async ({ params }) => {
      const keys = (params as { key?: string[] } | undefined)?.key ?? Object.keys(configuration);
      const configurationKey = keys.filter((k) => k in configuration).map((key) => ({ key, readonly: true, value: configuration[key]! }));
      const unknownKey = keys.filter((k) => !(k in configuration));
      return { ...(configurationKey.length > 0 ? { configurationKey } : {}), ...(unknownKey.length > 0 ? { unknownKey } : {}) };
    });
    client.handle('ChangeConfiguration', async () => ({ status: 'Rejected' }));
    client.handle('RemoteStartTransaction', async ({ params }) => {
      const { connectorId = this.opts.connectors[0]!.connectorId, idTag } = params as { connectorId?: number; idTag: string };
      if (this.sessions.has(connectorId)) return { status: 'Rejected' };
      setImmediate(() => void this.plugIn(connectorId, idTag, this.connectorConfig(connectorId).maxCurrentA).catch((err: Error) => this.event(err.message)));
      return { status: 'Accepted' };
    });
    client.handle('RemoteStopTransaction', async ({ params }) => {
      const { transactionId } = params as { transactionId: number };
      const connectorId = [...this.sessions.entries()].find(([, s]) => s.transactionId === transactionId)?.[0];
      if (connectorId === undefined) return { status: 'Rejected' };
      setImmediate(() => void this.unplug(connectorId).catch((err: Error) => this.event(err.message)));
      return { status: 'Accepted' };
    });
    client.handle('Reset', async () => ({ status: 'Rejected' }));
    client.handle('ChangeAvailability', async () => ({ status: 'Rejected' }));
    client.handle('UnlockConnector', async () => ({ status: 'NotSupported' }));
    client.handle('TriggerMessage', async () => ({ status: 'NotImplemented' }));
    client.handle('ClearCache', async () => ({ status: 'Accepted' }));
    client.handle('DataTransfer', async () => ({ status: 'UnknownVendorId' }));
  }
}
