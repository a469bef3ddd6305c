// The demo's charging half, played against the running daemon through its public doors
// only: a simulated OCPP charger (src/sim/charger.ts) on the central system's port, and
// the HTTP API with the tokens the demo made. Two cars on the one charger:
//   connector 1: a car that arrives with a target (leave in `departureAfterMs`, `energyWh`):
//     the "car app" sets it with PUT …/plan, the gateway plans it on the prices and the
//     forecast and sends the plan to the charger as a TxProfile, which the car follows;
//   connector 2: a short top-up that charges at once and leaves after `topUpMs`: its
//     session is priced, GET /api/v1/cdrs/ocpp:<charger>:<transaction>.
import { SimulatedCharger } from '../sim/charger.js';

export interface ChargingSceneOptions {
  readonly ocppEndpoint: string;
  readonly httpBase: string;
  readonly chargePointId: string;
  readonly chargerPassword: string;
  readonly tokens: { readonly cpo: string; readonly cdrs: string; readonly priceForecast: string };
  readonly region: string;
  readonly departureAfterMs: number;
  readonly energyWh: number;
  readonly topUpMs: number;
  readonly meterValueIntervalMs: number;
  /** One line per thing that happened. */
  readonly say: (line: string) => void;
  /** Called once each, when the API first shows it. */
  readonly onForecast?: () => void;
  readonly onPlan?: () => void;
  readonly onCdr?: (cdrPath: string) => void;
}

interface Api {
  (method: string, path: string, authorization: string, body?: unknown): Promise<{ status: number; body: any }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const hhmm = (iso: string) => new Date(iso).toISOString().slice(11, 16);

export class ChargingScene {
  private readonly charger: SimulatedCharger;
  private stopped = false;
  private readonly api: Api;

  constructor(private readonly o: ChargingSceneOptions) {
    this.charger = new SimulatedCharger({
      endpoint: o.ocppEndpoint,
      identity: o.chargePointId,
      password: o.chargerPassword,
      connectors: [
        { connectorId: 1, maxCurrentA: 16, phases: 3, voltageV: 230 },
        { connectorId: 2, maxCurrentA: 16, phases: 3, voltageV: 230 },
      ],
      meterValueIntervalMs: o.meterValueIntervalMs,
      onEvent: (line) => o.say(`charger ${o.chargePointId}: ${line}`),
    });
    this.api = async (method, path, authorization, body) => {
      const res = await fetch(`${o.httpBase}${path}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? null : JSON.parse(text) };
    };
  }

  /** Plays the scene in the background; errors are said, not thrown (the demo goes on). */
  run(): Promise<void> {
    return this.cars().catch((err: unknown) => this.o.say(`the charging scene failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.charger.stop();
  }

  private async cars(): Promise<void> {
    const { o } = this;
    await this.charger.start();
    // Connector 2 first: a top-up that charges at once and leaves after a while.
    const tx2 = await this.charger.plugIn(2, 'DEMO-CAR-2', 16);
    const leavesAtMs = Date.now() + o.topUpMs;
    o.say(`connector 2: a car tops up for ${Math.round(o.topUpMs / 1000)} s (no target: it charges at once), then leaves`);
    // Connector 1: a car with a target, once the forecast reaches past its departure.
    await this.forecast();
    if (this.stopped) return;
    const tx1 = await this.charger.plugIn(1, 'DEMO-CAR-1', 16);
    const departure = new Date(Math.ceil((Date.now() + o.departureAfterMs) / 900_000) * 900_000).toISOString();
    const planPath = `/api/v1/chargers/${o.chargePointId}/connectors/1/plan`;
    const put = await this.api('PUT', planPath, `Token ${o.tokens.cpo}`, { departure_time: departure, energy_wh: o.energyWh });
    if (put.status !== 200 && put.status !== 201) throw new Error(`PUT ${planPath}: ${put.status} ${JSON.stringify(put.body)}`);
    this.sayPlan(tx1, put.body);
    o.onPlan?.();
    await this.wait(leavesAtMs - Date.now());
    if (this.stopped) return;
    const { energyWh } = await this.charger.unplug(2);
    const cdrPath = `/api/v1/cdrs/ocpp:${o.chargePointId}:${tx2}`;
    o.say(`connector 2: car left, transaction ${tx2} stopped (register ${energyWh} Wh)`);
    for (let i = 0; i < 60 && !this.stopped; i++) {
      const cdr = await this.api('GET', cdrPath, `Token ${o.tokens.cdrs}`);
      if (cdr.status === 200) {
        o.say(`priced session: GET ${cdrPath} -> ${cdr.body.total_cost.excl_vat} ${cdr.body.currency} excl. VAT, ${cdr.body.start_date_time} .. ${cdr.body.end_date_time}`);
        o.say(`  ${JSON.stringify(cdr.body)}`);
        o.onCdr?.(cdrPath);
        return;
      }
      await this.wait(1000);
    }
    throw new Error(`GET ${cdrPath} did not answer a price`);
  }

  private sayPlan(transactionId: number, plan: any): void {
    const { o } = this;
    const periods: any[] = plan.planned.periods;
    const forecast = periods.filter((p) => p.forecast).length;
    const c = plan.planned.cost;
    o.say(`connector 1: car with a target (transaction ${transactionId}): ${o.energyWh / 1000} kWh by ${plan.departure_time} -> plan of ${periods.length} period(s), ${forecast} of them on the forecast; meets target: ${plan.meets_target}`);
    o.say(`  expected cost ${c.expected.toFixed(2)} ${plan.currency_code} (forecast band ${c.lower.toFixed(2)} .. ${c.upper.toFixed(2)}), charging at once would cost ${plan.immediate?.cost?.expected?.toFixed?.(2) ?? '?'}, saving ${plan.saving_expected?.toFixed?.(2) ?? '?'}`);
    const shown = periods.slice(0, 6).map((p) => `${hhmm(p.start)}-${hhmm(p.end)}Z ${p.current_a} A @ ${p.price_per_mwh.toFixed(1)}${p.forecast ? ' (forecast)' : ''}`);
    o.say(`  periods: ${shown.join('; ')}${periods.length > 6 ? '; …' : ''}`);
  }

  private async forecast(): Promise<void> {
    const { o } = this;
    // /healthz says when the forecaster has stored its first forecast (the forecast endpoint
    // is throttled per token: it is asked once, then).
    for (let i = 0; i < 600 && !this.stopped; i++) {
      const health = (await (await fetch(`${o.httpBase}/healthz`)).json()) as { components?: Record<string, { status: string; reason: string }> };
      const forecast = health.components?.forecast;
      if (forecast?.status === 'ok' && forecast.reason.startsWith('every day')) break;
      await this.wait(500);
    }
    if (this.stopped) return;
    const path = `/api/v1/market_price_forecast?region=${o.region}`;
    const res = await this.api('GET', path, `Bearer ${o.tokens.priceForecast}`);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    const prices: any[] = res.body.prices;
    const first = prices.find((p) => p.forecast !== null && p.forecast !== undefined);
    if (!first) throw new Error(`GET ${path}: no forecast period in the answer`);
    o.say(`forecast: GET ${path} -> ${prices.length} periods of ${res.body.duration_seconds} s through ${prices.at(-1).period_start}; first forecast ${first.period_start}: ${first.forecast.toFixed(1)} EUR/MWh (80 % band ${first.forecast_lower.toFixed(1)} .. ${first.forecast_upper.toFixed(1)})`);
    o.onForecast?.();
  }

  private async wait(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
  }
}
