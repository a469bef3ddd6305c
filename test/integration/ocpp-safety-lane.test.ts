// Safety first on the wire (issue 30 item 4, docs/chargers.md "Safety first on the wire"): a
// running gateway (Daemon with its real modules, real HTTP with a cpo token, every answer
// checked against openapi.json) and a strict ocpp-rpc charger that holds an operator's
// GetConfiguration unanswered for 20 s, as a busy charger on a slow link does. A plan's
// SetChargingProfile demanded meanwhile (a PUT of a new plan target) reaches the charger
// while that GetConfiguration is still unanswered, not after it; an operator's call asked
// for while the SetChargingProfile is in flight (the charger holds its answer) is not sent
// and gets 409 saying why; and the charger never has two ordinary calls of the gateway's
// outstanding: an operator's next call waits for the slow one's answer.
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/store/tokens.js';
import { CHARGER_PASSWORD, startPlanGateway, type PlanGateway } from '../helpers/ocpp-charger.js';
import { expectDocumented } from '../helpers/openapi.js';
import { hasSharedData, SKIP_REASON } from '../helpers/shared-data.js';
import { until } from '../helpers/wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
type Json = Record<string, any>;
const at = (iso: string) => Date.parse(iso);
const CP = 'CP-LANES';
const PLAN = `/api/v1/chargers/${CP}/connectors/1/plan`;
/** How long the charger holds the operator's GetConfiguration (the gateway's operation timeout is 30 s). */
const SLOW_ANSWER_MS = 20_000;
/** The gateway's fuse-protecting calls (the safety lane); every other call of its is ordinary. */
const SAFETY_ACTIONS = new Set(['SetChargingProfile']);

/** A call the charger received: when, and what else of the gateway's was outstanding then. */
interface Received {
  readonly action: string;
  readonly params: Json;
  readonly atMs: number;
  /** The actions of the gateway's calls received and not answered yet when this one came. */
  readonly outstanding: readonly string[];
  answeredAtMs: number | null;
}

