// The strategy choice for chargers that say no (src/ocpp/charging-strategy.ts), exhaustively
// over what a charger can declare and refuse, and the two pure helpers the by-period and
// remote-start-stop strategies act by (charging-profile.ts profileWindow, chargingNow).
import { describe, expect, it } from 'vitest';
import { chargingNow, profileWindow, type SetChargingProfileRequest } from '../../src/ocpp/charging-profile.js';
import { chooseStrategy, isRefusal, refusalsInForce, refusesAllProfiles, STRATEGIES, type Refusal, type StrategyInput, type StrategyName } from '../../src/ocpp/charging-strategy.js';

const PROFILE_STRATEGIES = STRATEGIES.filter((s) => s !== 'remote-start-stop');
const FEATURES: Array<string[] | null> = [null, ['Core', 'SmartCharging'], ['Core', 'FirmwareManagement'], []];
const UNITS = [null, 'Current', 'Power', 'Current,Power', 'W'];

function* inputs(): Generator<StrategyInput> {
  for (const features of FEATURES)
    for (let mask = 0; mask < 1 << (PROFILE_STRATEGIES.length + 1); mask++) {
      const refusals: Refusal[] = [];
      PROFILE_STRATEGIES.forEach((s, i) => {
        if (mask & (1 << i)) refusals.push({ strategy: s, answer: 'Rejected', atMs: i });
      });
      if (mask & (1 << PROFILE_STRATEGIES.length)) refusals.push({ strategy: 'all-profiles', answer: 'NotImplemented', atMs: 99 });
      for (const transactionOpen of [false, true])
        for (const maxPeriods of [null, 1, 5, 48])
          for (const planPeriods of [1, 5, 20])
            for (const soleConnector of [false, true])
              for (const allowedChargingRateUnit of UNITS)
                yield { capabilities: { supportedFeatureProfiles: features, maxStackLevel: 3, allowedChargingRateUnit, maxPeriods }, refusals, transactionOpen, planPeriods, soleConnector };
    }
}

/** Why a strategy cannot be used, from the rules as docs/chargers.md states them, or null. */
function blocked(s: StrategyName, i: StrategyInput): string | null {
  if (s === 'remote-start-stop') return null;
  const f = i.capabilities.supportedFeatureProfiles;
  if (f !== null && !f.includes('SmartCharging')) return 'no SmartCharging';
  if (i.refusals.some((r) => r.strategy === 'all-profiles' || r.strategy === s)) return 'refused';
  if (s.startsWith('tx-profile') && !i.transactionOpen) return 'no transaction';
  if (s.startsWith('charge-point-max') && !i.soleConnector) return 'several connectors';
  if (!s.endsWith('by-period') && i.capabilities.maxPeriods !== null && i.planPeriods > i.capabilities.maxPeriods) return 'too many periods';
  return null;
}

