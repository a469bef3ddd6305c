// Reading what a charger declares with GetConfiguration (docs/chargers.md "Schedules in A
// or W", "Chargers that say no"): after its BootNotification (and on a reconnect when it
// was never read), the gateway asks for the keys that say what charging profiles it takes
// and stores the answers per charger, so the profiles it builds are ones the charger takes
// (ocpp/charging-strategy.ts chooses from them).
import type { Logger } from '../log.js';
import type { OcppConfigurationStore } from '../store/ocpp-configuration.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { ChargerCapabilities } from './charging-strategy.js';
import type { CallingClient } from './profile-clears.js';

export const RATE_UNIT_KEY = 'ChargingScheduleAllowedChargingRateUnit';
export const FEATURE_PROFILES_KEY = 'SupportedFeatureProfiles';
export const MAX_STACK_LEVEL_KEY = 'ChargeProfileMaxStackLevel';
export const MAX_PERIODS_KEY = 'ChargingScheduleMaxPeriods';
export const CAPABILITY_KEYS = [FEATURE_PROFILES_KEY, MAX_STACK_LEVEL_KEY, RATE_UNIT_KEY, MAX_PERIODS_KEY] as const;

interface GetConfigurationAnswer {
  readonly configurationKey?: ReadonlyArray<{ readonly key: string; readonly readonly: boolean; readonly value?: string }>;
  readonly unknownKey?: readonly string[];
}

/** Asks the charger for the keys that say what profiles it takes and stores them; a charger that does not answer keeps what was stored. */
export async function readChargerCapabilities(client: CallingClient, store: OcppConfigurationStore, writes: StoreWriteQueue, nowMs: () => number, logger: Logger): Promise<void> {
  let answer: GetConfigurationAnswer;
  try {
    answer = (await client.call('GetConfiguration', { key: [...CAPABILITY_KEYS] })) as GetConfigurationAnswer;
  } catch (err) {
    logger.warn({ charge_point_id: client.identity, err: { message: (err as Error).message } }, 'GetConfiguration not answered; what the charger takes stays as known before (A, SmartCharging assumed when never read)');
    return;
  }
  const readAtMs = nowMs();
  const found = (key: string) => answer.configurationKey?.find((k) => k.key === key);
  // While the store refuses writes the answers wait in its queue (store/write-queue.ts).
  await writes.run(`GetConfiguration answer of ${client.identity}`, () => {
    for (const key of CAPABILITY_KEYS) store.put(client.identity, { key, value: found(key)?.value ?? null, readonly: found(key)?.readonly ?? null, readAtMs });
  });
  logger.info(
    {
      charge_point_id: client.identity,
      supported_feature_profiles: found(FEATURE_PROFILES_KEY)?.value ?? null,
      charge_profile_max_stack_level: found(MAX_STACK_LEVEL_KEY)?.value ?? null,
      allowed_charging_rate_unit: found(RATE_UNIT_KEY)?.value ?? null,
      charging_schedule_max_periods: found(MAX_PERIODS_KEY)?.value ?? null,
    },
    'charger configuration read',
  );
}

/** What the charger declared, as the strategy choice takes it; null where it did not say or says nothing usable. */
export function storedCapabilities(store: OcppConfigurationStore, chargePointId: string): ChargerCapabilities {
  const value = (key: string) => store.get(chargePointId, key)?.value ?? null;
  const integer = (key: string) => {
    const v = value(key);
    const n = v === null ? NaN : Number(v.trim());
    return Number.isInteger(n) && n >= 0 ? n : null;
  };
  const features = value(FEATURE_PROFILES_KEY);
  return {
    supportedFeatureProfiles: features === null ? null : features.split(',').map((f) => f.trim()).filter((f) => f !== ''),
    maxStackLevel: integer(MAX_STACK_LEVEL_KEY),
    allowedChargingRateUnit: value(RATE_UNIT_KEY),
    maxPeriods: integer(MAX_PERIODS_KEY),
  };
}
