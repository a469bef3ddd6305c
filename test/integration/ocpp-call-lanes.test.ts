// The call lanes (src/ocpp/call-lanes.ts) on a real connection: ocpp-rpc's server as the
// gateway uses it (callConcurrency CALLS_IN_FLIGHT) and a strict ocpp-rpc charger that holds
// the answers it is told to. What the charger receives, and when, is the proof: a safety
// call passes ordinary calls waiting behind a slow one; calls of one lane go one at a time
// in order; an ordinary call given up on (its AbortSignal) while it waits is never sent.
import type { AddressInfo } from 'node:net';
import { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLS_IN_FLIGHT, withCallLanes, type LanedChargerClient } from '../../src/ocpp/call-lanes.js';
import type { ChargerClient } from '../../src/ocpp/charger-client.js';
import { RPCServer } from '../../src/ocpp/rpc.js';
import { until } from '../helpers/wait.js';

type ClientOptions = ConstructorParameters<typeof RPCClient>[0];
type Json = Record<string, any>;

describe('call lanes on one charger connection', () => {
  let server: InstanceType<typeof RPCServer>;
  let charger: RPCClient;
  let lanes: LanedChargerClient;
  /** DataTransfer calls as the charger received them (by their data), with what was outstanding then. */
  const received: Array<{ data: string; outstanding: string[] }> = [];
  const outstanding = new Set<string>();
  /** Answers the charger holds until the test releases them, by data. */
  const held = new Map<string, () => void>();

  beforeAll(async () => {
    server = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true, callConcurrency: CALLS_IN_FLIGHT });
    const connected = new Promise<ChargerClient>((resolve) => server.on('client', (c: ChargerClient) => resolve(c)));
    const http = await server.listen(0, '127.0.0.1');
    const port = (http.address() as AddressInfo).port;
    charger = new RPCClient({ endpoint: `ws://127.0.0.1:${port}`, identity: 'CP-LANE-UNIT', protocols: ['ocpp1.6'], strictMode: true, reconnect: false } as ClientOptions);
    charger.handle('DataTransfer', async ({ params }: { params?: unknown }) => {
      const data = String((params as Json).data);
      received.push({ data, outstanding: [...outstanding] });
      outstanding.add(data);
      if (data.startsWith('hold')) await new Promise<void>((resolve) => held.set(data, resolve));
      outstanding.delete(data);
      return { status: 'Accepted', data };
    });
    await charger.connect();
    lanes = withCallLanes(await connected);
  });

  afterAll(async () => {
    for (const release of held.values()) release();
    await charger?.close({ force: true }).catch(() => undefined);
    await server?.close({ force: true });
  });

  const transfer = (data: string, opts: { lane?: 'safety' | 'ordinary'; signal?: AbortSignal } = {}) => lanes.call('DataTransfer', { vendorId: 'test', data }, opts) as Promise<Json>;

  it('passes a safety call ahead of ordinary calls waiting behind a slow one; drops an ordinary call aborted while it waits', { timeout: 30_000 }, async () => {
    const slow = transfer('hold-ordinary');
    await until(() => received.length === 1, 'the slow ordinary call at the charger');
    const giveUp = new AbortController();
    const abandoned = transfer('abandoned', { signal: giveUp.signal });
    const second = transfer('second-ordinary');
    // Two more ordinary calls wait in the lane; a safety call goes out at once beside the slow one.
    const safety = transfer('hold-safety', { lane: 'safety' });
    await until(() => received.some((r) => r.data === 'hold-safety'), 'the safety call at the charger');
    expect(lanes.safetyCallPending()).toBe('DataTransfer');
    // The next safety call waits for the previous safety call only.
    const safetyNext = transfer('safety-next', { lane: 'safety' });
    giveUp.abort('operation timeout');
    await expect(abandoned).rejects.toMatchObject({ name: 'AbortError' });
    held.get('hold-safety')!();
    await expect(safety).resolves.toEqual({ status: 'Accepted', data: 'hold-safety' });
    await expect(safetyNext).resolves.toEqual({ status: 'Accepted', data: 'safety-next' });
    expect(lanes.safetyCallPending()).toBeNull();
    // The ordinary lane is still held by the slow call: the second has not gone out.
    expect(received.map((r) => r.data)).toEqual(['hold-ordinary', 'hold-safety', 'safety-next']);
    held.get('hold-ordinary')!();
    await expect(slow).resolves.toEqual({ status: 'Accepted', data: 'hold-ordinary' });
    await expect(second).resolves.toEqual({ status: 'Accepted', data: 'second-ordinary' });
    // The abandoned call never reached the charger; the second came after the slow one's answer.
    expect(received.map((r) => r.data)).toEqual(['hold-ordinary', 'hold-safety', 'safety-next', 'second-ordinary']);
    expect(received.find((r) => r.data === 'second-ordinary')!.outstanding).toEqual([]);
    expect(received.find((r) => r.data === 'safety-next')!.outstanding).toEqual(['hold-ordinary']);
  });
});
