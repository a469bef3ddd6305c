// Reading what a charger declares with GetConfiguration (docs/chargers.md "Schedules in A
// or W"): after its BootNotification (and on a reconnect when it was never read), the
// gateway asks for ChargingScheduleAllowedChargingRateUnit and stores the answer, so the
// charging profiles it builds are in a unit the charger takes.
import type { Logger } from '../log.js';
import type { OcppConfigurationStore } from '../store/ocpp-configuration.js';
import type { StoreWriteQueue } from '../store/write-queue.js';
import type { CallingClient } from './profile-clears.js';

export const RATE_UNIT_KEY = 'ChargingScheduleAllowedChargingRateUnit';

interface GetConfigurationAnswer {
  readonly configurationKey?: ReadonlyArray<{ readonly key: string; readonly readonly: boolean; readonly value?: string }>;
  readonly unknownKey?: readonly string[];
}

/** Asks the charger for its allowed charging rate unit and stores it; a charger that does not answer keeps what was stored. */
export async function readChargingRateUnit(client: CallingClient, store: OcppConfigurationStore, writes: StoreWriteQueue, nowMs: () => number, logger: Logger): Promise<void> {
  let answer: GetConfigurationAnswer;
  try {
    answer = (await client.call('GetConfiguration', { key: [RATE_UNIT_KEY] })) as GetConfigurationAnswer;
  } catch (err) {
    logger.warn({ charge_point_id: client.identity, err: { message: (err as Error).message } }, 'GetConfiguration not answered; charging schedules stay in the unit known before (A when none)');
    return;
  }
  const found = answer.configurationKey?.find((k) => k.key === RATE_UNIT_KEY);
  const readAtMs = nowMs();
  // While the store refuses writes the answer waits in its queue (store/write-queue.ts).
  await writes.run(`GetConfiguration answer of ${client.identity}`, () => store.put(client.identity, { key: RATE_UNIT_KEY, value: found?.value ?? null, readonly: found?.readonly ?? null, readAtMs }));
  logger.info({ charge_point_id: client.identity, allowed_charging_rate_unit: found?.value ?? null }, 'charger configuration read');
}