describe.skipIf(!hasSharedData)(`safety first on the wire: call lanes per charger${hasSharedData ? '' : ` (${SKIP_REASON})`}`, () => {
  let gw: PlanGateway;
  let cp: RPCClient;
  const received: Received[] = [];
  const outstanding = new Set<Received>();
  let maxOrdinaryOutstanding = 0;
  let maxOutstanding = 0;
  let releaseProfile: (() => void) | null = null;

  /** A charger that records every call of the gateway's and answers as a real one does, slowly where told. */
  const answering = (action: string, answer: (params: Json, call: Received) => Promise<Json> | Json) =>
    cp.handle(action, async ({ params }: { params?: unknown }) => {
      const call: Received = { action, params: params as Json, atMs: performance.now(), outstanding: [...outstanding].map((c) => c.action), answeredAtMs: null };
      received.push(call);
      outstanding.add(call);
      const ordinary = [...outstanding].filter((c) => !SAFETY_ACTIONS.has(c.action)).length;
      maxOrdinaryOutstanding = Math.max(maxOrdinaryOutstanding, ordinary);
      maxOutstanding = Math.max(maxOutstanding, outstanding.size);
      try {
        return await answer(params as Json, call);
      } finally {
        call.answeredAtMs = performance.now();
        outstanding.delete(call);
      }
    });

  /** A cpo request, its answer checked against openapi.json; with its headers. */
  const post = async (op: string, body: Json) => {
    const res = await fetch(`http://127.0.0.1:${gw.httpPort}/api/v1/chargers/${CP}/${op}`, {
      method: 'POST',
      headers: { authorization: `Token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Json;
    expectDocumented('POST', `/api/v1/chargers/{charge_point_id}/${op}`, res, json);
    return { status: res.status, body: json, retryAfter: res.headers.get('retry-after') };
  };
  let token = '';

  beforeAll(async () => {
    gw = await startPlanGateway({ startMs: at('2025-11-12T12:00:00Z'), pricesFromMs: 0, pricesToMs: at('2025-11-12T23:00:00Z'), chargers: [{ id: CP }] });
    token = new TokenStore(gw.daemon.ctx.db).create({ name: 'lanes-cpo', type: 'cpo', nowMs: gw.nowMs }).token;
    cp = new RPCClient({ endpoint: `ws://127.0.0.1:${gw.ocppPort}`, identity: CP, password: CHARGER_PASSWORD, protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    const capabilities: Record<string, string> = { SupportedFeatureProfiles: 'Core,SmartCharging,RemoteTrigger', ChargingScheduleAllowedChargingRateUnit: 'Current', ChargingScheduleMaxPeriods: '96', HeartbeatInterval: '300' };
    answering('GetConfiguration', async (p) => {
      const keys: string[] = p.key ?? Object.keys(capabilities);
      // The operator's read of HeartbeatInterval: answered only after SLOW_ANSWER_MS.
      if (keys.includes('HeartbeatInterval')) await new Promise((resolve) => setTimeout(resolve, SLOW_ANSWER_MS));
      const known = keys.filter((k) => k in capabilities);
      const unknown = keys.filter((k) => !(k in capabilities));
      return { ...(known.length > 0 ? { configurationKey: known.map((key) => ({ key, readonly: true, value: capabilities[key]! })) } : {}), ...(unknown.length > 0 ? { unknownKey: unknown } : {}) };
    });
    // Held until the test has seen the operator's call refused meanwhile (at most 6 s: the gateway waits 10 s for it).
    answering('SetChargingProfile', () =>
      new Promise<Json>((resolve) => {
        const timer = setTimeout(() => resolve({ status: 'Accepted' }), 6_000);
        releaseProfile = () => {
          clearTimeout(timer);
          resolve({ status: 'Accepted' });
        };
      }),
    );
    answering('ClearChargingProfile', () => ({ status: 'Unknown' }));
    answering('DataTransfer', (p) => ({ status: 'Accepted', data: `echo:${p.data ?? ''}` }));
    await cp.connect();
    await cp.call('BootNotification', { chargePointVendor: 'Alfen', chargePointModel: 'Eve Single' });
    // The gateway reads the charger's capabilities after its boot (an ordinary call, answered at once).
    await until(() => received.some((c) => c.action === 'GetConfiguration' && c.answeredAtMs !== null), 'the gateway\'s GetConfiguration after boot', 30_000);
  }, 90_000);

  afterAll(async () => {
    releaseProfile?.();
    await cp?.close({ force: true }).catch(() => undefined);
    await gw?.close();
  });

  it('sends a plan\'s SetChargingProfile past an operator\'s unanswered GetConfiguration; refuses the operator\'s next call with 409 while it is in flight; ordinary calls one at a time', { timeout: 90_000 }, async () => {
    // 1. The operator reads a key the charger takes 20 s to answer.
    const slowRead = post('get-configuration', { keys: ['HeartbeatInterval'] });
    await until(() => received.some((c) => c.action === 'GetConfiguration' && c.params.key?.includes('HeartbeatInterval')), 'the operator\'s GetConfiguration at the charger', 15_000);
    const heldRead = received.find((c) => c.action === 'GetConfiguration' && c.params.key?.includes('HeartbeatInterval'))!;

    // 2. A new plan target: its SetChargingProfile must not wait for that answer.
    const demandedAtMs = performance.now();
    const put = await gw.api('PUT', PLAN, { departure_time: '2025-11-13T07:00:00Z', energy_wh: 30_000 });
    const answeredAtMs = performance.now();
    expect(put.status).toBe(201);
    await until(() => received.some((c) => c.action === 'SetChargingProfile') || heldRead.answeredAtMs !== null, 'a SetChargingProfile, or the slow GetConfiguration answered', SLOW_ANSWER_MS + 10_000);
    const profile = received.find((c) => c.action === 'SetChargingProfile');
    expect(profile, 'the plan\'s SetChargingProfile reached the charger before the slow GetConfiguration was answered').toBeDefined();
    expect(profile!.outstanding, 'the operator\'s GetConfiguration was still unanswered when the SetChargingProfile came').toContain('GetConfiguration');
    expect(heldRead.answeredAtMs).toBeNull();
    console.log(`SetChargingProfile at the charger ${(profile!.atMs - demandedAtMs).toFixed(0)} ms after the PUT of the plan was sent, ${(profile!.atMs - answeredAtMs).toFixed(0)} ms after its answer (the operator's GetConfiguration ahead of it held ${SLOW_ANSWER_MS / 1000} s)`);

    // 3. While the charger holds the SetChargingProfile's answer, an operator's call is not sent: 409, saying why.
    const refused = await post('data-transfer', { vendor_id: 'com.acme', data: 'while-fuse' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe(`a fuse-protecting call to charger ${CP} is in flight (SetChargingProfile); DataTransfer was not sent: try again in a few seconds`);
    expect(refused.retryAfter).toBe('3');
    expect(received.filter((c) => c.action === 'DataTransfer')).toEqual([]);
    expect(profile!.answeredAtMs, 'the 409 came while the SetChargingProfile was in flight').toBeNull();
    releaseProfile!();
    await until(async () => (await gw.api('GET', PLAN)).body.charger_profile?.status === 'Accepted', 'the SetChargingProfile\'s Accepted stored', 15_000);
    const metrics = await (await fetch(`http://127.0.0.1:${gw.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/metergate_ocpp_operations_total\{action="DataTransfer",outcome="fuse-call-in-flight"\} 1\b/);

    // 4. With no safety call in flight the operator's next call is taken, and waits in the
    //    ordinary lane for the slow GetConfiguration: the charger never has two at once.
    expect(heldRead.answeredAtMs).toBeNull();
    const next = post('data-transfer', { vendor_id: 'com.acme', data: 'after-fuse' });
    const [read, transfer] = await Promise.all([slowRead, next]);
    expect(read.status).toBe(200);
    expect(read.body.answer.configurationKey).toEqual([{ key: 'HeartbeatInterval', readonly: true, value: '300' }]);
    expect(transfer.status).toBe(200);
    expect(transfer.body.answer).toEqual({ status: 'Accepted', data: 'echo:after-fuse' });
    const dataTransfer = received.find((c) => c.action === 'DataTransfer')!;
    expect(dataTransfer.params.data).toBe('after-fuse');
    expect(dataTransfer.outstanding, 'the DataTransfer came after the slow GetConfiguration was answered').toEqual([]);
    expect(dataTransfer.atMs).toBeGreaterThanOrEqual(heldRead.answeredAtMs!);
    expect(maxOrdinaryOutstanding, 'ordinary calls of the gateway\'s outstanding at the charger at once').toBe(1);
    // The only overlap: the safety call beside the ordinary one.
    expect(maxOutstanding).toBe(2);
  });
});
