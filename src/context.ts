// The application context: what every module may use, built once by the composition root
// (daemon.ts createContext) and passed as one frozen object.
import type { Registry } from 'prom-client';
import type { Clock } from './clock.js';
import type { Config } from './config/types.js';
import type { EventBus } from './events.js';
import type { Logger } from './log.js';
import type { Liveness } from './ops/systemd/liveness.js';
import type { Probes } from './ops/observability/probes.js';
import type { Db } from './store/db.js';

/** What every module may use; passed as one object, never as positional arguments. */
export interface AppContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly clock: Clock;
  readonly metrics: Registry;
  /** Long-running loops register here and tick each cycle; feeds the systemd watchdog. */
  readonly liveness: Liveness;
  /** Live views of the modules (meters, uplink, clock, prices) for health, metrics and the status page. */
  readonly probes: Probes;
  /** The one event bus modules tell each other things on (events.ts); daemon.ts subscribes the listeners. */
  readonly events: EventBus;
  /** The file the config was loaded from (`run --config`): what reloads on SIGHUP is read from it again. Absent for a config built in memory. */
  readonly configPath?: string;
}
