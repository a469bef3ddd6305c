// The gateway's outbox and MQTT connection in this process, connected to a real TLS
// mosquitto through a PubackEater (puback-eater.ts): the test builds its OutboxPublisher on
// top and decides when acknowledgements stop and flow again. Everything started is undone
// by the test's cleanups (cleanups.ts), last first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { createLogger, type Logger } from '../../src/log.js';
import { openDatabase, type Db } from '../../src/store/db.js';
import { Outbox } from '../../src/store/outbox.js';
import { MqttConnection } from '../../src/uplink/connection.js';
import type { Cleanup } from './cleanups.js';
import { startTlsBroker, type BrokerUser, type TlsBroker } from './mosquitto.js';
import { ORG } from './poller-harness.js';
import { startPubackEater, type PubackEater } from './puback-eater.js';

/** The gateway's login; its ACL lets it publish for every resource. */
export const GATEWAY_LOGIN: BrokerUser = { username: 'gw', password: 'gw-pw', acl: ['topic write svc/resources/#'] };

export interface UplinkBehindEater {
  readonly broker: TlsBroker;
  readonly proxy: PubackEater;
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly outbox: Outbox;
  readonly connection: MqttConnection;
}

export async function startUplinkBehindEater(
  cleanups: { push(step: Cleanup): void },
  opts: {
    /** Logins besides the gateway's (GATEWAY_LOGIN). */
    readonly otherUsers?: readonly BrokerUser[];
    /** mqtt keys besides the connection to the eater (url, login, CA, quick reconnects). */
    readonly mqtt?: Record<string, unknown>;
    readonly clientId: string;
    readonly tmpPrefix: string;
  },
): Promise<UplinkBehindEater> {
  const broker = await startTlsBroker([GATEWAY_LOGIN, ...(opts.otherUsers ?? [])]);
  cleanups.push(() => broker.stop());
  const proxy = await startPubackEater(broker);
  cleanups.push(() => proxy.stop());
  const dir = mkdtempSync(join(tmpdir(), opts.tmpPrefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = validateConfig(
    {
      organization_id: ORG,
      data_dir: dir,
      mqtt: { url: proxy.url, username: GATEWAY_LOGIN.username, password: GATEWAY_LOGIN.password, ca_file: broker.caFile, reconnect_min_ms: 100, reconnect_max_ms: 500, ...opts.mqtt },
    },
    'test',
    {},
  );
  const logger = createLogger(process.env.TEST_LOG ?? 'silent');
  const db = openDatabase(join(dir, 'metergate.db'));
  cleanups.push(() => {
    db.close();
  });
  const outbox = new Outbox(db, { maxRows: 10_000, maxBytes: 10_000_000 });
  const connection = new MqttConnection({ mqtt: config.mqtt!, clientId: opts.clientId, logger });
  return { broker, proxy, config, logger, db, outbox, connection };
}
