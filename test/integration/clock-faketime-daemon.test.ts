// The whole daemon (`metergate run`) under libfaketime: it boots believing it is 2020, as
// a Pi without RTC after a long power cut. Meters answer on a pty, a real mosquitto waits.
// Nothing may leave while the clock is wrong; readings taken meanwhile are held and, once
// the clock is stepped to the real time and trusted, published re-stamped with the real
// time they were read at. Every timestamp the broker ever sees is plausible.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readNtpStatus } from '../../src/ops/clock/ntp-status.js';
import { BUILD_DATE_MS } from '../../src/version.js';
import { cloudUser, GATEWAY_USER, startMeterRig, type MeterRig } from '../helpers/meter-rig.js';
import { hasMosquitto } from '../helpers/mosquitto.js';
import { METER_A } from '../helpers/poller-harness.js';
import { until as waitUntil } from '../helpers/wait.js';
import { hasSocat, libfaketimePath, peer } from '../helpers/peers.js';

const LIBFAKETIME = libfaketimePath();
// With clock.trust auto the daemon trusts a stepped clock once NTP says synchronized or,
// where NTP status is unknown (containers), once it ran stable_for_s without steps. A host
// whose NTP reports "unsynchronized" would keep it waiting: no verdict possible there.
const ntp = await readNtpStatus();
const ready = LIBFAKETIME !== undefined && hasMosquitto && hasSocat && peer('a host clock that is not "NTP unsynchronized"', ntp !== 'unsynchronized', 'synchronize the host clock');
if (!ready) console.warn(`daemon faketime test skipped: needs libfaketime, mosquitto, socat and a host clock that is not "NTP unsynchronized" (now: ${ntp})`);

const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 90_000) => waitUntil(check, what, timeoutMs);

const fakeStamp = (ms: number) => `@${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)}`;

/** Every timestamp field of a message (sampled_at, booted_at, scanned_at, published_at). */
function stamps(json: Record<string, unknown>): number[] {
  const out: number[] = [];
  const walk = (v: unknown, key = '') => {
    if (typeof v === 'string' && /_at$/.test(key)) out.push(Date.parse(v));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(json);
  return out;
}

describe.skipIf(!ready)('the daemon under libfaketime', () => {
  let rig: MeterRig | undefined;
  afterAll(async () => {
    await rig?.stop();
  });

  it('publishes nothing while it believes it is 2020, then the held readings re-stamped with the real time', { timeout: 240_000 }, async () => {
    rig = await startMeterRig({
      tmpPrefix: 'mg-faketime-daemon-',
      meters: [{ line: 'pty', args: ['--unit', '1'] }],
      broker: { users: [GATEWAY_USER, cloudUser()] },
      subscriber: { username: 'cloud', topic: 'svc/resources/+/+' },
      http: true,
      config: ({ meters }) => ({
        poll: { interval_ms: 1000 },
        buses: [{ name: 'rs485', type: 'rtu', port: meters[0].port, timeout_ms: 500 }],
        meters: [{ resource_id: METER_A, bus: 'rs485', unit_id: 1, profile: 'sdm630' }],
        mqtt: { reconnect_min_ms: 200, reconnect_max_ms: 1000, heartbeat_interval_ms: 2000 },
        clock: { trust: 'auto', stable_for_s: 3 },
      }),
      startDaemon: false,
    });
    const { sub, httpPort: port } = rig;
    const timeFile = join(rig.dir, 'faketime');
    writeFileSync(timeFile, '@2020-01-01 00:00:00');
    const startedRealMs = Date.now();
    const daemon = await rig.startDaemon({
      env: { ...process.env, LD_PRELOAD: LIBFAKETIME, FAKETIME_TIMESTAMP_FILE: timeFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' },
    });
    const log = () => daemon.output();
    const metric = async (name: string) => {
      try {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
        return m ? Number(m[1]) : undefined;
      } catch {
        return undefined;
      }
    };

    // 2020: readings are taken and held; the broker hears nothing (its certificate is not yet valid, too).
    await until(async () => (await metric('metergate_clock_held_samples')) !== undefined && (await metric('metergate_clock_held_samples'))! >= 3, `held samples (log: ${log().slice(-500)})`);
    expect(await metric('metergate_clock_trusted')).toBe(0);
    expect(log()).toContain('clock not trusted yet: nothing is published until it is (readings are kept and sent then)');
    expect(log()).toContain('To end it: set the right time');
    expect(sub.messages).toEqual([]);

    // NTP answers: the wall clock steps to the real time.
    const heldAtStep = (await metric('metergate_clock_held_samples'))!;
    const stepRealMs = Date.now();
    writeFileSync(timeFile, fakeStamp(stepRealMs));
    await until(() => log().includes('"msg":"clock trusted"'), 'trust after the step');
    const trustedRealMs = Date.now();
    const released = Number(/"released":(\d+)[^\n]*"msg":"clock trusted"/.exec(log())![1]);
    expect(released).toBeGreaterThanOrEqual(3);
    await until(() => sub.messages.filter((m) => m.topic.endsWith('/measurements')).length >= released + 2, 'the held and the fresh measurements');
    const receivedAtMs = Date.now();

    // No timestamp anywhere before the build date or after it was received.
    for (const m of sub.messages) {
      for (const t of stamps(m.json)) {
        expect(t, m.topic).toBeGreaterThanOrEqual(BUILD_DATE_MS);
        expect(t, m.topic).toBeLessThanOrEqual(receivedAtMs + 1000);
      }
    }
    // The held readings carry the real time they were read at: after the daemon started, before the step, in order.
    const sampled = sub.messages.filter((m) => m.topic.endsWith('/measurements')).map((m) => Date.parse((m.json.data as { sampled_at: string }).sampled_at));
    // (Readings between the step and trust were held too; they were read after the step.)
    for (const t of sampled.slice(0, released)) {
      expect(t).toBeGreaterThanOrEqual(startedRealMs - 1000);
      expect(t).toBeLessThanOrEqual(trustedRealMs + 1000);
    }
    for (const t of sampled.slice(0, heldAtStep)) expect(t).toBeLessThanOrEqual(stepRealMs + 1000);
    expect([...sampled].sort((a, b) => a - b)).toEqual(sampled);
    // The boot notification says when the daemon really started, not 2020. It is stored on the
    // next device-messages check after trust, so it may come after the released measurements.
    await until(() => sub.messages.some((m) => m.topic.endsWith('/boot_notifications')), 'the boot notification');
    const boot = sub.messages.find((m) => m.topic.endsWith('/boot_notifications'))!;
    expect(Date.parse(boot.json.booted_at as string)).toBeGreaterThanOrEqual(startedRealMs - 5000);
  });
});