describe('chooseStrategy', () => {
  it('over every declaration and refusal: the first strategy of the ladder no rule blocks, every one above it named with why', () => {
    // Plain checks in the loop (an expect per case is slow over 122,880 cases); the failures are compared with none at the end.
    let n = 0;
    const seen = new Set<StrategyName>();
    const failures: string[] = [];
    const fail = (input: StrategyInput, what: string) => failures.length < 20 && failures.push(`${what}: ${JSON.stringify(input)}`);
    for (const input of inputs()) {
      const s = chooseStrategy(input);
      n++;
      seen.add(s.name);
      const index = STRATEGIES.indexOf(s.name);
      if (blocked(s.name, input) !== null) fail(input, `${s.name} chosen though ${blocked(s.name, input)}`);
      for (const above of STRATEGIES.slice(0, index)) if (blocked(above, input) === null) fail(input, `${above} passed over for ${s.name}`);
      if (s.skipped.map((k) => k.strategy).join() !== STRATEGIES.slice(0, index).join()) fail(input, `skipped ${s.skipped.map((k) => k.strategy).join()}`);
      if (!s.reason.startsWith(`${s.name}:`)) fail(input, `reason ${s.reason}`);
      // Never a kind of profile the charger refused: a pause (a 0 A period) falls to the next strategy.
      if (s.purpose !== null && input.refusals.some((r) => r.strategy === s.name || r.strategy === 'all-profiles')) fail(input, `${s.name} refused before`);
      if ((s.purpose === null) !== (s.name === 'remote-start-stop')) fail(input, `purpose ${s.purpose}`);
      const max = input.capabilities.maxPeriods;
      if (s.periodsPerProfile !== (s.name.endsWith('by-period') ? (max !== null && input.planPeriods > max ? max : 1) : null)) fail(input, `periods per profile ${s.periodsPerProfile}`);
      const unit = input.capabilities.allowedChargingRateUnit;
      if (s.rateUnit !== (unit === 'Power' || unit === 'W' ? 'W' : 'A')) fail(input, `unit ${s.rateUnit}`);
    }
    expect(failures).toEqual([]);
    expect(n).toBe(4 * 128 * 2 * 4 * 3 * 2 * UNITS.length);
    expect([...seen].sort()).toEqual([...STRATEGIES].sort());
  });

  const base: StrategyInput = { capabilities: { supportedFeatureProfiles: ['Core', 'SmartCharging'], maxStackLevel: 3, allowedChargingRateUnit: 'Current', maxPeriods: 24 }, refusals: [], transactionOpen: true, planPeriods: 10, soleConnector: false };

  it('the ladder on named chargers', () => {
    expect(chooseStrategy(base).name).toBe('tx-profile');
    expect(chooseStrategy({ ...base, transactionOpen: false }).name).toBe('tx-default-profile');
    const rejectsTx = { ...base, refusals: [{ strategy: 'tx-profile' as const, answer: 'Rejected', atMs: Date.parse('2025-11-12T12:00:00Z') }] };
    const s = chooseStrategy(rejectsTx);
    expect(s.name).toBe('tx-default-profile');
    expect(s.reason).toBe('tx-default-profile: tx-profile refused before (Rejected at 2025-11-12T12:00:00.000Z)');
    expect(chooseStrategy({ ...base, capabilities: { ...base.capabilities, maxPeriods: 1 } })).toMatchObject({ name: 'tx-profile-by-period', periodsPerProfile: 1 });
    expect(chooseStrategy({ ...base, capabilities: { ...base.capabilities, maxPeriods: 4 } })).toMatchObject({ name: 'tx-profile-by-period', periodsPerProfile: 4 });
    // A whole plan it could take, refused: one period at a time.
    expect(chooseStrategy({ ...base, refusals: ['tx-profile', 'tx-default-profile'].map((x, i) => ({ strategy: x as StrategyName, answer: 'Rejected', atMs: i })) })).toMatchObject({ name: 'tx-profile-by-period', periodsPerProfile: 1 });
    const onlyMax = { ...base, soleConnector: true, refusals: ['tx-profile', 'tx-default-profile', 'tx-profile-by-period', 'tx-default-profile-by-period'].map((x, i) => ({ strategy: x as StrategyName, answer: 'Rejected', atMs: i })) };
    expect(chooseStrategy(onlyMax).name).toBe('charge-point-max-profile');
    expect(chooseStrategy({ ...onlyMax, soleConnector: false }).name).toBe('remote-start-stop');
    expect(chooseStrategy({ ...base, capabilities: { ...base.capabilities, supportedFeatureProfiles: ['Core', 'RemoteTrigger'] } }).reason).toContain('has no SmartCharging');
    expect(chooseStrategy({ ...base, refusals: [{ strategy: 'all-profiles', answer: 'NotImplemented', atMs: 0 }] })).toMatchObject({ name: 'remote-start-stop', purpose: null });
    expect(chooseStrategy({ ...base, capabilities: { ...base.capabilities, allowedChargingRateUnit: 'Power' } }).rateUnit).toBe('W');
  });

  it('a car paused by RemoteStopTransaction keeps remote-start-stop until it has started again: no profile starts it', () => {
    const waiting = chooseStrategy({ ...base, transactionOpen: false, pausedByRemoteStop: true });
    expect(waiting).toMatchObject({ name: 'remote-start-stop', purpose: null });
    expect(waiting.reason).toContain('paused by RemoteStopTransaction');
    expect(chooseStrategy({ ...base, transactionOpen: false, pausedByRemoteStop: false }).name).toBe('tx-default-profile');
  });

  it('a refusal counts while the charger runs the firmware it refused under', () => {
    const refusals: Refusal[] = [
      { strategy: 'tx-profile', answer: 'Rejected', atMs: 1, firmwareVersion: '1.0' },
      { strategy: 'all-profiles', answer: 'NotImplemented', atMs: 2, firmwareVersion: null },
      { strategy: 'tx-default-profile', answer: 'Rejected', atMs: 3 },
    ];
    const now = { bootedAtMs: 0, nowMs: 10, retryAfterMs: 24 * 3_600_000 };
    expect(refusalsInForce(refusals, { ...now, firmwareVersion: '1.0' }).map((r) => r.atMs)).toEqual([1, 3]);
    expect(refusalsInForce(refusals, { ...now, firmwareVersion: null }).map((r) => r.atMs)).toEqual([2, 3]);
    expect(refusalsInForce(refusals, { ...now, firmwareVersion: '2.0' }).map((r) => r.atMs)).toEqual([3]);
  });

  it('a refusal counts within its back-off window only: until retryAfterMs after it, and not past a boot after it', () => {
    const H = 3_600_000;
    const refusals: Refusal[] = [
      { strategy: 'tx-profile', answer: 'Rejected', atMs: 10 * H, firmwareVersion: '1.0' },
      { strategy: 'all-profiles', answer: 'NotSupported', atMs: 20 * H, firmwareVersion: '1.0' },
    ];
    const w = { firmwareVersion: '1.0', bootedAtMs: 0, retryAfterMs: 24 * H };
    const inForce = (nowMs: number, bootedAtMs = 0) => refusalsInForce(refusals, { ...w, nowMs, bootedAtMs }).map((r) => r.strategy);
    expect(inForce(20 * H)).toEqual(['tx-profile', 'all-profiles']);
    expect(inForce(34 * H - 1)).toEqual(['tx-profile', 'all-profiles']);
    // 24 h after it: tried again (a refusal again would start a new window).
    expect(inForce(34 * H)).toEqual(['all-profiles']);
    expect(inForce(44 * H)).toEqual([]);
    // Booted again after the first: only what it refused since counts.
    expect(inForce(21 * H, 15 * H)).toEqual(['all-profiles']);
    expect(inForce(21 * H, 20 * H)).toEqual(['all-profiles']);
    expect(inForce(21 * H, 20 * H + 1)).toEqual([]);
  });

  it('which answers are refusals to remember, and which refuse every profile', () => {
    expect(['Accepted', 'error'].map(isRefusal)).toEqual([false, false]);
    expect(['Rejected', 'NotSupported', 'NotImplemented', 'FormationViolation'].map(isRefusal)).toEqual([true, true, true, true]);
    expect(['Rejected', 'NotSupported', 'NotImplemented', 'FormationViolation'].map(refusesAllProfiles)).toEqual([false, true, true, false]);
  });
});

const T0 = Date.parse('2025-11-12T12:00:00Z');
const request = (periods: Array<[number, number]>, durationS: number): SetChargingProfileRequest => ({
  connectorId: 1,
  csChargingProfiles: {
    chargingProfileId: 12,
    transactionId: 7,
    stackLevel: 0,
    chargingProfilePurpose: 'TxProfile',
    chargingProfileKind: 'Absolute',
    validFrom: new Date(T0).toISOString(),
    validTo: new Date(T0 + durationS * 1000).toISOString(),
    chargingSchedule: { duration: durationS, startSchedule: new Date(T0).toISOString(), chargingRateUnit: 'A', chargingSchedulePeriod: periods.map(([startPeriod, limit]) => ({ startPeriod, limit })) },
  },
});

describe('profileWindow', () => {
  const whole = request([[0, 0], [900, 16], [2700, 8], [3600, 0]], 7200);

  it('cuts the plan to the period in force now and the next ones, the next boundary where the cut ends', () => {
    const first = profileWindow(whole, T0, 1);
    expect(first.request.csChargingProfiles.chargingSchedule).toMatchObject({ startSchedule: new Date(T0).toISOString(), duration: 7200, chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }] });
    expect(first.nextBoundaryMs).toBe(T0 + 900_000);
    const second = profileWindow(whole, T0 + 1_000_000, 2);
    expect(second.request.csChargingProfiles.chargingSchedule).toMatchObject({ startSchedule: new Date(T0 + 1_000_000).toISOString(), duration: 6200, chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }, { startPeriod: 1700, limit: 8 }] });
    expect(second.nextBoundaryMs).toBe(T0 + 3_600_000);
    const last = profileWindow(whole, T0 + 4_000_000, 1);
    expect(last.request.csChargingProfiles.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 0 }]);
    expect(last.nextBoundaryMs).toBeNull();
    // Everything else of the profile stays as it was.
    expect(second.request.csChargingProfiles.validTo).toBe(whole.csChargingProfiles.validTo);
    expect(second.request.csChargingProfiles.transactionId).toBe(7);
  });

  it('every cut, at every second, sets the limit the whole plan sets then, for as long as it reaches', () => {
    const limitAt = (r: SetChargingProfileRequest, ms: number) => {
      const s = r.csChargingProfiles.chargingSchedule;
      let limit = NaN;
      for (const p of s.chargingSchedulePeriod) if (Date.parse(s.startSchedule) + p.startPeriod * 1000 <= ms) limit = p.limit;
      return limit;
    };
    for (let s = 0; s < 7200; s += 97)
      for (const n of [1, 2, 3]) {
        const cut = profileWindow(whole, T0 + s * 1000, n);
        const endMs = cut.nextBoundaryMs ?? T0 + 7_200_000;
        for (let ms = T0 + s * 1000; ms < endMs; ms += 61_000) expect(limitAt(cut.request, ms)).toBe(limitAt(whole, ms));
      }
  });
});

describe('chargingNow', () => {
  const whole = request([[0, 0], [900, 16], [1800, 6], [2700, 0], [3600, 10]], 5400);
  it('whether the plan charges now and when that next changes', () => {
    expect(chargingNow(whole, T0)).toEqual({ charging: false, nextChangeMs: T0 + 900_000 });
    expect(chargingNow(whole, T0 + 1_000_000)).toEqual({ charging: true, nextChangeMs: T0 + 2_700_000 });
    expect(chargingNow(whole, T0 + 2_700_000)).toEqual({ charging: false, nextChangeMs: T0 + 3_600_000 });
    expect(chargingNow(whole, T0 + 4_000_000)).toEqual({ charging: true, nextChangeMs: null });
    expect(chargingNow(whole, T0 + 5_400_000)).toEqual({ charging: false, nextChangeMs: null });
  });
});
